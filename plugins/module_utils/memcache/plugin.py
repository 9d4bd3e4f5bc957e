# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The InnoDB memcached plugin: its names (plugin, libraries, configuration schema and tables, the variables it
brings) and its stock innodb_memcached_config.sql, found, split into statements and planned (pure, unit-tested
without a server).

Beside it: its configuration rows (containers and cache policies, memcache/containers.py), the daemon's options
(daemon_memcached_option, memcache/daemon_options.py), the configuration read and applied (memcache/config.py) and
the memcache protocol client (memcache/client.py). Option files are read with module_utils/host/optionfiles.py, the
server process with host/process.py.
"""

from __future__ import annotations

import os
import re

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors

CONFIG_SCHEMA = 'innodb_memcache'
CONFIG_TABLES = ('cache_policies', 'containers', 'config_options')
CONFIG_SQL_NAME = 'innodb_memcached_config.sql'
PLUGIN_NAME = 'daemon_memcached'
PLUGIN_LIBRARY = 'libmemcached.so'
ENGINE_LIBRARY = 'innodb_engine.so'

# Where packages put the file, tried after <basedir>/share/.
CONFIG_SQL_DIRS = ('share', 'share/mysql', '/usr/share/mysql', '/usr/share/mysql-8.0',
                   '/usr/share/percona-server', '/usr/share/doc/mysql-server')

# The daemon's static settings as verify compares them (flavors.VARIABLES marks them plugin=daemon_memcached).
PLUGIN_VARIABLES = flavors.plugin_variables(PLUGIN_NAME)


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
