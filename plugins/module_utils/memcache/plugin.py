# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""InnoDB memcached plugin logic shared by memcached_config and memcached_plugin.

Pure functions (unit-tested without a server): parsing the server's
innodb_memcached_config.sql, validating container definitions against column/index
metadata read from information_schema, building and reading daemon_memcached_option.
Option files are read with module_utils/host/optionfiles.py, the server process with host/process.py.
"""

from __future__ import annotations

import os
import re

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import is_plain_identifier

CONFIG_SCHEMA = 'innodb_memcache'
CONFIG_TABLES = ('cache_policies', 'containers', 'config_options')
CONFIG_SQL_NAME = 'innodb_memcached_config.sql'
PLUGIN_NAME = 'daemon_memcached'
PLUGIN_LIBRARY = 'libmemcached.so'
ENGINE_LIBRARY = 'innodb_engine.so'
POLICY_CHOICES = ('innodb_only', 'cache_only', 'caching', 'disabled')
CONTAINER_NAME_MAX = 50
DELIMITER_MAX = 32

# Where packages put the file, tried after <basedir>/share/.
CONFIG_SQL_DIRS = ('share', 'share/mysql', '/usr/share/mysql', '/usr/share/mysql-8.0',
                   '/usr/share/percona-server', '/usr/share/doc/mysql-server')

# Column types the plugin accepts (innodb_config.cc: key CHAR/VARCHAR/INT; value CHAR/VARCHAR/BLOB/INT;
# flags/cas/expire INT).
INTEGER_TYPES = frozenset(('tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint'))
KEY_TYPES = frozenset(('char', 'varchar')) | INTEGER_TYPES
VALUE_TYPES = frozenset(('char', 'varchar', 'tinytext', 'text', 'mediumtext', 'longtext',
                         'tinyblob', 'blob', 'mediumblob', 'longblob')) | INTEGER_TYPES
# The plugin splits value_columns on any of these characters.
VALUE_COLUMN_SEPARATORS = ' ;,|\n'

# The daemon's static settings as verify compares them (flavors.VARIABLES marks them plugin=daemon_memcached).
PLUGIN_VARIABLES = flavors.plugin_variables(PLUGIN_NAME)

LOOPBACK_ADDRESSES = ('127.0.0.1', 'localhost', '::1')


# ---------------------------------------------------------------- the stock SQL file
def find_config_sql(basedir, explicit=None):
    """Path of innodb_memcached_config.sql: the explicit one, else under basedir, else package dirs."""
    if explicit:
        return explicit if os.path.isfile(explicit) else None
    for sub in CONFIG_SQL_DIRS:
        base = sub if os.path.isabs(sub) else os.path.join(basedir or '/', sub)
        path = os.path.join(base, CONFIG_SQL_NAME)
        if os.path.isfile(path):
            return path
    return None


_USE_RE = re.compile(r'^\s*use\s+`?([A-Za-z0-9_$]+)`?\s*;?\s*$', re.IGNORECASE)


def split_sql(text):
    """Statements of a plain SQL script (no DELIMITER): '--' and '#' comments dropped,
    ';' ends a statement outside quotes, a client-side 'USE db' line ends one too."""
    statements = []
    current = []
    quote = None
    for line in text.splitlines():
        if quote is None and not ''.join(current).strip():
            m = _USE_RE.match(line)
            if m:
                statements.append('USE `%s`' % m.group(1))
                current = []
                continue
        i = 0
        buf = []
        while i < len(line):
            ch = line[i]
            if quote:
                buf.append(ch)
                if ch == '\\' and i + 1 < len(line):
                    buf.append(line[i + 1])
                    i += 2
                    continue
                if ch == quote:
                    quote = None
            elif ch in ('"', "'", '`'):
                quote = ch
                buf.append(ch)
            elif ch == '#' or (ch == '-' and line[i:i + 3] in ('-- ', '--\t') or line[i:] == '--'):
                break
            elif ch == ';':
                current.append(''.join(buf))
                stmt = '\n'.join(current).strip()
                if stmt:
                    statements.append(stmt)
                current = []
                buf = []
            else:
                buf.append(ch)
            i += 1
        current.append(''.join(buf))
    rest = '\n'.join(current).strip()
    if rest:
        statements.append(rest)
    return statements


_CREATE_DB_RE = re.compile(r'^create\s+database\s+(?:if\s+not\s+exists\s+)?`?([A-Za-z0-9_$]+)`?', re.I)
_CREATE_TABLE_RE = re.compile(r'^create\s+table\s+(?:if\s+not\s+exists\s+)?`?([A-Za-z0-9_$]+)`?', re.I)
_INSERT_RE = re.compile(r'^insert\s+into\s+`?([A-Za-z0-9_$]+)`?', re.I)


def plan_config_sql(text, demo=False):
    """Statements of the stock file to run, in order, as (schema, statement) pairs.

    Keeps the innodb_memcache schema, its three tables and the config_options defaults.
    The demo parts (container 'aaa', the 'cache_policy' row, database test and test.demo_test)
    are kept only with demo=True: the module manages policies and containers itself.
    Raises ValueError when the text does not look like the stock file."""
    plan = []
    db = None
    seen_tables = set()
    for stmt in split_sql(text):
        m = _USE_RE.match(stmt)
        if m:
            db = m.group(1)
            continue
        m = _CREATE_DB_RE.match(stmt)
        if m:
            name = m.group(1)
            if name == CONFIG_SCHEMA:
                plan.append((None, 'CREATE DATABASE IF NOT EXISTS `%s`' % CONFIG_SCHEMA))
            elif demo:
                plan.append((None, stmt))
            continue
        if db == CONFIG_SCHEMA:
            m = _CREATE_TABLE_RE.match(stmt)
            if m:
                seen_tables.add(m.group(1))
                plan.append((db, stmt))
                continue
            m = _INSERT_RE.match(stmt)
            if m and m.group(1) == 'config_options':
                plan.append((db, stmt))
                continue
            if m and m.group(1) in ('containers', 'cache_policies'):
                if demo:
                    plan.append((db, stmt))
                continue
            raise ValueError('unexpected statement for %s in the config file: %s' % (CONFIG_SCHEMA, stmt[:80]))
        if db is None:
            raise ValueError('statement before any USE in the config file: %s' % stmt[:80])
        if demo:
            plan.append((db, stmt))
    missing = [t for t in CONFIG_TABLES if t not in seen_tables]
    if missing:
        raise ValueError('the file does not create %s.%s: not an InnoDB memcached config file'
                         % (CONFIG_SCHEMA, ', '.join(missing)))
    return plan


# ---------------------------------------------------------------- containers


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


# ---------------------------------------------------------------- daemon options
# The plugin's own option parser (MySQL plugin/innodb_memcached/daemon_memcached/daemon/memcached.c):
# daemon_memcached_make_option() splits daemon_memcached_option on spaces only (strtok_r with " "; a tab
# is part of a word), then getopt() reads the words with this option string. getopt() is glibc's: short
# options may be clustered (-vl), an option's argument is the rest of its word or else the next word
# (whatever it starts with), words that are not options are skipped over (glibc permutes) and "--" ends
# the options. Every option applies in order; for one given twice the last wins (-l too: this daemon
# keeps one interface string, unlike memcached 1.4's list).
DAEMON_GETOPT = 'a:p:s:U:m:Mc:khirvdl:u:P:f:n:t:D:LR:Cb:B:I:SE:e:qX:'
DAEMON_OPTION_SEPARATOR = ' '
# Options the memcached role sets itself (memcached_port, memcached_bind_address, -u root when needed).
ROLE_DAEMON_OPTIONS = {'p': 'memcached_port', 'l': 'memcached_bind_address', 'u': 'the role (-u root when mysqld runs as root)'}
# Options that must never reach the daemon inside mysqld, and why.
REFUSED_DAEMON_OPTIONS = {
    'h': 'prints the help and calls exit(): it takes mysqld down',
    'i': 'prints the licence and calls exit(): it takes mysqld down',
    'd': 'daemonizes: it forks the mysqld process',
    'E': 'loads another engine library into mysqld',
    'X': 'loads an extension library into mysqld',
    'e': 'is ignored by the plugin (engine options come from innodb_memcache.config_options)',
    'P': 'writes a pid file (only meaningful with -d)',
    's': 'listens on a unix socket instead of TCP (the role and its probe use TCP)',
    'a': 'sets the access mask of a unix socket (-s is refused)',
}


def _daemon_getopt_table():
    table = {}
    for i, letter in enumerate(DAEMON_GETOPT):
        if letter != ':':
            table[letter] = DAEMON_GETOPT[i + 1:i + 2] == ':'
    return table


_DAEMON_TAKES_ARGUMENT = _daemon_getopt_table()


class DaemonOptions(object):
    """daemon_memcached_option as the plugin reads it.

    options: [(letter, argument or None)] in the order getopt() returns them; operands: the words getopt()
    skips (not options); errors: what makes the plugin refuse to start ('Illegal argument'). values(): the
    last argument of each option, as the daemon keeps it."""

    def __init__(self, options, operands, errors):
        self.options = options
        self.operands = operands
        self.errors = errors

    def values(self):
        return dict((letter, argument) for letter, argument in self.options)

    def letters(self):
        return set(letter for letter, _argument in self.options)


def getopt_daemon_option(text):
    """A DaemonOptions from a daemon_memcached_option string, read as the plugin reads it."""
    words = [w for w in str(text or '').split(DAEMON_OPTION_SEPARATOR) if w]
    options, operands, errors = [], [], []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word == '--':
            operands.extend(words[i:])
            break
        if not word.startswith('-') or word == '-':
            operands.append(word)
            continue
        position = 1
        while position < len(word):
            letter = word[position]
            position += 1
            if letter not in _DAEMON_TAKES_ARGUMENT:
                errors.append('-%s is not an option of the plugin\'s memcached (in %r)' % (letter, word))
                continue
            if not _DAEMON_TAKES_ARGUMENT[letter]:
                options.append((letter, None))
                continue
            if position < len(word):
                options.append((letter, word[position:]))
            elif i < len(words):
                options.append((letter, words[i]))
                i += 1
            else:
                errors.append('-%s needs an argument (in %r)' % (letter, word))
            break
    return DaemonOptions(options, operands, errors)


def listen_addresses(text):
    """The addresses the daemon listens on for a daemon_memcached_option string ([] = all addresses).

    -l takes one interface or a list separated by ',' or ';', each maybe with a :port ([v6]:port)."""
    bind = getopt_daemon_option(text).values().get('l')
    if not bind:
        return []
    out = []
    for part in re.split(r'[,;]', bind):
        part = part.strip()
        if part.startswith('['):
            part = part[1:].split(']', 1)[0]
        elif part.count(':') == 1:
            part = part.split(':', 1)[0]
        if part:
            out.append(part)
    return out


def beyond_loopback(text):
    """The addresses beyond loopback that a daemon_memcached_option string listens on ('all addresses' when
    no -l); [] when it stays on loopback."""
    addresses = listen_addresses(text)
    if not addresses:
        return ['all addresses']
    return [a for a in addresses if not is_loopback(a)]


def extra_option_problems(text):
    """What is wrong with the memcached options a user adds to the role's (memcached_daemon_extra_options).

    The same parser as the plugin: an option hidden in a cluster (-vl 0.0.0.0) or attached to its argument
    (-l0.0.0.0) is found where the plugin finds it."""
    parsed = getopt_daemon_option(text)
    problems = list(parsed.errors)
    if parsed.operands:
        one = len(parsed.operands) == 1
        problems.append('%s %s (the plugin would skip %s)' % (', '.join(repr(w) for w in parsed.operands),
                                                              'is not an option' if one else 'are not options',
                                                              'it' if one else 'them'))
    owned = []
    for letter, _argument in parsed.options:
        if letter in ROLE_DAEMON_OPTIONS and letter not in owned:
            owned.append(letter)
    if owned:
        problems.insert(0, 'must not set -p, -l or -u (the role sets them: %s); found %s'
                        % (', '.join('-%s from %s' % (k, v) for k, v in sorted(ROLE_DAEMON_OPTIONS.items())),
                           ', '.join('-%s' % letter for letter in owned)))
    for letter, _argument in parsed.options:
        if letter in REFUSED_DAEMON_OPTIONS:
            problems.append('-%s %s' % (letter, REFUSED_DAEMON_OPTIONS[letter]))
    seen = []
    for problem in problems:
        if problem not in seen:
            seen.append(problem)
    return seen


def is_loopback(address):
    text = str(address or '').strip().lower()
    return text in LOOPBACK_ADDRESSES or (text.startswith('127.') and bool(re.match(r'^127(\.\d{1,3}){3}$', text)))


def daemon_option(port, bind_address, runs_as_root, extra=None):
    """The daemon_memcached_option string: -p<port> -l <bind> [-u root] [extra]."""
    parts = ['-p%d' % int(port), '-l %s' % bind_address]
    if runs_as_root:
        parts.append('-u root')
    if extra:
        parts.append(str(extra).strip())
    return ' '.join(parts)


def parse_daemon_option(text):
    """{'p': '11211', 'l': '127.0.0.1', 'u': 'root', ...} from a daemon_memcached_option string: the last
    argument of each option as the plugin reads it (getopt_daemon_option; flags map to None)."""
    return getopt_daemon_option(text).values()


def daemon_option_has_user(text):
    return 'u' in parse_daemon_option(text)
