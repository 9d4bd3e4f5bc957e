# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one connection helper of the collection.

Every module builds its argument spec with login_argument_spec() and opens its
connection with connect(module). Options are named as in community.mysql.
"""

from __future__ import annotations

import ipaddress
import os
import threading
import traceback

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import discovery
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.login import loopback

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
        login_ssl_mode=dict(type='str', choices=list(SSL_MODES)),
        login_server_public_key=dict(type='path'),
        login_get_server_public_key=dict(type='bool'),
        login_trust_loopback=dict(type='bool'),
    )


# TLS as MySQL's --ssl-mode names it (lower case, as Ansible choices are written).
SSL_MODES = ('disabled', 'preferred', 'required', 'verify_ca', 'verify_identity')
VERIFIED_MODES = ('verify_ca', 'verify_identity')

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
    ('login_ssl_mode', 'dbfleet_login_ssl_mode'),
    ('login_server_public_key', 'dbfleet_login_server_public_key'),
    ('login_get_server_public_key', 'dbfleet_login_get_server_public_key'),
    ('login_trust_loopback', 'dbfleet_login_trust_loopback'),
)

# Where the connection goes. A task that names a host or a socket names its server: it gets none of
# these from the inventory (login_args_from_host()).
TARGET_OPTIONS = ('login_host', 'login_port', 'login_unix_socket')


def _named(task_args, option, spec):
    """Whether task_args give option (under its name or an alias) a value."""
    names = [option] + list(spec[option].get('aliases', ()))
    return any(task_args.get(name) not in (None, '') for name in names)


def names_a_server(task_args):
    """Whether a task's arguments name the server to log in to (login_host, login_unix_socket or login_port): then
    nothing of the inventory host's own server (its socket, host, port or option file) is added to them."""
    spec = login_argument_spec()
    return any(_named(task_args, option, spec) for option in ('login_host', 'login_unix_socket', 'login_port'))


def login_args_from_host(task_args, host_vars, template=None):
    """The login options to add to task_args (a dict), taken from host_vars.

    An option the task passes (under its name or an alias, also through module_defaults) is
    left alone; a host variable that is not set, or set to null, adds nothing. template, when
    given, turns a host variable's raw value into its final value (Jinja in inventories).

    Explicit options win as a set: a task that names a server (login_host or login_unix_socket)
    gets none of the inventory's TARGET_OPTIONS (no socket, host or port of this host), only the
    credentials and the TLS policy it does not give itself; a task that names only login_port
    (TCP) gets no socket from the inventory.
    Returns a new dict of option -> value; task_args is not changed.
    """
    spec = login_argument_spec()

    def given(option):
        names = [option] + list(spec[option].get('aliases', ()))
        return any(name in task_args for name in names)

    names_server = _named(task_args, 'login_host', spec) or _named(task_args, 'login_unix_socket', spec)
    names_port = _named(task_args, 'login_port', spec)
    added = {}
    for option, variable in LOGIN_HOST_VARIABLES:
        if given(option) or variable not in host_vars:
            continue
        if names_server and option in TARGET_OPTIONS:
            continue
        if names_port and option == 'login_unix_socket':
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


# ca_cert naming the system's CA store instead of a file: used only with the host name checked (verify_identity).
SYSTEM_CA = 'system'
_CA_ADVICE = ('set ca_cert (host variable dbfleet_login_ca_cert) to the CA file that signed the server\'s certificate, '
              'or ca_cert: system with login_ssl_mode verify_identity to trust the system\'s CAs with the host name '
              'checked')


def ssl_mode(login, need_ca=True):
    """The --ssl-mode of a resolve_login() result: login_ssl_mode when given, else from the other TLS options.

    Not given: verify_identity with ca_cert (verify_ca with check_hostname false) or with check_hostname
    true, required with a client certificate alone, else preferred (community.mysql's behaviour: TLS when
    the server offers it, unverified). As the mysql client: verify_ca and verify_identity need a CA the
    user gives (ca_cert, a file; or ca_cert: system, the system's CAs, only with the host name checked),
    never "every public CA" by default. check_hostname contradicting login_ssl_mode, or a verifying mode
    without a CA (need_ca: the connection uses TLS), is an error (ValueError), not a guess."""
    mode = login.get('ssl_mode')
    check = login.get('check_hostname')
    if mode is not None:
        if mode not in SSL_MODES:
            raise ValueError('login_ssl_mode %r is not one of %s' % (mode, ', '.join(SSL_MODES)))
        if check is True and mode != 'verify_identity':
            raise ValueError('check_hostname true asks for the server name to be checked, which login_ssl_mode %s '
                             'does not do: use login_ssl_mode verify_identity, or drop one of the two' % mode)
        if check is False and mode == 'verify_identity':
            raise ValueError('check_hostname false contradicts login_ssl_mode verify_identity (which checks the '
                             'server name): use login_ssl_mode verify_ca, or drop one of the two')
    elif check:
        mode = 'verify_identity'
    elif login.get('ca_cert'):
        mode = 'verify_ca' if check is False else 'verify_identity'
    elif login.get('client_cert') or login.get('client_key'):
        mode = 'required'
    else:
        mode = 'preferred'
    if mode in VERIFIED_MODES and need_ca:
        ca = login.get('ca_cert')
        if not ca:
            raise ValueError('login_ssl_mode %s verifies the server against a CA, and none was given: %s'
                             % (mode, _CA_ADVICE))
        if ca == SYSTEM_CA and mode != 'verify_identity':
            raise ValueError('ca_cert: system (any certificate a public CA issued) is used only with the host name '
                             'checked: use login_ssl_mode verify_identity, or give the CA file of the server '
                             '(verify_ca)')
    return mode


def tls_plan(login):
    """How a resolve_login() result uses TLS: dict(mode, ca_cert, client_cert, client_key, explicit).

    mode is ssl_mode(), except over a unix socket: the socket is a file on the server's machine, TLS is
    not used (mode 'socket'). explicit: login_ssl_mode was chosen (task, host variable or option file)."""
    explicit = login.get('ssl_mode') is not None
    if login.get('unix_socket'):
        ssl_mode(login, need_ca=False)     # contradictions are errors on every transport
        return dict(mode='socket', ca_cert=None, client_cert=None, client_key=None, explicit=explicit)

    def path(value):
        if value == SYSTEM_CA:
            return value
        return os.path.expanduser(value) if value else None

    return dict(mode=ssl_mode(login), ca_cert=path(login.get('ca_cert')), client_cert=path(login.get('client_cert')),
                client_key=path(login.get('client_key')), explicit=explicit)


_CONTEXTS = {}
_CONTEXTS_LOCK = threading.Lock()


def _file_stamp(path):
    try:
        stat = os.stat(path)
        return (path, stat.st_mtime_ns, stat.st_size)
    except OSError:
        return (path, None, None)


def tls_context(plan):
    """The ssl.SSLContext of a tls_plan() (modes required, verify_ca, verify_identity, and preferred with a
    client certificate), built once per process for the same options and files.

    verify_ca and verify_identity verify the chain against ca_cert (the system's CAs for ca_cert: system, with
    the name checked); verify_identity also checks that the certificate names the host connected to. required encrypts
    without verifying."""
    if ssl is None:
        raise ValueError('this Python has no ssl module: login_ssl_mode %s cannot be used' % plan['mode'])
    key = (plan['mode'],) + tuple(_file_stamp(plan[name]) if plan[name] and plan[name] != SYSTEM_CA else plan[name]
                                  for name in ('ca_cert', 'client_cert', 'client_key'))
    with _CONTEXTS_LOCK:
        context = _CONTEXTS.get(key)
        if context is None:
            context = _CONTEXTS[key] = _build_context(plan)
        return context


def _build_context(plan):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if plan['mode'] in VERIFIED_MODES:
        context.verify_mode = ssl.CERT_REQUIRED
        context.check_hostname = plan['mode'] == 'verify_identity'
        # MySQL's and MariaDB's generated certificates lack extensions the strict X.509 checks of
        # Python 3.13 want (as PyMySQL does).
        context.verify_flags &= ~getattr(ssl, 'VERIFY_X509_STRICT', 0)
        if plan['ca_cert'] == SYSTEM_CA:
            context.check_hostname = True       # the system's CAs only with the name checked (ssl_mode())
            context.load_default_certs()
        else:
            context.load_verify_locations(cafile=plan['ca_cert'])
    else:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if plan['client_cert'] or plan['client_key']:
        context.load_cert_chain(plan['client_cert'] or plan['client_key'], keyfile=plan['client_key'])
    return context


def identity_refusal(params):
    """For the controller mode: why the controller must not send params' password, or None.

    The controller sends one fleet-wide password to addresses an inventory names. It sends it only to a
    server whose identity it verifies (verify_ca, verify_identity), to one on its own machine (a socket, or a
    loopback address while login_trust_loopback is not false), or where the user chose an unverified
    login_ssl_mode explicitly (then Connection's rules still keep the password itself from an unverified
    server: only hash-based logins, or required's TLS)."""
    login = resolve_login(params)
    if not login.get('password') or login['unix_socket'] or (login['trust_loopback'] and is_loopback(login['host'])):
        return None
    plan = tls_plan(login)
    if plan['mode'] in VERIFIED_MODES or plan['explicit']:
        return None
    return ('not connected: %s is not on the controller and its identity cannot be verified (login_ssl_mode %s '
            'without a CA), so the password was not sent. Set verify_fleet controller_ca_cert and '
            'dbfleet_login_ssl_mode verify_identity (the server is then verified), or choose dbfleet_login_ssl_mode '
            'explicitly (required sends the password inside TLS to an unverified server; preferred logs in only '
            'where the server asks for a hash of the password, never the password itself)'
            % (describe_target(params), plan['mode']))


def _login_and_plan(params):
    """(resolve_login(), tls_plan()) of params, or (None, None) when the options are refused (the connection
    says why)."""
    try:
        login = resolve_login(params)
        return login, tls_plan(login)
    except ValueError:
        return None, None


def identity_note(params):
    """For the controller mode: the note that a server's identity is not verified, by the user's choice, or None."""
    login, plan = _login_and_plan(params)
    if login is None or login['unix_socket'] or (login['trust_loopback'] and is_loopback(login['host'])):
        return None
    if plan['mode'] in VERIFIED_MODES or not plan['explicit']:
        return None
    return ("the server's identity was not verified: login_ssl_mode %s was chosen for %s"
            % (plan['mode'], describe_target(params)))


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


def password_policy(login):
    """How a resolve_login() result lets the password itself leave (Connection's dbfleet_password):
    dict(get_server_public_key, trust_loopback)."""
    return dict(get_server_public_key=bool(login.get('get_server_public_key')),
                trust_loopback=login.get('trust_loopback', True) is not False)


def read_public_key(path):
    """The PEM bytes of the server's RSA public key in path (login_server_public_key); ValueError naming the path."""
    path = os.path.expanduser(path)
    try:
        with open(path, 'rb') as handle:
            data = handle.read(65536)
    except OSError as e:
        raise ValueError('login_server_public_key %s cannot be read: %s' % (path, e.strerror or e))
    if b'-----BEGIN PUBLIC KEY-----' not in data and b'-----BEGIN RSA PUBLIC KEY-----' not in data:
        raise ValueError('login_server_public_key %s holds no PEM public key (the server\'s public_key.pem, '
                         'as SHOW STATUS LIKE \'Caching_sha2_password_rsa_public_key\' prints it)' % path)
    return data


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


class LoginRefused(ConnectError):
    """The collection's own rules refused the login (TLS the server does not offer, the password to a server that is
    not verified): trying again does not change them."""


# Authentication methods that make the client send the password itself: mysql_clear_password (PAM, LDAP
# simple) and MariaDB's dialog (its "Password: " prompt). PyMySQL answers both with the password in clear.
CLEARTEXT_PLUGINS = (b'mysql_clear_password', b'dialog')
# Authentication methods the collection never answers, with the reason (the mysql client of MySQL 5.7 and later and
# MariaDB's without secure_auth off refuse mysql_old_password too; PyMySQL 1.1 and later fail with a traceback).
REFUSED_PLUGINS = {
    b'mysql_old_password': (
        'the server asks for mysql_old_password, the pre-4.1 password hash (16 bytes, broken: its scramble can be '
        'reversed to the hash and the hash used to log in): refused, nothing of the password was sent; give the '
        'account mysql_native_password or caching_sha2_password (ALTER USER ... IDENTIFIED WITH ...)'),
}
# Error numbers of the MySQL client library: CR_SSL_CONNECTION_ERROR, CR_AUTH_PLUGIN_ERR.
CR_SSL_CONNECTION_ERROR = 2026
CR_AUTH_PLUGIN_ERR = 2061
# A request for the server's RSA public key, by the plugin that sends it (sha256_password: 1,
# caching_sha2_password: 2): the client then encrypts the password with the key it is given - for whoever
# holds that key.
_KEY_REQUESTS = {b'\x01': 'sha256_password', b'\x02': 'caching_sha2_password'}
_ADVICE = 'use login_ssl_mode verify_identity (or verify_ca) with ca_cert, or a unix socket'
_KEY_ADVICE = ("to allow it, give the server's public key (login_server_public_key, a file, as the mysql client's "
               "--server-public-key-path; host variable dbfleet_login_server_public_key) or choose "
               "login_get_server_public_key: true (as --get-server-public-key; dbfleet_login_get_server_public_key); "
               "or " + _ADVICE)


def key_refusal(plugin):
    """The message of a refused RSA key exchange: what the server asked for and the ways to allow it."""
    return ("the server asks for the password encrypted with an RSA public key it would send itself (%s, no TLS), "
            "and nothing verifies that key: refused, the password was not sent (%s)" % (plugin, _KEY_ADVICE))


if pymysql is not None:
    from pymysql.constants import CLIENT as _CLIENT

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
            super().__init__(*args, **kwargs)

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
        raise error('cannot connect to %s: %s' % (describe_target(params), _error_text(e)))
    except (OSError, ValueError) as e:
        raise ConnectError('cannot connect to %s: %s' % (describe_target(params), e))


def unverified_warning(params):
    """The warning for a TCP login to a server that is not on this machine and not verified, or None."""
    login, plan = _login_and_plan(params)
    if login is None or login['unix_socket'] or is_loopback(login['host']) or plan['mode'] in VERIFIED_MODES:
        return None
    return ('the server %s is reached over TCP without verifying its identity (login_ssl_mode %s): whoever answers '
            'on that address gets the login. To verify it, set login_ssl_mode verify_identity with ca_cert (host '
            'variables dbfleet_login_ssl_mode, dbfleet_login_ca_cert), or log in through login_unix_socket on the host'
            % (describe_target(params), plan['mode']))


def warn_unverified(module, params=None):
    """Put unverified_warning() of params (the module's login options when None) in the module's result: every route
    that opens a connection calls it (connect(), the restart gate, topology_facts, the restart's look at the server,
    the drop and conversion engine)."""
    warning = unverified_warning(module.params if params is None else params)
    if warning:
        module.warn(warning)
    return warning


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
        module.fail_json(msg='%s failed: %s' % (what, _error_text(e)), changed=False)
    finally:
        conn.close()
    if result.pop('failed'):
        module.fail_json(**result)
    module.exit_json(**result)


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


def _show_global(conn, what, names):
    """SHOW GLOBAL <what> (VARIABLES or STATUS) as {lower-case name: str value}, only names when given."""
    if names:
        names = sorted(set(n.lower() for n in names))
        placeholders = ', '.join(['%s'] * len(names))
        rows = query(conn, 'SHOW GLOBAL %s WHERE Variable_name IN (%s)' % (what, placeholders), names)
    else:
        rows = query(conn, 'SHOW GLOBAL %s' % what)
    return dict((r['Variable_name'].lower(), r['Value']) for r in rows)


def global_variables(conn, names=None):
    """GLOBAL values (never session values) as {lower-case name: str value}."""
    return _show_global(conn, 'VARIABLES', names)


def global_status(conn, names=None):
    """GLOBAL status counters as {lower-case name: str value}."""
    return _show_global(conn, 'STATUS', names)


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
