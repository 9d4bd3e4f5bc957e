# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The desired state of each role, from the role's variables and the server's facts.

One pure function per role (adaptive_hash(), flush_neighbors(), memcached(), myrocks()) checks the
role's variables as the user wrote them, with the ranges of the version table (flavors.py), and returns
what the role manages on this server: the settings (as verify compares them), the role's drop-in file
(written by the one option-file writer, option_file() / option_file_text(): every value checked and
quoted by its kind), what to set at runtime, what waits for a restart, and notes. Each role is one record
of the registry (REGISTRY, at the end: its function, outputs, server variables, settings, engines, drop-in,
whether site.yml applies it); every table by role derives from it. for_roles() is the one route every
caller takes: dbfleet.innodb.desired_settings (the roles, playbooks/site.yml, playbooks/rolling_restart.yml),
dbfleet.innodb.verify (per host) and dbfleet.innodb.verify_fleet (controller). The roles' YAML only orchestrates.

The roles' defaults are written down once, in roles/<role>/meta/argument_specs.yml; INPUTS is generated
from them (role_specs.py, `make role-specs`; test_role_specs.py says when it is stale), as the module runs on
the host, where the role files are not. Unit tests: test_desired.py, test_option_writer.py.
"""

from __future__ import annotations

import re

from ansible_collections.dbfleet.innodb.plugins.module_utils import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils import os_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils import role_specs
from ansible_collections.dbfleet.innodb.plugins.module_utils import values

# The inputs of each role and their defaults: generated from roles/<role>/meta/argument_specs.yml, the one
# source of a role's defaults (role_specs.py; `make role-specs`, checked by test_role_specs.py).
INPUTS = role_specs.INPUTS

# The settings of the myrocks role: role variable -> (server variable, kind, minimum, maximum, dynamic).
# Ranges and dynamic from the MariaDB MyRocks system variables reference (docs/storage_engines.md);
# a server that reports whether a variable is dynamic (information_schema.SYSTEM_VARIABLES) is believed first.
MYROCKS_SETTINGS = (
    ('myrocks_block_cache_size', 'rocksdb_block_cache_size', 'int', 1024, None, True),
    ('myrocks_flush_log_at_trx_commit', 'rocksdb_flush_log_at_trx_commit', 'int', 0, 2, True),
    ('myrocks_max_background_jobs', 'rocksdb_max_background_jobs', 'int', -1, 64, True),
    ('myrocks_default_cf_options', 'rocksdb_default_cf_options', 'text', None, None, False),
)

STORAGE_CLASSES = ('ssd', 'hdd', 'mixed')
# Built-in maps (merged under the user's): mixed storage puts some pages on an HDD, where neighbor
# flushing saves seeks, and costs SSDs only extra writes, so it is treated like HDD.
FLUSH_NEIGHBORS_MAP = dict(ssd=0, hdd=1, mixed=1)
IO_CAPACITY = dict(ssd=2000, hdd=200, mixed=200)
IO_CAPACITY_MAX = dict(ssd=4000, hdd=2000, mixed=2000)

_INT_RE = re.compile(r'^\s*[-+]?\d+\s*$')
# What may not stand in a drop-in value at all: every control character (C0, DEL, C1 with \x85), every
# character any reader of the file could take for a line break (\r, \v, \f, \x1c-\x1e, \x85, U+2028,
# U+2029: str.splitlines() splits at all of them, mysqld at \n only) and the invisible format characters
# (byte order mark, zero-width and bidirectional marks) that make a line read differently than it shows.
CONTROL_RE = re.compile('[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f'
                        '\ufeff\ufff9-\ufffb]')
# memcached command-line options: letters, digits, spaces and the punctuation options use.
_DAEMON_OPTIONS_RE = re.compile(r'^[A-Za-z0-9 ._,:=/+-]*$')
_ADDRESS_RE = re.compile(r'^[A-Za-z0-9.:_%-]+$')


class InputError(Exception):
    """Bad role input; .messages names each variable and the value as the user wrote it."""

    def __init__(self, messages):
        self.messages = list(messages)
        super().__init__('; '.join(self.messages))


def shown(value):
    """A value as the user wrote it, for messages: 513, 'ten', {'ssd': 'x'}, null."""
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return repr(str(value))
    if isinstance(value, dict):
        return '{%s}' % ', '.join('%s: %s' % (k, shown(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return '[%s]' % ', '.join(shown(v) for v in value)
    return repr(value)


def server_text(facts):
    """'MySQL 8.0', 'MariaDB 10.11': the flavor and series, for range messages."""
    version = facts.get('version') or [0, 0, 0]
    return '%s %d.%d' % (flavors.display_name(facts.get('flavor')), int(version[0]), int(version[1]))


def _identity(facts):
    return facts.get('flavor'), tuple(int(x) for x in (facts.get('version') or (0, 0, 0)))


def variable_range(name, facts):
    """(minimum, maximum) of server variable name on this server, from flavors.VARIABLES.

    When the server has no such variable, the range of its newest span anywhere (so input is still
    checked on a host the role will skip)."""
    flavor, version = _identity(facts)
    vf = flavors.variable_facts(name, flavor, version)
    if vf is None:
        spans = flavors.VARIABLES.get(name) or []
        if not spans:
            return None, None
        value = spans[-1].value
        return value.get('minimum'), value.get('maximum')
    return vf.minimum, vf.maximum


class Checker:
    """Collects messages about bad input; each reader returns the checked value (or None)."""

    def __init__(self, variables, defaults, facts):
        self.vars = dict(defaults)
        self.vars.update(variables or {})
        self.facts = facts
        self.errors = []

    def raw(self, name):
        return self.vars.get(name)

    def error(self, message):
        self.errors.append(message)

    def done(self):
        if self.errors:
            raise InputError(self.errors)

    def boolean(self, name, value=None, label=None, allow_none=True):
        value = self.raw(name) if label is None else value
        label = label or name
        if value is None:
            if allow_none:
                return None
            self.error('%s must be true or false; got null' % label)
            return None
        try:
            return values.parse_bool(value)
        except values.ValueError_:
            self.error('%s must be true or false; got %s' % (label, shown(value)))
            return None

    def integer(self, name, minimum=None, maximum=None, value=None, label=None, where=None):
        """An integer within [minimum, maximum]; where ('on MySQL 8.0') says whose range it is."""
        value = self.raw(name) if label is None else value
        label = label or name
        if value is None:
            return None
        is_number = isinstance(value, int) or (isinstance(value, str) and _INT_RE.match(value))
        if isinstance(value, bool) or not is_number:
            self.error('%s must be a whole number; got %s' % (label, shown(value)))
            return None
        number = int(value)
        low_ok = minimum is None or number >= minimum
        high_ok = maximum is None or number <= maximum
        if not (low_ok and high_ok):
            if minimum is not None and maximum is not None:
                rule = ('must be %d-%d' if minimum >= 0 else 'must be %d to %d') % (minimum, maximum)
            elif minimum is not None:
                rule = 'must be %d or more' % minimum
            else:
                rule = 'must be at most %d' % maximum
            self.error('%s %s%s; got %s' % (label, rule, (' ' + where) if where else '', shown(value)))
            return None
        return number

    def choice(self, name, choices, allow_none=False):
        value = self.raw(name)
        if value is None and allow_none:
            return None
        if not isinstance(value, str) or value not in choices:
            self.error('%s must be one of %s; got %s' % (name, ', '.join(choices), shown(value)))
            return None
        return value

    def mapping(self, name, keys=None):
        """A dict (null and '' read as empty); keys, when given, are the only ones allowed."""
        value = self.raw(name)
        if value is None or value == '':
            return {}
        if not isinstance(value, dict):
            self.error('%s must be a map%s; got %s'
                       % (name, (' of ' + '/'.join(keys) + ' to values') if keys else '', shown(value)))
            return {}
        if keys:
            extra = sorted(str(k) for k in value if k not in keys)
            if extra:
                self.error('%s has keys %s; it takes only %s' % (name, ', '.join(extra), ', '.join(keys)))
                return {}
        return dict(value)

    def text(self, name, allow_none=True):
        value = self.raw(name)
        if value is None:
            if not allow_none:
                self.error('%s must be a string; got null' % name)
            return None
        if not isinstance(value, str):
            self.error('%s must be a string; got %s' % (name, shown(value)))
            return None
        return value


# ---------------------------------------------------------------- the one option-file writer
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
            return None, '%s must be true or false %s; got %s' % (label, where, shown(value))
        return ('ON' if value else 'OFF'), None
    if kind == 'int':
        if isinstance(value, bool) or not isinstance(value, int):
            return None, '%s must be a whole number %s; got %s' % (label, where, shown(value))
        return str(int(value)), None
    if not isinstance(value, str):
        return None, '%s must be a string %s; got %s' % (label, where, shown(value))
    if CONTROL_RE.search(value):
        return None, ('%s must be on one line, without control characters, %s; got %s'
                      % (label, where, shown(value)))
    text = value.strip()
    if text.startswith('['):
        return None, '%s must not start with [ (it would open an option group) %s; got %s' % (label, where, shown(value))
    if text.startswith('!'):
        return None, ('%s must not start with ! (an !include or !includedir directive) %s; got %s'
                      % (label, where, shown(value)))
    if kind == 'word':
        if not _WORD_RE.fullmatch(value):
            return None, ('%s may hold only letters, digits and . _ , : ; = / + @ %% - %s; got %s'
                          % (label, where, shown(value)))
        return value, None
    if '"' in value or '\\' in value:
        return None, ('%s must not hold " or a backslash (the server reads quotes and escapes in option files) '
                      '%s; got %s' % (label, where, shown(value)))
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
            problems.append('%s is not an option name (letters, digits, _ and -)' % shown(name))
            continue
        text, problem = option_value(name, value, kind)
        if problem:
            problems.append(problem)
            continue
        out.append(dict(name=name, value=text))
    if problems:
        raise InputError(problems)
    return out


def comment_line(text):
    """One comment line of a drop-in: control characters (line breaks) become ?."""
    return '# ' + CONTROL_RE.sub('?', str(text))


def option_file_text(comments, lines):
    """The drop-in file body after the ansible_managed header: comment lines, [mysqld], then lines
    (option_file()'s {name, value}). The roles' templates print it as it is. A line that did not come
    through option_file() and would not stay one line is refused (InputError), whoever built it."""
    bad = [shown(line.get('name')) for line in lines
           if not (isinstance(line.get('name'), str) and _OPTION_NAME_RE.fullmatch(line['name'])
                   and isinstance(line.get('value'), str) and not CONTROL_RE.search(line['value']))]
    if bad:
        raise InputError(['option %s: not one line of an option file (a control or line-breaking character, '
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


def dropin_file(role, dropin_dir=None, family=None):
    """(path, None) of the role's drop-in file, or (None, why): in dropin_dir (the inventory's
    dbfleet_option_dropin_dir), else in the directory of the OS family (os_facts.FAMILIES; family as
    os_facts.family() names it)."""
    name = RECORDS[role].dropin
    if dropin_dir:
        return '%s/%s' % (str(dropin_dir).rstrip('/') or '/', name), None
    directory = os_facts.fact(family, 'dropin_dir')
    if directory:
        return '%s/%s' % (directory, name), None
    return None, ('no drop-in directory is known for OS family %s (known: %s); set dbfleet_option_dropin_dir for '
                  'this host' % (os_facts.display_name(family) or 'unknown',
                                 ', '.join(os_facts.display_name(f) for f in sorted(os_facts.FAMILIES))))


def _variable(facts, name):
    return (facts.get('variables') or {}).get(name) or {}


def _restart_inputs(check, role):
    check.choice(role + '_restart', ('never', 'allowed'))
    check.integer(role + '_restart_timeout', 1)
    check.integer(role + '_restart_max_lag', 0)


def restart_state(pending, settings, reason):
    """The restart part of a role's desired state: pending_restart, and while a restart is pending the
    settings it applies (restart_settings) and why (restart_reason)."""
    return dict(pending_restart=pending, restart_settings=settings if pending else {}, restart_reason=reason if pending else '')


# ---------------------------------------------------------------- adaptive_hash
ADAPTIVE_HASH_COMMENTS = (
    'Managed by the dbfleet.innodb.adaptive_hash role: local changes are overwritten.',
    'Set adaptive_hash_enabled / adaptive_hash_parts in the inventory instead.',
    'Partitions are read-only at runtime: they take effect at the next restart.',
)


def adaptive_hash(variables, facts):
    """Desired state of the adaptive_hash role.

    variables: the role's variables as the user wrote them (missing ones take the defaults).
    facts: server_facts (flavor, version, capabilities, the variables of its record's server_variables).
    Raises InputError. Returns a dict: settings (resolved name -> value, what verify compares; also
    what this server cannot do, which verify reports as unsupported or not settable), option_file,
    runtime, partition_variable, pending_restart, restart_settings, restart_reason, unsupported,
    not_settable, issues, notes.
    """
    check = Checker(variables, INPUTS['adaptive_hash'], facts)
    enabled = check.boolean('adaptive_hash_enabled')
    _restart_inputs(check, 'adaptive_hash')
    restart = check.raw('adaptive_hash_restart')
    parts_var = (facts.get('capabilities') or {}).get('ahi_partition_variable')
    range_name = parts_var or 'innodb_adaptive_hash_index_parts'
    low, high = variable_range(range_name, facts)
    parts = check.integer('adaptive_hash_parts', low, high,
                          where=('on ' + server_text(facts)) if parts_var else None)
    check.done()

    ahi = _variable(facts, 'innodb_adaptive_hash_index')
    parts_facts = _variable(facts, 'innodb_adaptive_hash_index_parts')
    settings, lines, runtime = {}, [], {}
    unsupported, not_settable, notes = [], [], []
    if enabled is not None:
        if ahi.get('exists') and ahi.get('settable'):
            settings['innodb_adaptive_hash_index'] = enabled
            runtime['innodb_adaptive_hash_index'] = enabled
            lines.append(('innodb_adaptive_hash_index', enabled, 'bool'))
        else:
            # Still in settings: verify reports it (not_settable / unsupported) like the role does.
            settings['innodb_adaptive_hash_index'] = enabled
            if ahi.get('exists'):
                not_settable.append(dict(name='innodb_adaptive_hash_index', status='not_settable',
                                         reason=ahi.get('reason')))
            else:
                unsupported.append(dict(name='innodb_adaptive_hash_index', status='unsupported',
                                        reason=ahi.get('reason') or '%s has no adaptive hash index variable'
                                        % server_text(facts)))
    pending = False
    running_parts = parts_facts.get('runtime')
    if parts is not None:
        if parts_var is not None and parts_facts.get('exists'):
            settings[parts_var] = parts
            lines.append((parts_var, parts, 'int'))
            pending = str(running_parts) != str(parts)
        else:
            settings[parts_var or 'innodb_adaptive_hash_index_parts'] = parts
            unsupported.append(dict(name='innodb_adaptive_hash_index_parts', status='unsupported',
                                    reason=parts_facts.get('reason') or '%s has no adaptive hash index partition '
                                    'variable' % server_text(facts)))
    issues = []
    if pending:
        issues.append(dict(status='pending_restart', name=parts_var,
                           reason='the server runs %s, the drop-in says %s; a restart applies it '
                                  '(adaptive_hash_restart: %s)' % (running_parts, parts, restart)))
        notes.append('%s=%s waits for a restart' % (parts_var, parts))
    return with_option_file(
        ADAPTIVE_HASH_COMMENTS, lines,
        settings=settings, runtime=runtime, partition_variable=parts_var, parts_running=running_parts,
        unsupported=unsupported, not_settable=not_settable, issues=issues + unsupported + not_settable, notes=notes,
        **restart_state(pending, {parts_var: parts}, '%s=%s' % (parts_var, parts))
    )


# ---------------------------------------------------------------- flush_neighbors
def _class_map(check, name, builtin, value_check):
    user = check.mapping(name, STORAGE_CLASSES)
    merged = dict(builtin)
    for key, value in user.items():
        merged[key] = value_check('%s.%s' % (name, key), value) if value is not None else None
    return merged


def flush_neighbors(variables, facts, detected):
    """Desired state of the flush_neighbors role.

    facts: server_facts (datadir, capabilities, the variables of its record's server_variables).
    detected: what storage_facts found under the datadir (storage_class, confidence, reasons, mount,
    devices, probe). Raises InputError. Returns a dict: settings, option_file, runtime (a list of
    {name: value} in a safe order), storage (class, source, confidence, evidence), left_alone, notes.
    """
    check = Checker(variables, INPUTS['flush_neighbors'], facts)
    override = check.choice('flush_neighbors_storage_class', ('ssd', 'hdd'), allow_none=True)
    check.choice('flush_neighbors_unknown_action', ('leave', 'fail'))
    min_confidence = check.choice('flush_neighbors_min_confidence', ('low', 'high'))
    check.boolean('flush_neighbors_probe', allow_none=False)
    persist = check.choice('flush_neighbors_persist', ('dropin', 'set_persist', 'both'))
    io_profile = check.boolean('flush_neighbors_io_profile', allow_none=False)
    where = 'on ' + server_text(facts)
    fn_low, fn_high = variable_range('innodb_flush_neighbors', facts)
    fn_map = _class_map(check, 'flush_neighbors_map', FLUSH_NEIGHBORS_MAP,
                        lambda label, v: check.integer(None, fn_low, fn_high, value=v, label=label, where=where))
    cap_low = variable_range('innodb_io_capacity', facts)[0]
    max_low = variable_range('innodb_io_capacity_max', facts)[0]
    caps = _class_map(check, 'flush_neighbors_io_capacity', IO_CAPACITY,
                      lambda label, v: check.integer(None, cap_low, value=v, label=label, where=where))
    cap_max = _class_map(check, 'flush_neighbors_io_capacity_max', IO_CAPACITY_MAX,
                         lambda label, v: check.integer(None, max_low, value=v, label=label, where=where))
    if not check.errors:
        for klass in STORAGE_CLASSES:
            if caps[klass] is not None and cap_max[klass] is not None and caps[klass] > cap_max[klass]:
                check.error('flush_neighbors_io_capacity.%s (%d) may not exceed flush_neighbors_io_capacity_max.%s '
                            '(%d): innodb_io_capacity may not exceed innodb_io_capacity_max'
                            % (klass, caps[klass], klass, cap_max[klass]))
    capabilities = facts.get('capabilities') or {}
    if persist in ('set_persist', 'both') and not capabilities.get('set_persist'):
        check.error('flush_neighbors_persist=%s needs SET PERSIST, which %s %s does not have (MySQL and Percona '
                    'Server 8.0+ only); use flush_neighbors_persist=dropin for this host'
                    % (persist, facts.get('flavor'), facts.get('version_text')))
    check.done()

    det = dict(detected or {})
    det_class = det.get('storage_class') or 'unknown'
    det_conf = det.get('confidence') or 'low'
    confident = min_confidence == 'low' or det_conf == 'high'
    if det_class != 'unknown' and not confident:
        det_used = 'unknown'
    else:
        det_used = det_class
    klass = override if override is not None else det_used
    probe = det.get('probe')
    probe_used = bool(probe) and (probe.get('storage_class') or 'unknown') != 'unknown'
    if override is not None:
        source = 'override'
    elif klass == 'unknown':
        source = 'none'
    else:
        source = 'sysfs+probe' if probe_used else 'sysfs'
    known = klass != 'unknown'
    settings = {}
    if known and fn_map[klass] is not None:
        settings['innodb_flush_neighbors'] = fn_map[klass]
    if known and io_profile:
        if caps[klass] is not None:
            settings['innodb_io_capacity'] = caps[klass]
        if cap_max[klass] is not None:
            settings['innodb_io_capacity_max'] = cap_max[klass]
    reasons = []
    if override is not None:
        reasons.append('override flush_neighbors_storage_class=%s wins over the detected %s (%s confidence)'
                       % (override, det_class, det_conf))
    if det_class != 'unknown' and not confident:
        reasons.append('detected %s with low confidence, and flush_neighbors_min_confidence is high' % det_class)
    reasons.extend(det.get('reasons') or [])
    storage = dict(
        storage_class=klass, source=source,
        confidence='high' if override is not None else (det_conf if known else 'low'),
        detected_class=det_class, detected_confidence=det_conf,
        datadir=facts.get('datadir'), mount=det.get('mount'),
        devices=[d.get('name') if isinstance(d, dict) else d for d in (det.get('devices') or [])],
        reasons=reasons, probe=probe,
    )
    # innodb_io_capacity may never exceed innodb_io_capacity_max: when the new capacity is above the
    # running maximum, raise the maximum first; otherwise set the capacity first.
    runtime = []
    if 'innodb_flush_neighbors' in settings:
        runtime.append({'innodb_flush_neighbors': settings['innodb_flush_neighbors']})
    running_max = _variable(facts, 'innodb_io_capacity_max').get('runtime')
    cap = settings.get('innodb_io_capacity')
    try:
        cap_first = cap is None or running_max is None or cap <= int(running_max)
    except (TypeError, ValueError):
        cap_first = True
    order = ['innodb_io_capacity', 'innodb_io_capacity_max']
    if not cap_first:
        order.reverse()
    runtime.extend({n: settings[n]} for n in order if n in settings)
    notes = []
    fn = settings.get('innodb_flush_neighbors')
    if capabilities.get('flush_neighbors_ssd_autodetect') and fn:
        notes.append('MariaDB %s skips neighbor flushing for data files on devices it judged non-rotational at '
                     'startup, whatever innodb_flush_neighbors says; the value %s applies only to files it judged '
                     'rotational' % (facts.get('version_text'), fn))
    header = 'Storage under %s: %s (source: %s).' % (facts.get('datadir'), klass, source)
    return with_option_file(
        ['Managed by the dbfleet.innodb.flush_neighbors role: local changes are overwritten.', header,
         'Set flush_neighbors_storage_class / flush_neighbors_map in the inventory instead.'],
        [(name, value, 'int') for name, value in sorted(settings.items())],
        settings=settings,
        header=CONTROL_RE.sub('?', header),
        runtime=runtime,
        storage=storage,
        left_alone=not settings,
        persist=persist,
        dropin=('leave' if not settings else 'remove' if persist == 'set_persist' else 'write'),
        runtime_persist=persist in ('set_persist', 'both'),
        notes=notes,
    )


# ---------------------------------------------------------------- memcached
MEMCACHED_COMMENTS = (
    'Managed by the dbfleet.innodb.memcached role: local changes are overwritten.',
    'Set memcached_* variables in the inventory instead.',
    "loose- lets a server without the plugin start; INSTALL PLUGIN reads these lines again.",
    'innodb_api_enable_binlog / innodb_api_enable_mdl are read at server start only.',
)


def _daemon_extra_options(check):
    from ansible_collections.dbfleet.innodb.plugins.module_utils import memcached as memcached_utils
    name = 'memcached_daemon_extra_options'
    value = check.raw(name)
    if value is None:
        return ''
    if not isinstance(value, str):
        check.error('%s must be a string of memcached options; got %s' % (name, shown(value)))
        return None
    if '\n' in value or '\r' in value:
        check.error('%s must be on one line (it goes into the drop-in file); got %s' % (name, shown(value)))
        return None
    quotes = [q for q in ('"', "'") if value.count(q) % 2]
    if quotes:
        check.error('%s has an unbalanced %s quote; got %s' % (name, quotes[0], shown(value)))
        return None
    if not _DAEMON_OPTIONS_RE.match(value):
        check.error('%s may hold only letters, digits, spaces and . _ , : = / + - (memcached options such as '
                    '"-c 1024 -t 4"); got %s' % (name, shown(value)))
        return None
    # Read by the plugin's own option parser: -vl 0.0.0.0 sets -l as surely as -l 0.0.0.0 does.
    problems = memcached_utils.extra_option_problems(value)
    if problems:
        check.error('%s: %s; got %s' % (name, '; '.join(problems), shown(value)))
        return None
    return value.strip()


def memcached(variables, facts):
    """Desired state of the memcached role.

    facts: server_facts (flavor, version, runs_as_root, capabilities). Raises InputError. Returns a
    dict: settings (what verify compares), static_settings, daemon_option, option_file, runtime,
    supported and reason, and refusals: what the role cannot install although the settings can be
    audited (no container).
    """
    # Imported here: only a host the memcached role applies to compiles the memcached module (module payloads
    # run from a zip, compiled on every run).
    from ansible_collections.dbfleet.innodb.plugins.module_utils import memcached as memcached_utils
    check = Checker(variables, INPUTS['memcached'], facts)
    state = check.choice('memcached_state', ('present', 'absent'))
    for name in ('memcached_skip_unsupported', 'memcached_containers_exclusive', 'memcached_allow_remote',
                 'memcached_reload_on_change', 'memcached_load_demo', 'memcached_remove_schema'):
        check.boolean(name, allow_none=False)
    port = check.integer('memcached_port', 1, 65535)
    if check.raw('memcached_port') is None:
        check.error('memcached_port must be 1-65535; got null')
    bind = check.text('memcached_bind_address', allow_none=False)
    if bind is not None and (not bind.strip() or not _ADDRESS_RE.match(bind)):
        check.error('memcached_bind_address must be one address without spaces; got %s' % shown(bind))
        bind = None
    allow_remote = check.boolean('memcached_allow_remote', allow_none=False)
    if bind is not None and allow_remote is False and not memcached_utils.is_loopback(bind):
        check.error('memcached_bind_address %s is beyond loopback: the plugin has no authentication (CIS MySQL '
                    'benchmark 4.7 says to disable daemon_memcached). Keep it on 127.0.0.1, or firewall the port / '
                    'use a private network and set memcached_allow_remote: true' % bind)
    extra = _daemon_extra_options(check)
    for name in ('memcached_get_policy', 'memcached_write_policy', 'memcached_flush_policy'):
        check.choice(name, memcached_utils.POLICY_CHOICES)
    for name in ('memcached_policy_name', 'memcached_separator', 'memcached_table_map_delimiter',
                 'memcached_config_sql_file', 'memcached_probe_container'):
        check.text(name)
    where = 'on ' + server_text(facts)
    batch = {}
    for short, name in (('r', 'daemon_memcached_r_batch_size'), ('w', 'daemon_memcached_w_batch_size')):
        low, high = variable_range(name, facts)
        batch[name] = check.integer('memcached_%s_batch_size' % short, low, high, where=where)
    binlog = check.boolean('memcached_api_enable_binlog')
    mdl = check.boolean('memcached_api_enable_mdl')
    low, high = variable_range('innodb_api_trx_level', facts)
    trx_level = check.integer('memcached_api_trx_level', low, high, where=where)
    _restart_inputs(check, 'memcached')
    check.integer('memcached_probe_timeout', 1)
    check.mapping('memcached_probe_expected')
    refusals = []
    containers = check.raw('memcached_containers')
    if containers is None:
        containers = []
    if not isinstance(containers, list) or not all(isinstance(c, dict) for c in containers):
        check.error('memcached_containers must be a list of maps; got %s' % shown(containers))
    else:
        if state == 'present' and not containers:
            # What the server should run can still be audited (verify); installing needs a container.
            refusals.append('memcached_containers: at least one container is needed (the plugin serves nothing '
                            'without one)')
        names = [str(c.get('name')) for c in containers]
        dupes = sorted(set(n for n in names if names.count(n) > 1))
        if dupes:
            check.error('duplicate container names: %s' % ', '.join(dupes))
    check.done()

    supported, reason = flavors.memcached_support(*_identity(facts))
    # memcached refuses to run as root without -u root and takes mysqld down; when it cannot be told
    # whether mysqld runs as root, -u root is added (a non-root daemon ignores it).
    as_root = facts.get('runs_as_root') is None or bool(facts.get('runs_as_root'))
    option = memcached_utils.daemon_option(port, bind, as_root, extra)
    static = {'daemon_memcached_option': option}
    static.update((k, v) for k, v in batch.items() if v is not None)
    if binlog is not None:
        static['innodb_api_enable_binlog'] = binlog
    if mdl is not None:
        static['innodb_api_enable_mdl'] = mdl
    dynamic = {} if trx_level is None else {'innodb_api_trx_level': trx_level}
    # Always in double quotes (it holds spaces); the writer refuses what cannot be quoted.
    lines = [('loose-daemon_memcached_option', option, 'text')]
    lines.extend(('loose-' + k, v, 'int') for k, v in sorted(batch.items()) if v is not None)
    if binlog is not None:
        lines.append(('loose-innodb_api_enable_binlog', binlog, 'bool'))
    if mdl is not None:
        lines.append(('loose-innodb_api_enable_mdl', mdl, 'bool'))
    if trx_level is not None:
        lines.append(('loose-innodb_api_trx_level', trx_level, 'int'))
    return with_option_file(
        MEMCACHED_COMMENTS, lines,
        settings=dict(static, **dynamic) if (state == 'present' and supported) else {},
        static_settings=static,
        daemon_option=option,
        runtime=dynamic,
        supported=supported,
        reason=reason,
        refusals=refusals,
        dropin='write' if state == 'present' else 'remove',
        runtime_steps=[dynamic] if (state == 'present' and dynamic) else [],
        notes=[],
    )


# ---------------------------------------------------------------- myrocks
MYROCKS_COMMENTS = (
    'Managed by the dbfleet.innodb.myrocks role: local changes are overwritten.',
    'Set myrocks_* in the inventory instead.',
    'MyRocks, loaded at every start; loose- lets a server without the plugin library start.',
)


def myrocks(variables, facts):
    """Desired state of the myrocks role.

    facts: server_facts (flavor, version), the variables of its record's server_variables (present only while
    MyRocks is loaded) and engines.ROCKSDB = {loaded, tables}. Raises InputError. Returns a dict:
    enabled, supported, reason, plugin, loaded, tables, refusals (what stops the role before any change:
    'unsupported', 'tables'), settings (what verify compares: the rocksdb_* values while enabled),
    option_file / option_file_text (plugin_load_add and the loose-rocksdb_* lines), runtime (the dynamic
    settings, set while MyRocks is loaded), pending_restart, restart_settings, restart_reason, notes.
    """
    check = Checker(variables, INPUTS['myrocks'], facts)
    enabled = check.boolean('myrocks_enabled')
    wanted = []
    for role_name, name, kind, low, high, dynamic in MYROCKS_SETTINGS:
        if kind == 'int':
            value = check.integer(role_name, low, high)
        else:
            value = check.text(role_name)
            if value is not None:
                _text, problem = option_value(role_name, value, kind)
                if problem:
                    check.error(problem)
                    value = None
        if value is not None:
            wanted.append((name, value, kind, dynamic))
    _restart_inputs(check, 'myrocks')
    check.done()

    status, reason, engine = flavors.engine_status('ROCKSDB', *_identity(facts))
    plugin = engine.plugin if engine is not None else None
    supported = status in (flavors.ENGINE_AVAILABLE, flavors.ENGINE_DEPRECATED) and bool(plugin)
    rocksdb = ((facts.get('engines') or {}).get('ROCKSDB')) or {}
    loaded = bool(rocksdb.get('loaded'))
    tables = int(rocksdb.get('tables') or 0)
    refusals = []
    if enabled is True and not supported:
        refusals.append('unsupported')
    if enabled is False and tables:
        refusals.append('tables')

    settings, runtime, restart_settings, notes = {}, {}, {}, []
    lines = []
    if enabled is True and supported:
        lines.append(('plugin_load_add', plugin, 'word'))
        for name, value, kind, dynamic in wanted:
            settings[name] = value
            lines.append(('loose-' + name, value, kind))
            if not loaded:
                continue
            fact = _variable(facts, name)
            if fact.get('dynamic') is not None:
                dynamic = bool(fact['dynamic'])
            if dynamic:
                runtime[name] = value
            elif not values.equal(value, fact.get('runtime'), 'int' if kind == 'int' else 'str'):
                restart_settings[name] = value
    elif wanted and enabled is not True:
        notes.append('the myrocks_* settings do nothing unless myrocks_enabled is true')
    if enabled is True and supported and not loaded:
        pending, restart_reason = True, 'load MyRocks (%s)' % plugin
    elif enabled is False and loaded:
        pending, restart_reason = True, 'unload MyRocks'
    elif restart_settings:
        pending = True
        restart_reason = 'MyRocks settings: %s' % ', '.join('%s=%s' % kv for kv in sorted(restart_settings.items()))
    else:
        pending, restart_reason = False, ''
    if pending:
        notes.append('%s waits for a restart' % restart_reason)
    return with_option_file(
        MYROCKS_COMMENTS, lines,
        enabled=enabled, supported=supported, reason=reason, plugin=plugin, loaded=loaded, tables=tables,
        refusals=refusals, settings=settings, runtime=runtime, notes=notes,
        dropin={True: 'write', False: 'remove'}.get(enabled, 'leave'),
        **restart_state(pending, restart_settings, restart_reason)
    )


def settings(variables, facts):
    """Desired state of the settings role: module_utils/settings.py (its own module; it uses this one's writer)."""
    from ansible_collections.dbfleet.innodb.plugins.module_utils import settings as settings_role
    return settings_role.settings(variables, facts)


# ---------------------------------------------------------------- the role registry
class Role(object):
    """One role with a desired state: everything that makes it a role, in one record.

    name            the role (roles/<name>/, variables <name>_*); its inputs and their defaults are
                    INPUTS[name], generated from roles/<name>/meta/argument_specs.yml
    function        its desired-state function: function(variables, facts) -> state (with detects_storage:
                    function(variables, facts, detected)); see for_role() for what a state holds
    outputs         facts the role sets under its prefix: not inputs, never reported as unknown
    server_variables  server variables its function reads (server_facts `variables`)
    setting_variables server variables its states may name in `settings` (what verify compares; the
                    controller-side audit reads only these)
    engines         storage engines whose state its function reads (server_facts `engines`)
    site            whether playbooks/site.yml and verify.yml apply/audit it by default (false: opt-in
                    through site_roles / verify_desired_from, e.g. a role that loads a storage engine)
    hosts           None: every host of the play; else the group of hosts it applies to by default
                    (site.yml's site_<name>_hosts, verify.yml's verify_<name>_hosts override it)
    detects_storage its function also takes what storage_facts finds under the datadir
    catalog         its function reads the server's catalog of variables and its memory
                    (server_facts.report(catalog=True)): a role that takes any setting by name
    """

    def __init__(self, name, function, outputs, server_variables=(), setting_variables=(), engines=(),
                 site=True, hosts=None, detects_storage=False, catalog=False):
        self.name = name
        self.function = function
        self.outputs = tuple(outputs)
        self.server_variables = tuple(server_variables)
        self.setting_variables = tuple(setting_variables)
        self.engines = tuple(engines)
        self.site = site
        self.hosts = hosts
        self.detects_storage = detects_storage
        self.catalog = catalog

    @property
    def inputs(self):
        """{name: default} from the role's argument specs."""
        return INPUTS[self.name]

    @property
    def dropin(self):
        """The file name of the role's drop-in (in dbfleet_option_dropin_dir)."""
        return '60-dbfleet-%s.cnf' % self.name

    @property
    def restarts(self):
        """Whether the role may restart its server (it has a <name>_restart input)."""
        return (self.name + '_restart') in self.inputs

    def public(self):
        """The record as the playbooks read it (filter dbfleet.innodb.roles)."""
        return dict(name=self.name, site=self.site, hosts=self.hosts, restarts=self.restarts, dropin=self.dropin,
                    inputs=sorted(self.inputs), outputs=list(self.outputs))


# In the order site.yml applies them and verify.yml audits them.
REGISTRY = (
    Role('flush_neighbors', flush_neighbors,
         outputs=('flush_neighbors_desired_settings', 'flush_neighbors_storage', 'flush_neighbors_report'),
         server_variables=('innodb_flush_neighbors', 'innodb_io_capacity', 'innodb_io_capacity_max'),
         setting_variables=('innodb_flush_neighbors', 'innodb_io_capacity', 'innodb_io_capacity_max'),
         detects_storage=True),
    Role('adaptive_hash', adaptive_hash,
         outputs=('adaptive_hash_desired_settings', 'adaptive_hash_report', 'adaptive_hash_pending_restart',
                  'adaptive_hash_restarted'),
         server_variables=('innodb_adaptive_hash_index', 'innodb_adaptive_hash_index_parts'),
         setting_variables=('innodb_adaptive_hash_index', 'innodb_adaptive_hash_index_parts',
                            'innodb_adaptive_hash_index_partitions')),
    Role('memcached', memcached,
         outputs=('memcached_desired_settings', 'memcached_report', 'memcached_restarted'),
         setting_variables=('daemon_memcached_option', 'daemon_memcached_r_batch_size',
                            'daemon_memcached_w_batch_size', 'innodb_api_enable_binlog', 'innodb_api_enable_mdl',
                            'innodb_api_trx_level'),
         hosts='memcached'),
    Role('myrocks', myrocks,
         outputs=('myrocks_desired_settings', 'myrocks_report', 'myrocks_pending_restart', 'myrocks_restarted'),
         server_variables=tuple(row[1] for row in MYROCKS_SETTINGS),
         setting_variables=tuple(row[1] for row in MYROCKS_SETTINGS),
         engines=('ROCKSDB',),
         # MyRocks loads a storage engine and restarts for it: applied only where asked for.
         site=False),
    Role('settings', settings,
         outputs=('settings_desired_settings', 'settings_report', 'settings_pending_restart', 'settings_restarted'),
         # Any setting by name (settings_values): checked against the server's own catalog, which it reads instead
         # of named variables; the settings other roles own are refused by name (settings.owner()).
         catalog=True,
         # Applied where asked for (site_roles, or the role on its own): a map of settings is the user's.
         site=False),
)
RECORDS = dict((r.name, r) for r in REGISTRY)
# The role names, sorted (module choices, messages).
ROLES = tuple(sorted(RECORDS))


def role_inputs(role, variables):
    """(inputs, unknown): the role's own input variables out of variables (<role>_* names of the play),
    and the names with the role's prefix that the role does not know."""
    variables = variables or {}
    unknown = unknown_variables(role, variables)
    inputs = dict((k, v) for k, v in variables.items() if k in INPUTS[role])
    return inputs, unknown


def unknown_variables(role, names):
    """Names with the role's prefix that the role does not know (misspelt, or from an old release)."""
    prefix = role + '_'
    known = set(INPUTS[role]) | set(RECORDS[role].outputs)
    return sorted(n for n in names if str(n).startswith(prefix) and n not in known)


def check_roles(roles, label='desired_from'):
    """The role names in order without repeats; ValueError naming any that has no desired state."""
    unknown = [str(r) for r in roles or () if r not in RECORDS]
    if unknown:
        raise ValueError('%s: %s is not a role with a desired state (%s)'
                         % (label, ', '.join(repr(r) for r in unknown), ', '.join(ROLES)))
    out = []
    for role in roles or ():
        if role not in out:
            out.append(role)
    return out


def _names(roles, field):
    names = []
    for role in roles:
        names.extend(n for n in getattr(RECORDS[role], field) if n not in names)
    return names


def server_variable_names(roles):
    """The server variables the roles read (server_facts `variables`), in one list."""
    return _names(roles, 'server_variables')


def setting_variable_names(roles):
    """The server variables the roles' desired states may name as settings (what verify compares), in one list:
    the controller-side audit reads these by name (verify.audit_variable_names())."""
    return _names(roles, 'setting_variables')


def setting_owner(name):
    """The role whose record names server variable name among its setting variables, or None."""
    for record in REGISTRY:
        if name in record.setting_variables:
            return record.name
    return None


def server_engine_names(roles):
    """The storage engines whose state the roles read (server facts `engines`)."""
    return _names(roles, 'engines')


def server_catalog(roles):
    """Whether the roles read the server's catalog of variables and its memory (server_facts.report(catalog=True))."""
    return any(RECORDS[r].catalog for r in roles)


def restart_roles(roles):
    """The roles of roles that may restart a server (they have a <role>_restart input)."""
    return [r for r in roles if RECORDS[r].restarts]


def site_roles(hosts=False):
    """The roles site.yml applies by default: those on every host (hosts=False) or those with a host group
    of their own (hosts=True), in the registry's order."""
    return [r.name for r in REGISTRY if r.site and bool(r.hosts) == hosts]


def for_role(role, inputs, facts, detect_storage):
    """The desired state of one role, from its record's function. detect_storage(datadir, probe) runs only for
    a role that detects storage (what storage_facts finds under the datadir; probe: its <role>_probe input).

    What every state holds (the contract of a desired-state function, filled here where the function leaves
    a key out; the scaffold role roles/scaffold reads these):
      settings           {server variable: value}: what verify compares
      option_file, option_file_text  the drop-in's lines and body, from the one writer (with_option_file())
      dropin             write | remove | leave: what happens to the drop-in (default: write when it has lines)
      runtime            what to set at runtime; runtime_steps the same as a list of {name: value} batches,
                         one global_variables run each, in order; runtime_persist: SET PERSIST them
      pending_restart, restart_settings, restart_reason  what waits for a restart (restart_state())
      notes              plain sentences
      inputs             the role's inputs as used: its defaults with the user's values over them
      role               the role's name
    """
    record = RECORDS[role]
    if record.detects_storage:
        probe = Checker(inputs, INPUTS[role], facts).boolean(role + '_probe')
        found = detect_storage(facts['datadir'], bool(probe)) if facts.get('datadir') else dict(
            storage_class='unknown', confidence='low', reasons=['the server reported no datadir'])
        state = record.function(inputs, facts, found)
    else:
        state = record.function(inputs, facts)
    runtime = state.get('runtime') or {}
    state.setdefault('runtime_steps', list(runtime) if isinstance(runtime, list) else ([runtime] if runtime else []))
    state.setdefault('runtime_persist', False)
    state.setdefault('dropin', 'write' if state.get('option_file') else 'leave')
    state.setdefault('notes', [])
    for key, value in restart_state(False, {}, '').items():
        state.setdefault(key, value)
    state['inputs'] = dict(INPUTS[role], **inputs)
    state['role'] = role
    return state


def for_roles(roles, variables, facts, detect_storage):
    """The desired state of each role in roles, from the play's variables (each role's defaults fill
    what is not set: INPUTS). Returns (settings, states, unknown): the roles' settings merged in
    order, {role: desired state}, and the unknown <role>_* names. Raises InputError naming every bad role
    (its messages prefixed with the role; .by_role: {role: [messages]})."""
    settings, states, unknown, by_role = {}, {}, [], {}
    for role in roles:
        inputs, role_unknown = role_inputs(role, variables)
        unknown.extend(role_unknown)
        try:
            states[role] = for_role(role, inputs, facts, detect_storage)
        except InputError as e:
            by_role[role] = e.messages
            continue
        settings.update(states[role]['settings'])
    if by_role:
        error = InputError('%s: %s' % (role, m) for role in by_role for m in by_role[role])
        error.by_role = by_role
        raise error
    return settings, states, unknown
