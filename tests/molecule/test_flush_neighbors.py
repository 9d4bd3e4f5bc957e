# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Testinfra checks for the dbfleet.innodb.flush_neighbors role (run after converge + idempotence).

The expected value comes from the host's own variables: flush_neighbors_storage_class mapped through
the built-in map merged with flush_neighbors_map. Hosts without an override are checked against what
storage_facts says on the host itself. The last check restarts the server with the host's
dbfleet_restart_command and runs the verify module: the value must survive through the drop-in.
"""

import json
import os
import time

import pymysql
import pytest

# drop_tables_fleet shares this verifier directory but converges playbooks/drop_tables.yml only.
pytestmark = pytest.mark.skipif(os.environ.get('MOLECULE_SCENARIO_NAME') == 'drop_tables_fleet',
                                reason='this scenario does not apply the roles')

BUILTIN_MAP = {'ssd': 0, 'hdd': 1, 'mixed': 1}
DROPIN = '60-dbfleet-flush_neighbors.cnf'


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
def expected(host, hostvars):
    """(storage class, innodb_flush_neighbors) the role should have applied on this host."""
    klass = hostvars.get('flush_neighbors_storage_class')
    if klass is None:
        facts = host.ansible('dbfleet.innodb.storage_facts', json.dumps(_login_args(hostvars)), check=False)
        assert not facts.get('failed'), facts.get('msg')
        klass = facts['storage_class']
    if klass == 'unknown':
        pytest.skip('storage class unknown on this host: the role leaves it alone')
    mapping = dict(BUILTIN_MAP, **(hostvars.get('flush_neighbors_map') or {}))
    if mapping.get(klass) is None:
        pytest.skip('flush_neighbors_map leaves %s alone' % klass)
    return klass, int(mapping[klass])


def test_runtime_value(db, expected):
    assert _global(db, 'innodb_flush_neighbors') == str(expected[1])


def test_dropin_written(host, hostvars, expected, dropin_dir):
    if hostvars.get('flush_neighbors_persist', 'dropin') == 'set_persist':
        pytest.skip('values persisted with SET PERSIST, no drop-in')
    path = '%s/%s' % (dropin_dir, DROPIN)
    f = host.file(path)
    assert f.exists and f.is_file
    text = f.content_string
    assert 'Managed by the dbfleet.innodb.flush_neighbors role' in text
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith('#')]
    assert lines[0] == '[mysqld]'
    assert 'innodb_flush_neighbors = %d' % expected[1] in lines


def test_value_survives_restart_and_verify_agrees(host, hostvars, expected, login):
    argv = hostvars.get('dbfleet_restart_command')
    booted = bool(hostvars.get('ansible_become')) and not argv     # a booted host: its package's unit, no login given
    if booted:
        unit = 'mariadb' if hostvars['dbfleet_lab_expected_flavor'] == 'mariadb' else 'mysql'
        cmd = host.run('sudo systemctl restart %s' % unit)     # as an operator restarts it
    elif hostvars.get('dbfleet_restart_method', 'service') != 'command' or not argv:
        pytest.skip('no restart command for this host')
    else:
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
        assert _global(conn, 'innodb_flush_neighbors') == str(expected[1])
    finally:
        conn.close()
    args = dict(login_args, settings={'innodb_flush_neighbors': expected[1]})
    if hostvars.get('dbfleet_option_file'):
        args['fallback_option_files'] = [hostvars['dbfleet_option_file']]
    # On a booted host the module logs in as root through the server's socket (become), as the roles do.
    result = host.ansible('dbfleet.innodb.verify', json.dumps(args), check=False, become=booted)
    assert not result.get('failed'), result.get('msg')
    status = result['variables']['innodb_flush_neighbors']
    assert status['status'] == 'ok', status
    assert result['changed'] is False
