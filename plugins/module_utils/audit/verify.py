# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a server runs with versus what is wanted: the per-variable verdict of dbfleet.innodb.verify.

decide() is a pure function (unit-tested with a table covering every status); audit() gathers
the evidence over ONE connection (server_facts.gather + a few reads) and calls decide() per setting.
"""

from __future__ import annotations

import datetime

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import NamedGlobalVariables, all_global_variables, error_text, execute, query
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired as desired_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import membership
from ansible_collections.dbfleet.innodb.plugins.module_utils import values

OK = 'ok'
# Runs the desired value, but what a restart brings cannot be told from here (the option files are not read:
# the controller-side audit; nothing else says it): neither ok nor drift, counted on its own.
STARTUP_UNKNOWN = 'startup_unknown'
DRIFT_RUNTIME = 'drift_runtime'
DRIFT_CONFIG = 'drift_config'
PENDING_RESTART = 'pending_restart'
UNSUPPORTED = 'unsupported'
NOT_SETTABLE = 'not_settable'
ERROR = 'error'
STATUSES = (OK, STARTUP_UNKNOWN, DRIFT_RUNTIME, DRIFT_CONFIG, PENDING_RESTART, UNSUPPORTED, NOT_SETTABLE, ERROR)
# Statuses that do not count as drift.
NO_DRIFT = (OK, STARTUP_UNKNOWN, UNSUPPORTED)

# Where a running value came from, as the server says (MySQL 8 VARIABLE_SOURCE, MariaDB
# GLOBAL_VALUE_ORIGIN): the compiled-in default (a restart gives the same value again) ...
COMPILED_ORIGINS = ('COMPILED', 'COMPILE-TIME', 'AUTO')
# ... or a SET GLOBAL since startup (lost at restart unless also configured).
RUNTIME_ORIGINS = ('DYNAMIC', 'SQL')


# The option-file state a per-host run read (audit()'s startup_state, kept by playbooks/verify.yml as the cacheable
# fact verify_startup_state) is used by the controller-side audit for this long by default (seconds).
DEFAULT_STARTUP_CACHE_MAX_AGE = 86400
# A read_at this far ahead of the controller's clock is still taken (clocks of the host and the controller differ).
CLOCK_SKEW = 300


class Startup(object):
    """What a restart would give a variable: value (text) and where it comes from.

    state: 'known' (value/source say it; value None = nothing sets it), 'unavailable' (option files
    not readable from here, nothing to go on), 'error' (a file the server reads could not be read)."""

    def __init__(self, value=None, source=None, state='known', reason=None, default=None, read_at=None, age=None):
        self.value = value
        self.source = source
        self.state = state
        self.reason = reason
        self.default = default
        # Taken from an earlier per-host run (cached_startup()): when it read the option files, and how long ago.
        self.read_at = read_at
        self.age = age


def parse_time(text):
    """A timezone-aware datetime (UTC) from an ISO 8601 text with an offset (2026-11-25T16:00:00Z, ...+00:00),
    or None (offpeak.parse_now reads it, as it reads the windows' times)."""
    if not isinstance(text, str) or not text.strip():
        return None
    # Imported here: only the controller-side audit reads cached times (the per-host run does not compile it).
    from ansible_collections.dbfleet.innodb.plugins.module_utils import offpeak
    try:
        return offpeak.parse_now(text)
    except offpeak.WindowError:
        return None


def cached_startup(cache, name, now, max_age=DEFAULT_STARTUP_CACHE_MAX_AGE):
    """(Startup or None, note): what a restart brings for variable name, as an earlier per-host run read it.

    cache: the startup_state an earlier per-host audit returned, with read_at (ISO 8601 UTC) added by the playbook
    (the fact verify_startup_state); now: an aware datetime; max_age: seconds beyond which the state is stale.
    None with a note when the cache is missing, stale, malformed or did not read the variable."""
    if not cache:
        return None, None
    if not isinstance(cache, dict):
        return None, 'the cached option-file state is not a mapping: not used'
    read_at = parse_time(cache.get('read_at'))
    if read_at is None:
        return None, 'the cached option-file state has no read_at time (ISO 8601, UTC): not used'
    age = (now - read_at).total_seconds()
    stamp = read_at.astimezone(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
    if age < -CLOCK_SKEW:
        return None, 'the cached option-file state was read at %s, later than now: not used' % stamp
    if age > max_age:
        return None, ('the option files as the per-host run read them at %s are %s old, beyond the bound of %s: not used'
                      % (stamp, _duration(age), _duration(max_age)))
    entry = (cache.get('variables') or {}).get(name)
    if not isinstance(entry, dict) or entry.get('state') != 'known':
        return None, 'the per-host run at %s did not read what a restart brings for %s' % (stamp, name)
    where = entry.get('source') or 'no option file sets it'
    return Startup(entry.get('value'), '%s (as the per-host run read it at %s, %s ago)' % (where, stamp, _duration(age)),
                   'known', read_at=stamp, age=max(0, int(age))), None


def _duration(seconds):
    seconds = max(0, int(seconds))
    for unit, size in (('d', 86400), ('h', 3600), ('min', 60)):
        if seconds >= size:
            return '%d%s%s' % (seconds // size, unit, (' %ds' % (seconds % size)) if unit == 'min' and seconds % size else '')
    return '%ds' % seconds


# ---------------------------------------------------------------- the verdict
def decide(desired, kind, runtime, startup, dynamic=None, choices=None, origin=None, rounding=None,
           exists=True, settable=(True, ''), limits=None):
    """(status, notes) for one variable.

    desired: as the user wrote it; runtime: the GLOBAL value (text) or None;
    startup: Startup (what a restart gives); dynamic: True/False/None (unknown);
    origin: where the running value came from as the server says (optional);
    exists: the server has the variable; settable: flavors.settable() result;
    limits: values.Limits of the variable (a desired value outside them is an error, as for the setter).
    Values are compared by values.compare, the same comparison the setter uses.
    """
    notes = []
    if not exists:
        return UNSUPPORTED, notes
    if not settable[0]:
        return NOT_SETTABLE, [settable[1]]
    if isinstance(desired, (dict, list, tuple, set)):
        return ERROR, ['desired value must be a scalar (string, number or boolean), got %s'
                       % type(desired).__name__]
    try:
        values.check(desired, kind, choices, limits)
    except values.ValueError_ as e:
        return ERROR, ['desired value: %s' % e]
    running_ok, note = values.compare(desired, runtime, kind, choices, rounding, limits)
    if note:
        notes.append(note)
    restart_ok = _restart_ok(desired, kind, choices, rounding, limits, startup, origin, runtime, running_ok, notes)
    if running_ok:
        return _running_verdict(restart_ok, startup, origin, notes)
    return _differing_verdict(restart_ok, startup, origin, runtime, dynamic, notes)


def _restart_ok(desired, kind, choices, rounding, limits, startup, origin, runtime, running_ok, notes):
    """Step of decide(): whether a restart brings the desired value (True / False), None when that is not known.
    Nothing set and a compiled-in running value: a restart brings what runs now; else the default, when known."""
    if startup.state == 'known' and startup.value is not None:
        restart_ok, note = values.compare(desired, startup.value, kind, choices, rounding, limits)
        if note and note not in notes:
            notes.append(note)
        return restart_ok
    if startup.state == 'known':
        # Nothing sets it: a restart gives the compiled-in default.
        if str(origin or '').upper() in COMPILED_ORIGINS and runtime is not None:
            return running_ok
        if startup.default is not None:
            return values.compare(desired, startup.default, kind, choices, rounding, limits)[0]
    return None


def _running_verdict(restart_ok, startup, origin, notes):
    """Step of decide(), the server runs the desired value: ok, drift_config (a restart loses it), startup_unknown
    or error (what a restart brings cannot be told), with the notes that say why."""
    origin_up = str(origin or '').upper()
    if restart_ok is True:
        return OK, notes
    if restart_ok is False:
        if startup.value is None:
            notes.append('nothing configures it: a restart brings the default %s' % (startup.default,))
        else:
            notes.append('a restart brings %s from %s' % (startup.value, startup.source))
        return DRIFT_CONFIG, notes
    if startup.state == 'error':
        return ERROR, notes + ['runs the desired value, but what a restart brings is unknown: %s'
                               % startup.reason]
    if origin_up in RUNTIME_ORIGINS and startup.state == 'unavailable':
        notes.append('set at runtime (%s); option files not read (%s): whether a restart keeps it is not '
                     'known' % (origin, startup.reason))
        return STARTUP_UNKNOWN, notes
    if origin_up in RUNTIME_ORIGINS:
        notes.append('set at runtime (%s) and not configured: lost at the next restart' % origin)
        return DRIFT_CONFIG, notes
    if startup.state == 'unavailable' and not origin_up:
        # Nothing says where the running value came from, and the option files were not read.
        notes.append('option files not read (%s) and the server does not say where the running value came '
                     'from: only the running value was checked' % startup.reason)
        return STARTUP_UNKNOWN, notes
    if startup.state == 'unavailable':
        notes.append('option files not read (%s): only the running value was checked; the server says it '
                     'came from %s at startup' % (startup.reason, origin))
    else:
        notes.append('no option file sets it and its default is not known here: '
                     'only the running value was checked')
    return OK, notes


def _differing_verdict(restart_ok, startup, origin, runtime, dynamic, notes):
    """Step of decide(), the running value differs: pending_restart (a restart applies what is configured) or
    drift_runtime, with the notes that say what runs and what is configured."""
    origin_up = str(origin or '').upper()
    if restart_ok is True:
        if dynamic is False:
            notes.append('read-only variable: configured %s in %s; a restart applies it'
                         % (startup.value, startup.source))
            return PENDING_RESTART, notes
        if dynamic is None and origin_up not in RUNTIME_ORIGINS:
            notes.append('configured %s in %s; whether it can change at runtime is not known: '
                         'a restart applies it' % (startup.value, startup.source))
            return PENDING_RESTART, notes
        if origin_up in RUNTIME_ORIGINS:
            notes.append('configured %s in %s, but the running value %s was set at runtime'
                         % (startup.value, startup.source, runtime))
        else:
            notes.append('configured %s in %s, but the server runs %s (the file changed after the '
                         'server started?): SET GLOBAL or a restart applies it'
                         % (startup.value, startup.source, runtime))
        return DRIFT_RUNTIME, notes
    notes.append('the server runs %s' % (_shown(runtime),))
    if startup.state == 'error':
        notes.append('option files: %s' % startup.reason)
    elif startup.value is not None:
        notes.append('configured %s in %s' % (startup.value, startup.source))
    elif startup.state == 'known':
        notes.append('no option file sets it (default %s)' % (
            'not known here' if startup.default is None else _shown(startup.default)))
    if dynamic is False:
        notes.append('read-only variable: needs the option file and a restart')
    return DRIFT_RUNTIME, notes


def _shown(value):
    """A value for a message: an empty string is shown as ''."""
    if value is None:
        return 'nothing'
    text = '%s' % (value,)
    return text if text.strip() else repr(text)


def summarize(results):
    """Counts per status (every status present, zero when unused) and the drift flag."""
    summary = dict((s, 0) for s in STATUSES)
    for item in results.values():
        summary[item['status']] = summary.get(item['status'], 0) + 1
    drift = any(item['status'] not in NO_DRIFT for item in results.values())
    return summary, drift


# ---------------------------------------------------------------- gathering evidence
def check_settings(settings):
    """Raise ValueError with a message for a settings value that is not a mapping."""
    if not isinstance(settings, dict):
        raise ValueError('settings must be a dict of variable name -> desired value, got %s'
                         % type(settings).__name__)


def read_blockers(conn, identity, target):
    """Upgrade blockers (storage_engines.upgrade_blockers) from the server's tables, over conn."""
    # Imported here: only an audit with an upgrade target compiles the storage engines' code.
    from ansible_collections.dbfleet.innodb.plugins.module_utils import storage_engines
    if flavors.variable_facts('information_schema_stats_expiry', identity.flavor, identity.version):
        # Session only: the sizes are read live instead of from the statistics cache.
        execute(conn, 'SET SESSION information_schema_stats_expiry = 0')
    tables = storage_engines.read_tables(conn, query)
    return storage_engines.upgrade_blockers(tables, identity, target), storage_engines.warnings_for(
        tables, identity, target)


def read_upgrade(conn, identity, target, catalog, variables, plan, parsed, persisted):
    """The upgrade findings (upgrade.findings) of this server's settings for target, over conn: every global
    variable and where its value came from, the option files read again for the target's option groups, the command
    line, mysqld-auto.cnf, and what the target drops that the server uses (upgrade.result()). catalog: the target's
    facts (upgrade.Target)."""
    # Imported here: only an audit with an upgrade target compiles the upgrade code (a module's payload runs from a
    # zip, compiled on every run).
    from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import upgrade
    target_facts = upgrade.Target(target[0], target[1], catalog)
    notes = []
    if target[0] != identity.flavor:
        notes.append('%s to %s is a migration to another flavor, not an in-place upgrade: the settings are compared '
                     'as for one' % (flavors.display_name(identity.flavor), target_facts.label))
    runtime = variables if isinstance(variables, dict) else all_global_variables(conn)
    table, reason = server_facts.variable_table(conn, identity, list(runtime))
    compared = runtime
    if reason:
        compared = {}       # without where each value came from, a value set at run time would pass for a default
        notes.append('%s: the defaults the server relies on are not compared' % reason)
    origins = dict((name, row.get('origin')) for name, row in table.items())
    settings = upgrade.persisted_settings(persisted)
    current_entries, target_entries = (), None
    if plan['source'] == 'unavailable':
        rows = dict((name, dict(row, value=runtime.get(name))) for name, row in table.items() if name not in persisted)
        settings += upgrade.origin_settings(rows)
        notes.append('%s: the settings are those the server records as set by a file or the command line (an option '
                     'that is no variable, or a line written loose-, is not seen)' % plan['note'])
    else:
        suffix = plan['command_line'].group_suffix if plan['command_line'] else None
        groups = optionfiles.group_names(capability_facts.option_groups_for(target[0], target[1]), suffix)
        target_parsed = optionfiles.read_option_files(plan['files'], groups)
        current_entries, target_entries = parsed.entries, target_parsed.entries
        settings += upgrade.option_settings(target_entries)
        if plan['command_line']:
            settings += upgrade.option_settings(plan['command_line'].options, 'command_line')
    uses = dict(memcached_plugin=False, native_password_accounts=[])
    try:
        rows = query(conn, "SELECT PLUGIN_NAME FROM information_schema.PLUGINS WHERE PLUGIN_NAME = "
                           "'daemon_memcached' AND PLUGIN_STATUS = 'ACTIVE'")
        uses['memcached_plugin'] = bool(rows)
        if capability_facts.capability('mysql_native_password', identity.flavor, identity.version) \
                and not capability_facts.capability('mysql_native_password', target[0], target[1]):
            rows = query(conn, "SELECT CONCAT(User, '@', Host) AS account FROM mysql.user "
                               "WHERE plugin = 'mysql_native_password' ORDER BY User, Host")
            uses['native_password_accounts'] = [_decoded(r['account']) for r in rows]
    except connection.pymysql.err.MySQLError as e:
        notes.append('what the server uses (plugins, accounts) could not be read: %s' % error_text(e))
    items = upgrade.findings(target_facts, identity, settings, compared, origins, uses, current_entries, target_entries)
    return upgrade.result(target_facts, items, notes)


def _decoded(value):
    return value.decode('utf-8', 'replace') if isinstance(value, bytes) else value


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
        blockers, engine_notes = read_blockers(conn, identity, target)
        upgrade_result = read_upgrade(conn, identity, target, catalog, None if read_named else variables, plan,
                                      parsed, persisted)
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
