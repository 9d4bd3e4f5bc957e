# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Server variable values: the one place they are parsed, normalized and compared.

Users write values as YAML gives them (True, 'on', 1, '1G', 512M, enum names in any case); servers
report strings ('ON', '134217728', 'O_DIRECT', '90.000000') and read option files their own way.
Every caller that sets, audits or plans a variable (global_variables, memcached_plugin,
restart_gate.settings_check, verify, desired) goes through this module, so a value that one of them
accepts the others accept too, and mean the same by it.

Two sides of a comparison:
- the desired value (normalize): what a user wrote; it may use any spelling the collection accepts,
  and is refused with a message naming the value when it means nothing for the variable's kind;
- the server's value (read): a running value, or the text of an option file, the command line or
  mysqld-auto.cnf, read the way mysqld reads it (my_getopt in MySQL mysys/my_getopt.cc and MariaDB
  mysys/my_getopt.c). See docs/verify.md, "How values are compared".

Which variable a name means on a server (resolve), its kind, range and whether it can be set
(describe, check) are here as well: the setter and the auditor ask the same questions the same way.
"""

from __future__ import annotations

import re
from collections import namedtuple
from collections.abc import Mapping

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors

KINDS = ('bool', 'int', 'size', 'float', 'enum', 'str')

# ---------------------------------------------------------------- booleans
# The words mysqld takes for a boolean option in option files and on the command line, in any case
# (get_bool_argument in my_getopt; the same in MySQL 5.x-9.x and MariaDB). Any other word is read as
# OFF, with only a warning in the error log. SET GLOBAL takes ON/OFF and 1/0 (TRUE and FALSE are SQL
# keywords for 1 and 0). Neither reads yes/no, y/n or t/f.
SERVER_TRUE = ('on', 'true', '1')
SERVER_FALSE = ('off', 'false', '0')
# What the collection takes from users (module options, inventory, role variables): the server's words
# plus Ansible's own boolean words (ansible.module_utils.parsing.convert_bool), which YAML and
# ansible-core treat as booleans already. The server is always handed ON or OFF, never these words.
INPUT_TRUE = SERVER_TRUE + ('yes', 'y', 't')
INPUT_FALSE = SERVER_FALSE + ('no', 'n', 'f')

# ---------------------------------------------------------------- numbers
# mysqld reads every numeric option (not only sizes) as digits with at most one suffix letter, any
# case: K, M, G, T, P, E = 1024^1..6 (eval_num_suffix in my_getopt: MySQL 8.0+ and MariaDB 10.x+
# read all six; older releases K, M, G only). It looks at the first character after the digits
# only, so '1GiB' and '1GB' are 1G; a space before the letter, or a letter that is not a suffix,
# is an error and the server does not start. SET GLOBAL takes digits only: the collection sends the
# number of bytes.
SIZE_FACTORS = dict(k=1 << 10, m=1 << 20, g=1 << 30, t=1 << 40, p=1 << 50, e=1 << 60)
_NUMBER_RE = re.compile(r'^\s*([-+]?\d+)(?:([kmgtpe])[a-z]*)?\s*$', re.IGNORECASE)
# Floating-point options: the whole text is a decimal number (getopt_double uses my_strtod and
# refuses anything after it); servers report six decimals ('90.000000').
_FLOAT_RE = re.compile(r'^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?\s*$', re.IGNORECASE)
FLOAT_DECIMALS = 6

# MariaDB information_schema.SYSTEM_VARIABLES.VARIABLE_TYPE -> kind
SERVER_TYPES = {
    'BOOLEAN': 'bool', 'ENUM': 'enum', 'SET': 'str', 'VARCHAR': 'str', 'FLAGSET': 'str',
    'INT': 'int', 'INT UNSIGNED': 'int', 'BIGINT': 'int', 'BIGINT UNSIGNED': 'int',
    'TINYINT UNSIGNED': 'int', 'SMALLINT UNSIGNED': 'int', 'MEDIUMINT UNSIGNED': 'int',
    'DOUBLE': 'float',
}


class ValueError_(ValueError):
    """A value that cannot mean anything for its kind; the message names what was wrong."""


# ---------------------------------------------------------------- parsing
def parse_bool(value):
    """A user's boolean: True/False, 1/0, or a word of INPUT_TRUE / INPUT_FALSE in any case."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in INPUT_TRUE:
            return True
        if text in INPUT_FALSE:
            return False
    raise ValueError_('%r is not a boolean (use ON/OFF, true/false or 1/0)' % (value,))


def server_bool(value):
    """(on, understood) for a boolean as mysqld reads it from an option file, the command line or a
    running value: on is what the server runs with (an unknown word is OFF, as mysqld makes it)."""
    if isinstance(value, bool):
        return value, True
    text = str(value).strip().lower()
    if text in SERVER_TRUE:
        return True, True
    if text in SERVER_FALSE:
        return False, True
    return False, False


def onoff(value):
    """A server's flag as a bool: ON, 1, TRUE or YES (any case) is True, anything else False; None stays None
    (not read)."""
    if value is None:
        return None
    return str(value).strip().upper() in ('ON', '1', 'TRUE', 'YES')


def as_int(value, default=None):
    """int(value), or default when value is no integer (None, '', text)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def pick(row, *names):
    """The first of names that row (a dict) gives a value (not None, not ''), else None: one column under its
    spellings across versions (Source_Host / Master_Host)."""
    for name in names:
        if name in row and row[name] not in (None, ''):
            return row[name]
    return None


def parse_number(value, kind='int'):
    """An integer from 5, '5', '-1', '64K', '1G', '2t' (any numeric option, as mysqld reads it).

    kind 'size' refuses negative numbers. The error names the kind that was expected."""
    what = 'a size' if kind == 'size' else 'an integer'
    if isinstance(value, bool):
        raise ValueError_('%r is not %s' % (value, what))
    number = None
    if isinstance(value, int):
        number = int(value)
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        m = _NUMBER_RE.match(value)
        if m:
            number = int(m.group(1)) * (SIZE_FACTORS[m.group(2).lower()] if m.group(2) else 1)
    if number is None:
        raise ValueError_('%r is not %s (digits, optionally with one of K, M, G, T, P, E as in option files)'
                          % (value, what))
    if kind == 'size' and number < 0:
        raise ValueError_('%r is not a size: negative' % (value,))
    return number


def parse_size(value):
    """Bytes from 1073741824, '1G', '512M', '64k', '1GiB'. Raises ValueError_."""
    return parse_number(value, 'size')


def parse_int(value):
    """An integer; suffixes K..E are read as mysqld reads them ('2K' is 2048)."""
    return parse_number(value, 'int')


def parse_float(value):
    """A float from 90, 90.5, '90.000000', '1e2'."""
    if isinstance(value, bool):
        raise ValueError_('%r is not a number' % (value,))
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _FLOAT_RE.match(value):
        return float(value)
    raise ValueError_('%r is not a number (digits with an optional decimal point)' % (value,))


def parse_enum(value, choices=None):
    """The spelling from choices that value names, without regard to case (upper case without choices)."""
    text = ('ON' if value else 'OFF') if isinstance(value, bool) else str(value).strip()
    if choices:
        for choice in choices:
            if choice.lower() == text.lower():
                return choice
        raise ValueError_('%r is not one of %s' % (value, ', '.join(choices)))
    return text.upper()


def normalize(value, kind, choices=None):
    """Canonical form of a desired value for kind: bool -> 'ON'/'OFF', int/size -> int, float ->
    float, enum -> the spelling from choices (case-insensitive), str -> str. Raises ValueError_."""
    if kind == 'bool':
        return 'ON' if parse_bool(value) else 'OFF'
    if kind in ('int', 'size'):
        return parse_number(value, kind)
    if kind == 'float':
        return parse_float(value)
    if kind == 'enum':
        return parse_enum(value, choices)
    if value is None:
        return ''
    if isinstance(value, bool):
        return 'ON' if value else 'OFF'
    return str(value)


def read(value, kind, choices=None):
    """Canonical form of a server-side value (a running value, or option-file, command-line or
    persisted text) as the server reads it. Raises ValueError_ for text the server refuses."""
    if kind == 'bool':
        return 'ON' if server_bool(value)[0] else 'OFF'
    return normalize(value, kind, choices)


def guess_kind(server_value):
    """A kind for a variable the knowledge tables do not list, from the value the server reports."""
    text = str(server_value).strip()
    if text.upper() in ('ON', 'OFF'):
        return 'bool'
    if re.match(r'^-?\d+$', text):
        return 'int'
    if re.match(r'^-?\d+\.\d+$', text):
        return 'float'
    return 'str'


# ---------------------------------------------------------------- what the server does to a number
Limits = namedtuple('Limits', 'minimum maximum block_size')
NO_LIMITS = Limits(None, None, None)


def check_range(canonical, limits, shown=None):
    """Raise ValueError_ when a desired number is outside limits (the server would clamp it with only
    a warning, which the collection refuses to rely on)."""
    if limits is None or not isinstance(canonical, (int, float)) or isinstance(canonical, bool):
        return
    shown = canonical if shown is None else shown
    if limits.minimum is not None and canonical < limits.minimum:
        raise ValueError_('%s is below the minimum %s' % (shown, limits.minimum))
    if limits.maximum is not None and canonical > limits.maximum:
        raise ValueError_('%s is above the maximum %s' % (shown, limits.maximum))


def bound_problems(params, bounds):
    """Messages for a module's options outside their bounds, in the order of bounds.

    bounds: ((name, low, high, wording), ...) with low or high None for no bound; an option that is None is
    not checked. Each message is '<name> <wording>, got <value>' (the wording says the bound, for example
    'must be between 1 and 3600')."""
    problems = []
    for name, low, high, wording in bounds:
        value = params.get(name)
        if value is None:
            continue
        if not (low is None or low <= value) or not (high is None or value <= high):
            problems.append('%s %s, got %s' % (name, wording, value))
    return problems


def effective(number, limits):
    """(value, note): the value the server runs for a number read from an option file (or set):
    above the maximum it is the maximum, it is rounded down to a multiple of block_size, and below
    the minimum it is the minimum (getopt_ll_limit_value / getopt_ull_limit_value, in that order)."""
    if limits is None or not isinstance(number, int) or isinstance(number, bool):
        return number, None
    value = number
    if limits.maximum is not None and value > limits.maximum:
        value = limits.maximum
    block = int(limits.block_size or 0)
    if block > 1:
        value = (value // block) * block
    if limits.minimum is not None and value < limits.minimum:
        value = limits.minimum
    if value == number:
        return value, None
    return value, 'the server makes %s %s%s' % (
        number, value, ' (a multiple of %d within its range)' % block if block > 1 else ' (its range)')


def buffer_pool_unit(chunk_size, instances):
    """innodb_buffer_pool_chunk_size x innodb_buffer_pool_instances (0 when the chunk is unknown or autosized)."""
    try:
        return int(parse_number(chunk_size or 0, 'size')) * max(parse_number(instances or 1), 1)
    except ValueError_:
        return 0


def buffer_pool_effective(desired_bytes, chunk_size, instances):
    """The innodb_buffer_pool_size the server runs with for a requested size: rounded up to a
    multiple of chunk_size * instances (MySQL 5.7.5+, MariaDB 10.2.2 to 10.7). Below one unit the
    server shrinks the chunk at startup instead, and runs the size requested."""
    unit = buffer_pool_unit(chunk_size, instances)
    desired_bytes = int(desired_bytes)
    if unit <= 0 or desired_bytes < unit:
        return desired_bytes
    return ((desired_bytes + unit - 1) // unit) * unit


def check_buffer_pool_runtime(desired_bytes, chunk_size, instances):
    """Raise ValueError_ when a running server cannot resize its buffer pool to desired_bytes: below
    chunk_size x instances a resize is rounded up to that, and only a restart (which shrinks the
    chunk) runs the smaller size."""
    unit = buffer_pool_unit(chunk_size, instances)
    if 0 < int(desired_bytes) < unit:
        raise ValueError_('%s is below innodb_buffer_pool_chunk_size x innodb_buffer_pool_instances (%s x %s = %s): '
                          'a running server rounds it up to %s; write it to an option file and restart (the chunk '
                          'shrinks then)' % (desired_bytes, chunk_size, instances, unit, unit))


# Innodb_buffer_pool_resize_status_code (MySQL 8.0.31+): 0 none in progress, 1-6 its stages, 7 failed.
RESIZE_FAILED_CODE = '7'


def resize_state(before, now):
    """(state, reason) of the online buffer pool resize a SET GLOBAL innodb_buffer_pool_size started: 'done',
    'failed' or 'running', from SHOW GLOBAL STATUS read before the SET and now ({lower-case name: value} of
    Innodb_buffer_pool_resize_status and, MySQL 8.0.31+, Innodb_buffer_pool_resize_status_code).

    MySQL resizes in a background thread: done when the status says 'Completed ...' again with a new text (and code
    0); MariaDB 10.11.12+ / 11.x resize within the SET and leave the status empty (10.11.19 and 11.8.9 of the lab);
    older MariaDB say 'Completed resizing buffer pool at ...' when done."""
    key, code_key = 'innodb_buffer_pool_resize_status', 'innodb_buffer_pool_resize_status_code'
    text = str((now or {}).get(key) or '').strip()
    old = str((before or {}).get(key) or '').strip()
    code = (now or {}).get(code_key)
    code = None if code is None else str(code).strip()
    if code == RESIZE_FAILED_CODE or 'fail' in text.lower():
        return 'failed', text or 'Innodb_buffer_pool_resize_status_code %s' % code
    if text.startswith('Completed') and text != old and code in (None, '0'):
        return 'done', text
    if not text and code is None:
        return 'done', 'the server resized within SET GLOBAL (no resize status)'
    return 'running', text or 'not started yet'


# ---------------------------------------------------------------- comparing
def compare(desired, actual, kind, choices=None, rounding=None, limits=None):
    """(equal, note): whether the server-side value actual means the desired value of kind.

    actual None (the server has no value) is never equal. rounding: (chunk_size, instances) for
    innodb_buffer_pool_size; limits: Limits of the variable, applied to actual the way the server
    applies them to an option value. note says what the server does that makes them equal or not.
    Raises ValueError_ for a desired value that is not valid for kind."""
    want = normalize(desired, kind, choices)
    if actual is None:
        return False, None
    try:
        have = read(actual, kind, choices)
    except ValueError_ as e:
        return False, 'the server cannot read %s: %s' % (_text(actual), e)
    note = None
    if kind == 'bool' and not server_bool(actual)[1]:
        note = ('the server reads %s as OFF: mysqld takes only ON/OFF, TRUE/FALSE or 1/0 for a boolean'
                % _text(actual))
    elif kind in ('int', 'size'):
        have, note = effective(have, limits)
    if kind == 'str':
        want, have = want.strip(), have.strip()
        if want.startswith('/') and have.startswith('/'):
            # Directories: the server reports them with a trailing '/' (datadir, basedir, plugin_dir).
            want, have = want.rstrip('/') or '/', have.rstrip('/') or '/'
        return want == have, note
    if kind == 'float':
        return round(want, FLOAT_DECIMALS) == round(have, FLOAT_DECIMALS), note
    if want == have:
        return True, note
    if kind in ('int', 'size'):
        block = int((limits or NO_LIMITS).block_size or 0)
        if block > 1 and (want // block) * block == have:
            return True, 'the server rounds %s down to %s (a multiple of %d)' % (want, have, block)
        if rounding:
            rounded = buffer_pool_effective(want, rounding[0], rounding[1])
            if rounded == have:
                return True, ('the server rounds %s up to %s (a multiple of innodb_buffer_pool_chunk_size %s '
                              'x innodb_buffer_pool_instances %s)' % (want, have, rounding[0], rounding[1]))
    return False, note


def equal(desired, actual, kind, choices=None, rounding=None, limits=None):
    """True when desired and actual mean the same value of kind (compare() without the note)."""
    return compare(desired, actual, kind, choices, rounding, limits)[0]


def _text(value):
    return repr(value) if isinstance(value, str) else '%s' % (value,)


def sql_value(value, kind, choices=None):
    """The value to bind in SET GLOBAL name = %s (ON/OFF, a number of bytes, the enum's spelling)."""
    return normalize(value, kind, choices)


def as_text(value):
    """A value as reports show it: text as it is, ON/OFF for booleans, numbers as text, None kept."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return 'ON' if value else 'OFF'
    return str(value)


def display(value, kind):
    """Human form of a canonical value (sizes keep bytes and add a suffix)."""
    if kind == 'size' and isinstance(value, int):
        for suffix, factor in (('G', 1 << 30), ('M', 1 << 20), ('K', 1 << 10)):
            if value and value % factor == 0:
                return '%d (%d%s)' % (value, value // factor, suffix)
    return value


# ---------------------------------------------------------------- which variable, what kind
UNKNOWN = 'unknown'
UNSUPPORTED = 'unsupported'
_NAME_RE = re.compile(r'^[A-Za-z0-9_-]{1,64}$')

Resolved = namedtuple('Resolved', 'name resolved problem reason')


def server_text(identity):
    """'mysql 8.0.36' for messages."""
    return '%s %s' % (identity.flavor, flavors.format_version(identity.version))


def resolve(name, identity, server_names):
    """Which variable name means on this server (any flavor's or version's spelling, '-' for '_').

    Returns Resolved(name, resolved, problem, reason): problem None when the server has it;
    UNSUPPORTED when the collection knows the setting but this server lacks it (other flavors or
    versions, or a plugin that is not loaded); UNKNOWN for a bad or unknown name (with close names)."""
    key = str(name)
    if not _NAME_RE.match(key):
        return Resolved(key, None, UNKNOWN, 'invalid variable name %r: use letters, digits and _' % key)
    plain = key.lower().replace('-', '_')
    if not isinstance(server_names, (frozenset, Mapping)):
        server_names = frozenset(server_names)
    resolved = flavors.resolve_name(plain, identity.flavor, identity.version, server_names)
    if resolved is None:
        candidates = flavors.ALIASES.get(plain, (plain,))
        if any(flavors.exists_anywhere(c) for c in candidates):
            return Resolved(key, None, UNSUPPORTED, '%s has no such variable (known on other flavors or versions)'
                            % server_text(identity))
        import difflib      # only for a name the server lacks: not loaded on every audit
        close = difflib.get_close_matches(plain, sorted(server_names), 3, 0.8)
        hint = ' (did you mean %s?)' % ', '.join(close) if close else ''
        return Resolved(key, None, UNKNOWN, 'unknown variable %r: %s has no such variable and the collection knows '
                                            'none by that name%s' % (key, server_text(identity), hint))
    if resolved not in server_names:
        return Resolved(key, resolved, UNSUPPORTED, '%s has no variable %s (a plugin that is not loaded, or not '
                                                    'in this build)' % (server_text(identity), resolved))
    return Resolved(key, resolved, None, None)


Variable = namedtuple('Variable', 'name kind choices dynamic default limits settable reason')


def describe(name, identity, runtime=None, table_row=None):
    """Variable: what the server and the collection's tables know of the (resolved) variable name.

    kind and choices from flavors.VARIABLES, else the server's own type (MariaDB), else guessed from
    the running value; dynamic and default: the server's table first (it knows its build), then
    flavors; limits: flavors' range and the server's block size; settable: flavors.settable()."""
    facts = flavors.variable_facts(name, identity.flavor, identity.version)
    kind, choices = None, None
    if facts is not None:
        kind, choices = facts.kind, facts.choices
    elif table_row and table_row.get('type'):
        kind = SERVER_TYPES.get(str(table_row['type']).upper())
    if kind is None:
        kind = 'str' if runtime is None else guess_kind(runtime)
    dynamic = None
    if table_row and table_row.get('read_only') is not None:
        dynamic = not table_row['read_only']
    else:
        dynamic = flavors.runtime_flag(name, identity.flavor, identity.version)[0]
    default = None
    if table_row and table_row.get('default') is not None:
        default = table_row['default']
    elif facts is not None:
        default = facts.default
    block = table_row.get('block_size') if table_row else None
    try:
        block = int(block) if block is not None else None
    except (TypeError, ValueError):
        block = None
    if not block and facts is not None and facts.block_size:
        # MySQL's tables publish no block size: the version table's.
        block = facts.block_size
    limits = Limits(facts.minimum if facts else None, facts.maximum if facts else None, block)
    ok, why = flavors.settable(name, identity)
    return Variable(name, kind, choices, dynamic, default, limits, ok, why or None)


def check(desired, kind, choices=None, limits=None):
    """The canonical desired value of kind, or ValueError_ saying why it cannot be: not a value of its
    kind, or out of its range (limits). The setter and the auditor refuse the same values."""
    canonical = normalize(desired, kind, choices)
    if kind in ('int', 'size', 'float'):
        check_range(canonical, limits, desired)
    return canonical
