# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic of module_utils/memcache/plugin.py: the stock SQL file, container checks, daemon options."""

import glob
import os

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache import plugin as m

# Shaped like innodb_memcached_config.sql: comments, a client-side "USE test" without ';',
# double-quoted strings, inserts for the demo.
STOCK_LIKE = '''create database innodb_memcache;

use innodb_memcache;

-- ------------------------------------------------------------------------
-- Table `cache_policies`; a comment with a ; inside
-- ------------------------------------------------------------------------
CREATE  TABLE IF NOT EXISTS `cache_policies` (
\t`policy_name` VARCHAR(40) PRIMARY KEY,
\t`get_policy` ENUM('innodb_only', 'cache_only', 'caching','disabled')
\t NOT NULL
) ENGINE = innodb;

CREATE  TABLE IF NOT EXISTS `containers` (
\t`name` varchar(50) not null primary key,
\t`flags` VARCHAR(250) NOT NULL DEFAULT "0",
\t`unique_idx_name_on_key` VARCHAR(250) NOT NULL
) ENGINE = InnoDB;

CREATE  TABLE IF NOT EXISTS `config_options` (
\t`name` varchar(50) not null primary key,
\t`value` varchar(50)) ENGINE = InnoDB;

INSERT INTO containers VALUES ("aaa", "test", "demo_test",
\t\t\t       "c1", "c2",  "c3", "c4", "c5", "PRIMARY");

INSERT INTO cache_policies VALUES("cache_policy", "innodb_only",
\t\t\t\t  "innodb_only", "innodb_only", "innodb_only");

INSERT INTO config_options VALUES("separator", "|");
INSERT INTO config_options VALUES("table_map_delimiter", ".");

CREATE DATABASE IF NOT EXISTS test;
USE test

-- Key (c1) must be VARCHAR or CHAR type; a comment
CREATE TABLE demo_test (c1 VARCHAR(32),
\t\t\tc2 VARCHAR(1024), primary key(c1))
ENGINE = INNODB;

INSERT INTO demo_test VALUES ("AA", "HELLO; HELLO");
'''


def test_split_sql_handles_use_without_semicolon_comments_and_quotes():
    stmts = m.split_sql(STOCK_LIKE)
    assert stmts[0] == 'create database innodb_memcache'
    assert stmts[1] == 'USE `innodb_memcache`'
    assert 'USE `test`' in stmts
    assert stmts[-1] == 'INSERT INTO demo_test VALUES ("AA", "HELLO; HELLO")'
    assert not any(s.startswith('--') for s in stmts)
    assert len(stmts) == 13


def test_plan_without_demo_keeps_schema_tables_and_options_only():
    plan = m.plan_config_sql(STOCK_LIKE)
    sqls = [step[1] for step in plan]
    assert sqls[0] == 'CREATE DATABASE IF NOT EXISTS `innodb_memcache`'
    assert sum(1 for s in sqls if s.upper().startswith('CREATE  TABLE')) == 3
    assert sum(1 for s in sqls if 'config_options VALUES' in s) == 2
    assert not any('demo_test' in s or 'INSERT INTO containers' in s or 'cache_policies VALUES' in s for s in sqls)
    assert all(step[0] == 'innodb_memcache' for step in plan[1:])


def test_plan_with_demo_keeps_everything_in_order():
    plan = m.plan_config_sql(STOCK_LIKE, demo=True)
    sqls = [step[1] for step in plan]
    assert any('INSERT INTO containers' in s for s in sqls)
    assert any(s.startswith('CREATE TABLE demo_test') for s in sqls)
    assert plan[-1][0] == 'test'


def test_plan_refuses_a_file_that_is_not_the_config_file():
    with pytest.raises(ValueError):
        m.plan_config_sql('create database innodb_memcache;\nuse innodb_memcache;\nCREATE TABLE containers (a int);')
    with pytest.raises(ValueError):
        m.plan_config_sql('DROP DATABASE mysql;')


REAL_FILES = glob.glob('/root/.cache/dbfleet-lab/dist/mysql-*/share/innodb_memcached_config.sql')


@pytest.mark.skipif(not REAL_FILES, reason='no MySQL distribution with the stock file on this machine')
def test_plan_of_the_real_stock_file():
    with open(REAL_FILES[0]) as handle:
        plan = m.plan_config_sql(handle.read())
    created = [step[1].split('`')[1] for step in plan if 'TABLE' in step[1].upper() and '`' in step[1]]
    assert sorted(created) == ['cache_policies', 'config_options', 'containers']


SPEC = dict(name='token', schema='app', table='token', key_column='id', value_columns=['token'],
            unique_index='PRIMARY', flags_column=None, cas_column=None, expire_column=None)
TABLE = dict(engine='InnoDB', table_type='BASE TABLE')
COLUMNS = {
    'id': dict(data_type='varchar', extra='', char_length=32),
    'token': dict(data_type='varchar', extra='', char_length=128),
    'note': dict(data_type='text', extra='', char_length=65535),
    'n': dict(data_type='int', extra='', char_length=None),
    'created': dict(data_type='datetime', extra='', char_length=None),
}
INDEXES = {'PRIMARY': dict(unique=True, columns=['id']), 'k_n': dict(unique=False, columns=['n']),
           'uk_pair': dict(unique=True, columns=['id', 'n'])}


def spec(**kw):
    s = dict(SPEC)
    s.update(kw)
    return s


def test_valid_container_has_no_problems():
    assert m.check_container_specs([spec()]) == []
    assert m.check_container_against_table(spec(), TABLE, COLUMNS, INDEXES) == []


def test_duplicate_names_and_delimiter_in_name():
    problems = m.check_container_specs([spec(), spec(), spec(name='a.b')])
    assert any("duplicate memcached container name 'token'" in p for p in problems)
    assert any('table_map_delimiter' in p for p in problems)


def test_bad_identifiers_and_missing_values():
    problems = m.check_container_specs([spec(table='tok`en'), spec(name='x', value_columns=[])])
    assert any('not a plain identifier' in p for p in problems)
    assert any('value_columns needs at least one column' in p for p in problems)


def test_missing_table():
    assert 'does not exist' in m.check_container_against_table(spec(), None, {}, {})[0]


def test_missing_column_with_case_hint():
    problems = m.check_container_against_table(spec(key_column='ID'), TABLE, COLUMNS, INDEXES)
    assert any("spelled 'id'" in p for p in problems)


def test_wrong_types():
    problems = m.check_container_against_table(
        spec(key_column='note', value_columns=['created'], flags_column='token'), TABLE, COLUMNS,
        dict(INDEXES, PRIMARY=dict(unique=True, columns=['note'])))
    text = ' '.join(problems)
    assert "key column 'note' is TEXT" in text
    assert "value column 'created' is DATETIME" in text
    assert "flags column 'token' is VARCHAR" in text


def test_index_missing_not_unique_or_on_other_columns():
    assert "index 'nope' does not exist" in ' '.join(
        m.check_container_against_table(spec(unique_index='nope'), TABLE, COLUMNS, INDEXES))
    text = ' '.join(m.check_container_against_table(spec(key_column='n', unique_index='k_n'), TABLE, COLUMNS, INDEXES))
    assert 'is not unique' in text
    text = ' '.join(m.check_container_against_table(spec(unique_index='uk_pair'), TABLE, COLUMNS, INDEXES))
    assert 'must be on the key column' in text


def test_engine_and_virtual_columns():
    cols = dict(COLUMNS, v=dict(data_type='int', extra='VIRTUAL GENERATED', char_length=None))
    text = ' '.join(m.check_container_against_table(spec(), dict(engine='MyISAM', table_type='BASE TABLE'), cols, INDEXES))
    assert 'MyISAM' in text and 'virtual columns (v)' in text


def test_container_row_round_trip_and_comparison():
    row = m.container_row(spec(value_columns=['token', 'note'], flags_column='n'))
    assert row['value_columns'] == 'token,note'
    assert row['flags'] == 'n' and row['cas_column'] == '0' and row['expire_time_column'] == '0'
    assert m.row_to_spec(row)['value_columns'] == ['token', 'note']
    # A row written by hand with '|' between value columns means the same.
    assert m.same_container(spec(value_columns=['token', 'note'], flags_column='n'),
                            dict(row, value_columns='token|note'))
    assert not m.same_container(spec(), row)


def test_daemon_option():
    assert m.daemon_option(11211, '127.0.0.1', False) == '-p11211 -l 127.0.0.1'
    assert m.daemon_option(33211, '127.0.0.1', True, '-c 512') == '-p33211 -l 127.0.0.1 -u root -c 512'
    parsed = m.parse_daemon_option('-p33211 -l 127.0.0.1 -u root -c 512')
    assert parsed == {'p': '33211', 'l': '127.0.0.1', 'u': 'root', 'c': '512'}
    assert m.daemon_option_has_user('-p1 -u root')
    assert not m.daemon_option_has_user('-p1 -l 127.0.0.1')


@pytest.mark.parametrize('address,loop', [('127.0.0.1', True), ('127.0.0.2', True), ('localhost', True),
                                          ('::1', True), ('0.0.0.0', False), ('10.0.0.5', False)])
def test_is_loopback(address, loop):
    assert m.is_loopback(address) is loop


def test_find_config_sql(tmp_path):
    share = tmp_path / 'share'
    share.mkdir()
    (share / 'innodb_memcached_config.sql').write_text('x')
    assert m.find_config_sql(str(tmp_path)) == os.path.join(str(share), 'innodb_memcached_config.sql')
    assert m.find_config_sql(str(tmp_path), '/nonexistent/file.sql') is None


# ---------------------------------------------------------------- the plugin's option parser
# Read as daemon_memcached_make_option() + getopt() in MySQL's plugin/innodb_memcached/daemon_memcached/daemon/memcached.c.
@pytest.mark.parametrize('text,options,operands,errors', [
    ('-vl 0.0.0.0', [('v', None), ('l', '0.0.0.0')], [], []),           # clustered flag, then -l with the next word
    ('-l0.0.0.0', [('l', '0.0.0.0')], [], []),                           # argument attached
    ('-vl0.0.0.0', [('v', None), ('l', '0.0.0.0')], [], []),
    ('-Mvc512', [('M', None), ('v', None), ('c', '512')], [], []),      # the argument ends the cluster
    ('-l -p', [('l', '-p')], [], []),                                    # the next word is the argument, dash or not
    ('  -c   512  ', [('c', '512')], [], []),                           # runs of spaces are one separator
    ('stray -l 0.0.0.0', [('l', '0.0.0.0')], ['stray'], []),             # glibc getopt skips operands and goes on
    ('-- -l 0.0.0.0', [], ['-l', '0.0.0.0'], []),                         # '--' ends the options
    ('- -c 1', [('c', '1')], ['-'], []),
    ('-c', [], [], ["-c needs an argument (in '-c')"]),
    ('-oX', [], [], ["-o is not an option of the plugin's memcached (in '-oX')", "-X needs an argument (in '-oX')"]),
    ('-c\t512', [('c', '\t512')], [], []),                               # only spaces separate words
])
def test_getopt_daemon_option(text, options, operands, errors):
    parsed = m.getopt_daemon_option(text)
    assert (parsed.options, parsed.operands, parsed.errors) == (options, operands, errors)


@pytest.mark.parametrize('text,beyond', [
    ('-p11211 -l 127.0.0.1', []),
    ('-p11211 -l 127.0.0.1 -vl 0.0.0.0', ['0.0.0.0']),                   # the last -l wins in this daemon
    ('-p11211 -l 0.0.0.0 -l 127.0.0.1', []),
    ('-l0.0.0.0', ['0.0.0.0']),
    ('-p11211', ['all addresses']),
    ('-l 127.0.0.1,10.0.0.5', ['10.0.0.5']),
    ('-l 127.0.0.1:11211;[::1]:11211', []),
    ('-l 127.evil.example', ['127.evil.example']),
])
def test_beyond_loopback(text, beyond):
    assert m.beyond_loopback(text) == beyond


@pytest.mark.parametrize('extra,found', [
    ('-c 512 -t 4 -B ascii -v', None),
    ('-vl 0.0.0.0', 'must not set -p, -l or -u'),
    ('-l0.0.0.0', 'must not set -p, -l or -u'),
    ('-Mu mysql', 'found -u'),
    ('-vp11212', 'found -p'),
    ('-vh', '-h prints the help and calls exit()'),
    ('-d', '-d daemonizes'),
    ('-X /tmp/evil.so', '-X loads an extension library'),
    ('-E /tmp/engine.so', '-E loads another engine library'),
    ('stray', "'stray' is not an option"),
    ('-- -c 1', "'-c', '1' are not options"),
    ('-c', '-c needs an argument'),
])
def test_extra_option_problems(extra, found):
    problems = m.extra_option_problems(extra)
    if found is None:
        assert problems == []
    else:
        assert any(found in p for p in problems), problems


def test_container_statement_inserts_a_new_container_and_updates_one_by_name():
    row = m.container_row(dict(name='c', schema='s', table='t', key_column='k', value_columns=['v1', 'v2'],
                               unique_index='PRIMARY'))
    sql, args = m.container_statement(row, exists=False)
    assert sql == ('INSERT INTO `innodb_memcache`.`containers` (name, db_schema, db_table, key_columns, value_columns, '
                   'flags, cas_column, expire_time_column, unique_idx_name_on_key) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)')
    assert args == ('c', 's', 't', 'k', 'v1,v2', '0', '0', '0', 'PRIMARY')
    sql, args = m.container_statement(row, exists=True)
    assert sql == ('UPDATE `innodb_memcache`.`containers` SET db_schema = %s, db_table = %s, key_columns = %s, '
                   'value_columns = %s, flags = %s, cas_column = %s, expire_time_column = %s, '
                   'unique_idx_name_on_key = %s WHERE name = %s')
    assert args == ('s', 't', 'k', 'v1,v2', '0', '0', '0', 'PRIMARY', 'c')


def test_policy_and_option_statements_keep_the_stock_tables_columns():
    policy = dict(name='cache_policy', get='innodb_only', set='caching', delete='disabled', flush='innodb_only')
    assert m.policy_statement(policy, exists=False) == (
        'INSERT INTO `innodb_memcache`.`cache_policies` (policy_name, get_policy, set_policy, delete_policy, flush_policy) '
        'VALUES (%s, %s, %s, %s, %s)', ('cache_policy', 'innodb_only', 'caching', 'disabled', 'innodb_only'))
    assert m.policy_statement(policy, exists=True) == (
        'UPDATE `innodb_memcache`.`cache_policies` SET get_policy = %s, set_policy = %s, delete_policy = %s, '
        'flush_policy = %s WHERE policy_name = %s', ('innodb_only', 'caching', 'disabled', 'innodb_only', 'cache_policy'))
    option = dict(name='separator', value='|')
    assert m.row_statement('config_options', ('name', 'value'), option, exists=True) == (
        'UPDATE `innodb_memcache`.`config_options` SET value = %s WHERE name = %s', ('|', 'separator'))
    assert m.row_statement('config_options', ('name', 'value'), option, exists=False) == (
        'INSERT INTO `innodb_memcache`.`config_options` (name, value) VALUES (%s, %s)', ('separator', '|'))
