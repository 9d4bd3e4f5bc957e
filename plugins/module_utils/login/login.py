# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a login reached, for module dbfleet.innodb.login: the server (flavor, version), the account the server matched
and the authentication plugin, TLS as the session has it, and the way in (socket or TCP, the client option file read,
where the socket was found, whether the process at the other end is proven to be the server).

Never a credential: no password, hash or key is read into the result (report()), and the account's plugin is read
from its own column (account_plugin()), never from SHOW CREATE USER, which carries the hash.
"""

from __future__ import annotations

import os

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import describe_target, resolve_login
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.tls import tls_plan
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import error_text, global_variables, query, query_one
from ansible_collections.dbfleet.innodb.plugins.module_utils.values import as_int
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity

try:
    import pymysql
    _DB_ERRORS = (pymysql.err.MySQLError,)
except ImportError:  # pragma: no cover - the module fails earlier (connection.require_pymysql())
    _DB_ERRORS = ()

# The session's TLS as the server has it (the same names on MySQL and MariaDB; empty without TLS).
SESSION_TLS = ('ssl_version', 'ssl_cipher')
ACCOUNT_PLUGIN_SQL = "SELECT plugin FROM mysql.user WHERE CONCAT(user, '@', host) = CURRENT_USER()"


def tls_facts(status, mode, verified):
    """The login's TLS from the session's Ssl_version and Ssl_cipher (status, lower-case names): in_use, version,
    cipher, mode (the tls_plan() mode the login followed: 'socket' over a unix socket) and verified (the client checked
    the server's certificate against a CA: False without TLS)."""
    version = status.get('ssl_version') or None
    return dict(in_use=version is not None, version=version,
                cipher=(status.get('ssl_cipher') or None) if version else None,
                mode=mode, verified=bool(version and verified))


def way_in(reached, params, socket_source=None):
    """How the connection went: transport ('socket' or 'tcp'), the socket or host and port it reached (reached: the
    connection's unix_socket, host, port), where the socket was found when no login option named a server
    (socket_source), the client option file read (config_file: None when missing, unreadable or ''), and a note when
    a TCP login the options asked for went through the local server's socket (connection.open_connection())."""
    on_socket = bool(reached.get('unix_socket'))
    config_file = os.path.expanduser(params.get('config_file') or '') or None
    if config_file and not (os.path.isfile(config_file) and os.access(config_file, os.R_OK)):
        config_file = None
    out = dict(transport='socket' if on_socket else 'tcp',
               socket=reached['unix_socket'] if on_socket else None,
               host=None if on_socket else reached.get('host'),
               port=None if on_socket else as_int(reached.get('port')),
               socket_source=socket_source if on_socket else None,
               config_file=config_file, notes=[])
    asked_tcp = params.get('login_host') is not None or params.get('login_port') is not None
    if on_socket and asked_tcp and not params.get('login_unix_socket'):
        out['notes'].append('the TCP login (%s) went through the local server\'s socket %s: login_trust_loopback is '
                            'false, or the listener was not proven to be the server (docs/security.md)'
                            % (describe_target(dict(params, login_password=None)), reached['unix_socket']))
    return out


def account_plugin(conn):
    """(plugin, note): the authentication plugin mysql.user names for CURRENT_USER(), or (None, why not) when this
    account may not read it."""
    try:
        row = query_one(conn, ACCOUNT_PLUGIN_SQL)
    except _DB_ERRORS as e:
        return None, 'account_plugin unknown: mysql.user is not readable by this account: %s' % error_text(e)
    if not row:
        return None, 'account_plugin unknown: mysql.user has no row for CURRENT_USER()'
    plugin = row['plugin']
    return (plugin.decode('ascii', 'replace') if isinstance(plugin, bytes) else plugin) or None, None


def report(identity, who, auth_plugin, account, tls, way, peer):
    """The module's result `login` from what the connection read (pure): identity (server_identity.ServerIdentity), who
    (USER() and CURRENT_USER() as `user`, `current_user`), auth_plugin (the handshake's), account (account_plugin()),
    tls (tls_facts()), way (way_in()), peer (connection's dbfleet_peer(): None for TCP to another machine)."""
    facts = identity.to_dict()
    facts.update(user=who.get('user'), current_user=who.get('current_user'), auth_plugin=auth_plugin,
                 account_plugin=account[0], tls=tls)
    way = dict(way)
    notes = way.pop('notes')
    facts.update(way)
    facts['peer'] = dict(trusted=bool(peer['trusted']), reason=peer['reason']) if peer else None
    facts['notes'] = notes + ([account[1]] if account[1] else [])
    return facts


def read(conn, params):
    """report() for an open connection (login/connection.py's Connection) made with the login options params: three
    statements (the identity variables; USER() and CURRENT_USER(); the session's TLS status), and the account's
    plugin."""
    identity = server_identity.identity_from_variables(global_variables(conn, server_identity.DETECT_VARIABLES))
    who = query_one(conn, 'SELECT USER() AS `user`, CURRENT_USER() AS `current_user`') or {}
    status = dict((r['Variable_name'].lower(), r['Value']) for r in query(
        conn, 'SHOW SESSION STATUS WHERE Variable_name IN (%s)' % ', '.join(['%s'] * len(SESSION_TLS)), SESSION_TLS))
    login = resolve_login(params)
    mode = 'socket' if conn.unix_socket else tls_plan(login)['mode']
    reached = dict(unix_socket=conn.unix_socket, host=conn.host, port=conn.port)
    return report(identity, who, conn.dbfleet_auth_plugin(), account_plugin(conn),
                  tls_facts(status, mode, conn.dbfleet_verified()), way_in(reached, params, login['socket_source']),
                  conn.dbfleet_peer())
