# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The desired state of the InnoDB roles (every role of the registry but settings), from the role's
variables and the server's facts: one pure function per role, the function of its record in module_utils/roles/desired.py's registry
(the settings role's is module_utils/roles/settings.py). Each checks the role's variables as the user wrote them (role_input.Checker,
the ranges of the version table, versions/flavors.py) and returns what the role manages on this server: the settings (as
verify compares them), its drop-in from the one writer (option_writer.with_option_file()), what to set at runtime,
what waits for a restart (role_input.restart_state()), and notes; desired.for_role() fills the rest of the contract.
Loaded only when one of these roles' desired state is worked out (an audit of explicit settings or of the settings
role does not compile it). Unit tests: test_desired.py.
"""

from __future__ import annotations

import re

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import engine_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import option_writer
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import inputs as role_input
from ansible_collections.dbfleet.innodb.plugins.module_utils import values

STORAGE_CLASSES = ('ssd', 'hdd', 'mixed')
# Built-in maps (merged under the user's): mixed storage puts some pages on an HDD, where neighbor
# flushing saves seeks, and costs SSDs only extra writes, so it is treated like HDD.
FLUSH_NEIGHBORS_MAP = dict(ssd=0, hdd=1, mixed=1)
IO_CAPACITY = dict(ssd=2000, hdd=200, mixed=200)
IO_CAPACITY_MAX = dict(ssd=4000, hdd=2000, mixed=2000)
# memcached command-line options: letters, digits, spaces and the punctuation options use.
_DAEMON_OPTIONS_RE = re.compile(r'^[A-Za-z0-9 ._,:=/+-]*$')
_ADDRESS_RE = re.compile(r'^[A-Za-z0-9.:_%-]+$')


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
    check = role_input.Checker(variables, desired.INPUTS['flush_neighbors'], facts)
    override = check.choice('flush_neighbors_storage_class', ('ssd', 'hdd'), allow_none=True)
    check.choice('flush_neighbors_unknown_action', ('leave', 'fail'))
    min_confidence = check.choice('flush_neighbors_min_confidence', ('low', 'high'))
    check.boolean('flush_neighbors_probe', allow_none=False)
    persist = check.choice('flush_neighbors_persist', ('dropin', 'set_persist', 'both'))
    io_profile = check.boolean('flush_neighbors_io_profile', allow_none=False)
    where = 'on ' + role_input.server_text(facts)
    fn_low, fn_high = role_input.variable_range('innodb_flush_neighbors', facts)
    fn_map = _class_map(check, 'flush_neighbors_map', FLUSH_NEIGHBORS_MAP,
                        lambda label, v: check.integer(None, fn_low, fn_high, value=v, label=label, where=where))
    cap_low = role_input.variable_range('innodb_io_capacity', facts)[0]
    max_low = role_input.variable_range('innodb_io_capacity_max', facts)[0]
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
    running_max = role_input.server_variable(facts, 'innodb_io_capacity_max').get('runtime')
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
    return option_writer.with_option_file(
        ['Managed by the dbfleet.innodb.flush_neighbors role: local changes are overwritten.', header,
         'Set flush_neighbors_storage_class / flush_neighbors_map in the inventory instead.'],
        [(name, value, 'int') for name, value in sorted(settings.items())],
        settings=settings,
        header=option_writer.CONTROL_RE.sub('?', header),
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
    from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache import plugin as memcached_utils
    name = 'memcached_daemon_extra_options'
    value = check.raw(name)
    if value is None:
        return ''
    if not isinstance(value, str):
        check.error('%s must be a string of memcached options; got %s' % (name, desired.shown(value)))
        return None
    if '\n' in value or '\r' in value:
        check.error('%s must be on one line (it goes into the drop-in file); got %s' % (name, desired.shown(value)))
        return None
    quotes = [q for q in ('"', "'") if value.count(q) % 2]
    if quotes:
        check.error('%s has an unbalanced %s quote; got %s' % (name, quotes[0], desired.shown(value)))
        return None
    if not _DAEMON_OPTIONS_RE.match(value):
        check.error('%s may hold only letters, digits, spaces and . _ , : = / + - (memcached options such as '
                    '"-c 1024 -t 4"); got %s' % (name, desired.shown(value)))
        return None
    # Read by the plugin's own option parser: -vl 0.0.0.0 sets -l as surely as -l 0.0.0.0 does.
    problems = memcached_utils.extra_option_problems(value)
    if problems:
        check.error('%s: %s; got %s' % (name, '; '.join(problems), desired.shown(value)))
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
    from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache import plugin as memcached_utils
    check = role_input.Checker(variables, desired.INPUTS['memcached'], facts)
    state = check.choice('memcached_state', ('present', 'absent'))
    for name in ('memcached_skip_unsupported', 'memcached_containers_exclusive', 'memcached_allow_remote',
                 'memcached_reload_on_change', 'memcached_load_demo', 'memcached_remove_schema'):
        check.boolean(name, allow_none=False)
    port = check.integer('memcached_port', 1, 65535)
    if check.raw('memcached_port') is None:
        check.error('memcached_port must be 1-65535; got null')
    bind = check.text('memcached_bind_address', allow_none=False)
    if bind is not None and (not bind.strip() or not _ADDRESS_RE.match(bind)):
        check.error('memcached_bind_address must be one address without spaces; got %s' % desired.shown(bind))
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
    where = 'on ' + role_input.server_text(facts)
    batch = {}
    for short, name in (('r', 'daemon_memcached_r_batch_size'), ('w', 'daemon_memcached_w_batch_size')):
        low, high = role_input.variable_range(name, facts)
        batch[name] = check.integer('memcached_%s_batch_size' % short, low, high, where=where)
    binlog = check.boolean('memcached_api_enable_binlog')
    mdl = check.boolean('memcached_api_enable_mdl')
    low, high = role_input.variable_range('innodb_api_trx_level', facts)
    trx_level = check.integer('memcached_api_trx_level', low, high, where=where)
    role_input.restart_inputs(check, 'memcached')
    check.integer('memcached_probe_timeout', 1)
    check.mapping('memcached_probe_expected')
    refusals = []
    containers = check.raw('memcached_containers')
    if containers is None:
        containers = []
    if not isinstance(containers, list) or not all(isinstance(c, dict) for c in containers):
        check.error('memcached_containers must be a list of maps; got %s' % desired.shown(containers))
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

    supported, reason = capability_facts.memcached_support(*role_input.identity(facts))
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
    return option_writer.with_option_file(
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
