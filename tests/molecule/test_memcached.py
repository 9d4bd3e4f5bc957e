# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Testinfra checks for the dbfleet.innodb.memcached role.

The molecule/memcached scenario names this file in its verifier; the checks run on the hosts whose inventory sets
memcached_port (the role installed the plugin there), and a plugin that is not ACTIVE there fails them.
Everything that talks memcache runs on the target host (probe module, memccat), so the checks
also work when the daemon listens on the host's loopback only.
"""

import uuid

import pytest
from testinfra.modules.ansible import AnsibleException

from dbhelpers import connect

pytestmark = pytest.mark.hosts(applies=lambda hostvars: 'memcached_port' in hostvars)


def _one(db, sql, args=None):
    with db.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchone()


@pytest.fixture
def memcached_port(hostvars, db):
    row = _one(db, "SELECT PLUGIN_STATUS AS s FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'daemon_memcached'")
    assert row is not None and row['s'] == 'ACTIVE', 'daemon_memcached should be ACTIVE, is %r' % (row,)
    return int(hostvars['memcached_port'])


def _probe(host, args):
    result = host.ansible('dbfleet.innodb.memcached_probe', args, check=False)
    assert not result.get('failed'), result.get('msg')
    return result


def test_memcached_listens_on_loopback_only(host, db, memcached_port):
    option = _one(db, 'SELECT @@GLOBAL.daemon_memcached_option AS o')['o']
    assert '-p%d' % memcached_port in option.split()
    assert '-l 127.0.0.1' in option
    assert host.socket('tcp://127.0.0.1:%d' % memcached_port).is_listening
    assert not host.socket('tcp://0.0.0.0:%d' % memcached_port).is_listening


def test_memcached_dropin_is_managed_and_matches(host, hostvars, db, memcached_port):
    f = host.file('%s/60-dbfleet-memcached.cnf' % hostvars['dbfleet_option_dropin_dir'])
    assert f.exists
    text = f.content_string
    assert 'Managed by the dbfleet.innodb.memcached role' in text
    assert '[mysqld]' in text
    running = _one(db, 'SELECT @@GLOBAL.daemon_memcached_option AS o')['o']
    assert 'loose-daemon_memcached_option = "%s"' % running in text


@pytest.fixture(scope='module')
def served(host, hostvars, login):
    """One probe run read by several checks: a row written over SQL, looked up through the container `token`, with
    the write check (a write the policy refuses) and the daemon's stats; the row is deleted again right after.
    (key, value, the probe's result)."""
    memcached_port = int(hostvars['memcached_port'])
    key = 'k-sql-%s' % uuid.uuid4().hex[:10]
    value = 'tok-%s' % uuid.uuid4().hex
    db = connect(hostvars, login)
    with db.cursor() as cur:
        cur.execute("INSERT INTO app.token (id, token, owner) VALUES (%s, %s, 'carol')", (key, value))
    try:
        probe = _probe(host, 'port=%d container=token keys=%s check_write_refused=true stats=true'
                       % (memcached_port, key))
        multi = _probe(host, 'port=%d container=token_owner keys=%s' % (memcached_port, key))
        # An independent client: memccat from Debian's libmemcached-tools.
        memccat = host.check_output('memccat --servers=127.0.0.1:%s %s', str(memcached_port), '@@token.%s' % key)
    finally:
        with db.cursor() as cur:
            cur.execute('DELETE FROM app.token WHERE id = %s', (key,))
        db.close()
    return dict(key=key, value=value, probe=probe, multi=multi, memccat=memccat)


def test_memcached_policy_refuses_writes_by_default(db, memcached_port, served):
    assert _one(db, 'SELECT COUNT(*) AS n FROM innodb_memcache.cache_policies')['n'] == 1
    policy = _one(db, 'SELECT get_policy, set_policy, delete_policy, flush_policy FROM innodb_memcache.cache_policies')
    assert policy == dict(get_policy='innodb_only', set_policy='disabled', delete_policy='disabled',
                          flush_policy='disabled')
    result = served['probe']
    check = result['write_check']
    assert check['refused'] is True
    assert result['changed'] is False, 'a refused write stores no row: nothing changed'
    # The plugin answers STORED even with set_policy disabled: what counts is that no row appears.
    key = check['key'].split('.', 1)[1]
    assert _one(db, 'SELECT COUNT(*) AS n FROM app.token WHERE id = %s', (key,))['n'] == 0


def test_memcached_sql_row_served_by_probe_and_memccat(host, memcached_port, served):
    key, value = served['key'], served['value']
    assert served['probe']['lookups']['@@token.%s' % key]['value'] == value
    assert served['multi']['lookups']['@@token_owner.%s' % key]['value'] == '%s|carol' % value
    assert served['memccat'].strip() == value
    gone = _probe(host, 'port=%d container=token keys=%s' % (memcached_port, key))
    assert gone['lookups']['@@token.%s' % key]['found'] is False


def test_memcached_containers_match_the_scenario(db, memcached_port):
    with db.cursor() as cur:
        cur.execute('SELECT name, db_schema, db_table, key_columns, value_columns, unique_idx_name_on_key AS idx '
                    'FROM innodb_memcache.containers ORDER BY name')
        rows = dict((r['name'], r) for r in cur.fetchall())
    assert 'token' in rows
    token = rows['token']
    assert (token['db_schema'], token['db_table'], token['key_columns'], token['value_columns'], token['idx']) == (
        'app', 'token', 'id', 'token', 'PRIMARY')
    assert 'aaa' not in rows, 'the stock demo container is not loaded by default'


def test_memcached_version_and_stats_answer(db, memcached_port, served):
    probe = served['probe']
    assert probe['version'] == _one(db, 'SELECT @@version AS v')['v'].split('-')[0]
    assert int(probe['stats']['curr_connections']) >= 1


def _plugin(db):
    row = _one(db, "SELECT PLUGIN_STATUS AS s FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'daemon_memcached'")
    return (row or {}).get('s'), _one(db, 'SELECT @@GLOBAL.daemon_memcached_option AS o')['o']


def _other_port_option(db, memcached_port):
    running = _one(db, 'SELECT @@GLOBAL.daemon_memcached_option AS o')['o']
    return running, running.replace('-p%d' % memcached_port, '-p%d' % (memcached_port + 1))


def _reload(host, option, check):
    """memcached_plugin reload to option; the result whether it failed or not (a failure's tree
    result need not carry `failed`, so the message is what the test reads)."""
    args = "state=present reload=true daemon_option='%s'" % option
    try:
        return host.ansible('dbfleet.innodb.memcached_plugin', args, check=check)
    except AnsibleException as e:
        return e.result


def test_memcached_reload_refused_by_a_check_leaves_the_plugin_running(host, db, memcached_port):
    """The option files still give the old port: the pre-install check refuses before the UNINSTALL."""
    running, other = _other_port_option(db, memcached_port)
    result = _reload(host, other, check=False)
    assert 'INSTALL PLUGIN reads the option files again' in (result.get('msg') or ''), result
    assert result.get('actions') == [] and not result.get('changed'), result
    assert _plugin(db) == ('ACTIVE', running)
    assert host.socket('tcp://127.0.0.1:%d' % memcached_port).is_listening


def test_memcached_reload_in_check_mode_is_predicted(host, db, memcached_port):
    running, other = _other_port_option(db, memcached_port)
    result = _reload(host, other, check=True)
    assert not result.get('msg'), result
    assert result['changed'] is True
    assert result['actions'][0].startswith('UNINSTALL PLUGIN daemon_memcached (reload:')
    assert result['daemon_option'] == other
    assert _plugin(db) == ('ACTIVE', running)
