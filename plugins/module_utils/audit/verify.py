# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit of one server by dbfleet.innodb.verify: what it runs with versus what is wanted.

audit() gathers the evidence over ONE connection (server_facts.gather + a few reads), in named steps, and calls the
pure verdict (audit/verdict.py: decide()) per setting. What a restart brings, where the option files cannot be read
here, may come from an earlier per-host run (audit/startup_cache.py); an upgrade target's evidence is read by
audit/upgrade_evidence.py.
"""

from __future__ import annotations

import datetime

from ansible_collections.dbfleet.innodb.plugins.module_utils.audit.startup_cache import DEFAULT_STARTUP_CACHE_MAX_AGE, cached_startup
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit.verdict import ERROR, UNSUPPORTED, Startup, decide, summarize
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import NamedGlobalVariables, all_global_variables
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired as desired_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import membership
from ansible_collections.dbfleet.innodb.plugins.module_utils import values


def check_settings(settings):
    """Raise ValueError with a message for a settings value that is not a mapping."""
    if not isinstance(settings, dict):
        raise ValueError('settings must be a dict of variable name -> desired value, got %s'
                         % type(settings).__name__)


# The global variables audit() reads besides the settings' own: who the server is (server_identity.DETECT_VARIABLES),
# its paths and name (server_facts.gather), its replication role, whether it loads persisted values, and the
# buffer pool chunk rounding, and what tells its cluster (replication/membership.CLUSTER_VARIABLES).
AUDIT_VARIABLES = tuple(server_identity.DETECT_VARIABLES) + server_facts.FACT_PATHS + membership.CLUSTER_VARIABLES + (
    'hostname', 'port', 'server_id', 'read_only', 'super_read_only', 'persisted_globals_load',
    'innodb_buffer_pool_chunk_size', 'innodb_buffer_pool_instances')


def audit_variable_names(settings, roles=()):
    """The global variables audit() reads for settings and roles: AUDIT_VARIABLES, every spelling of each
    setting (flavors.ALIASES, '-' for '_') and of the variables the roles read and set. Sorted, lower-case."""
    names = set(AUDIT_VARIABLES)
    wanted = [str(n) for n in settings] + desired_utils.server_variable_names(roles) \
        + desired_utils.setting_variable_names(roles)
    for name in wanted:
        plain = name.lower().replace('-', '_')
        names.add(plain)
        names.update(flavors.ALIASES.get(plain, ()))
    return sorted(names)


def _read_variables(conn, settings, desired_from, read_named):
    """Step 1 of audit(): the server's GLOBAL variables, (variables, server_names): only those the audit reads
    (NamedGlobalVariables) with read_named, else every one."""
    if read_named:
        variables = NamedGlobalVariables(conn, audit_variable_names(settings, desired_from))
        return variables, variables
    variables = all_global_variables(conn)
    return variables, frozenset(variables)


def _with_role_settings(conn, settings, desired_from, role_variables, detect_storage, identity, variables, facts):
    """Step 2 of audit(): settings with the desired state of the roles desired_from under them (settings win).
    Returns (settings, states, unknown): the roles' states and the role variables no role knows."""
    if not desired_from:
        return settings, {}, []
    role_settings, states, unknown = desired_utils.for_roles(
        desired_from, role_variables,
        server_facts.report(conn, identity, variables, facts, desired_utils.server_variable_names(desired_from),
                            desired_utils.server_engine_names(desired_from),
                            desired_utils.server_catalog(desired_from)),
        detect_storage)
    merged = dict(role_settings)
    merged.update(settings)
    return merged, states, unknown


def _resolve_names(settings, identity, server_names):
    """Step 3 of audit(): each setting's name resolved for the server (bad names are per-variable results, not host
    failures). Returns (wanted {key: (resolved, desired)}, found_reason {key: reason}, results {key: item} of the
    names that cannot be audited, skipped: the keys whose desired value is null)."""
    wanted, found_reason, results, skipped = {}, {}, {}, []
    for name in sorted(settings, key=str):
        desired = settings[name]
        key = str(name)
        if desired is None:
            skipped.append(key)
            continue
        found = values.resolve(key, identity, server_names)
        if found.resolved is None:
            if found.problem == values.UNSUPPORTED:
                results[key] = _item(desired, None, UNSUPPORTED, [found.reason])
            else:
                results[key] = _error_item(desired, found.reason)
            continue
        wanted[key] = (found.resolved, desired)
        found_reason[key] = found.reason
    return wanted, found_reason, results, skipped


def _startup_sources(plan):
    """Step 4 of audit(): the option files and the command line of plan (server_facts' option_file_plan()), read.
    Returns (parsed, command_options, startup_state, startup_reason): startup_state 'known', 'unavailable' (not
    readable from here) or 'error' (a file the server reads could not be read, startup_reason says which)."""
    parsed = optionfiles.read_option_files(plan['files'], plan['groups'])
    file_problems = ['%s: %s' % (e['file'], e['reason']) for e in parsed.errors]
    if plan.get('explicit'):
        file_problems += ['%s: no such file' % m for m in parsed.missing]
    command_options = plan['command_line'].options if plan['command_line'] else []
    if plan['source'] == 'unavailable':
        return parsed, command_options, 'unavailable', plan['note']
    if file_problems:
        return parsed, command_options, 'error', '; '.join(file_problems)
    return parsed, command_options, 'known', None


def _buffer_pool_rounding(variables, identity):
    """Step 5 of audit(): (chunk size, instances) the server rounds innodb_buffer_pool_size to, or None."""
    if variables.get('innodb_buffer_pool_chunk_size') and capability_facts.capability(
            'buffer_pool_chunk_rounding', identity.flavor, identity.version):
        return (variables.get('innodb_buffer_pool_chunk_size'), variables.get('innodb_buffer_pool_instances') or 1)
    return None


def _startup_of(resolved, default, persisted_value, command, configured, evidence):
    """Step 6 of audit(): the value resolved starts with (Startup) and a note on the cache it came from (or None).

    persisted_value (performance_schema.persisted_variables) wins over the command line (command: (value, entry))
    over the option files (configured: (value, entry)); an option file that could not be read makes a value found
    in the files an error, and a startup that cannot be read here comes from evidence's startup_cache when fresh."""
    command_value, command_entry = command
    configured_value, configured_entry = configured
    state, reason = evidence['startup_state'], evidence['startup_reason']
    if persisted_value is not None:
        startup = Startup(persisted_value, 'performance_schema.persisted_variables (mysqld-auto.cnf)')
    elif command_entry is not None:
        startup = Startup(command_value, 'the server command line (%s)' % command_entry.text)
    elif configured_entry is not None:
        startup = Startup(configured_value, '%s:%d [%s]' % (configured_entry.file, configured_entry.line,
                                                            configured_entry.group))
    else:
        startup = Startup(None, None, state, reason)
    startup.default = default
    if startup.state == 'known' and state != 'known' and persisted_value is None and command_entry is None:
        startup.state, startup.reason = state, reason
    if configured_entry is not None and state == 'error':
        # A later, unreadable file could override what we found.
        startup.state, startup.reason = 'error', reason
    cache_note = None
    if startup.state == 'unavailable' and evidence['startup_cache']:
        cached, cache_note = cached_startup(evidence['startup_cache'], resolved, evidence['now'],
                                            evidence['startup_cache_max_age'])
        if cached is not None:
            cached.default = startup.default
            startup = cached
    return startup, cache_note


def _audit_variable(resolved, desired, found_reason, evidence):
    """Step 7 of audit(): the result item of one setting (masked: a secret variable's values never reach it) and
    what this run read of its startup value for a later controller-side audit (None when nothing is kept)."""
    variables, table_row = evidence['variables'], evidence['table'].get(resolved)
    runtime = variables.get(resolved)
    variable = values.describe(resolved, evidence['identity'], runtime, table_row)
    kind, choices, dynamic = variable.kind, variable.choices, variable.dynamic
    configured = optionfiles.lookup(evidence['parsed'].entries, resolved)
    command = optionfiles.lookup(evidence['command_options'], resolved)
    persisted_value = evidence['persisted'].get(resolved)
    startup, cache_note = _startup_of(resolved, variable.default, persisted_value, command, configured, evidence)
    origin = table_row.get('origin') if table_row else None
    exists = resolved in evidence['server_names']
    rounding_here = evidence['rounding'] if resolved == 'innodb_buffer_pool_size' else None
    status, notes = decide(desired, kind, runtime, startup, dynamic, choices, origin, rounding_here,
                           exists, (variable.settable, variable.reason or ''), variable.limits)
    if not exists:
        notes = [found_reason]
    elif cache_note:
        notes.append(cache_note)
    item = _item(desired, resolved, status, notes)
    item.update(
        runtime=runtime,
        kind=kind,
        dynamic=dynamic,
        origin=origin,
        origin_path=table_row.get('path') if table_row else None,
        default=values.as_text(startup.default),
        persisted=persisted_value,
        configured=None if configured[1] is None else dict(
            value=configured[0], file=configured[1].file, line=configured[1].line,
            group=configured[1].group, text=configured[1].text),
        command_line=None if command[1] is None else dict(value=command[0], text=command[1].text),
        startup=dict(value=startup.value, source=startup.source, state=startup.state),
    )
    if startup.read_at:
        item['startup'].update(read_at=startup.read_at, age_seconds=startup.age)
    kept = None
    if startup.state == 'known' and not startup.read_at and not masking.is_secret_variable(resolved):
        kept = dict(value=startup.value, source=startup.source, state='known')
    try:
        item['desired_normalized'] = values.as_text(values.normalize(desired, kind, choices))
    except values.ValueError_:
        item['desired_normalized'] = None
    # A secret variable's values (and the command-line or option-file text that holds them) never reach the
    # result, as in the report (masking.mask_item()).
    return masking.mask_item(resolved, item), kept


def audit(conn, settings, login_params=None, option_files=None, fallback_option_files=None,
          proc_root='/proc', desired_from=(), role_variables=None, detect_storage=None, target=None,
          catalog=None, startup_cache=None, startup_cache_max_age=DEFAULT_STARTUP_CACHE_MAX_AGE, now=None, read_named=False):
    """Verify settings on the server behind conn. Returns the module result (without changed).

    desired_from: roles whose desired state (desired.for_roles, from role_variables and this server's
    facts) is verified too, under settings (which win). target: (flavor, version) of an upgrade
    target; the tables whose engine this server or the target lacks are returned as blockers. catalog: the
    version facts for target (upgrade.Target: flavor_data on the controller, version_facts.Catalog in a module).
    startup_cache: where the option files cannot be read here (the controller-side audit), what an earlier per-host
    run read (its startup_state with read_at: cached_startup()), used up to startup_cache_max_age seconds old.
    read_named: read only the variables the audit reads (audit_variable_names(): NamedGlobalVariables) instead of
    every one; the answer is the same.
    Raises desired_utils.InputError for bad role variables."""
    check_settings(settings)
    variables, server_names = _read_variables(conn, settings, desired_from, read_named)
    facts = server_facts.gather(conn, variables, login_params, option_files, fallback_option_files,
                                proc_root)
    identity = facts.pop('_identity')
    plan = facts.pop('_plan')
    settings, states, unknown = _with_role_settings(conn, settings, desired_from, role_variables, detect_storage,
                                                    identity, variables, facts)
    wanted, found_reason, results, skipped = _resolve_names(settings, identity, server_names)

    host_errors = []
    # One read each for the per-variable tables and persisted values.
    table, reason = server_facts.variable_table(conn, identity, [r for r, _d in wanted.values()])
    if reason:
        host_errors.append(reason)
    persisted, reason = server_facts.persisted_variables(conn, identity, variables)
    if reason:
        host_errors.append(reason)
    parsed, command_options, startup_state, startup_reason = _startup_sources(plan)
    if startup_state == 'error':
        host_errors.append('option files: %s' % startup_reason)

    evidence = dict(identity=identity, variables=variables, server_names=server_names, table=table, persisted=persisted,
                    parsed=parsed, command_options=command_options, startup_state=startup_state,
                    startup_reason=startup_reason, startup_cache=startup_cache,
                    startup_cache_max_age=startup_cache_max_age,
                    now=now if now is not None else datetime.datetime.now(datetime.timezone.utc),
                    rounding=_buffer_pool_rounding(variables, identity))
    # What this run read of what a restart brings, for a later controller-side audit (no secret variable's value).
    read_state = dict(variables={}, option_files_source=plan['source'])
    for key, (resolved, desired) in sorted(wanted.items()):
        results[key], kept = _audit_variable(resolved, desired, found_reason[key], evidence)
        if kept is not None:
            read_state['variables'][resolved] = kept

    blockers, engine_notes, upgrade_result = [], [], None
    if target is not None:
        # Imported here: only an audit with an upgrade target compiles the upgrade's reading (a module's payload runs
        # from a zip, compiled on every run).
        from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import upgrade_evidence
        blockers, engine_notes = upgrade_evidence.read_blockers(conn, identity, target)
        upgrade_result = upgrade_evidence.read_upgrade(conn, identity, target, catalog,
                                                       None if read_named else variables, plan, parsed, persisted)
    summary, drift = summarize(results)
    return dict(
        variables=results,
        summary=summary,
        drift=drift,
        pending_restart=dict((name, item.get('desired')) for name, item in results.items()
                             if item.get('status') == 'pending_restart'),
        skipped_variables=skipped,
        server=server_facts.public(facts),
        option_files=dict(parsed.to_dict(), source=plan['source'], groups=plan['groups'],
                          files=plan['files']),
        errors=host_errors,
        desired=dict((role, _desired_summary(state)) for role, state in states.items()),
        unknown_variables=unknown,
        target=None if target is None else dict(flavor=target[0], version=flavors.format_version(target[1])),
        blockers=blockers,
        engine_notes=engine_notes,
        upgrade=upgrade_result,
        startup_state=read_state,
    )


def _desired_summary(state):
    """What the report keeps of a role's desired state: its settings, the storage decision, notes."""
    out = dict(settings=state.get('settings') or {}, notes=list(state.get('notes') or []))
    if 'storage' in state:
        out['storage'] = state['storage']
    return out


def _item(desired, resolved, status, notes):
    return dict(desired=desired, desired_normalized=None, resolved_name=resolved,
                runtime=None, configured=None, persisted=None, command_line=None, startup=None,
                dynamic=None, origin=None, origin_path=None, default=None, kind=None,
                status=status, notes=list(notes))


def _error_item(desired, reason):
    return _item(desired, None, ERROR, [reason])
