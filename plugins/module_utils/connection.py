# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one connection helper of the collection.

Every module builds its argument spec with login_argument_spec() and opens its
connection with connect(module). Options are named as in community.mysql.
"""

from __future__ import annotations

import configparser
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
    """Argument spec of the login options; matches doc fragment dbfleet.innodb.login.

    login_host and login_port have no default here: a value the task does not give comes from
    config_file, then localhost / 3306 (resolve_login()).
    """
    return dict(
        login_user=dict(type='str', aliases=['login_username']),
        login_password=dict(type='str', no_log=True),
        login_host=dict(type='str'),
        login_port=dict(type='int'),
        login_unix_socket=dict(type='str'),
        config_file=dict(type='path', default='~/.my.cnf'),
        connect_timeout=dict(type='int', default=30),
        ca_cert=dict(type='path', aliases=['ssl_ca']),
        client_cert=dict(type='path', aliases=['ssl_cert']),
        client_key=dict(type='path', aliases=['ssl_key']),
        check_hostname=dict(type='bool'),
    )


LOGIN_OPTIONS = tuple(login_argument_spec())

# The host variable that gives each login option when a task does not pass it (the action
# plugin of every module in the action group fills them in: plugins/plugin_utils/login.py).
LOGIN_HOST_VARIABLES = (
    ('login_user', 'dbfleet_login_user'),
    ('login_password', 'dbfleet_login_password'),
    ('login_host', 'dbfleet_login_host'),
    ('login_port', 'dbfleet_login_port'),
    ('login_unix_socket', 'dbfleet_login_unix_socket'),
    ('config_file', 'dbfleet_config_file'),
    ('ca_cert', 'dbfleet_login_ca_cert'),
    ('client_cert', 'dbfleet_login_client_cert'),
    ('client_key', 'dbfleet_login_client_key'),
    ('check_hostname', 'dbfleet_login_check_hostname'),
)


def login_args_from_host(task_args, host_vars, template=None):
    """The login options to add to task_args (a dict), taken from host_vars.

    An option the task passes (under its name or an alias, also through module_defaults) is
    left alone; a host variable that is not set, or set to null, adds nothing. template, when
    given, turns a host variable's raw value into its final value (Jinja in inventories).
    Returns a new dict of option -> value; task_args is not changed.
    """
    spec = login_argument_spec()
    added = {}
    for option, variable in LOGIN_HOST_VARIABLES:
        names = [option] + list(spec[option].get('aliases', ()))
        if any(name in task_args for name in names) or variable not in host_vars:
            continue
        value = host_vars[variable]
        if template is not None:
            value = template(value)
        if value is not None:
            added[option] = value
    return added


def require_pymysql(module):
    if pymysql is None:
        from ansible.module_utils.basic import missing_required_lib
        module.fail_json(msg=missing_required_lib('PyMySQL'), exception=PYMYSQL_IMPORT_ERROR)


DEFAULT_HOST = 'localhost'
DEFAULT_PORT = 3306

# [client] options of an option file that give a login value, as resolve_login() names it.
_CLIENT_OPTIONS = (('user', 'user'), ('password', 'password'), ('host', 'host'), ('port', 'port'),
                   ('unix_socket', 'socket'), ('ca_cert', 'ssl-ca'), ('client_cert', 'ssl-cert'),
                   ('client_key', 'ssl-key'))


def read_client_options(path):
    """The login values in the [client] group of the option file at path ({} when there is none).

    Read as the MySQL client and PyMySQL read it (option names in any case, '_' or '-', quotes
    removed); a missing or unreadable file gives {}.
    """
    if not path:
        return {}
    path = os.path.expanduser(path)
    if not (os.path.isfile(path) and os.access(path, os.R_OK)):
        return {}
    parser = configparser.RawConfigParser(allow_no_value=True, strict=False)
    parser.optionxform = lambda key: key.lower().replace('_', '-')
    try:
        parser.read(path)
    except configparser.Error as e:
        raise ValueError('cannot read the option file %s: %s' % (path, e))
    if not parser.has_section('client'):
        return {}
    found = {}
    for name, option in _CLIENT_OPTIONS:
        if parser.has_option('client', option):
            value = parser.get('client', option)
            if value is not None and len(value) >= 2 and value[0] == value[-1] and value[0] in '"\'':
                value = value[1:-1]
            if value not in (None, ''):
                found[name] = value
    return found


def resolve_login(params):
    """Where and how to log in, from the login options in params (a dict).

    Each value comes from the option given in params, then from the [client] group of
    config_file, then from the default (localhost, 3306). A socket is used when
    login_unix_socket is given, or when config_file names one and neither login_host nor
    login_port is given. Returns a dict with user, password, host, port, unix_socket, ca_cert,
    client_cert, client_key and check_hostname (None where nothing gives a value).
    """
    from_file = read_client_options(params.get('config_file'))

    def pick(option, name):
        value = params.get(option)
        return value if value is not None else from_file.get(name)

    explicit_tcp = params.get('login_host') is not None or params.get('login_port') is not None
    port = pick('login_port', 'port')
    try:
        port = int(port) if port is not None else DEFAULT_PORT
    except ValueError:
        raise ValueError('the option file %s gives port %r, not a number' % (params.get('config_file'), port))
    return dict(
        user=pick('login_user', 'user'),
        password=pick('login_password', 'password'),
        host=pick('login_host', 'host') or DEFAULT_HOST,
        port=port,
        unix_socket=params.get('login_unix_socket') or (None if explicit_tcp else from_file.get('unix_socket')),
        ca_cert=pick('ca_cert', 'ca_cert'),
        client_cert=pick('client_cert', 'client_cert'),
        client_key=pick('client_key', 'client_key'),
        check_hostname=params.get('check_hostname'),
    )


def tls_kwargs(login):
    """PyMySQL's TLS arguments for a resolve_login() result, with community.mysql's meaning.

    With ca_cert, the server's certificate must be signed by that CA and, unless check_hostname
    is false, name the host connected to. check_hostname true without ca_cert verifies against
    the system's CAs. Without any TLS option: {} (PyMySQL then uses TLS when the server offers it,
    without verifying the server).
    """
    if not (login['ca_cert'] or login['client_cert'] or login['client_key'] or login['check_hostname']):
        return {}
    kwargs = dict(ssl_verify_identity=bool(login['check_hostname'] if login['check_hostname'] is not None
                                           else login['ca_cert']))
    if login['ca_cert']:
        kwargs['ssl_ca'] = os.path.expanduser(login['ca_cert'])
        kwargs['ssl_verify_cert'] = True
    if login['client_cert']:
        kwargs['ssl_cert'] = os.path.expanduser(login['client_cert'])
    if login['client_key']:
        kwargs['ssl_key'] = os.path.expanduser(login['client_key'])
    return kwargs


def connection_kwargs(params):
    """PyMySQL keyword arguments for the login options in params (a dict)."""
    login = resolve_login(params)
    kwargs = dict(
        connect_timeout=params.get('connect_timeout') or 30,
        autocommit=True,
        charset='utf8mb4',
        cursorclass=pymysql.cursors.DictCursor if pymysql else None,
    )
    if login['user'] is not None:
        kwargs['user'] = login['user']
    if login['password'] is not None:
        kwargs['password'] = login['password']
    if login['unix_socket']:
        kwargs['unix_socket'] = login['unix_socket']
        kwargs['host'] = DEFAULT_HOST
    else:
        kwargs['host'] = login['host']
        kwargs['port'] = login['port']
    kwargs.update(tls_kwargs(login))
    return kwargs


def describe_target(params):
    """Where the connection goes, for messages (never includes the password)."""
    try:
        login = resolve_login(params)
    except ValueError:
        login = dict(user=params.get('login_user'), unix_socket=params.get('login_unix_socket'),
                     host=params.get('login_host') or DEFAULT_HOST, port=params.get('login_port') or DEFAULT_PORT)
    if login['unix_socket']:
        where = 'socket %s' % login['unix_socket']
    else:
        where = '%s:%s' % (login['host'], login['port'])
    user = login['user']
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
