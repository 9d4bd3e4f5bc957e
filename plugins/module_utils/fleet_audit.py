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
run_pool() (a bounded pool, one result per host, errors isolated), desired_settings() (the roles'
desired state from the server's facts, where the controller can work it out). audit_host() ties
them to one connection.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.dbfleet.innodb.plugins.module_utils import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils import verify

_DB_ERRORS = (connection.pymysql.err.MySQLError,) if connection.pymysql is not None else ()

DEFAULT_POOL = 32
DEFAULT_TIMEOUT = 10

# Host variables the controller reads besides the login ones (connection.LOGIN_HOST_VARIABLES).
TARGET_VARIABLES = ('ansible_host', 'ansible_connection')

STORAGE_NOTE = ('flush_neighbors: the desired value follows the storage under the datadir, which only the '
                'host can tell; not audited from the controller (set flush_neighbors_storage_class to audit '
                'it here, or use the per-host mode)')


_is_loopback = connection.is_loopback


def controller_login(params, host_vars, host_name):
    """(params, notes): the login options for the controller to reach host_name's server.

    params: the login options of the one login path (connection.login_args_from_host) for the host;
    host_vars: the host's ansible_host / ansible_connection. A unix socket and an option file are files
    on the host, never read on the controller; a loopback login_host means the host itself unless the
    host is the controller (ansible_connection local), so its ansible_host (or name) is used."""
    params = dict(params)
    notes = []
    local = str(host_vars.get('ansible_connection') or '') == 'local'
    socket_path = params.pop('login_unix_socket', None)
    config_file = params.pop('config_file', None)
    if config_file:
        notes.append('dbfleet_config_file %s is a file on the host: not read from the controller' % config_file)
    host = params.get('login_host')
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
    identity = connection.identity_note(params)
    if identity:
        notes.append(identity)
    return params, notes


if connection.pymysql is not None:
    class _Connection(connection.Connection):
        """A PyMySQL connection whose TLS context is shared by every connection with the same TLS options.

        Building a context loads the system's CA store (tens of milliseconds of CPU); a fleet audit opens
        one connection per host, so it builds each distinct context once."""
        _contexts = {}
        _lock = threading.Lock()

        def _create_ssl_ctx(self, sslp):
            if not isinstance(sslp, dict):
                return super()._create_ssl_ctx(sslp)
            key = repr(sorted(sslp.items()))
            with self._lock:
                if key not in self._contexts:
                    self._contexts[key] = super()._create_ssl_ctx(sslp)
                return self._contexts[key]
else:  # pragma: no cover - reported when connecting
    _Connection = None


def open_connection(params, timeout):
    """A PyMySQL connection with connect, read and write timeouts (seconds); raises connection.ConnectError."""
    if connection.pymysql is None:
        raise connection.ConnectError('the PyMySQL library is not installed for the controller\'s Python')
    try:
        refusal = connection.identity_refusal(params)
        kwargs = connection.connection_kwargs(dict(params, connect_timeout=timeout))
    except ValueError as e:
        raise connection.ConnectError('cannot connect to %s: %s' % (connection.describe_target(params), e))
    if refusal:
        raise connection.ConnectError(refusal)
    kwargs.update(read_timeout=timeout, write_timeout=timeout)
    try:
        return _Connection(**kwargs)
    except connection.pymysql.err.MySQLError as e:
        raise connection.ConnectError('cannot connect to %s: %s'
                                      % (connection.describe_target(params), connection.error_text(e)))
    except (OSError, ValueError) as e:
        raise connection.ConnectError('cannot connect to %s: %s' % (connection.describe_target(params), e))


# ---------------------------------------------------------------- desired state
def controller_roles(roles, role_inputs):
    """(roles, notes): the roles whose desired state the controller can work out for a host.

    flush_neighbors follows the storage under the datadir, which only the host can tell: only with
    flush_neighbors_storage_class set (the override) is it worked out here; otherwise a note says so."""
    out, notes = [], []
    for role in roles:
        if role == 'flush_neighbors' and (role_inputs or {}).get('flush_neighbors_storage_class') is None:
            notes.append(STORAGE_NOTE)
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
    if origin in verify.RUNTIME_ORIGINS:
        return ['the server says the running value was set at runtime; what the option files on the host '
                'say is not visible over SQL']
    return ['the server says the running value came from %s when it started; an option file edited since is '
            'not visible over SQL' % where]


def audit_host(params, settings, roles=(), role_variables=None, notes=(), timeout=DEFAULT_TIMEOUT,
               connect=None, upgrade_target=None):
    """The verify result for one host, audited over one connection from the controller.

    settings: name -> desired value (merged over the roles' desired settings); roles: the roles whose
    desired state is worked out from role_variables and the server's facts (controller_roles()); notes:
    what the host's result says besides (its errors); upgrade_target: (flavor, version) of an upgrade target, whose
    blockers (information_schema.TABLES, SQL alone) are listed as in the per-host mode. Any failure is returned as dict(failed=True, msg=...),
    never raised."""
    connect = connect or open_connection
    start = time.monotonic()
    target = connection.describe_target(params)
    try:
        conn = connect(params, timeout)
    except connection.ConnectError as e:
        return dict(failed=True, msg=str(e), connected_to=target, seconds=round(time.monotonic() - start, 3))
    try:
        result = verify.audit(conn, settings, login_params=params, proc_root=None, desired_from=list(roles),
                              role_variables=role_variables or {}, detect_storage=storage_not_inspected,
                              target=upgrade_target)
    except desired.InputError as e:
        return dict(failed=True, msg='invalid role input, nothing audited: %s' % '; '.join(e.messages),
                    connected_to=target, seconds=round(time.monotonic() - start, 3))
    except Exception as e:  # pylint: disable=broad-except  # one host's failure is that host's error item
        text = connection.error_text(e) if isinstance(e, _DB_ERRORS) else '%s: %s' % (type(e).__name__, e)
        return dict(failed=True, msg='auditing %s failed: %s' % (target, text), connected_to=target,
                    seconds=round(time.monotonic() - start, 3))
    finally:
        try:
            conn.close()
        except Exception:  # pylint: disable=broad-except
            pass
    for item in result['variables'].values():
        item['notes'].extend(startup_notes(item))
    result['errors'] = list(notes) + list(result.get('errors') or [])
    result.update(changed=False, failed=False, connected_to=target, seconds=round(time.monotonic() - start, 3))
    return result


# ---------------------------------------------------------------- the pool
def run_pool(jobs, worker, pool=DEFAULT_POOL):
    """{name: worker(job)} for jobs ({name: job}), at most `pool` at a time.

    A worker that raises gives dict(failed=True, msg=...) for its host; the others complete."""
    results = {}
    lock = threading.Lock()

    def one(name, job):
        try:
            outcome = worker(job)
        except Exception as e:  # pylint: disable=broad-except
            outcome = dict(failed=True, msg='%s: %s' % (type(e).__name__, e))
        with lock:
            results[name] = outcome

    if not jobs:
        return results
    with ThreadPoolExecutor(max_workers=max(1, min(int(pool), len(jobs)))) as executor:
        for name, job in jobs.items():
            executor.submit(one, name, job)
    return results


def summarize(results):
    """Counts of hosts: ok, drift, error."""
    out = dict(hosts=len(results), hosts_ok=0, hosts_drift=0, hosts_error=0)
    for result in results.values():
        if result.get('failed'):
            out['hosts_error'] += 1
        elif result.get('drift'):
            out['hosts_drift'] += 1
        else:
            out['hosts_ok'] += 1
    return out
