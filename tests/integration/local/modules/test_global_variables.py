"""dbfleet.innodb.global_variables against every lab server, run the way users run it (ansible CLI)."""
import json
import os
import subprocess

import pymysql
import pytest
from dbfleet_testing.lab import require_lab_hosts

from dbfleet_testing.lab import REPO as ROOT
INVENTORY = os.path.join(ROOT, 'inventories', 'lab', 'hosts.yml')


def lab_hosts():
    return require_lab_hosts(INVENTORY)


HOSTS = lab_hosts()


def login(hv):
    return dict(login_unix_socket=hv['dbfleet_login_unix_socket'], login_user=hv['dbfleet_login_user'],
                login_password=hv['dbfleet_login_password'])


def run_module(host, args, check=False, verbosity=0, module='dbfleet.innodb.global_variables'):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.collections'),
               ANSIBLE_CALLBACK_RESULT_FORMAT='json', ANSIBLE_NOCOLOR='1')
    cmd = [os.path.join(ROOT, '.venv', 'bin', 'ansible'), host, '-i', INVENTORY,
           '-o', '-m', module, '-a', json.dumps(args)]
    if check:
        cmd.append('--check')
    if verbosity:
        cmd.append('-' + 'v' * verbosity)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, check=False)
    line = [x for x in proc.stdout.splitlines() if x.startswith(host + ' | ')][-1]
    result = json.loads(line[line.index('{'):])
    result['failed'] = line.split(' | ')[1].startswith('FAILED')
    return result, proc


def global_value(hv, name):
    conn = pymysql.connect(unix_socket=hv['dbfleet_login_unix_socket'], user=hv['dbfleet_login_user'],
                           password=hv['dbfleet_login_password'], autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute('SELECT @@GLOBAL.' + name)
            return str(cur.fetchone()[0])
    finally:
        conn.close()


@pytest.fixture(params=sorted(HOSTS) or ['none'])
def lab_host(request):
    name = request.param
    hv = HOSTS[name]
    original = global_value(hv, 'innodb_flush_neighbors')
    yield name, hv
    run_module(name, dict(login(hv), variables={'innodb_flush_neighbors': int(original)}))


def test_check_mode_predicts_and_changes_nothing(lab_host):
    name, hv = lab_host
    current = int(global_value(hv, 'innodb_flush_neighbors'))
    target = 2 if current != 2 else 1
    result, _rc = run_module(name, dict(login(hv), variables={'innodb_flush_neighbors': target}), check=True)
    assert result['changed'] is True
    assert result['variables']['innodb_flush_neighbors']['before'] == str(current)
    assert int(global_value(hv, 'innodb_flush_neighbors')) == current


def test_set_then_idempotent_in_any_spelling(lab_host):
    name, hv = lab_host
    result, _rc = run_module(name, dict(login(hv), variables={'innodb_flush_neighbors': 2}))
    assert not result['failed'], result.get('msg')
    assert global_value(hv, 'innodb_flush_neighbors') == '2'
    again, _rc = run_module(name, dict(login(hv), variables={'innodb_flush_neighbors': '2'}))
    assert again['changed'] is False


def test_read_only_variable_is_refused_and_nothing_changes(lab_host):
    name, hv = lab_host
    before = global_value(hv, 'innodb_flush_neighbors')
    result, _rc = run_module(name, dict(login(hv), variables={
        'innodb_flush_neighbors': 0 if before != '0' else 1, 'innodb_adaptive_hash_index_parts': 16}))
    assert result['failed'] is True
    assert 'innodb_adaptive_hash_index_parts is read-only' in result['msg']
    assert global_value(hv, 'innodb_flush_neighbors') == before


def test_bad_values_name_the_input(lab_host):
    name, hv = lab_host
    result, _rc = run_module(name, dict(login(hv), variables={'innodb_flush_neighbors': 'lots',
                                                              'innodb_adaptive_hash_index': 'maybe'}))
    assert result['failed'] is True
    assert "innodb_flush_neighbors: 'lots' is not an integer" in result['msg']
    assert "innodb_adaptive_hash_index: 'maybe' is not a boolean" in result['msg']


def test_persist_only_where_it_exists(lab_host):
    name, hv = lab_host
    result, _rc = run_module(name, dict(login(hv), persist=True, variables={'innodb_flush_neighbors': 1}),
                             check=True)
    if hv['dbfleet_lab_expected_flavor'] == 'mysql' and int(str(hv['dbfleet_lab_expected_version']).split('.', maxsplit=1)[0]) >= 8:
        assert not result['failed'], result.get('msg')
    else:
        assert result['failed'] is True and 'SET PERSIST does not exist' in result['msg']


def test_password_never_in_output(lab_host):
    name, hv = lab_host
    _result, proc = run_module(name, dict(login(hv), variables={'innodb_flush_neighbors': 1}), verbosity=4)
    assert hv['dbfleet_login_password'] not in proc.stdout + proc.stderr


@pytest.mark.parametrize('host', sorted(h for h in HOSTS if h in ('mysql80', 'mariadb1011')) or ['none'])
def test_setter_and_verify_agree_on_suffixes_and_ranges(host):
    """innodb_io_capacity written 1K: global_variables sets 1024 and verify finds 1024 in place; 50 (below
    the minimum 100) is refused by both with the same message, and nothing is changed."""
    hv = HOSTS[host]
    original = global_value(hv, 'innodb_io_capacity')
    try:
        result, _proc = run_module(host, dict(login(hv), variables={'innodb_io_capacity': '1K'}))
        assert not result['failed'], result.get('msg')
        assert global_value(hv, 'innodb_io_capacity') == '1024'
        audit, _proc = run_module(host, dict(login(hv), settings={'innodb_io_capacity': '1K'}),
                                  module='dbfleet.innodb.verify')
        item = audit['variables']['innodb_io_capacity']
        # Running right; only set at runtime, so a restart would lose it.
        assert item['desired_normalized'] == '1024' and item['status'] in ('ok', 'drift_config'), item

        refused, _proc = run_module(host, dict(login(hv), variables={'innodb_io_capacity': 50}))
        assert refused['failed'] is True
        assert 'innodb_io_capacity: 50 is below the minimum 100' in refused['msg']
        assert global_value(hv, 'innodb_io_capacity') == '1024'
        audit, _proc = run_module(host, dict(login(hv), settings={'innodb_io_capacity': 50}),
                                  module='dbfleet.innodb.verify')
        item = audit['variables']['innodb_io_capacity']
        assert item['status'] == 'error' and '50 is below the minimum 100' in item['notes'][0], item
    finally:
        run_module(host, dict(login(hv), variables={'innodb_io_capacity': int(original)}))
    assert global_value(hv, 'innodb_io_capacity') == original
