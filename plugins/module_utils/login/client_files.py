# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where and how to log in: the login options, then the client option file, then the defaults
(resolve_login()), and the target named for messages (describe_target())."""

from __future__ import annotations

import ipaddress
import os

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import discovery
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import SSL_MODES


DEFAULT_HOST = 'localhost'
DEFAULT_PORT = 3306

# Client options of an option file that give a login value, as resolve_login() names it
# (names as optionfiles.normalize_name() writes them).
_CLIENT_OPTIONS = (('user', 'user'), ('password', 'password'), ('host', 'host'), ('port', 'port'),
                   ('unix_socket', 'socket'), ('ca_cert', 'ssl_ca'), ('client_cert', 'ssl_cert'),
                   ('client_key', 'ssl_key'), ('ssl_mode', 'ssl_mode'))


def read_client_options(path):
    """The login values an option file gives a client ({} when the file does not exist or cannot be read).

    Read as the MySQL and MariaDB clients read it (optionfiles.read_client_file(): groups [client],
    [client-server], [client-mariadb], [mysql], [mariadb-client], the last value wins, !include and
    !includedir followed, quotes and escapes, every line on its own: an indented line is no continuation).
    A line the client would refuse raises ValueError naming the file and the line number, never the
    line's text: the file holds a password.
    """
    if not path:
        return {}
    path = os.path.expanduser(path)
    if not (os.path.isfile(path) and os.access(path, os.R_OK)):
        return {}
    values = optionfiles.read_client_file(path)
    found = {}
    for name, option in _CLIENT_OPTIONS:
        value = values.get(option)
        if value not in (None, ''):
            found[name] = value
    if 'ssl_mode' in found:
        mode = found['ssl_mode'].strip().lower()
        if mode not in SSL_MODES:
            raise ValueError('the option file %s gives an ssl-mode that is not one of %s'
                             % (path, ', '.join(m.upper() for m in SSL_MODES)))
        found['ssl_mode'] = mode
    return found


def resolve_login(params):
    """Where and how to log in, from the login options in params (a dict).

    Each value comes from the option given in params, then from the [client] group of
    config_file, then from the default (localhost, 3306). A socket is used when
    login_unix_socket is given, or when config_file names one and neither login_host nor
    login_port is given. Returns a dict with user, password, host, port, unix_socket, ca_cert,
    client_cert, client_key, check_hostname, ssl_mode, server_public_key (a path),
    get_server_public_key (a bool, None when not given) and trust_loopback (True unless
    login_trust_loopback is false).
    """
    from_file = read_client_options(params.get('config_file'))

    def pick(option, name):
        value = params.get(option)
        return value if value is not None else from_file.get(name)

    explicit_tcp = params.get('login_host') is not None or params.get('login_port') is not None
    unix_socket = params.get('login_unix_socket') or (None if explicit_tcp else from_file.get('unix_socket'))
    socket_source = None
    if not (unix_socket or explicit_tcp or from_file.get('host') or from_file.get('port')):
        # Nothing names a server: the local one, through its socket, found as a client finds it
        # (discovery.local_socket(): system option files, the packages' place); else localhost:3306.
        found = discovery.local_socket()
        unix_socket, socket_source = found['path'], found['source']
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
        unix_socket=unix_socket,
        socket_source=socket_source,
        ca_cert=pick('ca_cert', 'ca_cert'),
        client_cert=pick('client_cert', 'client_cert'),
        client_key=pick('client_key', 'client_key'),
        check_hostname=params.get('check_hostname'),
        ssl_mode=pick('login_ssl_mode', 'ssl_mode'),
        server_public_key=params.get('login_server_public_key') or None,
        get_server_public_key=params.get('login_get_server_public_key'),
        trust_loopback=params.get('login_trust_loopback') is not False,
    )


def is_loopback(host):
    """True for localhost and loopback addresses (the server is on the machine the client runs on)."""
    if host in (None, '', 'localhost'):
        return True
    try:
        return ipaddress.ip_address(str(host)).is_loopback
    except ValueError:
        return False


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
