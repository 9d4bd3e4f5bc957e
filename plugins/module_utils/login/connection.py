# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one connection of the collection: PyMySQL's connection with the collection's rules (Connection), opened with
connect(module) or open_connection(params).

Every module builds its argument spec with login.spec.login_argument_spec() and opens its connection with
connect(module); the login options resolve in login.client_files, TLS in login.tls, the authentication rules in
login.auth, SQL on the connection in sql.
"""

from __future__ import annotations

import traceback

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import discovery
from ansible_collections.dbfleet.innodb.plugins.module_utils.login import loopback
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.auth import (
    _ADVICE, _KEY_REQUESTS, CLEARTEXT_PLUGINS, CR_AUTH_PLUGIN_ERR, CR_SSL_CONNECTION_ERROR, REFUSED_PLUGINS, key_refusal,
    password_policy, read_public_key)
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import (
    DEFAULT_HOST, describe_target, is_loopback, read_client_options, resolve_login)
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import VERIFIED_MODES
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.tls import tls_context, tls_plan, warn_unverified
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import error_text, query_one

try:
    import ssl
except ImportError:  # pragma: no cover - Python without TLS: every mode but disabled fails with a message
    ssl = None

PYMYSQL_IMPORT_ERROR = None
try:
    import pymysql
    import pymysql.cursors
except ImportError:  # pragma: no cover - reported by require_pymysql()
    pymysql = None
    PYMYSQL_IMPORT_ERROR = traceback.format_exc()


def require_pymysql(module):
    if pymysql is None:
        from ansible.module_utils.basic import missing_required_lib
        module.fail_json(msg=missing_required_lib('PyMySQL'), exception=PYMYSQL_IMPORT_ERROR)


def connection_kwargs(params):
    """Keyword arguments of Connection (PyMySQL's, dbfleet_tls: the tls_plan(), dbfleet_password: the
    password_policy(); server_public_key: the key login_server_public_key names) for the login options in params.

    Raises ValueError for options that contradict each other or an option file the client would refuse."""
    login = resolve_login(params)
    kwargs = dict(
        connect_timeout=params.get('connect_timeout') or 30,
        autocommit=True,
        charset='utf8mb4',
        cursorclass=pymysql.cursors.DictCursor if pymysql else None,
    )
    if params.get('read_timeout'):
        # Not a login option: a caller bounded in time (the restart gate) gives up on a read that blocks.
        kwargs['read_timeout'] = params['read_timeout']
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
    kwargs['dbfleet_tls'] = tls_plan(login)
    kwargs['dbfleet_password'] = password_policy(login)
    if login['server_public_key']:
        kwargs['server_public_key'] = read_public_key(login['server_public_key'])
    return kwargs


class ConnectError(Exception):
    """The server could not be reached or refused the login."""


class LoginRefused(ConnectError):
    """The collection's own rules refused the login (TLS the server does not offer, the password to a server that is
    not verified): trying again does not change them."""


if pymysql is not None:
    from pymysql.constants import CLIENT as _CLIENT

    _PREFERRED_TLS = dict(mode='preferred', ca_cert=None, client_cert=None, client_key=None)

    class _Refused(pymysql.err.OperationalError):
        """A login the collection's rules refuse (open_connection() raises LoginRefused for it)."""
        dbfleet_refused = True

    class Connection(pymysql.connections.Connection):
        """PyMySQL's connection with the collection's rules for TLS and the password (dbfleet_tls, a
        tls_plan(); dbfleet_password, a password_policy()).

        - modes required, verify_ca and verify_identity never fall back to plain text: a server that
          offers no TLS is refused before the client sends anything (user name included);
        - the password is sent in clear (CLEARTEXT_PLUGINS) only over a TLS connection whose server was
          verified, or over a unix socket; otherwise the login fails and the password is not sent;
        - the password inside TLS (full authentication of caching_sha2_password, sha256_password) goes only
          to a verified server, over a unix socket, to a trusted loopback address (below), or inside TLS when
          login_ssl_mode required was chosen explicitly (the user accepted an unverified server);
        - a unix socket, and a loopback address (while login_trust_loopback is not false), count only when the
          process at the other end is proven to run as the server's user (dbfleet_peer(): loopback.py, read on
          every connection); otherwise the refusal names the peer's owner and carries dbfleet_unproven_peer
          (open_connection() then tries the local server's socket);
        - the RSA exchange (the same, without TLS) only with the key the user gave (login_server_public_key:
          the key the server sends is ignored), with login_get_server_public_key chosen, or to a trusted
          loopback address; otherwise the client stops before it asks for the key. Hash-based logins
          (mysql_native_password, the fast path of caching_sha2_password) are not concerned."""

        def __init__(self, *args, dbfleet_tls=None, dbfleet_password=None, **kwargs):
            plan = dbfleet_tls or dict(mode='preferred', client_cert=None, client_key=None, explicit=False)
            policy = dbfleet_password or {}
            mode = plan['mode']
            if mode in ('disabled', 'socket'):
                kwargs['ssl_disabled'] = True
            elif mode != 'preferred' or plan.get('client_cert') or plan.get('client_key'):
                kwargs['ssl'] = tls_context(plan)
            self._dbfleet_tls_required = mode in ('required',) + VERIFIED_MODES
            self._dbfleet_accepts_unverified = bool(plan.get('explicit')) and mode == 'required'
            self._dbfleet_trust_loopback = policy.get('trust_loopback', True)
            self._dbfleet_get_key = bool(policy.get('get_server_public_key'))
            self._dbfleet_pinned_key = kwargs.get('server_public_key') or None
            self._dbfleet_authenticating = False
            self._dbfleet_peer = None
            self._dbfleet_switched_plugin = None
            super().__init__(*args, **kwargs)

        def _create_ssl_ctx(self, sslp):
            """Preferred TLS (no TLS option given): PyMySQL would make a new context for every connection and load the
            system's CA store into it (about 20 ms of CPU a login) for a context that verifies nothing; the one
            unverified context of this process instead (tls_context(), the same settings: TLS 1.2 or later, no
            certificate or name checked). Still preferred: a server without TLS gets the login in clear as before."""
            if not sslp:
                return tls_context(_PREFERRED_TLS)
            return super()._create_ssl_ctx(sslp)

        def dbfleet_auth_plugin(self):
            """The authentication plugin the login ended with: the one the server switched the client to, else the one
            its greeting named (the client's side of the exchange; a server plugin that needs nothing of the client,
            MariaDB's unix_socket, shows as the greeting's)."""
            name = self._dbfleet_switched_plugin or getattr(self, '_auth_plugin_name', None) or None
            return name.decode('ascii', 'replace') if isinstance(name, bytes) else name

        def dbfleet_peer(self):
            """loopback.peer_verdict() of the process at the other end of this connection (a unix socket, or TCP to a
            loopback address), read once per connection; None for TCP to another address."""
            if self._dbfleet_peer is None:
                sock = getattr(self, '_sock', None)
                if sock is None:
                    return None
                if self.unix_socket:
                    self._dbfleet_peer = loopback.unix_verdict(sock, self.unix_socket)
                elif is_loopback(self.host):
                    self._dbfleet_peer = loopback.tcp_verdict(sock)
            return self._dbfleet_peer

        def _dbfleet_refusal(self, errno, message):
            """The _Refused of a login: message, and the owner of the peer when it is not proven to be the server."""
            peer = self.dbfleet_peer() if (self.unix_socket or is_loopback(self.host)) else None
            unproven = peer is not None and not peer['trusted']
            if unproven:
                message += '. %s%s' % (peer['reason'][0].upper(), peer['reason'][1:])
            error = _Refused(errno, message)
            error.dbfleet_unproven_peer = unproven and not self.unix_socket
            return error

        # The server's RSA key: the user's (pinned) wins over any key a server sends; a key a server sends
        # is taken only where the RSA exchange is allowed (dbfleet_may_exchange_key()).
        @property
        def server_public_key(self):
            return self._dbfleet_pinned_key or self.__dict__.get('_dbfleet_server_key')

        @server_public_key.setter
        def server_public_key(self, value):
            if self._dbfleet_pinned_key or not value:
                return
            if self._dbfleet_authenticating and not self.dbfleet_may_exchange_key():
                raise self._dbfleet_refusal(CR_AUTH_PLUGIN_ERR, key_refusal('an RSA key sent unasked'))
            self.__dict__['_dbfleet_server_key'] = value

        def _dbfleet_tls_will_verify(self):
            context = getattr(self, 'ctx', None)
            return bool(self.ssl and context is not None and context.verify_mode == ssl.CERT_REQUIRED
                        and self.server_capabilities & _CLIENT.SSL)

        def _request_authentication(self):
            if self._dbfleet_tls_required and not self.server_capabilities & _CLIENT.SSL:
                raise _Refused(
                    CR_SSL_CONNECTION_ERROR, 'the server offers no TLS and login_ssl_mode requires it: nothing was sent to it')
            if self._auth_plugin_name == 'sha256_password' and self.password:
                # PyMySQL answers a greeting that names sha256_password in its first packet: with the
                # password inside TLS, or (no TLS) with a request for the server's key.
                if self.ssl and self.server_capabilities & _CLIENT.SSL:
                    if not (self._dbfleet_tls_will_verify() or self.dbfleet_local() or self._dbfleet_accepts_unverified):
                        raise self._dbfleet_refusal(
                            CR_AUTH_PLUGIN_ERR, 'the server wants the password itself (sha256_password) over a '
                            'connection whose server is not verified: refused, the password was not sent (%s; or '
                            'choose login_ssl_mode required explicitly to send it to an unverified server)' % _ADVICE)
                elif not (self._dbfleet_pinned_key or self.dbfleet_may_exchange_key()):
                    raise self._dbfleet_refusal(CR_AUTH_PLUGIN_ERR, key_refusal('sha256_password'))
            self._dbfleet_authenticating = True
            try:
                return super()._request_authentication()
            finally:
                self._dbfleet_authenticating = False

        def dbfleet_verified(self):
            """True when the password may travel in clear: a unix socket whose server is proven (dbfleet_peer()), or
            TLS with the server verified."""
            if self.unix_socket:
                return bool(self.dbfleet_peer() and self.dbfleet_peer()['trusted'])
            context = getattr(self, 'ctx', None)
            return bool(getattr(self, '_secure', False) and context is not None
                        and context.verify_mode == ssl.CERT_REQUIRED)

        def dbfleet_local(self):
            """True for a TCP login to a loopback address while login_trust_loopback is not false, whose listener is
            proven to run as the server's user (dbfleet_peer())."""
            if not (self._dbfleet_trust_loopback and not self.unix_socket and is_loopback(self.host)):
                return False
            peer = self.dbfleet_peer()
            return bool(peer and peer['trusted'])

        def dbfleet_may_reveal(self):
            """True when the password itself may go to the peer inside the connection (TLS or a socket)."""
            return (self.dbfleet_verified() or self.dbfleet_local()
                    or (self._dbfleet_accepts_unverified and getattr(self, '_secure', False)))

        def dbfleet_may_exchange_key(self):
            """True when the password may go encrypted with an RSA key the server sends."""
            return self._dbfleet_get_key or self.dbfleet_verified() or self.dbfleet_local()

        def write_packet(self, payload):
            if self._dbfleet_authenticating and self.password:
                if payload in _KEY_REQUESTS and not self.server_public_key and not self.dbfleet_may_exchange_key():
                    raise self._dbfleet_refusal(CR_AUTH_PLUGIN_ERR, key_refusal(_KEY_REQUESTS[payload]))
                if payload == self.password + b'\0' and not self.dbfleet_may_reveal():
                    raise self._dbfleet_refusal(
                        CR_AUTH_PLUGIN_ERR, 'the server wants the password itself (full authentication) and its '
                        'identity is not verified: refused, the password was not sent (%s; or choose login_ssl_mode '
                        'required explicitly to send it to an unverified server)' % _ADVICE)
            return super().write_packet(payload)

        def _process_auth(self, plugin_name, auth_packet, *args, **kwargs):
            name = plugin_name.encode('ascii', 'replace') if isinstance(plugin_name, str) else plugin_name
            self._dbfleet_switched_plugin = name
            if name in REFUSED_PLUGINS:
                raise self._dbfleet_refusal(CR_AUTH_PLUGIN_ERR, REFUSED_PLUGINS[name])
            if name in CLEARTEXT_PLUGINS and not self.dbfleet_verified():
                raise self._dbfleet_refusal(
                    CR_AUTH_PLUGIN_ERR,
                    'the server asks for the password in clear (%s) over a connection whose server is not verified: '
                    'refused, the password was not sent (%s)' % (name.decode('ascii', 'replace'), _ADVICE))
            return super()._process_auth(plugin_name, auth_packet, *args, **kwargs)
else:  # pragma: no cover - reported by require_pymysql() / open_connection()
    Connection = None


def socket_instead(params, kwargs, find=None, always=False):
    """The Connection kwargs of the local server's unix socket to try instead of a TCP login to a loopback address, or
    None. Before the TCP login when login_trust_loopback is false (the user trusts no port on this machine); after it
    (always) when its listener was not proven to be the server; never when the task names a socket: the socket
    config_file names, else the one a client finds (discovery.local_socket()); its server must then answer with the
    port the task named (same_server()) - a socket of another instance is not used."""
    if kwargs.get('unix_socket') or not is_loopback(kwargs.get('host')):
        return None
    if not always and params.get('login_trust_loopback') is not False:
        return None
    path = read_client_options(params.get('config_file')).get('unix_socket') or (find or discovery.local_socket)()['path']
    if not path:
        return None
    on_socket = dict(kwargs, unix_socket=path, host=DEFAULT_HOST,
                     dbfleet_tls=dict(kwargs['dbfleet_tls'], mode='socket'))
    on_socket.pop('port', None)
    return on_socket


def same_server(conn, port):
    """True when the server behind conn listens on port (the one the TCP login named)."""
    row = query_one(conn, 'SELECT @@GLOBAL.port AS port')
    return row is not None and str(row['port']) == str(port)


def _on_socket(on_socket, port):
    """A Connection over on_socket (socket_instead()) whose server listens on port, or None."""
    if not on_socket:
        return None
    try:
        conn = Connection(**on_socket)
    except (pymysql.err.MySQLError, OSError):
        return None
    if same_server(conn, port):
        return conn
    conn.close()
    return None


def open_connection(params):
    """Open a Connection for params; raises ConnectError with a clean message.

    A TCP login to a loopback address with login_trust_loopback false goes through the local server's unix socket
    when one is found and its server is the one on the named port (socket_instead()); otherwise over TCP, where
    the password itself is not sent (Connection). A TCP login that Connection refused because the listener on the
    loopback address is not proven to be the server goes through that socket too, when there is one; otherwise the
    refusal (naming the listener's owner) stands."""
    if pymysql is None:
        raise ConnectError('the PyMySQL library is not installed for this Python')
    try:
        kwargs = connection_kwargs(params)
        conn = _on_socket(socket_instead(params, kwargs), kwargs.get('port'))
        if conn is not None:
            return conn
        try:
            return Connection(**kwargs)
        except pymysql.err.MySQLError as e:
            conn = None
            if getattr(e, 'dbfleet_unproven_peer', False):
                conn = _on_socket(socket_instead(params, kwargs, always=True), kwargs.get('port'))
            if conn is None:
                raise
            return conn
    except pymysql.err.MySQLError as e:
        error = LoginRefused if getattr(e, 'dbfleet_refused', False) else ConnectError
        raise error('cannot connect to %s: %s' % (describe_target(params), error_text(e)))
    except (OSError, ValueError) as e:
        raise ConnectError('cannot connect to %s: %s' % (describe_target(params), e))


def connect(module):
    """Open the module's connection or fail the module with a message naming the target; a remote login that
    is not verified gets a warning in the result (warn_unverified())."""
    require_pymysql(module)
    try:
        conn = open_connection(module.params)
    except ConnectError as e:
        module.fail_json(msg=str(e))
    warn_unverified(module)
    return conn


def run_and_exit(module, what, action):
    """Connect, run action(conn) (a result dict with `failed`), close, and end the module with the result:
    fail_json when it failed or when the server raised (naming what failed), exit_json otherwise."""
    conn = connect(module)
    try:
        result = action(conn)
    except pymysql.err.MySQLError as e:
        module.fail_json(msg='%s failed: %s' % (what, error_text(e)), changed=False)
    finally:
        conn.close()
    if result.pop('failed'):
        module.fail_json(**result)
    module.exit_json(**result)
