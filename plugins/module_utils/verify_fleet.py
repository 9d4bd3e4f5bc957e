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

import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.dbfleet.innodb.plugins.module_utils import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils import verify

_DB_ERRORS = (connection.pymysql.err.MySQLError,) if connection.pymysql is not None else ()

DEFAULT_POOL = 32
DEFAULT_TIMEOUT = 10
# Each host of the pool holds a thread, a socket and a connection on its server; beyond this the controller
# spends its time switching threads, and a typo (3200 for 32) would open thousands of connections at once.
MAX_POOL = 256
MAX_TIMEOUT = 3600
# The whole exchange with one host (connect, TLS, authentication, every query) ends by this many seconds.
DEFAULT_DEADLINE = 60

# Login options that name files on the host: never read on the controller (a path there may be the
# controller's own file, or nothing at all). verify_fleet's controller_* options give the controller's.
HOST_FILE_OPTIONS = ('ca_cert', 'client_cert', 'client_key')

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
    for option in HOST_FILE_OPTIONS:
        path = params.pop(option, None)
        if path:
            notes.append('dbfleet_login_%s %s is a file on the host: not read from the controller (verify_fleet '
                         'controller_%s gives the controller\'s)' % (option, path, option))
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


def check_limits(pool, timeout, deadline):
    """Error messages for a pool size, a per-read timeout and a per-host deadline out of their ranges."""
    errors = []
    for name, value, high in (('pool', pool, MAX_POOL), ('timeout', timeout, MAX_TIMEOUT),
                              ('deadline', deadline, MAX_TIMEOUT)):
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= high:
            errors.append('%s must be 1-%d; got %r' % (name, high, value))
    return errors


class Deadline(object):
    """The end of one host's whole exchange: when it passes, the connection's socket is shut down.

    A server that trickles a byte every few seconds never trips a per-read timeout; shutting the socket
    down wakes whatever read (TCP connect, TLS handshake, authentication, query) is waiting on it, and
    every later read of the connection fails at once (_Connection._read_bytes)."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.expired = False
        self._conn = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def start(self):
        self._timer.start()
        return self

    def cancel(self):
        self._timer.cancel()

    def attach(self, conn):
        with self._lock:
            self._conn = conn
            expired = self.expired
        if expired:
            _shutdown(conn)

    def _expire(self):
        with self._lock:
            self.expired = True
            conn = self._conn
        if conn is not None:
            _shutdown(conn)

    def message(self):
        return ('no complete answer within the deadline of %ss for the whole exchange (connect, TLS, '
                'authentication, queries)' % self.seconds)


def _shutdown(conn):
    sock = getattr(conn, '_sock', None)
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except (OSError, ValueError):
        pass


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

        _dbfleet_deadline = None

        def _read_bytes(self, num_bytes):
            # After the deadline every read fails at once (the socket may not have existed when it passed).
            if self._dbfleet_deadline is not None and self._dbfleet_deadline.expired:
                raise connection.pymysql.err.OperationalError(2013, self._dbfleet_deadline.message())
            return super()._read_bytes(num_bytes)
else:  # pragma: no cover - reported when connecting
    _Connection = None


def open_connection(params, timeout, deadline=None):
    """A PyMySQL connection with connect, read and write timeouts (seconds); raises connection.ConnectError.

    deadline: a Deadline for the whole exchange, attached before the first byte is read."""
    if connection.pymysql is None:
        raise connection.ConnectError('the PyMySQL library is not installed for the controller\'s Python')
    try:
        refusal = connection.identity_refusal(params)
        # The TCP connect happens before there is a socket to shut down: it gets no longer than the deadline.
        connect_timeout = timeout if deadline is None else max(1, min(timeout, int(deadline.seconds)))
        kwargs = connection.connection_kwargs(dict(params, connect_timeout=connect_timeout))
    except ValueError as e:
        raise connection.ConnectError('cannot connect to %s: %s' % (connection.describe_target(params), e))
    if refusal:
        raise connection.ConnectError(refusal)
    kwargs.update(read_timeout=timeout, write_timeout=timeout)
    try:
        conn = _Connection(defer_connect=True, **kwargs)
        if deadline is not None:
            conn._dbfleet_deadline = deadline
            deadline.attach(conn)
        conn.connect()
        return conn
    except connection.pymysql.err.MySQLError as e:
        if deadline is not None and deadline.expired:
            raise connection.ConnectError('cannot connect to %s: %s' % (connection.describe_target(params), deadline.message()))
        raise connection.ConnectError('cannot connect to %s: %s'
                                      % (connection.describe_target(params), connection.error_text(e)))
    except (OSError, ValueError) as e:
        raise connection.ConnectError('cannot connect to %s: %s' % (connection.describe_target(params), e))
    except Exception as e:  # pylint: disable=broad-except  # a socket shut down mid-handshake (TLS) fails oddly
        if deadline is not None and deadline.expired:
            raise connection.ConnectError('cannot connect to %s: %s' % (connection.describe_target(params), deadline.message()))
        raise


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
               connect=None, upgrade_target=None, deadline=DEFAULT_DEADLINE, startup_cache=None,
               startup_cache_max_age=verify.DEFAULT_STARTUP_CACHE_MAX_AGE):
    """The verify result for one host, audited over one connection from the controller.

    settings: name -> desired value (merged over the roles' desired settings); roles: the roles whose
    desired state is worked out from role_variables and the server's facts (controller_roles()); notes:
    what the host's result says besides (its errors); upgrade_target: (flavor, version) of an upgrade target, whose
    blockers (information_schema.TABLES, SQL alone) are listed as in the per-host mode. Any failure is returned as dict(failed=True, msg=...),
    never raised. deadline: seconds for the whole exchange with the host (Deadline), however slowly it answers.
    startup_cache, startup_cache_max_age: the option-file state of the host's last per-host run (verify.audit())."""
    start = time.monotonic()
    target = connection.describe_target(params)
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
                              target=upgrade_target, **cache)
    except desired.InputError as e:
        return dict(failed=True, msg='invalid role input, nothing audited: %s' % '; '.join(e.messages),
                    connected_to=target, seconds=round(time.monotonic() - start, 3))
    except Exception as e:  # pylint: disable=broad-except  # one host's failure is that host's error item
        text = connection.error_text(e) if isinstance(e, _DB_ERRORS) else '%s: %s' % (type(e).__name__, e)
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
    """Counts of hosts: ok, startup_unknown (no drift, but a variable whose restart value is not known), drift,
    error."""
    out = dict(hosts=len(results), hosts_ok=0, hosts_startup_unknown=0, hosts_drift=0, hosts_error=0)
    for result in results.values():
        if result.get('failed'):
            out['hosts_error'] += 1
        elif result.get('drift'):
            out['hosts_drift'] += 1
        elif (result.get('summary') or {}).get(verify.STARTUP_UNKNOWN):
            out['hosts_startup_unknown'] += 1
        else:
            out['hosts_ok'] += 1
    return out
