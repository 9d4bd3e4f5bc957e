# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dbfleet.innodb.storage_engines against the real lab servers: tables by engine, engines loaded,
upgrade blockers, and the engine facts of engine_facts.STORAGE_ENGINES checked against every server."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import engine_facts
from dbfleet_testing.runs import adhoc_result, ansible
from dbfleet_testing.servers import LAB_HOSTS, engines, host_vars, login, run_module, sql

SCHEMA = 'dbfleet_engines_test'


def fresh_schema(host, *statements):
    sql(host, 'DROP DATABASE IF EXISTS %s' % SCHEMA)
    sql(host, 'CREATE DATABASE %s' % SCHEMA)
    for statement in statements:
        sql(host, statement)


@pytest.mark.parametrize('host', LAB_HOSTS)
def test_loaded_engines_agree_with_the_version_table(host):
    """Every engine a lab server has loaded and the table knows is one the table says it ships."""
    hv = host_vars(host)
    got = engines(host)
    flavor = hv['dbfleet_lab_expected_flavor']
    version = tuple(int(x) for x in hv['dbfleet_lab_expected_version'].split('.'))
    assert got['server'] == dict(flavor=flavor, version=hv['dbfleet_lab_expected_version'])
    assert 'InnoDB' in got['engines_loaded'] and got['default_engine'] == 'InnoDB'
    known = [e for e in got['engines_loaded'] if engine_facts.known_engine(e)]
    assert len(known) >= 4, got['engines_loaded']
    for name in known:
        assert engine_facts.engine_available(name, flavor, version), (
            '%s has %s loaded, but engine_facts.STORAGE_ENGINES says: %s'
            % (host, name, engine_facts.engine_status(name, flavor, version)[1]))
    server_rows = sql(host, "SELECT ENGINE FROM information_schema.ENGINES WHERE SUPPORT IN ('YES', 'DEFAULT')")
    assert sorted(got['engines_loaded']) == sorted(r['ENGINE'] for r in server_rows)
    # The other way round: an engine the table says is built into this version (no plugin) is one the
    # server knows (ENGINES lists it, loaded or not).
    known_here = set(engine_facts.engine_key(e['engine']) for e in got['engines'])
    for key in engine_facts.STORAGE_ENGINES:
        status, reason, facts = engine_facts.engine_status(key, flavor, version)
        if facts is not None and not facts.plugin and status in (engine_facts.ENGINE_AVAILABLE, engine_facts.ENGINE_DEPRECATED):
            assert key in known_here, '%s: the table says %s; the server does not list it' % (host, reason)


def test_aria_table_on_mariadb118_blocks_a_mysql_84_target():
    fresh_schema('mariadb118',
                 'CREATE TABLE %s.sessions (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=Aria' % SCHEMA,
                 'INSERT INTO %s.sessions SELECT seq, REPEAT("x", 40) FROM %s.seq_1_to_1000' % (SCHEMA, SCHEMA),
                 'CREATE TABLE %s.orders (id INT PRIMARY KEY) ENGINE=InnoDB' % SCHEMA)
    got = engines('mariadb118', target_flavor='mysql', target_version='8.4.0', schemas=[SCHEMA], list_tables=True)
    assert got['target'] == dict(flavor='mysql', version='8.4.0')
    assert got['by_engine']['Aria']['tables'] == 1
    assert got['by_engine']['Aria']['rows_estimate'] == 1000          # Aria counts rows exactly
    assert got['by_engine']['Aria']['data_bytes'] >= 1000 * 40
    assert got['by_engine']['InnoDB']['tables'] == 1
    assert [(b['schema'], b['table'], b['engine']) for b in got['blockers']] == [(SCHEMA, 'sessions', 'Aria')]
    reason = got['blockers'][0]['reason']
    assert 'mysql 8.4.0' in reason and 'never shipped the Aria engine' in reason and 'ENGINE=InnoDB' in reason
    # The same tables are no blocker for the host's own next version.
    again = engines('mariadb118', target_version='12.0', schemas=[SCHEMA])
    assert again['blockers'] == [] and again['target'] == dict(flavor='mariadb', version='12.0.0')


def test_no_blockers_on_a_host_that_has_none():
    fresh_schema('mariadb1011',
                 'CREATE TABLE %s.orders (id INT PRIMARY KEY) ENGINE=InnoDB' % SCHEMA,
                 'CREATE TABLE %s.cache (id INT PRIMARY KEY) ENGINE=MEMORY' % SCHEMA)
    got = engines('mariadb1011', target_flavor='mysql', target_version='8.4.0', schemas=[SCHEMA])
    assert got['blockers'] == []
    assert got['by_engine']['InnoDB']['tables'] == 1 and got['by_engine']['MEMORY']['tables'] == 1
    # Without schemas the server's own Aria tables (mysql.*) are left out: still no blocker there.
    whole = engines('mariadb1011', target_flavor='mysql', target_version='8.4.0')
    assert [b for b in whole['blockers'] if b['schema'] == 'mysql'] == []
    assert engines('mariadb1011', include_system_schemas=True)['by_engine']['Aria']['tables'] > 0


def test_bad_input_names_it():
    result, rc = run_module('storage_engines', dict(login('mysql97'), target_version='eight'))
    assert rc != 0 and "target_version 'eight'" in result['msg']
    result, rc = run_module('storage_engines', dict(login('mysql97'), schemas=['no_such_schema_x']))
    assert rc != 0 and 'no_such_schema_x' in result['msg']
    result, rc = run_module('storage_engines', dict(login('mysql97'), engines=['ROCKSDB', 'FractalTree']))
    assert rc != 0 and "'FractalTree' is not an engine the collection knows" in result['msg']


def test_adhoc_check_mode_through_the_login_path():
    fresh_schema('mariadb118', 'CREATE TABLE %s.sessions (id INT PRIMARY KEY) ENGINE=Aria' % SCHEMA)
    rc, out = ansible('ansible', 'mariadb118', '-i', 'inventories/lab', '--check', '-m',
                      'dbfleet.innodb.storage_engines', '-a',
                      'target_flavor=mysql target_version=8.4.0 schemas=%s' % SCHEMA)
    assert rc == 0, out
    result = adhoc_result('mariadb118', out)
    assert result['changed'] is False
    assert [b['table'] for b in result['storage_engines']['blockers']] == ['sessions']
