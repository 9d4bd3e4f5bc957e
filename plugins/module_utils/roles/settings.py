# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The desired state of the settings role: any server setting, checked against the server's own catalog.

settings() has the contract of every role function of module_utils/roles/states.py (adaptive_hash(), myrocks(), ...): it takes the
role's variables as the user wrote them and the server's facts, raises desired.InputError naming every bad input
before anything changes, and returns the role's desired state with its drop-in from the one option-file writer
(option_writer.with_option_file()).

The facts it reads besides the usual ones (server_facts.report(catalog=True)):
- catalog: {name: dict(value, type, minimum, maximum, block_size, choices, read_only)} - every GLOBAL variable the
  server runs (SHOW GLOBAL VARIABLES) with what its catalog says of it (MariaDB information_schema.SYSTEM_VARIABLES,
  MySQL 8.0+ performance_schema.variables_info; server_facts.variable_catalog());
- memory: dict(bytes, source, ...) - the memory the server may use (server_facts.server_memory()), for values
  written as a percentage ('70%').

What it decides, per setting: the server's own name (a version's other spelling, the redo log's size in the unit
the server takes: flavors.REDO_LOG, roles/redo_log.py), the value the server will run with (block sizes, the buffer
pool's chunk x instances, the memory a percentage means), whether it is set at runtime (dynamic, and different from
the running value) or waits for a restart (read-only), and the drop-in line. Unit tests: tests/unit/plugins/
module_utils/roles/test_settings.py, test_redo_log.py.
"""

from __future__ import annotations

import difflib
import re

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import option_writer
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import inputs as role_input
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import redo_log
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import security_settings
from ansible_collections.dbfleet.innodb.plugins.module_utils import values

ROLE = 'settings'

COMMENTS = (
    'Managed by the dbfleet.innodb.settings role: local changes are overwritten.',
    'Set settings_values in the inventory instead.',
    'Values as the server runs them (rounded by the server, percentages of memory resolved on this host).',
)

BUFFER_POOL = 'innodb_buffer_pool_size'
_NAME_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_-]{0,63}$')
# The writer's kind for each value kind (option_writer.option_file()).
LINE_KINDS = dict(bool='bool', int='int', size='int', float='word', enum='word', str='text')


def owner(name):
    """(role, its inputs as a message names them) of the role that owns server variable name, or None: one owner per
    setting, from the roles' records (desired.owning_role(): each role's owns and owns_prefixes)."""
    owned = desired.owning_role(name)
    if owned is None or owned[0] == ROLE:
        return None
    return owned[0], ' / '.join(owned[1])


def _server(facts):
    return '%s %s' % (flavors.display_name(facts.get('flavor')), facts.get('version_text')
                      or flavors.format_version(facts.get('version') or (0, 0, 0)))


def _identity(facts):
    return facts.get('flavor'), tuple(int(x) for x in (facts.get('version') or (0, 0, 0)))


# ---------------------------------------------------------------- security
def security_inputs(check, wanted):
    """wanted (settings_values) without the settings that turn security off (security_settings.RULES) unless
    settings_allow_security_settings names them, and without secret-valued ones: one message for each kind, through
    check, before anything changes. The message names each setting and why, never a value."""
    allowed = check.raw('settings_allow_security_settings')
    if allowed is None:
        allowed = []
    if not isinstance(allowed, list):
        check.error('settings_allow_security_settings must be a list of setting names; got %s' % desired.shown(allowed))
        allowed = []
    unknown = security_settings.unknown_allowances(allowed)
    if unknown:
        check.error('settings_allow_security_settings names %s: not a security setting of docs/security.md, so it '
                    'allows nothing' % ', '.join(desired.shown(a) for a in unknown))
    found = security_settings.refusals(wanted, allowed)
    if found:
        check.error(security_settings.refusal_message(found, 'settings_values', 'settings_allow_security_settings'))
    secret = security_settings.secrets(wanted)
    if secret:
        check.error(security_settings.secret_message(secret, 'settings_values'))
    refused = set(key for key, _base, _rule in found) | set(secret)
    return dict((key, value) for key, value in wanted.items() if str(key) not in refused)


# ---------------------------------------------------------------- names
def close_names(name, catalog):
    """The closest real variable names of this server (difflib), best first."""
    return difflib.get_close_matches(name, sorted(catalog), 3, 0.75)


# ---------------------------------------------------------------- one variable
def describe(name, facts, cat):
    """(kind, choices, limits, dynamic, source) of server variable name: the version table first (flavors.VARIABLES), the
    server's catalog for what the table does not know (MariaDB: its type, choices, read-only flag, block size; MySQL:
    the range), the running value's look last (the kind). dynamic: the server's own read-only flag (MariaDB), else
    flavors.runtime_flag() (the version table, then what a fresh lab server of the nearest version answered); source
    says where it came from when not from the server itself."""
    flavor, version = _identity(facts)
    vf = flavors.variable_facts(name, flavor, version)
    kind = vf.kind if vf else values.SERVER_TYPES.get(str(cat.get('type') or '').upper())
    if kind is None:
        kind = values.guess_kind(cat.get('value')) if cat.get('value') is not None else 'str'
    choices = (vf.choices if vf else None) or cat.get('choices')
    if kind == 'enum' and not choices:
        kind = 'str'
    low = cat.get('minimum') if cat.get('minimum') is not None else (vf.minimum if vf else None)
    high = cat.get('maximum') if cat.get('maximum') is not None else (vf.maximum if vf else None)
    block = cat.get('block_size') or (vf.block_size if vf else None)
    source = None
    if cat.get('read_only') is not None:
        dynamic = not cat['read_only']
    else:
        dynamic, source = flavors.runtime_flag(name, flavor, version)
    return kind, choices, values.Limits(low, high, int(block) if block else None), dynamic, source


def rule(kind, choices, limits):
    """What a value of kind must be, for messages: 'a whole number from 100 to 4294967295'."""
    if kind == 'bool':
        return 'ON or OFF (true/false, 1/0)'
    if kind == 'enum':
        return 'one of %s' % ', '.join(choices or ())
    if kind in ('int', 'size', 'float'):
        what = {'int': 'a whole number', 'size': 'a size (bytes, or digits with K, M, G, T)',
                'float': 'a number'}[kind]
        if limits.minimum is not None and limits.maximum is not None:
            return '%s from %s to %s' % (what, limits.minimum, limits.maximum)
        if limits.minimum is not None:
            return '%s of at least %s' % (what, limits.minimum)
        if limits.maximum is not None:
            return '%s of at most %s' % (what, limits.maximum)
        return what
    return 'text'


def percentage(value):
    """The percentage a value like '70%' means (a float), or None when it is not written as one."""
    if not isinstance(value, str) or not value.strip().endswith('%'):
        return None
    try:
        return float(value.strip()[:-1])
    except ValueError:
        return -1.0


def buffer_pool_unit(wanted, catalog):
    """(chunk, instances) the server rounds innodb_buffer_pool_size with: the map's values where it sets them
    (they apply at the same restart), else the running ones."""
    chunk = wanted.get('innodb_buffer_pool_chunk_size', (catalog.get('innodb_buffer_pool_chunk_size') or {}).get('value'))
    instances = wanted.get('innodb_buffer_pool_instances',
                           (catalog.get('innodb_buffer_pool_instances') or {}).get('value') or 1)
    return role_input.size_or_none(chunk) or 0, role_input.size_or_none(instances) or 1


def ignored_while(name, wanted, catalog):
    """Why the server ignores name (flavors.IGNORED_WHILE: another setting's value, from the map or the server),
    or None."""
    rule_ = flavors.IGNORED_WHILE.get(name)
    if not rule_ or rule_[0] not in catalog:
        return None
    other, value, why = rule_
    current = wanted.get(other, catalog[other].get('value'))
    try:
        return why if values.equal(value, current, 'bool') else None
    except values.ValueError_:
        return None


def line_value(canonical, kind):
    """The value as the writer takes it for kind (LINE_KINDS)."""
    if kind == 'bool':
        return canonical == 'ON'
    if kind == 'float':
        return ('%f' % canonical).rstrip('0').rstrip('.')
    return canonical


# ---------------------------------------------------------------- the role's desired state
def settings(variables, facts):
    """Desired state of the settings role.

    variables: the role's variables as the user wrote them (desired.INPUTS['settings'] fill the rest). facts: server_facts with catalog
    and memory (module docstring). Raises desired.InputError. Returns a dict: settings (server name -> the value
    the server will run with: what verify compares), option_file / option_file_text, runtime (a list of one-setting
    dicts in a safe order), persist (SET PERSIST for the runtime ones), persist_only (read-only settings for SET
    PERSIST_ONLY, with settings_persist), pending_restart, restart_settings, restart_reason, translated, predicted
    (what the server does to each value), memory (what a percentage was taken of), resize (the buffer pool's online
    resize), unsupported, unresolved, left_alone, issues, notes.

    The steps, each a function of its own: the inputs (role_inputs), the names (wanted_names, redo_log.translate_redo), each
    setting against this server (setting_rows), the checks across settings (cross_checks), then what happens to
    each (plan) and the notes (plan_notes).
    """
    check = role_input.Checker(variables, desired.INPUTS[ROLE], facts)
    where = _server(facts)
    catalog = facts.get('catalog') or {}
    memory = facts.get('memory') or {}
    wanted_raw, persist, resize_timeout, floor = role_inputs(check, facts, where)
    wanted, left_alone = wanted_names(check, wanted_raw)
    wanted, translated, errors = redo_log.translate_redo(wanted, catalog, where)
    for message in errors:
        check.error(message)
    found = setting_rows(check, wanted, facts, where, translated)
    cross_checks(check, found['rows'], catalog, floor, found['memory'])
    check.done()

    planned = plan(found['rows'], persist, where, found['predicted'])
    runtime = _safe_order(planned['runtime'], catalog)
    restart_settings = planned['restart_settings']
    pending = bool(restart_settings)
    reason = ''
    if pending:
        reason = 'read-only settings: %s' % ', '.join('%s=%s' % kv for kv in sorted(restart_settings.items()))
    notes = planned['notes'] + plan_notes(translated, found, restart_settings)
    return option_writer.with_option_file(
        COMMENTS, planned['lines'],
        settings=planned['settings'], runtime=runtime, persist=bool(persist), runtime_persist=bool(persist),
        persist_only=planned['persist_only'], resize_timeout=resize_timeout,
        translated=translated, predicted=found['predicted'], memory=found['memory'], memory_facts=memory,
        resize=resize_plan(runtime, catalog, resize_timeout),
        unsupported=found['unsupported'], unresolved=found['unresolved'], left_alone=left_alone,
        issues=planned['issues'] + found['unsupported'] + found['unresolved'], notes=notes,
        catalog_source=facts.get('catalog_source'),
        **role_input.restart_state(pending, restart_settings, reason)
    )


def role_inputs(check, facts, where):
    """(wanted, persist, resize_timeout, floor): settings_values without the refused security settings
    (security_inputs()), settings_persist (refused where the server has no SET PERSIST), settings_resize_timeout and
    settings_buffer_pool_floor in bytes; the restart inputs are checked (role_input.restart_inputs()). Bad ones go
    to check."""
    wanted = security_inputs(check, check.mapping('settings_values'))
    persist = check.boolean('settings_persist', allow_none=False)
    role_input.restart_inputs(check, ROLE)
    resize_timeout = check.integer('settings_resize_timeout', 0)
    floor_raw = check.raw('settings_buffer_pool_floor')
    floor = None
    if floor_raw is not None:
        floor = role_input.size_or_none(floor_raw)
        if floor is None or isinstance(floor_raw, bool):
            check.error('settings_buffer_pool_floor must be a size (bytes, or digits with K, M, G, T); got %s'
                        % desired.shown(floor_raw))
    if persist and not (facts.get('capabilities') or {}).get('set_persist'):
        check.error('settings_persist: true needs SET PERSIST / SET PERSIST_ONLY, which %s does not have (MySQL and '
                    'Percona Server 8.0+ only; MariaDB has no persisted settings): use settings_persist: false, the '
                    'drop-in file alone, for this host' % where)
    return wanted, persist, resize_timeout, floor


def wanted_names(check, wanted_raw):
    """(wanted, left_alone): the map by plain lower-case server name (null values left alone), refusing through
    check what is not a name, a value that is a map or list, another role's setting (owner()), a setting fixed at
    initialization (flavors.INIT_ONLY_VARIABLES) and two spellings of one name."""
    wanted, left_alone = {}, []
    for key, value in sorted(wanted_raw.items(), key=lambda kv: str(kv[0])):
        label = 'settings_values.%s' % key
        if not isinstance(key, str) or not _NAME_RE.match(key):
            check.error('%s: not a variable name (letters, digits and _)' % label)
            continue
        name = key.lower().replace('-', '_')
        if value is None:
            left_alone.append(name)
            continue
        if isinstance(value, (dict, list)):
            check.error('%s must be one value (a number, a size, ON/OFF or a word); got %s' % (label, desired.shown(value)))
            continue
        owned = owner(name)
        if owned:
            check.error('%s belongs to the %s role: set it with %s (one role owns each setting)'
                        % (label, owned[0], owned[1]))
            continue
        if name in flavors.INIT_ONLY_VARIABLES:
            check.error('%s is fixed when the data directory is created: no option file or restart changes it on an '
                        'existing server' % label)
            continue
        if name in wanted:
            check.error('%s is written twice (spellings of one name)' % label)
            continue
        wanted[name] = value
    return wanted, left_alone


def setting_rows(check, wanted, facts, where, translated):
    """Each wanted setting against this server: dict(rows, unsupported, unresolved, predicted, memory). A row:
    dict(name, label, kind, choices, limits, dynamic, flag_source, runs, running, restart_only) - the server's name
    (translated gets a line for a respelt one), what it is (describe()), the value it will run. A setting this
    server lacks but others have, or ignores (ignored_while()), is unsupported; a percentage without the memory,
    unresolved; a bad value or an unknown name goes to check."""
    catalog = facts.get('catalog') or {}
    found = dict(rows=[], unsupported=[], unresolved=[], predicted={}, memory={})
    chunk, instances = buffer_pool_unit(wanted, catalog)
    rounding = capability_facts.capability('buffer_pool_chunk_rounding', *_identity(facts))
    for name, value in sorted(wanted.items()):
        label = 'settings_values.%s' % name
        server_name = flavors.resolve_name(name, facts.get('flavor'), _identity(facts)[1], frozenset(catalog)) or name
        if server_name != name:
            translated.append(dict(written=name, value=value, name=server_name, server_value=value,
                                   reason='%s spells it %s' % (where, server_name)))
        cat = catalog.get(server_name)
        if cat is None:
            if flavors.exists_anywhere(server_name) or server_name in flavors.REDO_LOG.values():
                found['unsupported'].append(dict(name=name, status='unsupported',
                                                 reason='%s has no %s (other flavors or versions have it): left alone '
                                                 'here' % (where, server_name)))
                continue
            close = close_names(name, catalog)
            check.error('%s: %s has no such variable%s' % (
                label, where, (' (closest: %s)' % ', '.join(close)) if close else ' (nor any close name)'))
            continue
        kind, choices, limits, dynamic, flag_source = describe(server_name, facts, cat)
        ignored = ignored_while(server_name, wanted, catalog)
        if ignored:
            found['unsupported'].append(dict(name=server_name, status='ignored', reason='%s ignores %s: %s; left '
                                             'alone here' % (where, server_name, ignored)))
            continue
        value_to_check = of_memory(check, label, server_name, value, kind, (choices, limits), facts.get('memory') or {},
                                   found)
        if value_to_check is None:
            continue
        try:
            canonical = values.check(value_to_check, kind, choices, limits)
        except values.ValueError_ as e:
            check.error('%s must be %s on %s; got %s (%s)'
                        % (label, rule(kind, choices, limits), where, desired.shown(value), e))
            continue
        runs, notes_here, restart_only = running_value(server_name, canonical, kind, limits,
                                                       (chunk, instances) if rounding else None)
        _text, problem = option_writer.option_value(label, line_value(runs, kind), LINE_KINDS[kind])
        if problem:
            check.error(problem)
            continue
        if runs != canonical or notes_here:
            found['predicted'][server_name] = dict(written=value, runs=runs, notes=notes_here)
        found['rows'].append(dict(name=server_name, label=label, kind=kind, choices=choices, limits=limits,
                                  dynamic=dynamic, flag_source=flag_source, runs=runs, running=cat.get('value'),
                                  restart_only=restart_only))
    return found


def of_memory(check, label, server_name, value, kind, rules, memory, found):
    """The value to check: value itself, or the bytes a percentage of the server's memory ('70%') means (recorded in
    found['memory']). None when there is nothing to check: a bad percentage (to check) or memory not known here
    (found['unresolved']). rules: (choices, limits) for messages."""
    pct = percentage(value)
    if pct is None:
        return value
    if kind != 'size':
        check.error('%s: a percentage of memory is for sizes; %s is %s' % (label, server_name, rule(kind, *rules)))
        return None
    if not 0 < pct <= 100:
        check.error('%s must be a percentage above 0 and at most 100 of the memory; got %s'
                    % (label, desired.shown(value)))
        return None
    if not memory.get('bytes'):
        found['unresolved'].append(dict(name=server_name, status='unresolved', reason='%s of memory: %s' % (
            value, memory.get('reason') or 'the memory of the server is not known here')))
        return None
    number = int(memory['bytes'] * pct / 100)
    found['memory'][server_name] = dict(written=value, bytes=number, memory=memory['bytes'], source=memory.get('source'))
    return number


def running_value(server_name, canonical, kind, limits, pool_unit):
    """(runs, notes, restart_only): the value the server runs for a checked one - a number rounded to its block
    size (values.effective()), the buffer pool rounded up to chunk x instances (pool_unit: (chunk, instances) where
    the server rounds so, else None); restart_only when only a restart gets it there (a buffer pool below one unit)."""
    if kind not in ('int', 'size'):
        return canonical, [], False
    notes = []
    runs, note = values.effective(canonical, limits)
    if note:
        notes.append(note)
    if server_name != BUFFER_POOL or not pool_unit or not pool_unit[0]:
        return runs, notes, False
    chunk, instances = pool_unit
    unit = chunk * instances
    if runs < unit:
        notes.append('below innodb_buffer_pool_chunk_size x innodb_buffer_pool_instances (%d): a running '
                     'server rounds it up, a restart shrinks the chunk and runs %d' % (unit, runs))
        return runs, notes, True
    rounded = values.buffer_pool_effective(runs, chunk, instances)
    if rounded != runs:
        notes.append('the server rounds %d up to %d (a multiple of innodb_buffer_pool_chunk_size '
                     '%d x innodb_buffer_pool_instances %d)' % (runs, rounded, chunk, instances))
    return rounded, notes, False


def cross_checks(check, rows, catalog, floor, relative):
    """What no setting says alone, to check: innodb_io_capacity above innodb_io_capacity_max (the map's or the
    server's: the server clamps it; MySQL 8.0.33: SET GLOBAL innodb_io_capacity=3000 with a maximum of 2000 runs 2000
    with a warning), the buffer pool below settings_buffer_pool_floor."""
    by_name = dict((r['name'], r) for r in rows)
    cap, cap_max = by_name.get('innodb_io_capacity'), by_name.get('innodb_io_capacity_max')
    if cap is not None:
        top = cap_max['runs'] if cap_max else role_input.size_or_none((catalog.get('innodb_io_capacity_max') or {}).get('value'))
        if top is not None and cap['runs'] > top:
            check.error('settings_values.innodb_io_capacity (%d) exceeds innodb_io_capacity_max (%d%s): the server would '
                        'run %d; raise innodb_io_capacity_max in the map too'
                        % (cap['runs'], top, '' if cap_max else ', what the server runs', top))
    pool = by_name.get(BUFFER_POOL)
    if pool is not None and floor is not None and pool['runs'] < floor:
        base = relative.get(BUFFER_POOL)
        check.error('settings_values.innodb_buffer_pool_size would be %d bytes on this server%s, below '
                    'settings_buffer_pool_floor (%d): refused' % (
                        pool['runs'], (' (%s of %d bytes, %s)' % (base['written'], base['memory'], base['source']))
                        if base else '', floor))


def plan(rows, persist, where, predicted):
    """What happens to each checked setting: dict(settings, lines, runtime, restart_settings, persist_only, issues,
    notes). A dynamic one that differs (or every dynamic one with persist) is set at runtime; a read-only one (or one
    only a restart brings) that differs waits for a restart, with an issue saying why; with persist the read-only
    ones go to SET PERSIST_ONLY. Every one is a line of the drop-in."""
    out = dict(settings={}, lines=[], runtime=[], restart_settings={}, persist_only={}, issues=[], notes=[])
    for row in rows:
        name, kind = row['name'], row['kind']
        value = row['runs']
        out['settings'][name] = value
        out['lines'].append((name, line_value(value, kind), LINE_KINDS[kind]))
        same = values.equal(value, row['running'], kind, row['choices'], limits=row['limits'])
        if row['flag_source'] and 'nearest' in row['flag_source'] and not same:
            out['notes'].append('%s: %s at runtime as on %s' % (name, 'set' if row['dynamic'] else 'read-only',
                                                                row['flag_source']))
        if row['dynamic'] and not row['restart_only']:
            if not same or persist:
                out['runtime'].append({name: value})
            continue
        if persist:
            out['persist_only'][name] = value
        if same:
            continue
        out['restart_settings'][name] = value
        why = ('read-only at runtime on %s%s' % (where, (' (as on %s)' % row['flag_source']) if row['flag_source']
                                                 and row['flag_source'] != 'the version table' else '')
               if row['dynamic'] is False else
               'whether %s can change at runtime is not known on %s (not in the version table): a restart applies it'
               % (name, where) if row['dynamic'] is None else predicted[name]['notes'][-1])
        out['issues'].append(dict(status='pending_restart', name=name,
                                  reason='the server runs %s, the drop-in says %s: %s' % (row['running'], value, why)))
    return out


def resize_plan(runtime, catalog, resize_timeout):
    """The buffer pool's online resize the runtime steps start (dict(from, to, timeout)), or None."""
    resize = None
    for item in runtime:
        if BUFFER_POOL in item and not values.equal(item[BUFFER_POOL], (catalog.get(BUFFER_POOL) or {}).get('value'),
                                                    'size'):
            resize = {'from': values.parse_size(catalog[BUFFER_POOL]['value']), 'to': item[BUFFER_POOL],
                      'timeout': resize_timeout}
    return resize


def plan_notes(translated, found, restart_settings):
    """The notes of what was translated, left out, taken of memory and what the server does to a value (not for
    those waiting for a restart: their issue says it)."""
    notes = [item['reason'] for item in translated]
    notes.extend('%s left out: %s' % (item['name'], item['reason']) for item in found['unresolved'])
    notes.extend('%s: %s of %d bytes (%s) = %d' % (name, item['written'], item['memory'], item['source'], item['bytes'])
                 for name, item in sorted(found['memory'].items()))
    notes.extend('%s: %s' % (name, note) for name, item in sorted(found['predicted'].items()) for note in item['notes']
                 if name not in restart_settings)
    return notes


def _safe_order(runtime, catalog):
    """The runtime settings in an order the server takes them: innodb_io_capacity_max before innodb_io_capacity
    when the new capacity is above the running maximum, else after it."""
    names = [list(item)[0] for item in runtime]
    if 'innodb_io_capacity' in names and 'innodb_io_capacity_max' in names:
        cap = [i for i in runtime if 'innodb_io_capacity' in i][0]['innodb_io_capacity']
        running_max = role_input.size_or_none((catalog.get('innodb_io_capacity_max') or {}).get('value'))
        if running_max is not None and cap > running_max:
            runtime = sorted(runtime, key=lambda i: 0 if 'innodb_io_capacity_max' in i else 1)
        else:
            runtime = sorted(runtime, key=lambda i: 1 if 'innodb_io_capacity_max' in i else 0)
    return runtime
