# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The InnoDB memcached plugin's configuration tables (innodb_memcache: containers, cache_policies, config_options):
read (read_state()), planned against what a task wants (plan_containers(), plan_cache_policy(),
plan_config_options(): statements, the changes in words, the state after, whether the plugin must reload), and
applied in one transaction (apply_plan())."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache.containers import (
    CONTAINER_COLUMNS, container_row, container_statement, policy_statement, row_statement, same_container)
from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache.plugin import CONFIG_SCHEMA
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import execute, query, query_one

# What the stock innodb_memcached_config.sql inserts with its demo, so a plan that loads it sees it.
DEMO_CONTAINERS = (dict(name='aaa', db_schema='test', db_table='demo_test', key_columns='c1', value_columns='c2',
                        flags='c3', cas_column='c4', expire_time_column='c5', unique_idx_name_on_key='PRIMARY'),)
DEMO_POLICIES = (dict(policy_name='cache_policy', get_policy='innodb_only', set_policy='innodb_only',
                      delete_policy='innodb_only', flush_policy='innodb_only'),)
# The config options the stock file sets.
STOCK_OPTIONS = dict(separator='|', table_map_delimiter='.')
CONFIG_OPTIONS = ('separator', 'table_map_delimiter')


def table_metadata(conn, schema, table):
    """(table, columns, indexes) from information_schema, in the shapes memcache/containers.py expects."""
    row = query_one(conn, 'SELECT ENGINE AS engine, TABLE_TYPE AS table_type FROM information_schema.TABLES '
                          'WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s', (schema, table))
    if row is None:
        return None, {}, {}
    columns = {}
    for c in query(conn, 'SELECT COLUMN_NAME AS name, DATA_TYPE AS data_type, EXTRA AS extra, '
                         'CHARACTER_MAXIMUM_LENGTH AS char_length FROM information_schema.COLUMNS '
                         'WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION',
                   (schema, table)):
        columns[c['name']] = c
    indexes = {}
    for s in query(conn, 'SELECT INDEX_NAME AS idx, NON_UNIQUE AS non_unique, COLUMN_NAME AS col '
                         'FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s '
                         'ORDER BY INDEX_NAME, SEQ_IN_INDEX', (schema, table)):
        entry = indexes.setdefault(s['idx'], dict(unique=str(s['non_unique']) == '0', columns=[]))
        entry['columns'].append(s['col'])
    return dict(engine=row['engine'], table_type=row['table_type']), columns, indexes


def schema_tables(conn):
    rows = query(conn, 'SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s',
                 (CONFIG_SCHEMA,))
    return set(r['t'] for r in rows)


def schema_exists(conn):
    return query_one(conn, 'SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = %s',
                     (CONFIG_SCHEMA,)) is not None


def read_state(conn):
    containers = query(conn, 'SELECT %s FROM `innodb_memcache`.`containers` ORDER BY name' % ', '.join(CONTAINER_COLUMNS))
    policies = query(conn, 'SELECT policy_name, get_policy, set_policy, delete_policy, flush_policy '
                           'FROM `innodb_memcache`.`cache_policies` ORDER BY policy_name')
    options = query(conn, 'SELECT name, value FROM `innodb_memcache`.`config_options` ORDER BY name')
    return containers, policies, dict((r['name'], r['value']) for r in options)


def policy_view(row):
    return dict(name=row['policy_name'], get=row['get_policy'], set=row['set_policy'],
                delete=row['delete_policy'], flush=row['flush_policy'])


def stock_state(demo):
    """(containers, policies, options) of the schema the stock file loads, with its demo or without."""
    if demo:
        return [dict(c) for c in DEMO_CONTAINERS], [dict(p) for p in DEMO_POLICIES], dict(STOCK_OPTIONS)
    return [], [], dict(STOCK_OPTIONS)


def plan_containers(specs, containers, exclusive):
    """The containers: each spec added or updated where its row differs; with exclusive, every other container
    removed. Returns (statements, changes, after_rows {name: row}, reload_needed: a running plugin must reload for
    an updated or removed container)."""
    current = dict((r['name'], r) for r in containers)
    statements, changes, reload_needed = [], [], False
    for spec in specs:
        row = current.get(spec['name'])
        if row is None or not same_container(spec, row):
            statements.append(container_statement(container_row(spec), exists=row is not None))
            changes.append('%s container %s' % ('add' if row is None else 'update', spec['name']))
            if row is not None:
                reload_needed = True
    after_rows = dict(current)
    for spec in specs:
        after_rows[spec['name']] = container_row(spec)
    if exclusive:
        for name in sorted(set(current) - set(s['name'] for s in specs)):
            statements.append(('DELETE FROM `innodb_memcache`.`containers` WHERE name = %s', (name,)))
            changes.append('remove container %s' % name)
            del after_rows[name]
            reload_needed = True
    return statements, changes, after_rows, reload_needed


def plan_cache_policy(want, policies):
    """The cache policy: exactly one row, want (None: leave the policies alone). Returns (statements, changes,
    after_policies as policy_view() shows them, reload_needed)."""
    if want is None:
        return [], [], [policy_view(r) for r in policies], False
    want_view = dict(name=want['name'], get=want['get'], set=want['set'], delete=want['delete'], flush=want['flush'])
    have = dict((r['policy_name'], r) for r in policies)
    statements, changes, reload_needed = [], [], False
    for name in sorted(have):
        if name != want['name']:
            statements.append(('DELETE FROM `innodb_memcache`.`cache_policies` WHERE policy_name = %s', (name,)))
            changes.append('remove cache policy %s (the plugin reads only one)' % name)
            reload_needed = True
    if want['name'] not in have or policy_view(have[want['name']]) != want_view:
        new = want['name'] not in have
        statements.append(policy_statement(want, exists=not new))
        change = ('add cache policy %s (get %s, set %s, delete %s, flush %s)' if new
                  else 'set cache policy %s to get %s, set %s, delete %s, flush %s')
        changes.append(change % (want['name'], want['get'], want['set'], want['delete'], want['flush']))
        reload_needed = True
    return statements, changes, [want_view], reload_needed


def plan_config_options(wanted, options):
    """The config options (separator, table_map_delimiter) wanted gives (None: leave alone). Returns (statements,
    changes, after_options, reload_needed)."""
    statements, changes, after_options = [], [], dict(options)
    for opt in CONFIG_OPTIONS:
        value = wanted.get(opt)
        if value is None or options.get(opt) == value:
            continue
        statements.append(row_statement('config_options', ('name', 'value'), dict(name=opt, value=value),
                                        exists=opt in options))
        changes.append('set config option %s to %r' % (opt, value))
        after_options[opt] = value
    return statements, changes, after_options, bool(changes)


def apply_plan(conn, schema_plan, statements):
    """Load the schema (schema_plan: plan_config_sql()'s (schema, statement) pairs, empty when it exists), then run
    statements in one transaction (rolled back when one fails)."""
    for schema, stmt in schema_plan:
        if schema:
            execute(conn, 'USE `%s`' % schema)
        execute(conn, stmt)
    conn.autocommit(False)
    try:
        for stmt, args in statements:
            execute(conn, stmt, args)
        conn.commit()
    except Exception:
        conn.rollback()
        raise
    finally:
        conn.autocommit(True)
