# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading MySQL / MariaDB option files the way the server does.

Pure functions, no server access:

- read_option_files(files, groups): every option of the given groups, in the order the
  server applies them (files in order, lines in order, !include / !includedir followed
  where they appear), with the file and line each comes from.
- lookup(entries, variable): the entry that wins for a variable (the last one), taking
  `loose-`, `skip-`, `disable-`, `enable-` prefixes and `-`/`_` spellings into account.
- parse_command_line(argv): the option-file related switches and the options of a mysqld
  command line (/proc/PID/cmdline).
- read_client_file(path): the options a client (the mysql command, PyMySQL through the collection)
  takes from one option file, e.g. ~/.my.cnf; errors name the file and line number, never the text.
- file_now(path): what an option file holds now (its SHA-1 and mode), for a caller that writes it only when it
  differs (the roles' drop-ins: roles/scaffold/tasks/apply.yml).

Rules followed (mysys/my_default.cc in MySQL, mysys/my_default.c in MariaDB):
- `[group]` headers select the groups; options outside a wanted group are ignored.
- `!include FILE` and `!includedir DIR` are followed wherever they appear (in any group);
  in a directory only `*.cnf` files are read, sorted by name; includes nest at most 10 deep.
- Options are applied in the order read, so the last occurrence wins, whichever group it is in.
- Lines end at `\n` only (the server reads a line with fgets()): a `\r`, `\v`, `\f`, `\x1c`-`\x1e`,
  `\x85`, U+2028 or U+2029 inside a line is part of it, never a line break; white space is what the
  server's latin1 my_isspace() calls so (space, `\t`, `\n`, `\v`, `\f`, `\r`), never Unicode's wider
  idea of it. A line holding a NUL is an error (NUL_REASON).
- `name`, `name=value`, `name = value`; `#` and `;` start comment lines; `#` outside quotes
  ends the line (an escaped quote does not end quoted text); one pair of surrounding quotes is removed; escapes
  \\b \\t \\n \\r \\\\ \\s \\" \\'.
- `-` and `_` are the same in names; `loose-` only makes unknown options harmless;
  `skip-X` and `disable-X` mean X=OFF, `enable-X` means X=ON; a name without a value means ON
  for boolean options.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import namedtuple

MAX_INCLUDE_DEPTH = 10

# One option as read: name is normalized (lower case, '_' for '-', without 'loose_').
# value is None when the line had no '=' (boolean-style option).
Entry = namedtuple('Entry', 'name value file line group text')

SPECIAL_PREFIXES = (('skip_', 'OFF'), ('disable_', 'OFF'), ('enable_', 'ON'))

# White space as the server's option-file parser sees it (my_isspace() of latin1).
SPACE = ' \t\n\v\f\r'


def split_lines(text):
    """The lines of an option file's text as the server reads them: split at \\n only. A final \\n ends
    the last line (it starts no empty one)."""
    lines = text.split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    return lines


# A NUL inside a line: MySQL's my_print_defaults (8.0) joins what is before it with the next line, MariaDB's
# (10.11) drops the rest of the line; no reader can tell which the server will do.
NUL_REASON = 'a NUL byte in the line (MySQL and MariaDB read it differently): not read'


class OptionFiles(object):
    """The result of reading option files: entries in order plus what was read and what went wrong."""

    def __init__(self):
        self.entries = []
        self.files_read = []      # every file opened, in order (includes too)
        self.errors = []          # dicts(file, reason): files that exist but could not be read
        self.warnings = []        # dicts(file, reason): missing includes, nesting too deep, ...
        self.missing = []         # top-level files that do not exist (the server skips them too)
        self.includedirs = []     # (directory, the file whose !includedir named it), in the order read

    def to_dict(self):
        return dict(files_read=list(self.files_read), errors=list(self.errors),
                    warnings=list(self.warnings), missing=list(self.missing))


def normalize_name(name):
    """'Loose-Innodb-Buffer-Pool-Size' -> 'innodb_buffer_pool_size'."""
    text = str(name).strip(SPACE).lower().replace('-', '_')
    if text.startswith('loose_'):
        text = text[len('loose_'):]
    return text


def _remove_end_comment(text):
    """Drop a '#' comment outside quotes (and the line's trailing white space), as mysqld's remove_end_comment():
    inside quotes a backslash escapes the next character, so an escaped quote does not end the quoted text (an
    escaped backslash does not escape the quote after it); outside quotes a backslash escapes nothing here."""
    quote = None
    escaped = False
    for i, char in enumerate(text):
        if char in ('"', "'") and not escaped:
            if quote is None:
                quote = char
            elif quote == char:
                quote = None
        if quote is None and char == '#':
            return text[:i].rstrip(SPACE)
        escaped = quote is not None and char == '\\' and not escaped
    return text.rstrip(SPACE)


# The escapes of a value (mysqld's and MariaDB's option file reader: \" and \' are the quotes themselves).
_ESCAPES = {'b': '\b', 't': '\t', 'n': '\n', 'r': '\r', '\\': '\\', 's': ' ', '"': '"', "'": "'"}


def unquote_value(text):
    """The value as the server sees it: outer quotes removed, escapes applied."""
    value = text.strip(SPACE)
    if len(value) >= 2 and value[0] in ('"', "'") and value[-1] == value[0]:
        value = value[1:-1]
    out = []
    i = 0
    while i < len(value):
        char = value[i]
        if char == '\\' and i + 1 < len(value):
            nxt = value[i + 1]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
            else:
                out.append('\\' + nxt)
            i += 2
            continue
        out.append(char)
        i += 1
    return ''.join(out)


def parse_line(text):
    """('group', name) | ('include', path) | ('includedir', path) | ('option', (name, value))
    | None for blank and comment lines. Raises ValueError for a line the server would refuse."""
    line = text.strip(SPACE)
    if not line or line[0] in ('#', ';'):
        return None
    if line[0] == '!':
        for directive in ('includedir', 'include'):
            after = len(directive) + 1
            if line[1:].lower().startswith(directive) and (len(line) == after or line[after] in SPACE):
                path = line[len(directive) + 1:].strip(SPACE)
                if not path:
                    raise ValueError('!%s without a path' % directive)
                return (directive, path)
        raise ValueError('unknown directive (only !include and !includedir exist)')
    if line[0] == '[':
        end = line.find(']')
        if end < 0:
            raise ValueError('group header without "]"')
        return ('group', line[1:end].strip(SPACE).lower())
    line = _remove_end_comment(line)
    if not line:
        return None
    if '=' in line:
        name, dummy, value = line.partition('=')
        return ('option', (name.strip(SPACE), unquote_value(value)))
    return ('option', (line.strip(SPACE), None))


def _dir_cnf_files(path):
    names = sorted(n for n in os.listdir(path) if n.endswith('.cnf'))
    return [os.path.join(path, n) for n in names]


def _read_file(path, groups, result, depth, stack, top_level):
    if depth > MAX_INCLUDE_DEPTH:
        result.warnings.append(dict(file=path, reason='includes nested deeper than %d: not read'
                                    % MAX_INCLUDE_DEPTH))
        return
    real = os.path.realpath(path)
    if real in stack:
        result.warnings.append(dict(file=path, reason='include loop: not read again'))
        return
    if not os.path.exists(path):
        if top_level:
            result.missing.append(path)
        else:
            result.warnings.append(dict(file=path, reason='included file does not exist'))
        return
    if os.path.isdir(path):
        result.errors.append(dict(file=path, reason='is a directory, not an option file'))
        return
    try:
        with open(path, 'rb') as handle:
            data = handle.read()
    except (IOError, OSError) as e:
        result.errors.append(dict(file=path, reason=e.strerror or str(e)))
        return
    text = data.decode('utf-8', 'replace')
    result.files_read.append(path)
    group = None
    base = os.path.dirname(path)
    for number, raw in enumerate(split_lines(text), 1):
        if '\0' in raw:
            result.errors.append(dict(file=path, line=number, reason=NUL_REASON))
            continue
        try:
            parsed = parse_line(raw)
        except ValueError as e:
            result.errors.append(dict(file=path, line=number, reason=str(e)))
            continue
        if parsed is None:
            continue
        kind, value = parsed
        if kind == 'group':
            group = value
        elif kind == 'include':
            target = value if os.path.isabs(value) else os.path.join(base, value)
            _read_file(target, groups, result, depth + 1, stack + (real,), False)
        elif kind == 'includedir':
            target = value if os.path.isabs(value) else os.path.join(base, value)
            if not os.path.isdir(target):
                result.warnings.append(dict(file=path, line=number,
                                            reason='!includedir %s: not a directory' % target))
                continue
            result.includedirs.append((target, path))
            try:
                members = _dir_cnf_files(target)
            except (IOError, OSError) as e:
                result.errors.append(dict(file=target, reason=e.strerror or str(e)))
                continue
            for member in members:
                _read_file(member, groups, result, depth + 1, stack + (real,), False)
        elif group is not None and group in groups:
            name, option_value = value
            result.entries.append(Entry(normalize_name(name), option_value, path, number, group,
                                        raw.strip(SPACE)))


def read_option_files(files, groups):
    """Read files (in the order given) for the option groups `groups`.

    groups: names of the groups the server reads (lower case). Returns OptionFiles.
    Missing top-level files are listed in .missing (the server skips them too).
    """
    wanted = frozenset(g.lower() for g in groups)
    result = OptionFiles()
    for path in files:
        _read_file(os.path.expanduser(path), wanted, result, 0, (), True)
    return result


def _entry_value(entry, variable):
    """The value entry gives to variable, or the sentinel _NO when it does not set it."""
    if entry.name == variable:
        return 'ON' if entry.value is None else entry.value
    for prefix, meaning in SPECIAL_PREFIXES:
        if entry.name == prefix + variable:
            if entry.value is None:
                return meaning
            # skip-X=1 is rare; the server treats the prefix alone as the meaning.
            return meaning
    return _NO


_NO = object()


def lookup(entries, variable):
    """(value, entry) of the entry that wins for variable, or (None, None).

    value is the text the server applies ('ON'/'OFF' for prefix or value-less forms)."""
    variable = normalize_name(variable)
    found = (None, None)
    for entry in entries:
        value = _entry_value(entry, variable)
        if value is not _NO:
            found = (value, entry)
    return found


def group_names(base_groups, suffix=None):
    """The groups read with --defaults-group-suffix: every base group, then each with the suffix."""
    groups = [g.lower() for g in base_groups]
    if suffix:
        groups += ['%s%s' % (g, suffix.lower()) for g in base_groups]
    return tuple(groups)


# ---------------------------------------------------------------- the command line
CommandLine = namedtuple('CommandLine', 'no_defaults defaults_file defaults_extra_file '
                                        'group_suffix options')


def parse_command_line(argv, cwd=None):
    """What a server command line says about option files and options.

    argv: the list from /proc/PID/cmdline (argv[0] included). Options are Entry tuples
    with file 'command line' and line = position in argv. `--name value` pairs are not
    recognised (no way to tell them from boolean switches without the server's option list).
    """
    no_defaults = False
    defaults_file = None
    extra_file = None
    suffix = None
    options = []

    def _absolute(path):
        path = os.path.expanduser(path)
        if cwd and not os.path.isabs(path):
            return os.path.join(cwd, path)
        return path

    for position, arg in enumerate(argv[1:], 1):
        if not arg.startswith('--') or arg == '--':
            continue
        body = arg[2:]
        name, has_value, value = body.partition('=')
        key = name.lower().replace('_', '-')
        if key == 'no-defaults':
            no_defaults = True
        elif key == 'defaults-file' and has_value:
            defaults_file = _absolute(value)
        elif key == 'defaults-extra-file' and has_value:
            extra_file = _absolute(value)
        elif key == 'defaults-group-suffix' and has_value:
            suffix = value
        else:
            options.append(Entry(normalize_name(name), value if has_value else None,
                                 'command line', position, None, arg))
    return CommandLine(no_defaults, defaults_file, extra_file, suffix, options)


def server_option_files(command_line, default_files, home=None):
    """The option files a server reads, in order, given its parsed command line.

    default_files: the flavor's default search order (e.g. /etc/my.cnf, /etc/mysql/my.cnf,
    ~/.my.cnf); '~' is the server process's home. --defaults-extra-file goes right before the
    first user file (~/...). Returns (files, source) where source says how they were chosen.
    """
    if command_line is not None and command_line.no_defaults:
        return [], 'none (--no-defaults on the command line)'
    if command_line is not None and command_line.defaults_file:
        return [command_line.defaults_file], '--defaults-file on the command line'
    files = []
    extra = command_line.defaults_extra_file if command_line is not None else None
    for path in default_files:
        if path.startswith('~'):
            if extra:
                files.append(extra)
                extra = None
            if home:
                path = os.path.join(home, path[2:]) if path.startswith('~/') else path
            else:
                path = os.path.expanduser(path)
        files.append(path)
    if extra:
        files.append(extra)
    source = 'default search order'
    if command_line is not None and command_line.defaults_extra_file:
        source += ' with --defaults-extra-file'
    return files, source


# ---------------------------------------------------------------- a client's option file
# The groups MySQL's and MariaDB's clients read (client programs add their own: [mysql] for the mysql
# command; MariaDB's clients [client-server], [client-mariadb] and [mariadb-client]).
CLIENT_GROUPS = ('client', 'client-server', 'client-mariadb', 'mysql', 'mariadb-client')


def read_client_file(path, groups=CLIENT_GROUPS):
    """{option name (normalize_name()): value} a client reads from the option file at path.

    The server's rules (read_option_files()): every line on its own (an indented line is a line like any
    other, never the continuation of the one above), the last value of any of `groups` wins, includes
    followed, one pair of quotes removed. A name without a value gives None. A line the client would refuse,
    or a file it cannot read, raises ValueError naming the file and the line number - never the line's
    text, which may hold a password."""
    result = read_option_files([path], groups)
    for error in result.errors:
        where = '%s, line %d' % (error['file'], error['line']) if error.get('line') else error['file']
        raise ValueError('cannot read the option file %s: %s' % (where, error['reason']))
    found = {}
    for entry in result.entries:
        found[entry.name] = entry.value
    return found


def file_now(path):
    """What the file at path holds now: {'exists': False} when there is none, {'exists': True, 'checksum': SHA-1 of
    its bytes (as Ansible's stat and copy compare them), 'mode': '0644'} for a regular file, None when that cannot be
    told (a symbolic link, another kind of file, a file that cannot be read): the caller writes it then, as always."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return {'exists': False}
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    digest = hashlib.sha1()
    try:
        with open(path, 'rb') as handle:
            for block in iter(lambda: handle.read(65536), b''):
                digest.update(block)
    except OSError:
        return None
    return {'exists': True, 'checksum': digest.hexdigest(), 'mode': '%04o' % stat.S_IMODE(info.st_mode)}
