# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who a server is and where its configuration comes from, over one open connection.

gather(conn, ...) returns the server_facts dict shared by the server_facts and verify
modules: identity (flavor, version), replication role, paths, the option files the running
server reads (from its command line in /proc when it runs on this host) and capabilities.
"""

from __future__ import annotations

import os

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import describe_target, resolve_login
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import discovery
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils import values
from ansible_collections.dbfleet.innodb.plugins.module_utils.values import as_int
from ansible_collections.dbfleet.innodb.plugins.module_utils.host.process import local_process
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication.membership import replication_info
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import (
    NamedGlobalVariables, all_global_variables, error_text, query)

try:
    import pymysql
    _DB_ERRORS = (pymysql.err.MySQLError,)
except ImportError:  # pragma: no cover
    _DB_ERRORS = ()


# ---------------------------------------------------------------- option files
def option_file_plan(identity, process, process_reason, option_files=None, fallback_option_files=None):
    """Which option files to read, which groups, the command-line options, and where that came from.

    Returns dict(files, groups, source, command_line (CommandLine or None), local (bool), note)."""
    command_line = None
    if process:
        command_line = optionfiles.parse_command_line(process['argv'], process.get('cwd'))
    suffix = command_line.group_suffix if command_line else None
    groups = optionfiles.group_names(capability_facts.option_groups_for(identity.flavor, identity.version), suffix)
    plan = dict(groups=list(groups), command_line=command_line, local=process is not None, note='')
    if option_files:
        plan['files'] = [os.path.expanduser(f) for f in option_files]
        plan['source'] = 'option_files parameter'
        plan['explicit'] = True
        return plan
    plan['explicit'] = False
    if process:
        defaults = capability_facts.capability('default_option_files', identity.flavor, identity.version)
        files, source = optionfiles.server_option_files(command_line, defaults, process.get('home'))
        plan['files'] = files
        plan['source'] = 'server command line (pid %d): %s' % (process['pid'], source)
        return plan
    if fallback_option_files:
        plan['files'] = [os.path.expanduser(f) for f in fallback_option_files]
        plan['source'] = 'fallback_option_files parameter (%s)' % process_reason
        plan['explicit'] = True
        return plan
    plan['files'] = []
    plan['source'] = 'unavailable'
    plan['note'] = 'option files not read: %s' % process_reason
    return plan


# ---------------------------------------------------------------- all together
FACT_PATHS = ('datadir', 'basedir', 'plugin_dir', 'pid_file', 'socket', 'log_error')


def gather(conn, variables=None, login_params=None, option_files=None, fallback_option_files=None,
           proc_root='/proc'):
    """The server_facts dict. variables: every GLOBAL variable when the caller has them already.

    Also returns the internal plan under the key '_plan' (removed by callers before output)."""
    if variables is None:
        variables = all_global_variables(conn)
    identity = server_identity.identity_from_variables(variables)
    process, reason = local_process(variables, login_params, proc_root)
    plan = option_file_plan(identity, process, reason, option_files, fallback_option_files)
    facts = dict(identity.to_dict())
    for key in FACT_PATHS:
        facts[key] = variables.get(key)
    facts['hostname'] = variables.get('hostname')
    facts['port'] = as_int(variables.get('port'))
    facts['server_id'] = as_int(variables.get('server_id'))
    facts['replication'] = replication_info(conn, identity, variables)
    facts['capabilities'] = capability_facts.capabilities(identity.flavor, identity.version)
    facts['option_groups'] = plan['groups']
    facts['option_files'] = list(plan['files'])
    facts['option_files_source'] = plan['source']
    facts['local'] = process is not None
    facts['process'] = None
    facts['runs_as_root'] = None
    facts['runs_as_user'] = None
    if process:
        # Secrets on the command line (--report-password=..., a key's passphrase) never reach the result.
        facts['process'] = dict(pid=process['pid'], argv=masking.mask_argv(process['argv']), cwd=process['cwd'],
                                uid=process['uid'], home=process['home'])
        if process['uid'] is not None:
            facts['runs_as_root'] = process['uid'] == 0
            facts['runs_as_user'] = process['user']
    facts['notes'] = [n for n in (reason if not process else '', plan['note']) if n]
    facts.update(discovered(plan, process, login_params, proc_root))
    if facts['runs_as_root'] is None:
        facts['notes'].append('runs_as_root unknown: the server process is not readable from here')
    facts['_plan'] = plan
    facts['_identity'] = identity
    return facts


def discovered(plan, process, login_params=None, proc_root='/proc'):
    """What the host says about its server where the inventory is silent (host/discovery.py): the drop-in
    directory its option files include last, its systemd unit, the socket a login without a named
    server found. Each with where it was found, or why not (naming the variable that tells it)."""
    out = dict(dropin_dir=None, dropin_dir_source=None, unit=None, unit_source=None, login_socket_source=None)
    if plan.get('local') and plan.get('files'):
        found = discovery.dropin_dir(optionfiles.read_option_files(plan['files'], plan['groups']))
        out['dropin_dir'], out['dropin_dir_source'] = found['path'], found['source']
    elif not plan.get('local'):
        out['dropin_dir_source'] = 'the server\'s option files are not readable from here; set %s' % discovery.DROPIN_VARIABLE
    if proc_root is not None:
        unit = discovery.unit_of_process(process['pid'] if process else None, proc_root)
        out['unit'], out['unit_source'] = unit['name'], unit['source']
    params = login_params or {}
    if proc_root is not None and not any(params.get(k) for k in ('login_unix_socket', 'login_host', 'login_port')):
        try:
            out['login_socket_source'] = resolve_login(params).get('socket_source')
        except ValueError:
            pass
    return out


def public(facts):
    """facts without the internal keys."""
    return dict((k, v) for k, v in facts.items() if not k.startswith('_'))


def variable_table(conn, identity, names):
    """Per-variable server knowledge for names: {name: dict(read_only, default, origin, path,
    type)} from information_schema.SYSTEM_VARIABLES (MariaDB) or performance_schema.variables_info
    (MySQL 8). Missing tables or privileges give {} (and the reason)."""
    names = sorted(set(n.lower() for n in names if n))
    if not names:
        return {}, None
    placeholders = ', '.join(['%s'] * len(names))
    out = {}
    try:
        if capability_facts.capability('system_variables_table', identity.flavor, identity.version):
            has_path = capability_facts.capability('system_variables_value_path', identity.flavor, identity.version)
            path_column = 'GLOBAL_VALUE_PATH' if has_path else 'NULL'
            rows = query(conn, 'SELECT VARIABLE_NAME, READ_ONLY, DEFAULT_VALUE, GLOBAL_VALUE_ORIGIN, '
                               'VARIABLE_TYPE, NUMERIC_BLOCK_SIZE, VARIABLE_SCOPE, %s AS GLOBAL_VALUE_PATH '
                               'FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME IN (%s)'
                         % (path_column, placeholders), [n.upper() for n in names])
            for row in rows:
                out[row['VARIABLE_NAME'].lower()] = dict(
                    read_only=str(row['READ_ONLY']).upper() == 'YES',
                    default=row['DEFAULT_VALUE'],
                    origin=row['GLOBAL_VALUE_ORIGIN'],
                    path=row.get('GLOBAL_VALUE_PATH') or None,
                    type=row['VARIABLE_TYPE'],
                    block_size=row['NUMERIC_BLOCK_SIZE'],
                    source='information_schema.SYSTEM_VARIABLES')
        elif capability_facts.capability('variables_info_table', identity.flavor, identity.version):
            rows = query(conn, 'SELECT VARIABLE_NAME, VARIABLE_SOURCE, VARIABLE_PATH, SET_TIME '
                               'FROM performance_schema.variables_info WHERE VARIABLE_NAME IN (%s)'
                         % placeholders, names)
            for row in rows:
                out[row['VARIABLE_NAME'].lower()] = dict(
                    read_only=None, default=None, origin=row['VARIABLE_SOURCE'],
                    path=row['VARIABLE_PATH'] or None,
                    set_time=str(row['SET_TIME']) if row.get('SET_TIME') else None,
                    type=None, block_size=None, source='performance_schema.variables_info')
    except _DB_ERRORS as e:
        return out, 'cannot read the server variable tables: %s' % error_text(e)
    return out, None


# The most rows the catalog read takes (a server has about 600-1000 variables; plugins add some).
CATALOG_LIMIT = 5000


def variable_catalog(conn, identity):
    """(catalog, source, problem): every GLOBAL variable the server describes in its own catalog, in one bounded
    statement: {name: dict(type, minimum, maximum, block_size, choices, read_only)} - MariaDB
    information_schema.SYSTEM_VARIABLES (VARIABLE_TYPE, NUMERIC_MIN/MAX_VALUE, NUMERIC_BLOCK_SIZE, ENUM_VALUE_LIST,
    READ_ONLY), MySQL 8.0+ performance_schema.variables_info (MIN_VALUE, MAX_VALUE only: type, block size and
    whether a variable is dynamic come from flavors.VARIABLES there). A server without either table, or a read
    that fails, gives {} and the reason."""
    out = {}
    try:
        if capability_facts.capability('system_variables_table', identity.flavor, identity.version):
            source = 'information_schema.SYSTEM_VARIABLES'
            rows = query(conn, 'SELECT VARIABLE_NAME, VARIABLE_TYPE, NUMERIC_MIN_VALUE, NUMERIC_MAX_VALUE, '
                               'NUMERIC_BLOCK_SIZE, ENUM_VALUE_LIST, READ_ONLY FROM information_schema.SYSTEM_VARIABLES '
                               "WHERE VARIABLE_SCOPE <> 'SESSION' LIMIT %d" % CATALOG_LIMIT)
            for row in rows:
                choices = row.get('ENUM_VALUE_LIST')
                out[str(row['VARIABLE_NAME']).lower()] = dict(
                    type=row.get('VARIABLE_TYPE'), minimum=_number(row.get('NUMERIC_MIN_VALUE')),
                    maximum=_number(row.get('NUMERIC_MAX_VALUE')), block_size=_number(row.get('NUMERIC_BLOCK_SIZE')),
                    choices=choices.split(',') if choices else None,
                    read_only=str(row.get('READ_ONLY')).upper() == 'YES')
        elif capability_facts.capability('variables_info_table', identity.flavor, identity.version):
            source = 'performance_schema.variables_info'
            rows = query(conn, 'SELECT VARIABLE_NAME, MIN_VALUE, MAX_VALUE FROM performance_schema.variables_info '
                               'LIMIT %d' % CATALOG_LIMIT)
            for row in rows:
                low, high = _number(row.get('MIN_VALUE')), _number(row.get('MAX_VALUE'))
                if low == 0 and high == 0:
                    low = high = None       # what variables_info shows for a variable without a range
                out[str(row['VARIABLE_NAME']).lower()] = dict(type=None, minimum=low, maximum=high, block_size=None,
                                                              choices=None, read_only=None)
        else:
            return {}, None, '%s %s has no table of its variables (MariaDB 10.1+, MySQL 8.0+)' % (
                identity.flavor, flavors.format_version(identity.version))
    except _DB_ERRORS as e:
        return {}, None, 'cannot read the server\'s catalog of variables: %s' % error_text(e)
    return out, source, None


def _number(value):
    if value is None or value == '':
        return None
    try:
        return int(str(value))
    except ValueError:
        try:
            return float(str(value))
        except ValueError:
            return None


# /proc/meminfo's MemTotal and a cgroup's limit, in bytes. A cgroup v1 "no limit" is a page-rounded 2^63-1.
UNLIMITED = 1 << 62


def _read_first(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


def server_memory(pid, proc_root='/proc', cgroup_root='/sys/fs/cgroup'):
    """The memory the server process may use: dict(bytes, source, mem_total, cgroup_limit, cgroup): the host's
    MemTotal, or the memory limit of the process's cgroup (and of each cgroup above it) when lower - cgroup v2
    memory.max, v1 memory.limit_in_bytes, read from /proc/<pid>/cgroup. bytes None with a reason when nothing can be
    read (the server is not on this host)."""
    out = dict(bytes=None, source=None, mem_total=None, cgroup_limit=None, cgroup=None, reason=None)
    meminfo = _read_first(os.path.join(proc_root, 'meminfo')) if proc_root else None
    for line in (meminfo or '').splitlines():
        if line.startswith('MemTotal:'):
            out['mem_total'] = int(line.split()[1]) * 1024
    if out['mem_total'] is None:
        out['reason'] = 'no MemTotal in %s/meminfo' % proc_root
        return out
    out['bytes'], out['source'] = out['mem_total'], 'MemTotal of the host (/proc/meminfo)'
    lines = _read_first(os.path.join(proc_root, str(pid), 'cgroup')) if pid else None
    for line in (lines or '').splitlines():
        parts = line.split(':', 2)
        if len(parts) != 3:
            continue
        controllers, path = parts[1].split(','), parts[2]
        if parts[0] == '0' and parts[1] == '':
            bases, file_name = [cgroup_root, os.path.join(cgroup_root, 'unified')], 'memory.max'
        elif 'memory' in controllers:
            bases, file_name = [os.path.join(cgroup_root, 'memory')], 'memory.limit_in_bytes'
        else:
            continue
        for base in bases:
            limit, where = _cgroup_limit(base, path, file_name)
            if limit is not None and (out['cgroup_limit'] is None or limit < out['cgroup_limit']):
                out['cgroup_limit'], out['cgroup'] = limit, where
    if out['cgroup_limit'] is not None and out['cgroup_limit'] < out['bytes']:
        out['bytes'], out['source'] = out['cgroup_limit'], 'the memory limit of cgroup %s' % out['cgroup']
    return out


def _cgroup_limit(base, path, file_name):
    """(lowest limit, file) of the cgroup at path under base and of every cgroup above it (None: no limit)."""
    lowest, where = None, None
    parts = [p for p in path.split('/') if p]
    while True:
        candidate = os.path.join(base, *parts, file_name) if parts else os.path.join(base, file_name)
        text = _read_first(candidate)
        if text is not None and text != 'max':
            try:
                value = int(text)
            except ValueError:
                value = None
            if value is not None and value < UNLIMITED and (lowest is None or value < lowest):
                lowest, where = value, candidate
        if not parts:
            return lowest, where
        parts.pop()


def persisted_variables(conn, identity, variables):
    """{name: value} from performance_schema.persisted_variables (MySQL 8), or {} where there is
    no SET PERSIST or persisted_globals_load is OFF. Second item: a reason when it could not be read."""
    if not capability_facts.capability('set_persist', identity.flavor, identity.version):
        return {}, None
    if str(variables.get('persisted_globals_load', 'ON')).upper() in ('OFF', '0'):
        return {}, 'persisted_globals_load is OFF: the server ignores mysqld-auto.cnf at startup'
    try:
        rows = query(conn, 'SELECT VARIABLE_NAME, VARIABLE_VALUE FROM performance_schema.persisted_variables')
    except _DB_ERRORS as e:
        return {}, 'cannot read performance_schema.persisted_variables: %s' % error_text(e)
    return dict((r['VARIABLE_NAME'].lower(), r['VARIABLE_VALUE']) for r in rows), None


def variable_details(conn, identity, variables, names):
    """Per-variable facts: {name: dict(resolved_name, exists, runtime, kind, dynamic, default, origin,
    settable, reason)}, each name resolved for the server (values.resolve) and described the way the
    setter and verify see it (values.describe). Second item: a reason when the server tables could
    not be read."""
    server_names = variables if isinstance(variables, NamedGlobalVariables) else frozenset(variables)
    resolved = {}
    for name in names:
        found = values.resolve(str(name), identity, server_names)
        resolved[str(name)] = found.resolved if found.problem is None else None
    table, reason = variable_table(conn, identity, [r for r in resolved.values() if r])
    out = {}
    for key, name in sorted(resolved.items()):
        if name is None:
            out[key] = dict(resolved_name=values.resolve(key, identity, server_names).resolved, exists=False,
                            runtime=None, kind=None, dynamic=None, default=None, origin=None, settable=False,
                            reason='%s has no such variable' % values.server_text(identity))
            continue
        table_row = table.get(name)
        variable = values.describe(name, identity, variables.get(name), table_row)
        out[key] = dict(resolved_name=name, exists=True, runtime=variables.get(name), kind=variable.kind,
                        dynamic=variable.dynamic, default=values.as_text(variable.default),
                        origin=table_row.get('origin') if table_row else None,
                        settable=variable.settable, reason=variable.reason)
    return out, reason


def report(conn, identity, variables, facts, names=(), engines=(), catalog=False, persisted=False):
    """The server_facts result (as the server_facts and desired_settings modules return it and the
    roles' desired state is computed from): the public facts plus `variables`, the details of names,
    and `engines`, whether each of engines is loaded and how many tables use it (when engines are asked for).
    catalog: also `catalog` (variable_catalog(), with every running value), its `catalog_source` /
    `catalog_problem`, and `memory` (server_memory() of the local server process).
    persisted: also `persisted`, {name: value} of what the server reads from mysqld-auto.cnf at its next start
    (persisted_variables(); {} where it has no SET PERSIST), and `persisted_problem` (why it could not be read)."""
    out = public(facts)
    out['notes'] = list(out.get('notes') or [])
    if persisted:
        out['persisted'], out['persisted_problem'] = persisted_variables(conn, identity, variables)
    out['variables'] = {}
    if names:
        details, reason = variable_details(conn, identity, variables, names)
        out['variables'] = details
        if reason:
            out['notes'].append(reason)
    if engines:
        # Imported here: only a role that reads engines (myrocks) compiles the storage engines' code.
        from ansible_collections.dbfleet.innodb.plugins.module_utils import storage_engines
        out['engines'] = storage_engines.loaded_engine_facts(conn, query, engines)
    if catalog:
        table, out['catalog_source'], out['catalog_problem'] = variable_catalog(conn, identity)
        running = dict(variables)
        out['catalog'] = dict((name, dict(table.get(name) or {}, value=value)) for name, value in running.items())
        process = facts.get('process')
        if process:
            out['memory'] = server_memory(process.get('pid'))
        else:
            out['memory'] = dict(bytes=None, source=None, reason='the server process is not on this host (%s)'
                                 % '; '.join(facts.get('notes') or []) or 'unknown')
    return out


def read_for_module(module, names=(), engines=(), catalog=False, persisted=False):
    """report() for a module: connects with the module's login options, fails the module with the
    target named when the server cannot be identified or read, and closes the connection."""
    conn = connection.connect(module)
    try:
        variables = all_global_variables(conn)
        try:
            facts = gather(conn, variables, module.params,
                           fallback_option_files=module.params.get('fallback_option_files'))
        except ValueError as e:
            module.fail_json(msg='cannot identify the server: %s' % e)
        return report(conn, facts['_identity'], variables, facts, names, engines, catalog, persisted)
    except _DB_ERRORS as e:
        module.fail_json(msg='reading server facts from %s failed: %s'
                         % (describe_target(module.params), error_text(e)))
    finally:
        conn.close()
    return None
