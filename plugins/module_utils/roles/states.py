# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The desired state of the InnoDB roles (every role of the registry but settings), from the role's
variables and the server's facts: one pure function per role, the function of its record in module_utils/roles/desired.py's registry
(the settings role's is module_utils/roles/settings.py; the two larger ones, each in its named steps, are
module_utils/roles/flush_neighbors.py and module_utils/roles/memcached.py). Each checks the role's variables as the user wrote them (role_input.Checker,
the ranges of the version table, versions/flavors.py) and returns what the role manages on this server: the settings (as
verify compares them), its drop-in from the one writer (option_writer.with_option_file()), what to set at runtime,
what waits for a restart (role_input.restart_state()), and notes; desired.for_role() fills the rest of the contract.
Loaded only when one of these roles' desired state is worked out (an audit of explicit settings or of the settings
role does not compile it). Unit tests: test_desired.py.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import engine_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import option_writer
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import inputs as role_input
from ansible_collections.dbfleet.innodb.plugins.module_utils import values

# ---------------------------------------------------------------- a role that sets what its record owns
# The option-file writer's kind for each kind of the version table.
_LINE_KINDS = dict(bool='bool', int='int', size='int', enum='word', str='text')


def from_record(record, variables, facts):
    """Desired state of a role whose record says all of it: each setting it owns (record.owns) takes the value of the
    one input that pins it, checked against the version table's kind and range for this server (flavors.VARIABLES;
    a null input leaves the setting alone); a setting this server lacks is unsupported; a dynamic one is set at
    runtime, a read-only one that differs waits for a restart (a record that may restart: record.restarts, whose
    restart inputs are checked here). desired.Role.function hands the record over (source
    ('role_states', 'from_record')). Returns a dict: settings, option_file, runtime, unsupported, issues, notes,
    pending_restart, restart_settings, restart_reason."""
    check = role_input.Checker(variables, desired.INPUTS[record.name], facts)
    where = role_input.server_text(facts)
    wanted = []
    for name, input_name in record.owns:
        vf = flavors.variable_facts(name, *role_input.identity(facts)) or flavors.VarFacts(
            name=name, **flavors.VARIABLES[name][-1].value)
        if vf.kind == 'bool':
            value = check.boolean(input_name)
        elif vf.kind in ('int', 'size'):
            value = check.integer(input_name, vf.minimum, vf.maximum, where='on ' + where)
        elif vf.kind == 'enum':
            value = check.choice(input_name, vf.choices, allow_none=True)
        else:
            value = check.text(input_name)
        if value is not None:
            wanted.append((name, value, vf.kind))
    if record.restarts:
        role_input.restart_inputs(check, record.name)
    check.done()

    settings, lines, runtime, restart_settings, unsupported, issues = {}, [], {}, {}, [], []
    for name, value, kind in wanted:
        settings[name] = value
        server = role_input.server_variable(facts, name)
        if not server.get('exists'):
            unsupported.append(dict(name=name, status='unsupported',
                                    reason=server.get('reason') or '%s has no %s' % (where, name)))
            continue
        lines.append((name, value, _LINE_KINDS[kind]))
        if server.get('dynamic') and server.get('settable', True):
            runtime[name] = value
        elif not values.equal(value, server.get('runtime'), 'int' if kind == 'size' else kind):
            restart_settings[name] = value
            issues.append(dict(status='pending_restart', name=name, reason='the server runs %s, the drop-in says %s: '
                               'read-only at runtime on %s' % (server.get('runtime'), value, where)))
    reason = ', '.join('%s=%s' % kv for kv in sorted(restart_settings.items()))
    return option_writer.with_option_file(
        ('Managed by the dbfleet.innodb.%s role: local changes are overwritten.' % record.name,
         'Set its %s_* inputs in the inventory instead.' % record.name),
        lines, settings=settings, runtime=runtime, unsupported=unsupported, issues=issues + unsupported,
        notes=['%s waits for a restart' % reason] if reason else [],
        **role_input.restart_state(bool(restart_settings), restart_settings, reason)
    )


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
    check = role_input.Checker(variables, desired.INPUTS['adaptive_hash'], facts)
    enabled = check.boolean('adaptive_hash_enabled')
    role_input.restart_inputs(check, 'adaptive_hash')
    restart = check.raw('adaptive_hash_restart')
    parts_var = (facts.get('capabilities') or {}).get('ahi_partition_variable')
    range_name = parts_var or 'innodb_adaptive_hash_index_parts'
    low, high = role_input.variable_range(range_name, facts)
    parts = check.integer('adaptive_hash_parts', low, high,
                          where=('on ' + role_input.server_text(facts)) if parts_var else None)
    check.done()

    ahi = role_input.server_variable(facts, 'innodb_adaptive_hash_index')
    parts_facts = role_input.server_variable(facts, 'innodb_adaptive_hash_index_parts')
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
                                        % role_input.server_text(facts)))
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
                                    'variable' % role_input.server_text(facts)))
    issues = []
    if pending:
        issues.append(dict(status='pending_restart', name=parts_var,
                           reason='the server runs %s, the drop-in says %s; a restart applies it '
                                  '(adaptive_hash_restart: %s)' % (running_parts, parts, restart)))
        notes.append('%s=%s waits for a restart' % (parts_var, parts))
    return option_writer.with_option_file(
        ADAPTIVE_HASH_COMMENTS, lines,
        settings=settings, runtime=runtime, partition_variable=parts_var, parts_running=running_parts,
        unsupported=unsupported, not_settable=not_settable, issues=issues + unsupported + not_settable, notes=notes,
        **role_input.restart_state(pending, {parts_var: parts}, '%s=%s' % (parts_var, parts))
    )


# ---------------------------------------------------------------- myrocks
MYROCKS_COMMENTS = (
    'Managed by the dbfleet.innodb.myrocks role: local changes are overwritten.',
    'Set myrocks_* in the inventory instead.',
    'MyRocks, loaded at every start; loose- lets a server without the plugin library start.',
)


def myrocks_settings(facts):
    """(input, server variable, kind, minimum, maximum, dynamic) of each setting the myrocks role owns (its record),
    kind as the option-file writer takes it (int or text), the range and whether it is dynamic from the version
    table (flavors.VARIABLES: this server's span, else the newest one)."""
    rows = []
    for name, role_name in desired.RECORDS['myrocks'].owns:
        spans = flavors.VARIABLES[name]
        vf = flavors.variable_facts(name, *role_input.identity(facts)) or flavors.VarFacts(name=name, **spans[-1].value)
        kind = 'int' if vf.kind in ('int', 'size') else 'text'
        rows.append((role_name, name, kind, vf.minimum, vf.maximum, vf.dynamic))
    return rows


def myrocks(variables, facts):
    """Desired state of the myrocks role.

    facts: server_facts (flavor, version), the variables of its record's server_variables (present only while
    MyRocks is loaded) and engines.ROCKSDB = {loaded, tables}. Raises InputError. Returns a dict:
    enabled, supported, reason, plugin, loaded, tables, refusals (what stops the role before any change:
    'unsupported', 'tables'), settings (what verify compares: the rocksdb_* values while enabled),
    option_file / option_file_text (plugin_load_add and the loose-rocksdb_* lines), runtime (the dynamic
    settings, set while MyRocks is loaded), pending_restart, restart_settings, restart_reason, notes.
    """
    check = role_input.Checker(variables, desired.INPUTS['myrocks'], facts)
    enabled = check.boolean('myrocks_enabled')
    wanted = []
    for role_name, name, kind, low, high, dynamic in myrocks_settings(facts):
        if kind == 'int':
            value = check.integer(role_name, low, high)
        else:
            value = check.text(role_name)
            if value is not None:
                _text, problem = option_writer.option_value(role_name, value, kind)
                if problem:
                    check.error(problem)
                    value = None
        if value is not None:
            wanted.append((name, value, kind, dynamic))
    role_input.restart_inputs(check, 'myrocks')
    check.done()

    status, reason, engine = engine_facts.engine_status('ROCKSDB', *role_input.identity(facts))
    plugin = engine.plugin if engine is not None else None
    supported = status in (engine_facts.ENGINE_AVAILABLE, engine_facts.ENGINE_DEPRECATED) and bool(plugin)
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
            fact = role_input.server_variable(facts, name)
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
    return option_writer.with_option_file(
        MYROCKS_COMMENTS, lines,
        enabled=enabled, supported=supported, reason=reason, plugin=plugin, loaded=loaded, tables=tables,
        refusals=refusals, settings=settings, runtime=runtime, notes=notes,
        dropin={True: 'write', False: 'remove'}.get(enabled, 'leave'),
        **role_input.restart_state(pending, restart_settings, restart_reason)
    )
