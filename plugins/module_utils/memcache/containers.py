# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The InnoDB memcached plugin's configuration rows: containers (a table mapped for memcache) and cache policies,
checked (the list itself, then each container against its table's metadata) and written as innodb_memcache rows
(row_statement(): the one writer). Pure, unit-tested without a server.
"""

from __future__ import annotations

import re

from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache.plugin import CONFIG_SCHEMA
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import is_plain_identifier

POLICY_CHOICES = ('innodb_only', 'cache_only', 'caching', 'disabled')
CONTAINER_NAME_MAX = 50
DELIMITER_MAX = 32

# Column types the plugin accepts (innodb_config.cc: key CHAR/VARCHAR/INT; value CHAR/VARCHAR/BLOB/INT;
# flags/cas/expire INT).
INTEGER_TYPES = frozenset(('tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint'))
KEY_TYPES = frozenset(('char', 'varchar')) | INTEGER_TYPES
VALUE_TYPES = frozenset(('char', 'varchar', 'tinytext', 'text', 'mediumtext', 'longtext',
                         'tinyblob', 'blob', 'mediumblob', 'longblob')) | INTEGER_TYPES
# The plugin splits value_columns on any of these characters.
VALUE_COLUMN_SEPARATORS = ' ;,|\n'


def split_value_columns(text):
    if text is None:
        return []
    return [c for c in re.split('[%s]+' % re.escape(VALUE_COLUMN_SEPARATORS), text) if c]


def container_row(spec):
    """The innodb_memcache.containers row (as a dict of column -> str) for a container spec."""
    return dict(
        name=spec['name'],
        db_schema=spec['schema'],
        db_table=spec['table'],
        key_columns=spec['key_column'],
        value_columns=','.join(spec['value_columns']),
        flags=spec.get('flags_column') or '0',
        cas_column=spec.get('cas_column') or '0',
        expire_time_column=spec.get('expire_column') or '0',
        unique_idx_name_on_key=spec['unique_index'],
    )


# The columns of innodb_memcache.containers, in the order of the stock config file.
CONTAINER_COLUMNS = ('name', 'db_schema', 'db_table', 'key_columns', 'value_columns', 'flags', 'cas_column',
                     'expire_time_column', 'unique_idx_name_on_key')


POLICY_COLUMNS = ('policy_name', 'get_policy', 'set_policy', 'delete_policy', 'flush_policy')


def row_statement(table, columns, row, exists):
    """(sql, args) writing row (column -> value) into innodb_memcache.<table>: INSERT, or, where the row
    exists, UPDATE by the first of columns (the table's key)."""
    table = '`%s`.`%s`' % (CONFIG_SCHEMA, table)
    if not exists:
        return ('INSERT INTO %s (%s) VALUES (%s)' % (table, ', '.join(columns), ', '.join(['%s'] * len(columns))),
                tuple(row[c] for c in columns))
    key, others = columns[0], columns[1:]
    return ('UPDATE %s SET %s WHERE %s = %%s' % (table, ', '.join('%s = %%s' % c for c in others), key),
            tuple(row[c] for c in others) + (row[key],))


def container_statement(row, exists):
    """(sql, args) writing a container_row(): INSERT for a new container, UPDATE by name for one that exists."""
    return row_statement('containers', CONTAINER_COLUMNS, row, exists)


def policy_statement(policy, exists):
    """(sql, args) writing the cache policy {name, get, set, delete, flush}: INSERT, or UPDATE by name."""
    row = dict(policy_name=policy['name'], get_policy=policy['get'], set_policy=policy['set'],
               delete_policy=policy['delete'], flush_policy=policy['flush'])
    return row_statement('cache_policies', POLICY_COLUMNS, row, exists)


def row_to_spec(row):
    """A container spec (the module's option shape) from a containers row."""
    def col(value):
        return None if value in (None, '', '0') else value
    return dict(
        name=row['name'],
        schema=row['db_schema'],
        table=row['db_table'],
        key_column=row['key_columns'],
        value_columns=split_value_columns(row['value_columns']),
        unique_index=row['unique_idx_name_on_key'],
        flags_column=col(row.get('flags')),
        cas_column=col(row.get('cas_column')),
        expire_column=col(row.get('expire_time_column')),
    )


def same_container(spec, row):
    """True when a containers row already says what spec says (value columns compared as lists)."""
    return row_to_spec(row) == row_to_spec(container_row(spec))


def check_container_specs(specs, delimiter='.'):
    """Problems with the container list itself (no server needed): a list of messages."""
    problems = []
    seen = {}
    for index, spec in enumerate(specs):
        where = 'memcached container #%d' % (index + 1)
        name = spec.get('name')
        if not name or not isinstance(name, str):
            problems.append('%s: name is required' % where)
            continue
        where = 'memcached container %r' % name
        if name in seen:
            problems.append('duplicate memcached container name %r (items #%d and #%d)'
                            % (name, seen[name] + 1, index + 1))
        seen.setdefault(name, index)
        if len(name) > CONTAINER_NAME_MAX:
            problems.append('%s: name is longer than %d characters' % (where, CONTAINER_NAME_MAX))
        if any(ord(c) <= 32 or ord(c) == 127 for c in name):
            problems.append('%s: name contains whitespace or control characters' % where)
        if delimiter and delimiter in name:
            problems.append('%s: name contains the table_map_delimiter %r, so @@%s%skey cannot address it'
                            % (where, delimiter, name, delimiter))
        for field in ('schema', 'table', 'key_column', 'unique_index'):
            value = spec.get(field)
            if not value:
                problems.append('%s: %s is required' % (where, field))
            elif not is_plain_identifier(value):
                problems.append('%s: %s %r is not a plain identifier ([A-Za-z0-9_$], 1-64 characters)'
                                % (where, field, value))
        values = spec.get('value_columns') or []
        if not values:
            problems.append('%s: value_columns needs at least one column' % where)
        for col in values:
            if not is_plain_identifier(col):
                problems.append('%s: value column %r is not a plain identifier' % (where, col))
        if len(set(values)) != len(values):
            problems.append('%s: value_columns lists a column twice' % where)
        for field in ('flags_column', 'cas_column', 'expire_column'):
            value = spec.get(field)
            if value is not None and not is_plain_identifier(value):
                problems.append('%s: %s %r is not a plain identifier' % (where, field, value))
        if spec.get('schema') == 'innodb_memcache':
            problems.append('%s: the container cannot point at the innodb_memcache configuration schema' % where)
        row = container_row(spec) if not problems else None
        if row and len(row['value_columns']) > 250:
            problems.append('%s: value_columns is longer than the 250 characters the containers table holds'
                            % where)
    return problems


def check_container_against_table(spec, table, columns, indexes):
    """Problems for one container spec given the table's metadata from information_schema.

    table: dict(engine=..., table_type=...) or None when the table does not exist.
    columns: {column name: dict(data_type=..., extra=..., char_length=...)} (exact-case names).
    indexes: {index name: dict(unique=bool, columns=[names in order])}.
    """
    where = 'memcached container %r (%s.%s)' % (spec['name'], spec['schema'], spec['table'])
    if table is None:
        return ['%s: table %s.%s does not exist' % (where, spec['schema'], spec['table'])]
    problems = []
    if str(table.get('table_type', '')).upper() != 'BASE TABLE':
        problems.append('%s: %s.%s is a %s, not a table'
                        % (where, spec['schema'], spec['table'], table.get('table_type')))
    if str(table.get('engine') or '').lower() != 'innodb':
        problems.append('%s: the table uses the %s engine; the plugin reads InnoDB tables only'
                        % (where, table.get('engine')))
    virtual = sorted(name for name, c in columns.items() if 'VIRTUAL' in str(c.get('extra', '')).upper())
    if virtual:
        problems.append('%s: the table has virtual columns (%s), which the plugin cannot map'
                        % (where, ', '.join(virtual)))
    lower = dict((name.lower(), name) for name in columns)

    def column(role, name, allowed, allowed_text):
        if name not in columns:
            hint = ''
            if name.lower() in lower:
                hint = ' (the plugin compares names exactly: the column is spelled %r)' % lower[name.lower()]
            problems.append('%s: %s %r does not exist in the table%s' % (where, role, name, hint))
            return None
        data_type = str(columns[name].get('data_type', '')).lower()
        if data_type not in allowed:
            problems.append('%s: %s %r is %s; the plugin needs %s'
                            % (where, role, name, data_type.upper(), allowed_text))
        return columns[name]

    key = column('key column', spec['key_column'], KEY_TYPES, 'CHAR, VARCHAR or an integer type')
    if key is not None and key.get('char_length') and int(key['char_length']) > 250:
        problems.append('%s: key column %r holds up to %s characters but memcache keys are at most 250 bytes'
                        % (where, spec['key_column'], key['char_length']))
    for name in spec['value_columns']:
        column('value column', name, VALUE_TYPES, 'CHAR, VARCHAR, TEXT/BLOB or an integer type')
    for role, field in (('flags column', 'flags_column'), ('cas column', 'cas_column'),
                        ('expire column', 'expire_column')):
        if spec.get(field):
            column(role, spec[field], INTEGER_TYPES, 'an integer type')

    index = indexes.get(spec['unique_index'])
    if index is None:
        names = ', '.join(sorted(indexes)) or 'none'
        problems.append('%s: index %r does not exist (indexes: %s)' % (where, spec['unique_index'], names))
    else:
        if not index.get('unique'):
            problems.append('%s: index %r is not unique' % (where, spec['unique_index']))
        if list(index.get('columns') or []) != [spec['key_column']]:
            problems.append('%s: index %r is on (%s); it must be on the key column %r alone'
                            % (where, spec['unique_index'], ', '.join(index.get('columns') or []),
                               spec['key_column']))
    return problems
