# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Upgrade readiness of one server's settings: what it would do, and run with, on a target flavor/version.

findings() is pure: given every place a value of the host comes from (option-file lines with file:line, the
command line, mysqld-auto.cnf, or, where the files cannot be read, the server's own record of where each value
came from), its running values and their origins, what it uses, and the target's facts (flavor_data: the target's
own server, read by lab/read_flavor_data.py), it returns one finding per problem:

- would_not_start: a setting the target has no option for (removed or renamed): MySQL and MariaDB refuse to start
  on an unknown option unless it is written loose- (then: ignored, with a warning);
- value_refused: a value the target no longer accepts for an enumeration, a boolean or a flag set: refused at start;
- value_adjusted: a number outside the target's range: the server starts with the nearest bound and a warning;
- not_read: a line in an option group only the current version reads ([mysqld-8.0]): the target skips it;
- default_changes: a setting the host leaves at its default whose default the target changes (value now -> after;
  a target default that depends on the machine says so, with the lab's value as an example);
- feature_removed: something the host uses that the target does not have (the InnoDB memcached plugin after 8.2,
  accounts of mysql_native_password on MySQL 9; tables of a missing engine are verify's blockers).

Each finding names what to do: the setting to pin and the role that owns it (pin), the settings role's
settings_values for the rest, the target's name for a renamed setting. The host's settings (Setting rows, from every
place a value comes from) are versions/upgrade_settings.py's.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired as desired_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import facts as version_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.upgrade_settings import DEFAULT_ORIGINS, RUNTIME_ORIGINS

WOULD_NOT_START = 'would_not_start'
IGNORED = 'ignored'
VALUE_REFUSED = 'value_refused'
VALUE_ADJUSTED = 'value_adjusted'
NOT_READ = 'not_read'
DEFAULT_CHANGES = 'default_changes'
FEATURE_REMOVED = 'feature_removed'
KINDS = (WOULD_NOT_START, VALUE_REFUSED, FEATURE_REMOVED, IGNORED, NOT_READ, VALUE_ADJUSTED, DEFAULT_CHANGES)
# Findings after which the target server does not start on this host's files.
STOPS_START = (WOULD_NOT_START, VALUE_REFUSED)
# Findings that change what the server runs with, silently (no error at start).
SILENT = (DEFAULT_CHANGES, NOT_READ, VALUE_ADJUSTED, IGNORED)

# The general settings role (dbfleet.innodb.settings) pins any variable: settings_values {name: value}.
SETTINGS_ROLE = 'dbfleet.innodb.settings'
# Defaults a server sizes for what it has built in (instrument classes, error messages): a new version's own number
# is right for it, so these changes are reported and never pinned.
SIZED_BY_SERVER = ('performance_schema_max_*_classes', 'performance_schema_error_size')


def sized_by_server(name):
    for pattern in SIZED_BY_SERVER:
        head, _star, tail = pattern.partition('*')
        if name == pattern or (_star and name.startswith(head) and name.endswith(tail)):
            return True
    return False


# Option prefixes the server reads before a name (optionfiles.SPECIAL_PREFIXES, and maximum- for the upper
# bound a session may set).
_BOOL_PREFIXES = tuple(p for p, _meaning in optionfiles.SPECIAL_PREFIXES)


class Target(object):
    """The upgrade target's facts: its own server's (flavor_data) where the collection has them, else the spans
    of flavors.VARIABLES (then only their defaults are compared; complete is False). catalog answers facts_for()
    and known_versions(): the package flavor_data on the controller, version_facts.Catalog in a module (the same
    facts, sent by the action plugin only with a target: no module payload carries the package)."""

    def __init__(self, flavor, version, catalog):
        self.flavor = flavor
        self.version = tuple(version)
        self.catalog = catalog
        self.facts = catalog.facts_for(flavor, self.version)
        self.complete = self.facts is not None

    @property
    def label(self):
        """'MySQL 9.7' (a target given without its patch version), 'MySQL 8.4.3'."""
        shown = self.version[:2] if self.version[2:] == (0,) else self.version
        return '%s %s' % (flavors.display_name(self.flavor), flavors.format_version(shown))

    def source(self):
        if self.facts is not None:
            return self.facts.source_text()
        return ('the collection has no facts of every variable of %s (it has: %s): only the variables of '
                'flavors.VARIABLES are compared (docs/innodb-facts.md)'
                % (self.label, ', '.join(self.catalog.known_versions())))

    def variable(self, name):
        """version_facts.Variable of name on the target, or None (no such variable, or not known)."""
        if self.facts is not None:
            return self.facts.variable(name)
        facts = flavors.variable_facts(name, self.flavor, self.version)
        if facts is None:
            return None
        return version_facts.Variable(name, facts.kind, None if facts.default is None else str(facts.default),
                                      facts.dynamic, facts.minimum, facts.maximum, facts.choices, None)

    def accepts(self, name):
        """True / False whether the target's binary takes option name; None when not known (no facts)."""
        if self.facts is None:
            return None
        if self.facts.accepts_option(name):
            return True
        for prefix in _BOOL_PREFIXES + ('maximum_',):
            if name.startswith(prefix) and self.facts.accepts_option(name[len(prefix):]):
                return True
        return False


# ---------------------------------------------------------------- the host's settings on the target
def variable_name(target, setting_name):
    """The variable a setting name sets on target: the name itself when it is a variable there, else skip-X,
    disable-X and enable-X set X."""
    if target.variable(setting_name) is not None:
        return setting_name
    for prefix in _BOOL_PREFIXES:
        if setting_name.startswith(prefix) and target.variable(setting_name[len(prefix):]) is not None:
            return setting_name[len(prefix):]
    return setting_name


def _setting_value(setting, name):
    """The value setting gives variable name (skip-X: OFF; a name alone: ON)."""
    if name != setting.name:
        for prefix, meaning in optionfiles.SPECIAL_PREFIXES:
            if setting.name == prefix + name:
                return meaning
    return 'ON' if setting.value is None else setting.value


# ---------------------------------------------------------------- values
# The words mysqld and mariadbd read as a boolean option's value (my_getopt): anything else is OFF, with a warning.
_TRUE = ('on', 'true', '1')
_FALSE = ('off', 'false', '0')


def _number(text):
    """An option value as the server reads a number (K, M, G... suffixes), or None."""
    text = str(text).strip().lower()
    factor = 1
    if text and text[-1] in 'kmgtpe':
        factor = 1024 ** ('kmgtpe'.index(text[-1]) + 1)
        text = text[:-1]
    try:
        number = float(text)
    except ValueError:
        return None
    return number * factor


def same_value(a, b, kind=None):
    """Two values mean the same for a variable of kind (ON is 1 is true, 16M is 16777216, 90 is 90.000000)."""
    x, y = str(a).strip().lower(), str(b).strip().lower()
    if x == y:
        return True
    if kind == 'bool' or (x in _TRUE + _FALSE and y in _TRUE + _FALSE):
        return (x in _TRUE and y in _TRUE) or (x in _FALSE and y in _FALSE)
    nx, ny = _number(x), _number(y)
    return nx is not None and ny is not None and nx == ny


def value_problem(variable, value):
    """(kind, reason) when the target refuses (VALUE_REFUSED) or adjusts (VALUE_ADJUSTED) value for variable;
    None when it takes it as written."""
    text = str(value).strip()
    low = text.lower()
    if variable.kind == 'bool':
        if low in _TRUE + _FALSE:
            return None
        return VALUE_ADJUSTED, '%r is not a boolean the server reads (ON/OFF, 1/0, TRUE/FALSE): it starts with OFF' % text
    if variable.kind == 'enum' and variable.choices:
        choices = [c.lower() for c in variable.choices]
        if low in choices or (low.isdigit() and int(low) < len(choices)):
            return None
        return VALUE_REFUSED, '%r is not one of %s' % (text, ', '.join(variable.choices))
    if variable.kind == 'set' and variable.choices:
        choices = [c.lower() for c in variable.choices]
        unknown = [part.split('=')[0].strip() for part in low.split(',')
                   if part.strip() and part.split('=')[0].strip() not in choices]
        if unknown:
            return VALUE_REFUSED, '%s: not a flag of it (%s)' % (', '.join(unknown), ', '.join(variable.choices))
        return None
    if variable.kind in ('int', 'float'):
        number = _number(text)
        if number is None:
            return VALUE_REFUSED, '%r is not a number' % text
        for bound, word in ((variable.minimum, 'below the minimum'), (variable.maximum, 'above the maximum')):
            if bound is None:
                continue
            if (word.startswith('below') and number < bound) or (word.startswith('above') and number > bound):
                return VALUE_ADJUSTED, '%s is %s %s: the server starts with %s and a warning' % (text, word, bound, bound)
    return None


# ---------------------------------------------------------------- pinning
def _role_value(value, kind):
    if kind == 'bool':
        return str(value).strip().lower() in _TRUE
    number = _number(value) if kind in ('int', 'float') else None
    if number is not None and number == int(number) and str(value).strip().lstrip('-').isdigit():
        return int(number)
    return value


def pin(name, value, kind):
    """How to keep value for variable name across the upgrade: the owning role's input, else the settings role."""
    role = desired_utils.setting_owner(name)
    variable = role and desired_utils.RECORDS[role].pinning_input(name)
    if variable:
        return dict(role='dbfleet.innodb.%s' % role, variable=variable, value=_role_value(value, kind))
    if role:
        return dict(role='dbfleet.innodb.%s' % role, variable=None, value=value,
                    note='the %s role decides %s: pin it through its inputs' % (role, name))
    return dict(role=SETTINGS_ROLE, variable='settings_values', value={name: value})


# ---------------------------------------------------------------- findings
def _finding(kind, name, message, **extra):
    item = dict(kind=kind, setting=name, message=message, stops_start=kind in STOPS_START, where=None, file=None,
                line=None, value=None, now=None, after=None, machine=None, target_name=None, pin=None)
    item.update(extra)
    return item


def _at(setting):
    return dict(where=setting.where, file=setting.file, line=setting.line, value=setting.value)


def setting_findings(target, settings, current=None):
    """Findings on what the host sets (removed names, refused and adjusted values). current: the host's own
    version as a Target, when the collection has its facts: a value it treats the same way is no upgrade finding."""
    out = []
    label = target.label
    refuses = 'mysqld refuses to start on an unknown variable' if target.flavor != flavors.MARIADB else \
        'mariadbd refuses to start on an unknown option'
    for setting in settings:
        name = setting.name
        accepted = target.accepts(name)
        if accepted is False:
            replaced = flavors.replacement(variable_name(current or target, name), target.flavor, target.version)
            new_name, why = replaced if replaced else (None, None)
            instead = (' Its successor on %s: %s.' % (label, new_name)) if new_name else ''
            reason = (' (%s)' % why) if why else ''
            if setting.origin == 'persisted':
                out.append(_finding(IGNORED, name, '%s in %s: %s has no such variable%s; it starts and logs "Currently '
                                    'unknown variable \'%s\' was read from the persisted config file" (MySQL 9.7.4), the '
                                    'value does nothing.%s' % (name, setting.where, label, reason, name, instead),
                                    target_name=new_name, **_at(setting)))
            elif setting.loose:
                out.append(_finding(IGNORED, name, '%s (%s) is written loose-: %s has no such option%s and starts '
                                    'without it (a warning).%s' % (name, setting.where, label, reason, instead),
                                    target_name=new_name, **_at(setting)))
            else:
                maybe = ' (unless the line is written loose-)' if setting.loose is None else ''
                out.append(_finding(WOULD_NOT_START, name, 'would not start: %s (%s) is not an option of %s%s: %s%s.%s'
                                    % (name, setting.where, label, reason, refuses, maybe, instead),
                                    target_name=new_name, **_at(setting)))
            continue
        said = target.facts.removed_accepted.get(name) if target.facts is not None else None
        if said:
            replaced = flavors.replacement(name, target.flavor, target.version)
            new_name = replaced[0] if replaced else None
            out.append(_finding(IGNORED, name, '%s (%s): %s takes it and ignores it: "%s"%s'
                                % (name, setting.where, target.label, said,
                                   (' Its successor on %s: %s.' % (target.label, new_name)) if new_name else ''),
                                target_name=new_name, **_at(setting)))
            continue
        variable = target.variable(variable_name(target, name))
        if variable is None or variable.machine == version_facts.INSTANCE:
            continue
        value = _setting_value(setting, variable.name)
        problem = value_problem(variable, value)
        before = current.variable(variable.name) if current is not None and current.complete else None
        if problem and before is not None and value_problem(before, value) == problem:
            continue        # the host's own version does the same with it: nothing the upgrade changes
        if problem:
            kind, why = problem
            verb = 'would not start' if kind == VALUE_REFUSED else 'adjusted'
            out.append(_finding(kind, variable.name, '%s: %s = %s (%s) on %s: %s'
                                % (verb, variable.name, setting.value, setting.where, label, why), **_at(setting)))
    return out


def _relies_on_default(name, origin, now, current):
    """Whether a value not set by any file, command line or mysqld-auto.cnf is the default the host relies on: the
    server says so (DEFAULT_ORIGINS), or it was set at run time to what its own version's default is anyway."""
    if not origin or origin in DEFAULT_ORIGINS:
        return True
    if origin in RUNTIME_ORIGINS and current is not None:
        before = current.variable(name)
        return before is not None and not before.machine and before.default is not None \
            and same_value(now, before.default, before.kind)
    return False


def _flags(text):
    return dict(part.strip().lower().split('=', 1) for part in str(text).split(',') if '=' in part)


def _same_flags(a, b):
    """For a flag set (optimizer_switch: a=on,b=off): the flags both have are equal (a new flag is no change)."""
    x, y = _flags(a), _flags(b)
    common = set(x) & set(y)
    return bool(common) and all(x[k] == y[k] for k in common)


def _changed_flags(a, b):
    """'hash_join_cardinality=off -> on, ...' for the flags a flag set changes, or None when it is no flag set."""
    x, y = _flags(a), _flags(b)
    changed = ['%s=%s -> %s' % (k, x[k], y[k]) for k in sorted(set(x) & set(y)) if x[k] != y[k]]
    return ', '.join(changed) if changed else None


def default_findings(target, identity, settings, runtime, origins, current=None):
    """Findings on the variables the host leaves at their default, whose default the target changes.
    current: the host's own version as a Target when the collection has its facts (a value set at run time to its
    default still relies on it)."""
    out = []
    set_names = set(variable_name(target, s.name) for s in settings) | set(s.name for s in settings)
    for name in sorted(runtime):
        if name in set_names:
            continue
        origin = str(origins.get(name) or '').upper()
        now = runtime[name]
        if now is None or not _relies_on_default(name, origin, now, current):
            continue        # set at run time to another value, or by a place not read here
        variable = target.variable(name)
        if variable is None or variable.default is None or variable.machine == version_facts.INSTANCE:
            continue
        if same_value(now, variable.default, variable.kind) or (variable.kind == 'set' and _same_flags(now, variable.default)):
            continue
        machine = variable.machine
        after = ('%s on the lab\'s machine (depends: %s)' % (variable.default, machine)) if machine else variable.default
        own = sized_by_server(name)
        flags = _changed_flags(now, variable.default)
        change = ('flags %s' % flags) if flags else '%s -> %s' % (_shown(now), _shown(after))
        out.append(_finding(DEFAULT_CHANGES, name, '%s %s: left at its default on %s %s, which %s changes%s'
                            % (name, change, flavors.display_name(identity.flavor),
                               flavors.format_version(identity.version), target.label,
                               ' (sized by the server for what it has built in: not to pin)' if own else ''),
                            now=now, after=variable.default, machine=machine,
                            pin=None if own else pin(name, now, variable.kind), innodb=name.startswith('innodb_')))
    return out


def _shown(value):
    text = '%s' % (value,)
    return text if text.strip() else "''"


def not_read_findings(target, current_entries, target_entries):
    """Option-file lines the current version reads and the target does not (a group such as [mysqld-8.0])."""
    kept = set((e.file, e.line) for e in target_entries)
    out = []
    for entry in current_entries:
        if (entry.file, entry.line) in kept:
            continue
        where = '%s:%d [%s]' % (entry.file, entry.line, entry.group)
        out.append(_finding(NOT_READ, entry.name, '%s (%s) is in a group %s does not read: the setting is lost at '
                            'the upgrade' % (entry.name, where, target.label), where=where, file=entry.file,
                            line=entry.line, value=entry.value))
    return out


def feature_findings(target, uses):
    """Findings on what the host uses that the target does not have.

    uses: memcached_plugin (bool: the daemon_memcached plugin is active, or a file loads it),
    native_password_accounts (list of 'user@host' that authenticate with mysql_native_password)."""
    out = []
    if uses.get('memcached_plugin'):
        supported, reason = capability_facts.memcached_support(target.flavor, target.version)
        if not supported:
            out.append(_finding(FEATURE_REMOVED, 'daemon_memcached', 'the InnoDB memcached plugin is in use; %s: %s. '
                                'Move its clients to SQL, then uninstall it (memcached role: memcached_state: absent)'
                                % (target.label, reason),
                                pin=dict(role='dbfleet.innodb.memcached', variable='memcached_state', value='absent')))
    accounts = list(uses.get('native_password_accounts') or ())
    if accounts and not capability_facts.capability('mysql_native_password', target.flavor, target.version):
        shown = ', '.join(accounts[:10]) + (' and %d more' % (len(accounts) - 10) if len(accounts) > 10 else '')
        out.append(_finding(FEATURE_REMOVED, 'mysql_native_password', '%d account(s) authenticate with '
                            'mysql_native_password, which %s does not have (removed in MySQL 9.0): %s. ALTER USER ... '
                            'IDENTIFIED WITH caching_sha2_password before the upgrade'
                            % (len(accounts), target.label, shown), value=accounts))
    return out


def findings(target, identity, settings, runtime, origins, uses=None, current_entries=(), target_entries=None):  # pylint: disable=too-many-arguments
    """Every finding for one host, in the order of KINDS, then by setting (pure).

    target: Target; identity: the host's server_identity.ServerIdentity; settings: Setting rows (what start-up reads on the
    target: option files read for the target's groups, command line, mysqld-auto.cnf); runtime: {name: running
    value}; origins: {name: where the running value came from, as the server says (None: not known)}; uses: see
    feature_findings(); current_entries / target_entries: the option-file entries read for the current and the
    target's groups (for not_read findings; target_entries None: not compared)."""
    current = Target(identity.flavor, identity.version, target.catalog)
    out = setting_findings(target, settings, current if current.complete else None)
    if target_entries is not None:
        out += not_read_findings(target, current_entries, target_entries)
    out += default_findings(target, identity, settings, runtime, origins, current if current.complete else None)
    out += feature_findings(target, uses or {})
    order = dict((k, i) for i, k in enumerate(KINDS))
    return [masked(f) for f in sorted(out, key=lambda f: (order[f['kind']], not f.get('innodb'), f['setting'],
                                                          f.get('line') or 0))]


_VALUE_KEYS = ('value', 'now', 'after')


def masked(item):
    """item with the values of a secret variable (masking.is_secret_variable) masked everywhere, and the
    credentials inside an option string (key=value) masked in every text. Returns item."""
    if masking.is_secret_variable(item['setting']):
        shown = ['%s' % item[k] for k in _VALUE_KEYS if item.get(k) not in (None, '')]
        for key in _VALUE_KEYS:
            if item.get(key) not in (None, ''):
                item[key] = masking.MASK
        for value in sorted(shown, key=len, reverse=True):
            item['message'] = item['message'].replace(value, masking.MASK)
        if item.get('pin'):
            item['pin'] = dict(item['pin'], value=masking.MASK)
        item['masked'] = True
    else:
        item['message'] = masking.mask_text(item['message'])
        for key in _VALUE_KEYS:
            item[key] = masking.mask_text(item.get(key))
    return item


def summary(items, complete=True):
    """What the report counts: would the target start, how many silent changes, and the one-run pin of the
    settings role (settings_values) and of the owning roles (role_inputs). Without the target's own facts
    (complete False) only a finding that stops the start is certain: would_start is then False or None (unknown),
    never True."""
    by_kind = dict((k, 0) for k in KINDS)
    settings_values, role_inputs = {}, {}
    for item in items:
        by_kind[item['kind']] += 1
        p = item.get('pin')
        if item['kind'] != DEFAULT_CHANGES or not p:
            continue
        if p['role'] == SETTINGS_ROLE:
            settings_values.update(p['value'])
        elif p.get('variable'):
            role_inputs.setdefault(p['role'], {})[p['variable']] = p['value']
    stops = sum(1 for i in items if i['stops_start'])
    return dict(would_start=False if stops else (True if complete else None),
                stops_start=stops,
                silent_changes=sum(1 for i in items if i['kind'] in SILENT),
                by_kind=by_kind, settings_values=settings_values, role_inputs=role_inputs)


def unknown_start_text(label, known_versions):
    """Why whether a target starts is not known: 'the collection has no facts of MySQL 99.1 (it has facts of:
    ...): whether the server would start on it is unknown'."""
    return ('the collection has no facts of %s (it has facts of: %s): whether the server would start on it is unknown'
            % (label, ', '.join(known_versions) or 'none'))


def result(target, items, notes=()):
    """The upgrade part of verify's result; without the target's own facts, also the versions the collection has
    facts of (known_versions) and why the start is unknown (start_unknown)."""
    out = dict(target=dict(flavor=target.flavor, version=flavors.format_version(target.version), label=target.label),
               facts=target.source(), complete=target.complete, findings=items,
               summary=summary(items, target.complete), notes=list(notes))
    if not target.complete:
        out['known_versions'] = list(target.catalog.known_versions())
        if out['summary']['would_start'] is None:
            out['start_unknown'] = unknown_start_text(target.label, out['known_versions'])
    return out
