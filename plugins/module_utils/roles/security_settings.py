# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Server settings that turn security off, as data: what the settings role (settings_values) refuses unless the run
names them in settings_allow_security_settings, and the secret-valued settings it refuses always.

A policy of the collection, not a fact of a flavor or version (those are flavors.py's): one table for every server,
each row with its reason and where that reason comes from (docs/security.md, "Security-critical settings", cites
the sections). A name is matched in every spelling mysqld's option parser takes for it (my_getopt): dashes for
underscores, any case, the loose- prefix, and the special prefixes skip-, disable- (the option set to OFF),
enable- (ON) and maximum- (the most SET may set). Unit tests:
tests/unit/plugins/module_utils/roles/test_security_settings.py.
"""

from __future__ import annotations

import fnmatch
from collections import namedtuple

from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils import values

# pattern: a name or a shell pattern (ssl_*); safe: the one value allowed without an acknowledgement - ON or OFF
# for a switch, STRONG_PLUGINS for a list of authentication plugins, None when every value is refused (paths,
# code, keys: any change of them is the risk); source: the key of SOURCES.
Rule = namedtuple('Rule', 'pattern category safe why source')
STRONG_PLUGINS = 'no weak authentication plugin'
# Authentication plugins that store or send a password weakly: unsalted SHA1 hashes (mysql_native_password,
# deprecated in MySQL 8.0.34, off by default in 8.4, removed in 9.0), the pre-4.1 hash, the password in clear.
WEAK_PLUGINS = ('mysql_native_password', 'mysql_old_password', 'mysql_clear_password', 'authentication_ldap_simple')

# By title (the manuals renumber their sections between releases; the page names stay): docs/security.md links them.
SOURCES = {
    'cis-mysql': 'CIS Oracle MySQL Community Server 8.0 Benchmark (database-level and file-permission controls)',
    'cis-mariadb': 'CIS MariaDB Benchmark; MariaDB KB "Server System Variables" (old_passwords, secure_auth)',
    'mysql-security-options': 'MySQL Reference Manual "Security-Related mysqld Options and Variables" '
                              '(security-options.html)',
    'mysql-local-infile': 'MySQL Reference Manual "Security Considerations for LOAD DATA LOCAL" '
                          '(load-data-local-security.html)',
    'mysql-auth': 'MySQL Reference Manual "Authentication Plugins" (authentication-plugins.html), "Server System '
                  'Variables" (authentication_policy, default_authentication_plugin)',
    'mysql-tls': 'MySQL Reference Manual "Using Encrypted Connections" (encrypted-connections.html)',
    'mysql-keyring': 'MySQL Reference Manual "The MySQL Keyring" (keyring.html)',
    'mysql-plugins': 'MySQL Reference Manual "Installing and Uninstalling Plugins" (plugin-loading.html)',
    'mysql-init': 'MySQL Reference Manual "Server System Variables" (init_file, init_connect, init_replica; '
                  'server-system-variables.html)',
    'mysql-logs': 'MySQL Reference Manual "MySQL Server Logs" (server-logs.html), "Security Guidelines" '
                  '(security-guidelines.html)',
}

# The order is the message's: authentication, transport, file access, code the server runs, files it writes.
RULES = (
    # Authentication
    Rule('skip_grant_tables', 'authentication', 'OFF', 'starts the server without its privilege tables: anyone '
         'connects as any user with every privilege', 'cis-mysql'),
    Rule('authentication_policy', 'authentication', STRONG_PLUGINS, 'names the plugins accounts authenticate with; '
         'a weak one (%s) stores or sends passwords weakly' % ', '.join(WEAK_PLUGINS), 'mysql-auth'),
    Rule('default_authentication_plugin', 'authentication', STRONG_PLUGINS, 'the plugin new accounts get; a weak one '
         '(%s) stores or sends passwords weakly' % ', '.join(WEAK_PLUGINS), 'mysql-auth'),
    Rule('mysql_native_password', 'authentication', 'OFF', 'loads mysql_native_password (unsalted SHA1 hashes, '
         'deprecated in MySQL 8.0.34, off by default in 8.4)', 'mysql-auth'),
    Rule('old_passwords', 'authentication', 'OFF', 'hashes new passwords the pre-4.1 way', 'cis-mariadb'),
    Rule('secure_auth', 'authentication', 'ON', 'OFF lets accounts with pre-4.1 password hashes log in',
         'cis-mariadb'),
    Rule('caching_sha2_password_*_key_path', 'authentication', None, 'the RSA key pair logins exchange the '
         'password with: a key from elsewhere gives its owner the password', 'mysql-auth'),
    Rule('sha256_password_*_key_path', 'authentication', None, 'the RSA key pair logins exchange the password '
         'with: a key from elsewhere gives its owner the password', 'mysql-auth'),
    # Transport
    Rule('require_secure_transport', 'transport', 'ON', 'OFF lets clients log in over unencrypted TCP', 'cis-mysql'),
    Rule('ssl', 'transport', 'ON', 'OFF (skip-ssl) turns TLS off', 'mysql-tls'),
    Rule('ssl_*', 'transport', None, "the server's TLS keys, certificates, ciphers and versions: a file in a "
         'directory another user controls, or an old protocol, undoes the encryption', 'mysql-tls'),
    Rule('tls_*', 'transport', None, 'the TLS versions and ciphers the server offers: an old one is a weaker '
         'channel', 'mysql-tls'),
    Rule('admin_ssl_*', 'transport', None, "the administrative interface's TLS keys and certificates", 'mysql-tls'),
    Rule('admin_tls_*', 'transport', None, "the administrative interface's TLS versions and ciphers", 'mysql-tls'),
    Rule('mysqlx_ssl_*', 'transport', None, "the X Protocol's TLS keys and certificates", 'mysql-tls'),
    # File access by SQL
    Rule('local_infile', 'file access', 'OFF', 'ON lets LOAD DATA LOCAL read files of the client host and serve '
         'them to the server', 'mysql-local-infile'),
    Rule('secure_file_priv', 'file access', None, 'the one directory LOAD DATA, SELECT ... INTO OUTFILE and '
         'LOAD_FILE() may use; empty means every file mysqld can read or write', 'cis-mysql'),
    Rule('allow_suspicious_udfs', 'file access', 'OFF', 'ON loads user-defined functions from any shared object',
         'cis-mysql'),
    Rule('symbolic_links', 'file access', 'OFF', 'ON lets tables be symbolic links to files anywhere mysqld can '
         'write', 'cis-mysql'),
    Rule('log_raw', 'file access', 'OFF', 'ON writes passwords in clear text to the general query log',
         'cis-mysql'),
    # Code the server runs
    Rule('init_file', 'code', None, 'SQL the server runs at start, as a superuser, from that file', 'mysql-init'),
    Rule('init_connect', 'code', None, 'SQL the server runs for every client that connects', 'mysql-init'),
    Rule('init_replica', 'code', None, 'SQL the server runs whenever the replica starts', 'mysql-init'),
    Rule('init_slave', 'code', None, 'SQL the server runs whenever the replica starts', 'mysql-init'),
    Rule('plugin_dir', 'code', None, 'the directory shared objects (plugins, UDFs) are loaded from, into mysqld',
         'mysql-plugins'),
    Rule('plugin_load', 'code', None, 'shared objects loaded into mysqld at start', 'mysql-plugins'),
    Rule('plugin_load_add', 'code', None, 'shared objects loaded into mysqld at start', 'mysql-plugins'),
    Rule('early_plugin_load', 'code', None, 'shared objects loaded into mysqld before InnoDB starts',
         'mysql-plugins'),
    Rule('keyring_*', 'code', None, 'where the keyring keeps the encryption keys and how it reaches them',
         'mysql-keyring'),
    Rule('des_key_file', 'code', None, 'the file of keys DES_ENCRYPT() uses', 'mysql-security-options'),
    # Files the server writes (or reads) as its own user
    Rule('general_log_file', 'files', None, 'a file mysqld writes every statement to: anywhere mysqld can write, '
         'it overwrites or exposes a file', 'mysql-logs'),
    Rule('slow_query_log_file', 'files', None, 'a file mysqld writes statements to: anywhere mysqld can write, it '
         'overwrites or exposes a file', 'mysql-logs'),
    Rule('log_error', 'files', None, 'the error log mysqld writes: anywhere mysqld can write, it overwrites or '
         'exposes a file', 'mysql-logs'),
    Rule('tmpdir', 'files', None, "where mysqld writes temporary files: a directory another user controls sees "
         "the server's data", 'mysql-security-options'),
    Rule('innodb_tmpdir', 'files', None, "where online ALTER TABLE writes sort files: a directory another user "
         "controls sees the table's data", 'mysql-security-options'),
    Rule('replica_load_tmpdir', 'files', None, 'where the replica writes LOAD DATA files', 'mysql-security-options'),
    Rule('slave_load_tmpdir', 'files', None, 'where the replica writes LOAD DATA files', 'mysql-security-options'),
    Rule('datadir', 'files', None, "the server's data: moved by an option file, the server starts on other files",
         'cis-mysql'),
    Rule('basedir', 'files', None, 'where the server finds its own files (plugins, messages) by default',
         'cis-mysql'),
    Rule('pid_file', 'files', None, 'a file mysqld writes as its own user (and the restart tools trust)',
         'mysql-security-options'),
    Rule('character_sets_dir', 'files', None, 'files mysqld reads at start', 'mysql-security-options'),
    Rule('lc_messages_dir', 'files', None, 'files mysqld reads at start', 'mysql-security-options'),
)

# mysqld's option parser (my_getopt.c, special_opt_prefix): an option name it does not know is tried without one of
# these prefixes; skip- and disable- set the option OFF, enable- ON (unless given 0), maximum- its ceiling. loose-
# only stops an unknown option from failing the start, and may come before any of them.
LOOSE = 'loose_'
PREFIX_EFFECTS = (('skip_', 'off'), ('disable_', 'off'), ('enable_', 'on'), ('maximum_', 'maximum'))


def normalized(name):
    """name as mysqld compares option names: lower case, dashes as underscores."""
    return str(name).strip().lower().replace('-', '_')


def spellings(name):
    """[(base name, effect)] every option name the written name may stand for: itself, without loose_, and without
    one of mysqld's special prefixes (effect 'off', 'on' or 'maximum'; None for the name itself)."""
    text = normalized(name)
    out = []
    for base in (text, text[len(LOOSE):]) if text.startswith(LOOSE) else (text,):
        out.append((base, None))
        for prefix, effect in PREFIX_EFFECTS:
            if base.startswith(prefix) and len(base) > len(prefix):
                out.append((base[len(prefix):], effect))
    return out


def rule_for(base):
    """The rule of RULES whose pattern matches base (a normalized option name), or None."""
    for rule in RULES:
        if fnmatch.fnmatchcase(base, rule.pattern):
            return rule
    return None


def _effective(value, effect):
    """The value a written value sets under a prefix's effect."""
    if effect == 'off':
        return 'OFF'
    if effect == 'on':
        try:
            return 'OFF' if values.parse_bool(value) is False else 'ON'
        except values.ValueError_:
            return 'ON'
    return value


def weakens(rule, value, effect=None):
    """Whether value (written under effect) is one the rule refuses without an acknowledgement."""
    if effect == 'maximum' or rule.safe is None:
        return True
    value = _effective(value, effect)
    if rule.safe == STRONG_PLUGINS:
        words = normalized(value).replace(',', ' ').split() if isinstance(value, str) else None
        return words is None or any(w in WEAK_PLUGINS for w in words)
    try:
        return values.parse_bool(value) != (rule.safe == 'ON')
    except values.ValueError_:
        return True


def refusals(wanted, allowed=()):
    """[(written name, base name, rule)] of the settings of wanted ({name: value}; null values are left alone, so
    never refused) that turn security off, in RULES' order, leaving out those whose base name or pattern is in
    allowed (settings_allow_security_settings, normalized)."""
    allowed = set(normalized(a) for a in allowed or ())
    found = []
    for key, value in wanted.items():
        if value is None:
            continue
        for base, effect in spellings(key):
            rule = rule_for(base)
            if rule is None or not weakens(rule, value, effect):
                continue
            if base not in allowed and rule.pattern not in allowed:
                found.append((key, base, rule))
            break
    return sorted(found, key=lambda f: (RULES.index(f[2]), str(f[0])))


def unknown_allowances(allowed):
    """The names of settings_allow_security_settings that no rule covers (a misspelling acknowledges nothing)."""
    return [a for a in allowed or () if not isinstance(a, str) or rule_for(normalized(a)) is None]


def secrets(wanted):
    """The written names of wanted whose value is a secret in any spelling (masking.is_secret_variable)."""
    return sorted(str(key) for key, value in wanted.items()
                  if value is not None and any(masking.is_secret_variable(base) for base, _e in spellings(key)))


def refusal_message(found, variable, allow_variable):
    """One message naming each refused setting and why."""
    parts = ['%s%s (%s): %s' % (key, '' if normalized(key) == base else ' = %s' % base, rule.category, rule.why)
             for key, base, rule in found]
    return ('%s turns security off, refused before anything changed: %s. A run that must set one names it in %s '
            '(docs/security.md)' % (variable, '; '.join(parts), allow_variable))


def secret_message(names, variable):
    return ('%s holds a secret (%s): refused before anything changed - the role would carry the value through its '
            'results, its diff and its drop-in. Keep it in an option file of your own, mode 0640, owned by root and '
            "the server's group (docs/security.md)" % (variable, ', '.join(names)))
