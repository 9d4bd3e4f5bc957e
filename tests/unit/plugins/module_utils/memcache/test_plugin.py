# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic of module_utils/memcache/plugin.py: the stock SQL file, found, split and planned."""

import glob
import os

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache import plugin as m

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


def test_find_config_sql(tmp_path):
    share = tmp_path / 'share'
    share.mkdir()
    (share / 'innodb_memcached_config.sql').write_text('x')
    assert m.find_config_sql(str(tmp_path)) == os.path.join(str(share), 'innodb_memcached_config.sql')
    assert m.find_config_sql(str(tmp_path), '/nonexistent/file.sql') is None
