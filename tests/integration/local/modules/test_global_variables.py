"""dbfleet.innodb.global_variables against every lab server, run the way users run it (ansible CLI)."""
import os

import pytest
from dbfleet_testing.lab import require_lab_hosts
from dbfleet_testing.runs import adhoc
from dbfleet_testing.servers import socket_global_value, socket_login, socket_sql

from dbfleet_testing.lab import REPO as ROOT
INVENTORY = os.path.join(ROOT, 'inventories', 'lab', 'hosts.yml')


def lab_hosts():
    return require_lab_hosts(INVENTORY)


HOSTS = lab_hosts()


def run_module(host, args, check=False, verbosity=0, module='dbfleet.innodb.global_variables'):
    return adhoc(host, INVENTORY, module, args, check=check, verbosity=verbosity, timeout=120)


@pytest.fixture(params=sorted(HOSTS) or ['none'])
def lab_host(request):
    name = request.param
    hv = HOSTS[name]
    original = socket_global_value(hv, 'innodb_flush_neighbors')
    yield name, hv
    # Put back over the socket: the module's own run is what the tests check, not a second run to clean up.
    socket_sql(hv, 'SET GLOBAL innodb_flush_neighbors = %s', (int(original),))
    assert socket_global_value(hv, 'innodb_flush_neighbors') == original, name


def test_check_mode_predicts_and_changes_nothing(lab_host):
    name, hv = lab_host
    current = int(socket_global_value(hv, 'innodb_flush_neighbors'))
    target = 2 if current != 2 else 1
    result, _rc = run_module(name, dict(socket_login(hv), variables={'innodb_flush_neighbors': target}), check=True)
    assert result['changed'] is True
    assert result['variables']['innodb_flush_neighbors']['before'] == str(current)
    assert int(socket_global_value(hv, 'innodb_flush_neighbors')) == current


def test_set_then_idempotent_in_any_spelling(lab_host):
    name, hv = lab_host
    result, _rc = run_module(name, dict(socket_login(hv), variables={'innodb_flush_neighbors': 2}))
    assert not result['failed'], result.get('msg')
    assert socket_global_value(hv, 'innodb_flush_neighbors') == '2'
    again, _rc = run_module(name, dict(socket_login(hv), variables={'innodb_flush_neighbors': '2'}))
    assert again['changed'] is False


def test_read_only_variable_is_refused_and_nothing_changes(lab_host):
    name, hv = lab_host
    before = socket_global_value(hv, 'innodb_flush_neighbors')
    result, _rc = run_module(name, dict(socket_login(hv), variables={
        'innodb_flush_neighbors': 0 if before != '0' else 1, 'innodb_adaptive_hash_index_parts': 16}))
    assert result['failed'] is True
    assert 'innodb_adaptive_hash_index_parts is read-only' in result['msg']
    assert socket_global_value(hv, 'innodb_flush_neighbors') == before


def test_bad_values_name_the_input(lab_host):
    name, hv = lab_host
    result, _rc = run_module(name, dict(socket_login(hv), variables={'innodb_flush_neighbors': 'lots',
                                                                     'innodb_adaptive_hash_index': 'maybe'}))
    assert result['failed'] is True
    assert "innodb_flush_neighbors: 'lots' is not an integer" in result['msg']
    assert "innodb_adaptive_hash_index: 'maybe' is not a boolean" in result['msg']


def test_persist_only_where_it_exists(lab_host):
    name, hv = lab_host
    result, _rc = run_module(name, dict(socket_login(hv), persist=True, variables={'innodb_flush_neighbors': 1}),
                             check=True)
    if hv['dbfleet_lab_expected_flavor'] == 'mysql' and int(str(hv['dbfleet_lab_expected_version']).split('.', maxsplit=1)[0]) >= 8:
        assert not result['failed'], result.get('msg')
    else:
        assert result['failed'] is True and 'SET PERSIST does not exist' in result['msg']


def test_password_never_in_output(lab_host):
    name, hv = lab_host
    _result, proc = run_module(name, dict(socket_login(hv), variables={'innodb_flush_neighbors': 1}), verbosity=4)
    assert hv['dbfleet_login_password'] not in proc.stdout + proc.stderr


@pytest.mark.parametrize('host', sorted(h for h in HOSTS if h in ('mysql80', 'mariadb1011')) or ['none'])
def test_setter_and_verify_agree_on_suffixes_and_ranges(host):
    """innodb_io_capacity written 1K: global_variables sets 1024 and verify finds 1024 in place; 50 (below
    the minimum 100) is refused by both with the same message, and nothing is changed."""
    hv = HOSTS[host]
    original = socket_global_value(hv, 'innodb_io_capacity')
    try:
        result, _proc = run_module(host, dict(socket_login(hv), variables={'innodb_io_capacity': '1K'}))
        assert not result['failed'], result.get('msg')
        assert socket_global_value(hv, 'innodb_io_capacity') == '1024'
        audit, _proc = run_module(host, dict(socket_login(hv), settings={'innodb_io_capacity': '1K'}),
                                  module='dbfleet.innodb.verify')
        item = audit['variables']['innodb_io_capacity']
        # Running right; only set at runtime, so a restart would lose it.
        assert item['desired_normalized'] == '1024' and item['status'] in ('ok', 'drift_config'), item

        refused, _proc = run_module(host, dict(socket_login(hv), variables={'innodb_io_capacity': 50}))
        assert refused['failed'] is True
        assert 'innodb_io_capacity: 50 is below the minimum 100' in refused['msg']
        assert socket_global_value(hv, 'innodb_io_capacity') == '1024'
        audit, _proc = run_module(host, dict(socket_login(hv), settings={'innodb_io_capacity': 50}),
                                  module='dbfleet.innodb.verify')
        item = audit['variables']['innodb_io_capacity']
        assert item['status'] == 'error' and '50 is below the minimum 100' in item['notes'][0], item
    finally:
        socket_sql(hv, 'SET GLOBAL innodb_io_capacity = %s', (int(original),))     # put back over the socket
    assert socket_global_value(hv, 'innodb_io_capacity') == original
