# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""memcache/config.py: the plan of the innodb_memcache tables against what a task wants (pure), and its apply in one
transaction (a fake connection)."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache import config

SPEC = dict(name='aaa', schema='test', table='demo_test', key_column='c1', value_columns=['c2'], unique_index='PRIMARY',
            flags_column='c3', cas_column='c4', expire_column='c5')


def test_stock_state_with_and_without_the_demo():
    containers, policies, options = config.stock_state(True)
    assert [c['name'] for c in containers] == ['aaa'] and policies[0]['policy_name'] == 'cache_policy'
    assert config.stock_state(False) == ([], [], dict(separator='|', table_map_delimiter='.'))
    containers[0]['name'] = 'changed'
    assert config.stock_state(True)[0][0]['name'] == 'aaa'       # each call a fresh copy


def test_containers_same_added_updated_and_removed_with_exclusive():
    demo = config.stock_state(True)[0]
    assert config.plan_containers([SPEC], demo, False) == ([], [], dict(aaa=demo[0]), False)
    statements, changes, after, reload_needed = config.plan_containers(
        [dict(SPEC, value_columns=['c2', 'c6']), dict(SPEC, name='bbb')], demo + [dict(demo[0], name='old')], True)
    assert changes == ['update container aaa', 'add container bbb', 'remove container old'] and reload_needed
    assert statements[0][0].startswith('UPDATE `innodb_memcache`.`containers`') and statements[1][0].startswith('INSERT')
    assert statements[2] == ('DELETE FROM `innodb_memcache`.`containers` WHERE name = %s', ('old',))
    assert sorted(after) == ['aaa', 'bbb'] and after['aaa']['value_columns'] == 'c2,c6'
    assert config.plan_containers([dict(SPEC, name='bbb')], [], False)[3] is False     # an addition needs no reload


WANT = dict(name='cache_policy', get='caching', set='innodb_only', delete='innodb_only', flush='innodb_only')


def test_cache_policy_exactly_one_row():
    policies = config.stock_state(True)[1] + [dict(config.DEMO_POLICIES[0], policy_name='other')]
    statements, changes, after, reload_needed = config.plan_cache_policy(WANT, policies)
    assert changes == ['remove cache policy other (the plugin reads only one)',
                       'set cache policy cache_policy to get caching, set innodb_only, delete innodb_only, flush innodb_only']
    assert len(statements) == 2 and reload_needed and after == [dict(WANT)]
    assert config.plan_cache_policy(None, policies)[:2] == ([], [])
    same = dict(WANT, get='innodb_only')
    assert config.plan_cache_policy(same, config.stock_state(True)[1]) == ([], [], [same], False)
    assert config.plan_cache_policy(WANT, [])[1][0].startswith('add cache policy cache_policy')


def test_config_options_only_those_given_and_different():
    options = dict(separator='|', table_map_delimiter='.')
    assert config.plan_config_options(dict(separator='|', table_map_delimiter=None), options) == ([], [], options, False)
    statements, changes, after, reload_needed = config.plan_config_options(dict(separator=';'), options)
    assert changes == ["set config option separator to ';'"] and after['separator'] == ';' and reload_needed
    assert statements == [('UPDATE `innodb_memcache`.`config_options` SET value = %s WHERE name = %s', (';', 'separator'))]


class FakeConn:
    def __init__(self, fail_on=None):
        self.log, self.fail_on = [], fail_on

    def cursor(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql, args=None):
        if sql == self.fail_on:
            raise RuntimeError('refused')
        self.log.append(sql)

    def autocommit(self, on):
        self.log.append('autocommit %s' % on)

    def commit(self):
        self.log.append('commit')

    def rollback(self):
        self.log.append('rollback')


def test_apply_loads_the_schema_then_one_transaction():
    conn = FakeConn()
    config.apply_plan(conn, [('innodb_memcache', 'CREATE TABLE x (a int)')], [('DELETE FROM y', ())])
    assert conn.log == ['USE `innodb_memcache`', 'CREATE TABLE x (a int)', 'autocommit False', 'DELETE FROM y',
                        'commit', 'autocommit True']
    conn = FakeConn(fail_on='DELETE FROM z')
    with pytest.raises(RuntimeError):
        config.apply_plan(conn, [], [('DELETE FROM y', ()), ('DELETE FROM z', ())])
    assert conn.log == ['autocommit False', 'DELETE FROM y', 'rollback', 'autocommit True']
