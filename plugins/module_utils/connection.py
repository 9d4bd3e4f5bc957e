# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one connection helper of the collection.

Every module builds its argument spec with login_argument_spec() and opens its
connection with connect(module). Options are named as in community.mysql.
"""

from __future__ import annotations

import os
import traceback

PYMYSQL_IMPORT_ERROR = None
try:
    import pymysql
    import pymysql.cursors
except ImportError:  # pragma: no cover - reported by require_pymysql()
    pymysql = None
    PYMYSQL_IMPORT_ERROR = traceback.format_exc()


def login_argument_spec():
    """Argument spec of the login options; matches doc fragment dbfleet.innodb.login."""
    return dict(
        login_user=dict(type='str', aliases=['login_username']),
        login_password=dict(type='str', no_log=True),
        login_host=dict(type='str', default='localhost'),
        login_port=dict(type='int', default=3306),
        login_unix_socket=dict(type='str'),
        config_file=dict(type='path', default='~/.my.cnf'),
        connect_timeout=dict(type='int', default=30),
    )


LOGIN_OPTIONS = tuple(login_argument_spec())


def require_pymysql(module):
    if pymysql is None:
        from ansible.module_utils.basic import missing_required_lib
        module.fail_json(msg=missing_required_lib('PyMySQL'), exception=PYMYSQL_IMPORT_ERROR)


def connection_kwargs(params):
    """PyMySQL keyword arguments for the login options in params (a dict)."""
    kwargs = dict(
        connect_timeout=params.get('connect_timeout') or 30,
        autocommit=True,
        charset='utf8mb4',
        cursorclass=pymysql.cursors.DictCursor if pymysql else None,
    )
    config_file = params.get('config_file')
    if config_file:
        config_file = os.path.expanduser(config_file)
        if os.path.isfile(config_file) and os.access(config_file, os.R_OK):
            kwargs['read_default_file'] = config_file
            kwargs['read_default_group'] = 'client'
    if params.get('login_user') is not None:
        kwargs['user'] = params['login_user']
    if params.get('login_password') is not None:
        kwargs['password'] = params['login_password']
    if params.get('login_unix_socket'):
        kwargs['unix_socket'] = params['login_unix_socket']
        kwargs['host'] = 'localhost'
    else:
        kwargs['host'] = params.get('login_host') or 'localhost'
        kwargs['port'] = params.get('login_port') or 3306
    return kwargs


def describe_target(params):
    """Where the connection goes, for messages (never includes the password)."""
    if params.get('login_unix_socket'):
        where = 'socket %s' % params['login_unix_socket']
    else:
        where = '%s:%s' % (params.get('login_host') or 'localhost', params.get('login_port') or 3306)
    user = params.get('login_user')
    return '%s@%s' % (user, where) if user else where


class ConnectError(Exception):
    """The server could not be reached or refused the login."""


def open_connection(params):
    """Open a PyMySQL connection for params; raises ConnectError with a clean message."""
    if pymysql is None:
        raise ConnectError('the PyMySQL library is not installed for this Python')
    try:
        return pymysql.connect(**connection_kwargs(params))
    except pymysql.err.MySQLError as e:
        raise ConnectError('cannot connect to %s: %s' % (describe_target(params), _error_text(e)))
    except (OSError, ValueError) as e:
        raise ConnectError('cannot connect to %s: %s' % (describe_target(params), e))


def connect(module):
    """Open the module's connection or fail the module with a message naming the target."""
    require_pymysql(module)
    try:
        return open_connection(module.params)
    except ConnectError as e:
        module.fail_json(msg=str(e))


def _error_text(e):
    args = getattr(e, 'args', ())
    if len(args) >= 2:
        return '(%s) %s' % (args[0], args[1])
    return str(e)


def error_text(e):
    """A one-line text for a PyMySQL error."""
    return _error_text(e)


def query(conn, sql, args=None):
    """Run sql with bound args and return all rows as dicts."""
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return list(cur.fetchall() or [])


def query_one(conn, sql, args=None):
    rows = query(conn, sql, args)
    return rows[0] if rows else None


def execute(conn, sql, args=None):
    with conn.cursor() as cur:
        return cur.execute(sql, args)


def global_variables(conn, names=None):
    """GLOBAL values (never session values) as {lower-case name: str value}."""
    if names:
        names = sorted(set(n.lower() for n in names))
        placeholders = ', '.join(['%s'] * len(names))
        rows = query(conn, 'SHOW GLOBAL VARIABLES WHERE Variable_name IN (%s)' % placeholders, names)
    else:
        rows = query(conn, 'SHOW GLOBAL VARIABLES')
    return dict((r['Variable_name'].lower(), r['Value']) for r in rows)


def global_status(conn, names=None):
    if names:
        names = sorted(set(n.lower() for n in names))
        placeholders = ', '.join(['%s'] * len(names))
        rows = query(conn, 'SHOW GLOBAL STATUS WHERE Variable_name IN (%s)' % placeholders, names)
    else:
        rows = query(conn, 'SHOW GLOBAL STATUS')
    return dict((r['Variable_name'].lower(), r['Value']) for r in rows)


_IDENT_OK = frozenset('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$')


def is_plain_identifier(name):
    """True for identifiers made of [A-Za-z0-9_$] only, 1-64 characters, not all digits."""
    return (isinstance(name, str) and 0 < len(name) <= 64 and all(c in _IDENT_OK for c in name)
            and not name.isdigit())


def quote_identifier(name):
    """Backtick-quote a plain identifier; anything else is refused (ValueError)."""
    if not is_plain_identifier(name):
        raise ValueError('not a plain identifier: %r' % (name,))
    return '`%s`' % name
