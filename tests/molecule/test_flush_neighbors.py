# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Testinfra checks for the dbfleet.innodb.flush_neighbors role (run after converge + idempotence).

The scenarios that converge the role name this file in their verifier; it runs on the hosts whose inventory names
their storage class (flush_neighbors_storage_class) and maps it to a value: the class mapped through the built-in map
merged with flush_neighbors_map gives the value the host must run. The last check restarts the server (the host's
dbfleet_restart_command, or on a booted host its package's unit) and runs the verify module: the value must survive
through the drop-in. The restarts happen one host after another, then one run of the verify module audits them all.
"""

import json
import os
import subprocess
import tempfile
import time

import pymysql
import pytest
import testinfra
from testinfra.utils.ansible_runner import AnsibleRunner

from dbhelpers import login_of

BUILTIN_MAP = {'ssd': 0, 'hdd': 1, 'mixed': 1}
DROPIN = '60-dbfleet-flush_neighbors.cnf'


def _wanted(hostvars):
    """The innodb_flush_neighbors the inventory asks of the host (its storage class through the map), else None."""
    klass = hostvars.get('flush_neighbors_storage_class')
    value = dict(BUILTIN_MAP, **(hostvars.get('flush_neighbors_map') or {})).get(klass) if klass else None
    return None if value is None else int(value)


def _booted(hostvars):
    """A booted host: become, and no restart command in its inventory (its package's unit restarts it)."""
    return bool(hostvars.get('ansible_become')) and not hostvars.get('dbfleet_restart_command')


def _restartable(hostvars):
    return _booted(hostvars) or (hostvars.get('dbfleet_restart_method', 'service') == 'command'
                                 and bool(hostvars.get('dbfleet_restart_command')))


pytestmark = pytest.mark.hosts(applies=lambda hostvars: _wanted(hostvars) is not None)


def _login_args(hostvars):
    args = dict(login_user=hostvars.get('dbfleet_login_user'), login_password=hostvars.get('dbfleet_login_password'))
    if hostvars.get('dbfleet_login_unix_socket'):
        args['login_unix_socket'] = hostvars['dbfleet_login_unix_socket']
    else:
        args.update(login_host=hostvars.get('dbfleet_login_host', '127.0.0.1'),
                    login_port=int(hostvars.get('dbfleet_login_port', 3306)))
    return dict((k, v) for k, v in args.items() if v is not None)


def _global(db, name):
    with db.cursor() as cur:
        cur.execute('SHOW GLOBAL VARIABLES LIKE %s', (name,))
        row = cur.fetchone()
    return row['Value'] if row else None


@pytest.fixture
def expected(hostvars):
    """(storage class, innodb_flush_neighbors) the role should have applied on this host."""
    return hostvars['flush_neighbors_storage_class'], _wanted(hostvars)


def test_runtime_value(db, expected):
    assert _global(db, 'innodb_flush_neighbors') == str(expected[1])


@pytest.mark.hosts(applies=lambda hostvars: hostvars.get('flush_neighbors_persist', 'dropin') in ('dropin', 'both'))
def test_dropin_written(host, expected, dropin_dir):
    path = '%s/%s' % (dropin_dir, DROPIN)
    f = host.file(path)
    assert f.exists and f.is_file
    text = f.content_string
    assert 'Managed by the dbfleet.innodb.flush_neighbors role' in text
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith('#')]
    assert lines[0] == '[mysqld]'
    assert 'innodb_flush_neighbors = %d' % expected[1] in lines


def _restart(host, hostvars, login):
    """Restart the host's server as an operator would (the host's dbfleet_restart_command, or on a booted host its
    package's unit) and wait until it answers again: its innodb_flush_neighbors then."""
    booted = _booted(hostvars)     # a booted host: its package's unit, no login given
    if booted:
        unit = 'mariadb' if hostvars['dbfleet_lab_expected_flavor'] == 'mariadb' else 'mysql'
        cmd = host.run('sudo systemctl restart %s' % unit)     # as an operator restarts it
    else:
        argv = hostvars['dbfleet_restart_command']
        cmd = host.run(' '.join("'%s'" % str(a).replace("'", "'\\''") for a in argv))
    assert cmd.rc == 0, cmd.stderr
    login_args = {} if booted else _login_args(hostvars)
    kwargs = dict(user=login[0], password=login[1], connect_timeout=5)
    if 'login_unix_socket' in login_args:
        kwargs['unix_socket'] = login_args['login_unix_socket']
    elif booted:
        kwargs.update(host=hostvars['ansible_host'], port=3306)
    else:
        kwargs.update(host=login_args['login_host'], port=login_args['login_port'])
    for i in range(30):
        try:
            conn = pymysql.connect(cursorclass=pymysql.cursors.DictCursor, **kwargs)
            break
        except pymysql.err.OperationalError:
            if i == 29:
                raise
            time.sleep(2)
    try:
        return _global(conn, 'innodb_flush_neighbors')
    finally:
        conn.close()


@pytest.fixture(scope='session')
def restarted(request):
    """Every host of the scenario this check applies to restarted, one after another (each answering again before the
    next), then audited by the verify module in one ansible run over them all, as playbooks/verify.yml audits a host:
    the flush_neighbors role's desired state worked out there (desired_from), the login and the option file from the
    host's variables, become where the inventory says. {host: (innodb_flush_neighbors after the restart, verify's
    result)}."""
    inventory = request.config.option.ansible_inventory
    runner = AnsibleRunner.get_runner(inventory)
    hosts = [name for name in runner.get_hosts('all')
             if _wanted(runner.get_variables(name)) is not None and _restartable(runner.get_variables(name))]
    values = {}
    for name in hosts:
        values[name] = _restart(testinfra.get_host('ansible://%s?ansible_inventory=%s' % (name, inventory)),
                                runner.get_variables(name), login_of(runner.get_variables(name)))
    with tempfile.TemporaryDirectory() as tree:
        run = subprocess.run(['ansible', '-i', inventory, '--tree', tree, '-m', 'dbfleet.innodb.verify',
                              '-a', json.dumps({'desired_from': ['flush_neighbors']}), ':'.join(hosts)],
                             check=False, capture_output=True, text=True)
        results = {}
        for name in hosts:
            path = os.path.join(tree, name)
            assert os.path.exists(path), 'the verify run left no result for %s: %s' % (name, run.stderr[-2000:])
            with open(path, encoding='utf-8') as handle:
                results[name] = json.load(handle)
    return {name: (values[name], results[name]) for name in hosts}


@pytest.mark.hosts(applies=_restartable)
def test_value_survives_restart_and_verify_agrees(hostvars, expected, restarted):
    value, result = restarted[hostvars['inventory_hostname']]
    assert value == str(expected[1])
    assert not result.get('failed'), result.get('msg')
    status = result['variables']['innodb_flush_neighbors']
    assert int(status['desired']) == expected[1], status
    assert status['status'] == 'ok', status
    assert result['changed'] is False
