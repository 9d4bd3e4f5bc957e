# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TLS of a login and the verification of the server's identity: the --ssl-mode (ssl_mode()), the plan a
connection follows (tls_plan()), its ssl.SSLContext (tls_context()), and the warnings and refusals for a server that
is not verified."""

from __future__ import annotations

import os
import threading

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import describe_target, is_loopback, resolve_login
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import SSL_MODES, VERIFIED_MODES

try:
    import ssl
except ImportError:  # pragma: no cover - Python without TLS: every mode but disabled fails with a message
    ssl = None


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
