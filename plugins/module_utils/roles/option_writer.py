# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one option-file writer: every line any role writes into its drop-in, checked and quoted by its kind.

option_file() checks the lines, option_file_text() prints the file body the roles' templates print as it is,
with_option_file() puts both into a role's desired state (module_utils/roles/desired.py's contract). Loaded only where a drop-in is
worked out (a role's desired state, the settings role's line checks), not by an audit of explicit settings.
Unit tests: test_option_writer.py.
"""

from __future__ import annotations

import re

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired

# What may not stand in a drop-in value at all: every control character (C0, DEL, C1 with \x85), every
# character any reader of the file could take for a line break (\r, \v, \f, \x1c-\x1e, \x85, U+2028,
# U+2029: str.splitlines() splits at all of them, mysqld at \n only) and the invisible format characters
# (byte order mark, zero-width and bidirectional marks) that make a line read differently than it shows.
CONTROL_RE = re.compile('[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f'
                        '\ufeff\ufff9-\ufffb]')

# Every line any role writes into a drop-in comes from option_file(); the roles' templates only print
# option_file_text(). A value can never add a line, a group or a directive: control characters (line
# breaks included) are refused, and so are values that start like a group header ([) or a directive
# (!include, !includedir), whatever their kind.
OPTION_KINDS = ('bool', 'int', 'word', 'text')
_OPTION_NAME_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_-]*$')
# A word needs no quotes: no spaces, quotes, comment signs or escapes.
_WORD_RE = re.compile(r'^[A-Za-z0-9_.,:;=/+@%-]+$')
# What makes a text value need quotes in an option file (the server strips one pair of them).
_NEEDS_QUOTES_RE = re.compile(r"[\s#']")


def option_kind(value):
    """The kind of a value from its type: bool, int, text."""
    if isinstance(value, bool):
        return 'bool'
    if isinstance(value, int):
        return 'int'
    return 'text'


def option_value(label, value, kind=None):
    """(text, None): value as it goes after `name = ` in a drop-in, by its kind; or (None, message).

    bool -> ON / OFF; int -> digits; word -> as is (letters, digits and . _ , : ; = / + @ % - only);
    text -> as is, in double quotes when it holds a space, # or ' (a " or a backslash is refused: the
    server reads escapes and quotes in option files). Any kind: no control characters, no leading [ or !."""
    kind = kind or option_kind(value)
    where = 'to go into an option file'
    if kind not in OPTION_KINDS:
        return None, '%s: unknown option value kind %r' % (label, kind)
    if kind == 'bool':
        if not isinstance(value, bool):
            return None, '%s must be true or false %s; got %s' % (label, where, desired.shown(value))
        return ('ON' if value else 'OFF'), None
    if kind == 'int':
        if isinstance(value, bool) or not isinstance(value, int):
            return None, '%s must be a whole number %s; got %s' % (label, where, desired.shown(value))
        return str(int(value)), None
    if not isinstance(value, str):
        return None, '%s must be a string %s; got %s' % (label, where, desired.shown(value))
    if CONTROL_RE.search(value):
        return None, ('%s must be on one line, without control characters, %s; got %s'
                      % (label, where, desired.shown(value)))
    text = value.strip()
    if text.startswith('['):
        return None, '%s must not start with [ (it would open an option group) %s; got %s' % (label, where, desired.shown(value))
    if text.startswith('!'):
        return None, ('%s must not start with ! (an !include or !includedir directive) %s; got %s'
                      % (label, where, desired.shown(value)))
    if kind == 'word':
        if not _WORD_RE.fullmatch(value):
            return None, ('%s may hold only letters, digits and . _ , : ; = / + @ %% - %s; got %s'
                          % (label, where, desired.shown(value)))
        return value, None
    if '"' in value or '\\' in value:
        return None, ('%s must not hold " or a backslash (the server reads quotes and escapes in option files) '
                      '%s; got %s' % (label, where, desired.shown(value)))
    if not text or _NEEDS_QUOTES_RE.search(value):
        return '"%s"' % value, None
    return value, None


def option_file(lines):
    """The drop-in's [mysqld] lines as a list of {name, value}: the one writer every role's file goes through.

    lines: (name, value) or (name, value, kind) (kind: OPTION_KINDS, else from the value's type). Raises
    InputError naming every bad line."""
    out, problems = [], []
    for line in lines:
        name, value = line[0], line[1]
        kind = line[2] if len(line) > 2 else None
        if not isinstance(name, str) or not _OPTION_NAME_RE.fullmatch(name):
            problems.append('%s is not an option name (letters, digits, _ and -)' % desired.shown(name))
            continue
        text, problem = option_value(name, value, kind)
        if problem:
            problems.append(problem)
            continue
        out.append(dict(name=name, value=text))
    if problems:
        raise desired.InputError(problems)
    return out


def comment_line(text):
    """One comment line of a drop-in: control characters (line breaks) become ?."""
    return '# ' + CONTROL_RE.sub('?', str(text))


def option_file_text(comments, lines):
    """The drop-in file body after the ansible_managed header: comment lines, [mysqld], then lines
    (option_file()'s {name, value}). The roles' templates print it as it is. A line that did not come
    through option_file() and would not stay one line is refused (InputError), whoever built it."""
    bad = [desired.shown(line.get('name')) for line in lines
           if not (isinstance(line.get('name'), str) and _OPTION_NAME_RE.fullmatch(line['name'])
                   and isinstance(line.get('value'), str) and not CONTROL_RE.search(line['value']))]
    if bad:
        raise desired.InputError(['option %s: not one line of an option file (a control or line-breaking character, '
                                  'or no option name)' % name for name in bad])
    out = [comment_line(c) for c in comments]
    out.append('[mysqld]')
    out.extend('%s = %s' % (line['name'], line['value']) for line in lines)
    return '\n'.join(out) + '\n'


def with_option_file(comments, lines, **state):
    """A role's desired state with its drop-in from the one writer: option_file (the checked lines) and
    option_file_text (the file body the role's template prints)."""
    written = option_file(lines)
    state.update(option_file=written, option_file_text=option_file_text(comments, written))
    return state
