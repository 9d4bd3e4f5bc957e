# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets masked by what a variable is, never by substring: one place for every output that shows a server's
values (the verify module's result, server_facts' command line, the upgrade findings, the fleet report and the
controller audit's messages). Small on purpose: a module that masks does not carry the report's renderers."""

from __future__ import annotations

import fnmatch
import functools
import re

MASK = '********'
# The one pattern list of secrets. A variable is secret when its name is one of SECRET_VARIABLES, or `password`,
# or ends with _<word> for a word of SECRET_WORDS (report_password, authentication_ldap_sasl_bind_root_pwd,
# keyring_hashicorp_secret_id, file_key_management_filekey, wsrep_sst_auth); inside an option string or a command
# line, a key containing one of the words (password=, sst_auth:) has its value masked. tests/unit/plugins/
# module_utils/test_masking.py holds this against every variable name of the lab's four servers.
SECRET_WORDS = ('password', 'passwd', 'pwd', 'auth', 'secret', 'secret_id', 'credential', 'credentials', 'token',
                'passphrase', 'filekey')
SECRET_VARIABLES = ('wsrep_sst_auth', 'report_password', 'rpl_semi_sync_master_password')
SECRET_SUFFIXES = tuple('_' + word for word in SECRET_WORDS)
# Named like a secret, but a setting about passwords or authentication, not one.
NOT_SECRET = ('disconnect_on_expired_password', 'log_builtin_as_identified_by_password', 'secure_auth')
# Variables whose value is a list of options or a command line: credentials inside (key=value) are masked.
OPTION_STRING_PATTERNS = ('*_option', '*_options', '*_cmd', '*_command', 'wsrep_provider_options',
                          'daemon_memcached_option')
_CREDENTIAL_RE = re.compile(r'(?i)(\b[a-z0-9_.-]*(?:%s)\b[a-z0-9_.-]*\s*[=:]\s*)("[^"]*"|\'[^\']*\'|[^\s;,]+)'
                            % '|'.join(sorted(SECRET_WORDS, key=len, reverse=True)))
# The fields of a verify item that hold the variable's value in some form.
_VALUE_FIELDS = ('desired', 'desired_normalized', 'runtime', 'persisted', 'default')
_NESTED_VALUE_FIELDS = (('configured', ('value', 'text')), ('command_line', ('value', 'text')),
                        ('startup', ('value',)))


@functools.lru_cache(maxsize=4096)
def is_secret_variable(name):
    """True for a variable whose value is a secret (wsrep_sst_auth, report_password, *_password, *_auth, ...)."""
    text = str(name or '').strip().lower().replace('-', '_')
    if text.startswith('loose_'):
        text = text[len('loose_'):]
    if text in NOT_SECRET:
        return False
    return text in SECRET_VARIABLES or text == 'password' or text.endswith(SECRET_SUFFIXES)


@functools.lru_cache(maxsize=4096)
def is_option_string_variable(name):
    text = str(name or '').strip().lower().replace('-', '_')
    return any(fnmatch.fnmatchcase(text, pattern) for pattern in OPTION_STRING_PATTERNS)


def mask_text(text):
    """text with the value of every credential-looking key=value / key: value masked (password=, *_auth =, ...).

    By the key, never by the value: a short password such as ON does not blank other text."""
    if not isinstance(text, str):
        return text
    return _CREDENTIAL_RE.sub(_masked_credential, text)


def _masked_credential(match):
    # The server's "Access denied for user ... (using password: YES)" says whether a password was sent, not which.
    if match.string[:match.start()].endswith('(using ') and match.group(2).upper() in ('YES)', 'NO)'):
        return match.group(0)
    return match.group(1) + MASK


def mask_argv(argv):
    """A server command line (a list, argv[0] first) with every secret masked, as the report masks by name:
    the value of an option whose variable is a secret (``--report-password=x``, ``--loose-wsrep-sst-auth x``,
    ``--file-key-management-filekey=x``; also the next argument when the value is given apart), a short
    ``-p<password>``, and the credentials inside an option string (``--wsrep-provider-options=...``).
    Returns a new list."""
    out = []
    mask_next = False
    for position, arg in enumerate(argv or []):
        arg = '%s' % (arg,)
        if mask_next:
            # mysqld takes the next argument as the value whatever it starts with (--wsrep-sst-auth -leading).
            out.append(MASK)
            mask_next = False
            continue
        mask_next = False
        if position == 0 or not arg.startswith('-'):
            out.append(arg)
            continue
        if not arg.startswith('--'):
            out.append(arg[:2] + MASK if arg.startswith('-p') and len(arg) > 2 else arg)
            continue
        name, has_value, value = arg[2:].partition('=')
        if is_secret_variable(name):
            out.append('--%s=%s' % (name, MASK) if has_value else arg)
            mask_next = not has_value
        elif has_value and is_option_string_variable(name):
            out.append('--%s=%s' % (name, mask_text(value)))
        else:
            out.append(arg)
    return out


def secret_values(variables):
    """The values (as text, non-empty) of every secret variable named anywhere in variables - a {name: value} map,
    maps nested in it included (a role's inputs: settings_values inside them). A module adds them to its
    no_log_values, so Ansible masks them wherever they appear in its result, its diff and its invocation (-vvv)."""
    found = set()
    if isinstance(variables, dict):
        for name, value in variables.items():
            if isinstance(value, dict):
                found |= secret_values(value)
            elif value not in (None, '') and is_secret_variable(name):
                found.add('%s' % (value,))
    return found


def mask_by_name(values):
    """A copy of values ({variable name: value}) with the value of every secret variable masked."""
    return dict((name, MASK if value not in (None, '') and is_secret_variable(name) else value)
                for name, value in (values or {}).items())


def mask_item(name, item):
    """Mask, in place, a verify item's values by what its variable is: every value of a secret variable
    (and the option-file line and command-line text that hold it), or the credentials inside an option
    string. Returns item."""
    names = (name, item.get('resolved_name'))
    if any(is_secret_variable(n) for n in names if n):
        shown = set()
        for field in _VALUE_FIELDS:
            if item.get(field) not in (None, ''):
                shown.add('%s' % (item[field],))
                item[field] = MASK
        for field, keys in _NESTED_VALUE_FIELDS:
            if isinstance(item.get(field), dict):
                for key in keys:
                    if item[field].get(key) not in (None, ''):
                        shown.add('%s' % (item[field][key],))
                        item[field][key] = MASK
        startup = item.get('startup')
        if isinstance(startup, dict) and isinstance(startup.get('source'), str):
            for value in sorted(shown, key=len, reverse=True):
                startup['source'] = startup['source'].replace(value, MASK)
        notes = []
        for note in item.get('notes') or []:
            text = '%s' % (note,)
            for value in sorted(shown, key=len, reverse=True):   # this variable's own values, in its own notes
                text = text.replace(value, MASK)
            notes.append(text)
        item['notes'] = notes
        item['masked'] = True
    elif any(is_option_string_variable(n) for n in names if n):
        for field in _VALUE_FIELDS:
            item[field] = mask_text(item.get(field))
        for field, keys in _NESTED_VALUE_FIELDS:
            if isinstance(item.get(field), dict):
                for key in keys:
                    item[field][key] = mask_text(item[field].get(key))
        item['notes'] = [mask_text(n) for n in item.get('notes') or []]
    return item


def mask_login_secrets(results, secrets):
    """results (host -> result) with each of secrets (login passwords) masked in the messages of a result
    (msg, errors) where it stands as a word of its own; values are never touched. Only a host whose message
    quotes one is copied."""
    patterns = [re.compile(r'(?<![A-Za-z0-9])%s(?![A-Za-z0-9])' % re.escape(s)) for s in secrets if s]
    out = dict(results)
    if not patterns:
        return out

    def clean(text):
        if not isinstance(text, str):
            return text
        for pattern in patterns:
            text = pattern.sub(MASK, text)
        return text

    for name, outcome in results.items():
        if not isinstance(outcome, dict):
            continue
        msg, errors = outcome.get('msg'), outcome.get('errors')
        new_msg = clean(msg)
        new_errors = [clean(e) for e in errors] if isinstance(errors, list) else errors
        if new_msg != msg or new_errors != errors:
            out[name] = dict(outcome, msg=new_msg, errors=new_errors) if 'errors' in outcome else dict(outcome, msg=new_msg)
    return out
