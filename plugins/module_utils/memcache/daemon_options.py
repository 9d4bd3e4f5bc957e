# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The InnoDB memcached daemon's options (daemon_memcached_option): read as the plugin's own getopt() reads them,
the addresses it listens on, what a user may add to the role's, and the option string the role writes. Pure,
unit-tested without a server.
"""

from __future__ import annotations

import re

LOOPBACK_ADDRESSES = ('127.0.0.1', 'localhost', '::1')


# ---------------------------------------------------------------- daemon options
# The plugin's own option parser (MySQL plugin/innodb_memcached/daemon_memcached/daemon/memcached.c):
# daemon_memcached_make_option() splits daemon_memcached_option on spaces only (strtok_r with " "; a tab
# is part of a word), then getopt() reads the words with this option string. getopt() is glibc's: short
# options may be clustered (-vl), an option's argument is the rest of its word or else the next word
# (whatever it starts with), words that are not options are skipped over (glibc permutes) and "--" ends
# the options. Every option applies in order; for one given twice the last wins (-l too: this daemon
# keeps one interface string, unlike memcached 1.4's list).
DAEMON_GETOPT = 'a:p:s:U:m:Mc:khirvdl:u:P:f:n:t:D:LR:Cb:B:I:SE:e:qX:'
DAEMON_OPTION_SEPARATOR = ' '
# Options the memcached role sets itself (memcached_port, memcached_bind_address, -u root when needed).
ROLE_DAEMON_OPTIONS = {'p': 'memcached_port', 'l': 'memcached_bind_address', 'u': 'the role (-u root when mysqld runs as root)'}
# Options that must never reach the daemon inside mysqld, and why.
REFUSED_DAEMON_OPTIONS = {
    'h': 'prints the help and calls exit(): it takes mysqld down',
    'i': 'prints the licence and calls exit(): it takes mysqld down',
    'd': 'daemonizes: it forks the mysqld process',
    'E': 'loads another engine library into mysqld',
    'X': 'loads an extension library into mysqld',
    'e': 'is ignored by the plugin (engine options come from innodb_memcache.config_options)',
    'P': 'writes a pid file (only meaningful with -d)',
    's': 'listens on a unix socket instead of TCP (the role and its probe use TCP)',
    'a': 'sets the access mask of a unix socket (-s is refused)',
}


def _daemon_getopt_table():
    table = {}
    for i, letter in enumerate(DAEMON_GETOPT):
        if letter != ':':
            table[letter] = DAEMON_GETOPT[i + 1:i + 2] == ':'
    return table


_DAEMON_TAKES_ARGUMENT = _daemon_getopt_table()


class DaemonOptions(object):
    """daemon_memcached_option as the plugin reads it.

    options: [(letter, argument or None)] in the order getopt() returns them; operands: the words getopt()
    skips (not options); errors: what makes the plugin refuse to start ('Illegal argument'). values(): the
    last argument of each option, as the daemon keeps it."""

    def __init__(self, options, operands, errors):
        self.options = options
        self.operands = operands
        self.errors = errors

    def values(self):
        return dict((letter, argument) for letter, argument in self.options)

    def letters(self):
        return set(letter for letter, _argument in self.options)


def getopt_daemon_option(text):
    """A DaemonOptions from a daemon_memcached_option string, read as the plugin reads it."""
    words = [w for w in str(text or '').split(DAEMON_OPTION_SEPARATOR) if w]
    options, operands, errors = [], [], []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word == '--':
            operands.extend(words[i:])
            break
        if not word.startswith('-') or word == '-':
            operands.append(word)
            continue
        position = 1
        while position < len(word):
            letter = word[position]
            position += 1
            if letter not in _DAEMON_TAKES_ARGUMENT:
                errors.append('-%s is not an option of the plugin\'s memcached (in %r)' % (letter, word))
                continue
            if not _DAEMON_TAKES_ARGUMENT[letter]:
                options.append((letter, None))
                continue
            if position < len(word):
                options.append((letter, word[position:]))
            elif i < len(words):
                options.append((letter, words[i]))
                i += 1
            else:
                errors.append('-%s needs an argument (in %r)' % (letter, word))
            break
    return DaemonOptions(options, operands, errors)


def listen_addresses(text):
    """The addresses the daemon listens on for a daemon_memcached_option string ([] = all addresses).

    -l takes one interface or a list separated by ',' or ';', each maybe with a :port ([v6]:port)."""
    bind = getopt_daemon_option(text).values().get('l')
    if not bind:
        return []
    out = []
    for part in re.split(r'[,;]', bind):
        part = part.strip()
        if part.startswith('['):
            part = part[1:].split(']', 1)[0]
        elif part.count(':') == 1:
            part = part.split(':', 1)[0]
        if part:
            out.append(part)
    return out


def beyond_loopback(text):
    """The addresses beyond loopback that a daemon_memcached_option string listens on ('all addresses' when
    no -l); [] when it stays on loopback."""
    addresses = listen_addresses(text)
    if not addresses:
        return ['all addresses']
    return [a for a in addresses if not is_loopback(a)]


def extra_option_problems(text):
    """What is wrong with the memcached options a user adds to the role's (memcached_daemon_extra_options).

    The same parser as the plugin: an option hidden in a cluster (-vl 0.0.0.0) or attached to its argument
    (-l0.0.0.0) is found where the plugin finds it."""
    parsed = getopt_daemon_option(text)
    problems = list(parsed.errors)
    if parsed.operands:
        one = len(parsed.operands) == 1
        problems.append('%s %s (the plugin would skip %s)' % (', '.join(repr(w) for w in parsed.operands),
                                                              'is not an option' if one else 'are not options',
                                                              'it' if one else 'them'))
    owned = []
    for letter, _argument in parsed.options:
        if letter in ROLE_DAEMON_OPTIONS and letter not in owned:
            owned.append(letter)
    if owned:
        problems.insert(0, 'must not set -p, -l or -u (the role sets them: %s); found %s'
                        % (', '.join('-%s from %s' % (k, v) for k, v in sorted(ROLE_DAEMON_OPTIONS.items())),
                           ', '.join('-%s' % letter for letter in owned)))
    for letter, _argument in parsed.options:
        if letter in REFUSED_DAEMON_OPTIONS:
            problems.append('-%s %s' % (letter, REFUSED_DAEMON_OPTIONS[letter]))
    seen = []
    for problem in problems:
        if problem not in seen:
            seen.append(problem)
    return seen


def is_loopback(address):
    text = str(address or '').strip().lower()
    return text in LOOPBACK_ADDRESSES or (text.startswith('127.') and bool(re.match(r'^127(\.\d{1,3}){3}$', text)))


def daemon_option(port, bind_address, runs_as_root, extra=None):
    """The daemon_memcached_option string: -p<port> -l <bind> [-u root] [extra]."""
    parts = ['-p%d' % int(port), '-l %s' % bind_address]
    if runs_as_root:
        parts.append('-u root')
    if extra:
        parts.append(str(extra).strip())
    return ' '.join(parts)


def parse_daemon_option(text):
    """{'p': '11211', 'l': '127.0.0.1', 'u': 'root', ...} from a daemon_memcached_option string: the last
    argument of each option as the plugin reads it (getopt_daemon_option; flags map to None)."""
    return getopt_daemon_option(text).values()


def daemon_option_has_user(text):
    return 'u' in parse_daemon_option(text)
