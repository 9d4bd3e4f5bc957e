# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pure rules of a guarded change (no connection): table names as plain identifiers outside the system
schemas (parse_table_name), quoting of names read from the server (quote_name), the off-peak window gate of the
modules' pure checks (window_gate), the plan's sizes (plan_size) and GuardedError, the error every guard rail
raises with a message for the user."""

from __future__ import annotations

import datetime

from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import is_plain_identifier
from ansible_collections.dbfleet.innodb.plugins.module_utils.offpeak import WindowError
from ansible_collections.dbfleet.innodb.plugins.module_utils.offpeak import status as window_status

# Schemas nothing here ever changes: the server's own and the memcached plugin's config.
PROTECTED_SCHEMAS = frozenset(('mysql', 'sys', 'information_schema', 'performance_schema', 'innodb_memcache'))


class GuardedError(Exception):
    """An expected failure of a guarded change; the message is for the user."""


def parse_table_name(text, verb='changed'):
    """('db', 'table') from 'db.table'; raises GuardedError naming the input.

    Only plain identifiers ([A-Za-z0-9_$], not all digits, at most 64 characters): no
    wildcards, quotes, backticks, spaces or comments can reach the SQL text.
    """
    if not isinstance(text, str):
        raise GuardedError('table %r: give a string "db.table"' % (text,))
    parts = text.split('.')
    if len(parts) != 2:
        raise GuardedError('table %r: give exactly "db.table" (one dot, no quoting)' % (text,))
    db, table = parts
    for what, name in (('schema', db), ('table', table)):
        if not is_plain_identifier(name):
            raise GuardedError('table %r: %s name %r is not a plain identifier (letters, digits, _ and $ '
                               'only, at most 64 characters; no wildcards, quotes or spaces)' % (text, what, name))
    if db.lower() in PROTECTED_SCHEMAS:
        raise GuardedError('table %r: schema %r is a system schema; nothing is %s there' % (text, db, verb))
    return db, table


def parse_table_names(names, verb='changed'):
    """Validated, de-duplicated [(db, table)] in the order given; raises GuardedError."""
    if not names:
        raise GuardedError('tables: give at least one "db.table"')
    seen = []
    for text in names:
        pair = parse_table_name(text, verb)
        if pair not in seen:
            seen.append(pair)
    return seen


def quote_name(name):
    """Backtick-quote any identifier the server accepts (spaces, hyphens, backticks, non-ASCII).

    Names read from the server (column names) reach the SQL text only through this: a backtick in the
    name is doubled, as the server's own SHOW CREATE TABLE writes it. Refused (GuardedError): what no
    server accepts as a name (not a string, empty, longer than 64 characters, NUL, characters outside
    the Basic Multilingual Plane)."""
    if not isinstance(name, str) or not name:
        raise GuardedError('identifier %r: give a non-empty name' % (name,))
    if len(name) > 64:
        raise GuardedError('identifier %r is longer than 64 characters' % (name,))
    if any(c == '\x00' or ord(c) > 0xFFFF for c in name):
        raise GuardedError('identifier %r holds a character no server accepts in a name (NUL or outside '
                           'the Basic Multilingual Plane)' % (name,))
    return '`%s`' % name.replace('`', '``')


def qualified_name(db, table):
    return '%s.%s' % (quote_name(db), quote_name(table))


def window_gate(window, timezone, force=False, applies=True, now=None):
    """The off-peak window gate of a module's pure checks: (status, refusal, warning).

    status is offpeak.status() (None without a window); refusal is the message to fail with (a bad
    window or time zone, or outside the window unless forced); warning is set when forced outside.
    applies=False (read-only modes) only reports where the run stands."""
    if window is None:
        return None, None, None
    try:
        st = window_status(window, timezone or 'UTC', now)
    except WindowError as e:
        return None, str(e), None
    if st['inside'] or not applies:
        return st, None, None
    if force:
        return st, None, 'forced outside the window: %s' % st['message']
    return st, 'refusing: %s (set force_window to run anyway)' % st['message'], None


def human_size(n):
    if n is None:
        return None
    n = float(n)
    for unit in ('B', 'KiB', 'MiB', 'GiB', 'TiB'):
        if n < 1024 or unit == 'TiB':
            return ('%d %s' % (n, unit)) if unit == 'B' else ('%.1f %s' % (n, unit))
        n /= 1024.0


def plan_size(stats_bytes, file_bytes):
    """The size the drop plan shows: the tablespace file's real size where the server tells it (the .ibd the
    DROP removes), else the statistics of information_schema.TABLES (DATA_LENGTH + INDEX_LENGTH), which lag
    behind after bulk inserts until the statistics refresh. size_source says which."""
    if file_bytes is not None and file_bytes >= (stats_bytes or 0):
        return dict(size_bytes=file_bytes, size=human_size(file_bytes), size_source='tablespace file')
    return dict(size_bytes=stats_bytes or 0, size=human_size(stats_bytes or 0), size_source='table statistics')


def now_stamp(now=None):
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return now.strftime('%Y%m%d%H%M%S')


def onoff(value):
    """'ON'/'OFF' from a server's boolean spelling; None stays None."""
    if value is None:
        return None
    return 'ON' if str(value).upper() in ('ON', '1', 'TRUE', 'YES') else 'OFF'
