# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet audit from the controller: every host of a play audited over SQL, concurrently.

For each host, one database connection from the controller and verify.audit() (the same per-variable
statuses as the per-host mode). Nothing on the controller's filesystem is read as the host's: no
option files, no pid file, no /proc, no ~/.my.cnf, no unix socket. What a restart brings is then
known only where the server says it over SQL (MySQL 8 persisted_variables; the origin of each
running value in performance_schema.variables_info or information_schema.SYSTEM_VARIABLES); where it
does not, the item's startup state is 'unavailable' and its notes say so.

Pure parts (unit-tested with fakes): controller_login() (where the controller logs in for a host),
controller_roles() (the roles whose desired state the controller can work out from the server's facts),
startup_notes() (what SQL says of a restart's value). audit_host() ties them to one connection, opened under the
deadline of the host's whole exchange (audit/fleet_deadline.py). How many hosts at once and in how many processes:
audit/fleet_capacity.py; running them: audit/fleet_pool.py.
"""

from __future__ import annotations

import time

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import describe_target, is_loopback
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.tls import identity_note
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import error_text
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit.fleet_capacity import MAX_POOL
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit.fleet_deadline import Deadline, open_connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import startup_cache
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verdict
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import catalog as flavor_data

_DB_ERRORS = (connection.pymysql.err.MySQLError,) if connection.pymysql is not None else ()

DEFAULT_TIMEOUT = 10
MAX_TIMEOUT = 3600
# The whole exchange with one host (connect, TLS, authentication, every query) ends by this many seconds.
DEFAULT_DEADLINE = 60

# Login options that name files on the host: never read on the controller (a path there may be the
# controller's own file, or nothing at all). verify_fleet's controller_* options give the controller's.
HOST_FILE_OPTIONS = ('ca_cert', 'client_cert', 'client_key')

# Host variables the controller reads besides the login ones (connection.LOGIN_HOST_VARIABLES).
TARGET_VARIABLES = ('ansible_host', 'ansible_connection')


def storage_note(role):
    """Why the controller does not audit a role that detects storage (its record's detects_storage)."""
    return ('%s: the desired value follows the storage under the datadir, which only the host can tell; not audited '
            'from the controller (set %s to audit it here, or use the per-host mode)'
            % (role, desired.RECORDS[role].storage_class_input))


_is_loopback = is_loopback


def controller_login(params, host_vars, host_name):
    """(params, notes): the login options for the controller to reach host_name's server.

    params: the login options of the one login path (connection.login_args_from_host) for the host;
    host_vars: the host's ansible_host / ansible_connection. A unix socket and an option file are files
    on the host, never read on the controller; a loopback login_host means the host itself unless the
    host is the controller (ansible_connection local), so its ansible_host (or name) is used.

    A host whose ansible_host is a loopback address but whose connection is not local (an SSH port forward) has its
    server elsewhere: the controller's own loopback is not that server, so ValueError (the host's error) unless
    dbfleet_login_host names the address (login_host given)."""
    params = dict(params)
    notes = []
    local = str(host_vars.get('ansible_connection') or '') == 'local'
    socket_path = params.pop('login_unix_socket', None)
    config_file = params.pop('config_file', None)
    if config_file:
        notes.append('dbfleet_config_file %s is a file on the host: not read from the controller' % config_file)
    for option in HOST_FILE_OPTIONS:
        path = params.pop(option, None)
        if path:
            notes.append('dbfleet_login_%s %s is a file on the host: not read from the controller (verify_fleet '
                         'controller_%s gives the controller\'s)' % (option, path, option))
    key_path = params.pop('login_server_public_key', None)
    if key_path:
        notes.append('dbfleet_login_server_public_key %s is a file on the host: not read from the controller (the '
                     'controller exchanges no password by RSA unless dbfleet_login_get_server_public_key is true)'
                     % key_path)
    host = params.get('login_host')
    if not local and host is None and _is_loopback(host_vars.get('ansible_host') or host_name):
        raise ValueError(
            'not connected: %s is reached through the controller\'s own loopback (ansible_host %s, connection %s): its '
            'server is not on the controller, and whatever listens on the controller\'s port would get the fleet '
            'password. Set dbfleet_login_host (and dbfleet_login_port) to where the controller reaches this host\'s '
            'server' % (host_name, host_vars.get('ansible_host') or host_name,
                        host_vars.get('ansible_connection') or 'ssh'))
    if _is_loopback(host) and not local:
        target = host_vars.get('ansible_host') or host_name
        if socket_path or host:
            notes.append('logs in on the host through %s; the controller uses %s instead'
                         % ('socket %s' % socket_path if socket_path else host, target))
        params['login_host'] = target
    elif host is None:
        params['login_host'] = '127.0.0.1' if local else (host_vars.get('ansible_host') or host_name)
    # No option file on the controller stands in for the host's (resolve_login reads config_file).
    params['config_file'] = None
    identity = identity_note(params)
    if identity:
        notes.append(identity)
    return params, notes


def check_limits(pool, timeout, deadline):
    """Error messages for a pool size, a per-read timeout and a per-host deadline out of their ranges.

    pool None: as many hosts at once as the controller can hold (pool_size())."""
    errors = []
    for name, value, high in (('pool', pool, MAX_POOL), ('timeout', timeout, MAX_TIMEOUT),
                              ('deadline', deadline, MAX_TIMEOUT)):
        if name == 'pool' and value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= high:
            errors.append('%s must be 1-%d; got %r' % (name, high, value))
    return errors


# ---------------------------------------------------------------- desired state
def controller_roles(roles, role_inputs):
    """(roles, notes): the roles whose desired state the controller can work out for a host.

    A role that detects storage (flush_neighbors) follows the storage under the datadir, which only the host can
    tell: only with its <role>_storage_class input set (the override) is it worked out here; otherwise a note says
    so."""
    out, notes = [], []
    for role in roles:
        record = desired.RECORDS[role]
        if record.detects_storage and (role_inputs or {}).get(record.storage_class_input) is None:
            notes.append(storage_note(role))
            continue
        out.append(role)
    return out, notes


def storage_not_inspected(datadir, probe):
    """verify.audit()'s detect_storage from the controller: nothing under the host's datadir is read."""
    return dict(storage_class='unknown', confidence='low', probe=None,
                reasons=['storage under %s not inspected: audited from the controller' % datadir])


# ---------------------------------------------------------------- one host
_ORIGIN_TEXT = {
    'COMPILED': 'the compiled-in default', 'COMPILE-TIME': 'the compiled-in default',
    'AUTO': 'a value the server chose', 'COMMAND_LINE': 'the command line', 'COMMAND-LINE': 'the command line',
    'CONFIG': 'an option file', 'GLOBAL': 'an option file', 'SERVER': 'an option file',
    'EXPLICIT': 'an option file', 'EXTRA': 'an option file', 'USER': 'an option file', 'LOGIN': 'an option file',
    'PERSISTED': 'mysqld-auto.cnf (SET PERSIST)', 'ENVIRONMENT': 'the environment',
    'DYNAMIC': 'SET GLOBAL since startup', 'SQL': 'SET GLOBAL since startup',
}


def startup_notes(item):
    """Notes for a variable whose restart value the controller cannot read: what the server says instead."""
    startup = item.get('startup') or {}
    if startup.get('state') != 'unavailable':
        return []
    origin = str(item.get('origin') or '').upper()
    if not origin:
        return ['what a restart brings is not known over SQL on this server (no per-variable origin): '
                'only the running value was checked']
    where = _ORIGIN_TEXT.get(origin, origin)
    if item.get('origin_path'):
        where = '%s (%s)' % (where, item['origin_path'])
    if origin in verdict.RUNTIME_ORIGINS:
        return ['the server says the running value was set at runtime; what the option files on the host '
                'say is not visible over SQL']
    return ['the server says the running value came from %s when it started; an option file edited since is '
            'not visible over SQL' % where]


def audit_host(params, settings, roles=(), role_variables=None, notes=(), timeout=DEFAULT_TIMEOUT,
               connect=None, upgrade_target=None, deadline=DEFAULT_DEADLINE, startup_cache=None,
               startup_cache_max_age=startup_cache.DEFAULT_STARTUP_CACHE_MAX_AGE):
    """The verify result for one host, audited over one connection from the controller.

    settings: name -> desired value (merged over the roles' desired settings); roles: the roles whose
    desired state is worked out from role_variables and the server's facts (controller_roles()); notes:
    what the host's result says besides (its errors); upgrade_target: (flavor, version) of an upgrade target, whose
    blockers (information_schema.TABLES, SQL alone) are listed as in the per-host mode. Any failure is returned as dict(failed=True, msg=...),
    never raised. deadline: seconds for the whole exchange with the host (Deadline), however slowly it answers.
    startup_cache, startup_cache_max_age: the option-file state of the host's last per-host run (verify.audit())."""
    start = time.monotonic()
    target = describe_target(params)
    watch = Deadline(deadline).start()
    try:
        return _audit_host(params, settings, roles, role_variables, notes, timeout, connect or open_connection,
                           upgrade_target, watch, target, start, dict(startup_cache=startup_cache,
                                                                      startup_cache_max_age=startup_cache_max_age))
    finally:
        watch.cancel()


def _audit_host(params, settings, roles, role_variables, notes, timeout, connect, upgrade_target, watch, target,
                start, cache):
    try:
        conn = connect(params, timeout, watch)
    except connection.ConnectError as e:
        return dict(failed=True, msg=str(e), connected_to=target, seconds=round(time.monotonic() - start, 3))
    watch.attach(conn)
    try:
        result = verify.audit(conn, settings, login_params=params, proc_root=None, desired_from=list(roles),
                              role_variables=role_variables or {}, detect_storage=storage_not_inspected,
                              target=upgrade_target, catalog=flavor_data, read_named=True, **cache)
    except desired.InputError as e:
        return dict(failed=True, msg='invalid role input, nothing audited: %s' % '; '.join(e.messages),
                    connected_to=target, seconds=round(time.monotonic() - start, 3))
    except Exception as e:  # pylint: disable=broad-except  # one host's failure is that host's error item
        text = error_text(e) if isinstance(e, _DB_ERRORS) else '%s: %s' % (type(e).__name__, e)
        if watch.expired:
            text = watch.message()
        return dict(failed=True, msg='auditing %s failed: %s' % (target, text), connected_to=target,
                    seconds=round(time.monotonic() - start, 3))
    finally:
        try:
            conn.close()
        except Exception:  # pylint: disable=broad-except
            pass
    if watch.expired:  # reads that failed after the deadline may have been recorded as the server's errors
        return dict(failed=True, msg='auditing %s failed: %s' % (target, watch.message()), connected_to=target,
                    seconds=round(time.monotonic() - start, 3))
    for item in result['variables'].values():
        item['notes'].extend(startup_notes(item))
    result['errors'] = list(notes) + list(result.get('errors') or [])
    result.update(changed=False, failed=False, connected_to=target, seconds=round(time.monotonic() - start, 3))
    return result


def summarize(results):
    """Counts of hosts: ok, startup_unknown (no drift, but a variable whose restart value is not known), drift,
    error."""
    out = dict(hosts=len(results), hosts_ok=0, hosts_startup_unknown=0, hosts_drift=0, hosts_error=0)
    for result in results.values():
        if result.get('failed'):
            out['hosts_error'] += 1
        elif result.get('drift'):
            out['hosts_drift'] += 1
        elif (result.get('summary') or {}).get(verdict.STARTUP_UNKNOWN):
            out['hosts_startup_unknown'] += 1
        else:
            out['hosts_ok'] += 1
    return out
