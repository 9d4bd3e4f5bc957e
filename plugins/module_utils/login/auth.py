# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The authentication rules of a login: which authentication methods the collection refuses or answers only
to a verified server, how the password may leave (password_policy()), and the server's RSA key (read_public_key())."""

from __future__ import annotations

import os


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
