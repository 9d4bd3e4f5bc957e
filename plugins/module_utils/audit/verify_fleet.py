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

import heapq
import itertools
import os
import pickle
import resource
import selectors
import signal
import socket
import struct
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import describe_target, is_loopback
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.tls import identity_note, identity_refusal
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import error_text
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_wire
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import catalog as flavor_data

_DB_ERRORS = (connection.pymysql.err.MySQLError,) if connection.pymysql is not None else ()

DEFAULT_TIMEOUT = 10
# Hosts in flight when `pool` is not given: as many as the controller can hold (controller_capacity()), at
# most AUTO_POOL. A host's exchange is 10-13 round trips (TCP, greeting, TLS, authentication, five queries:
# 1.3 s at 100 ms RTT) and costs the controller 6-9 ms of CPU, so about 150 hosts a second per core: more
# than ~500 in flight adds only waiting in the controller, which counts against each host's deadline
# (Little's law; bench/verify_fleet/README.md has the measurements).
AUTO_POOL = 512
DEFAULT_POOL = None
# An explicit pool is checked against this range first, then against what the controller can hold.
MAX_POOL = 65536
# Each host in flight holds a thread, a socket (one file descriptor) and its answers in memory (about
# 0.17 MiB measured at 256 in flight; counted three times over) and a connection on its server.
FILES_RESERVED = 64
MEMORY_PER_HOST = 512 * 1024
THREADS_RESERVED = 32
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


def _read_number(path, field=None):
    try:
        with open(path) as handle:
            if field is None:
                return int(handle.read().split()[0])
            for line in handle:
                if line.startswith(field + ':'):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def controller_limits():
    """What this controller process can hold: dict(files, files_open, memory, threads, threads_running).

    files: the soft limit of open files (ulimit -n); memory: MemAvailable of /proc/meminfo (bytes); threads:
    the soft limit of processes and threads (ulimit -u) or the kernel's threads-max, the lower; None where
    not known (no limit)."""
    def soft(limit):
        value = resource.getrlimit(limit)[0]
        return None if value == resource.RLIM_INFINITY else value

    try:
        files_open = len(os.listdir('/proc/self/fd'))
    except OSError:
        files_open = 16
    threads = [t for t in (soft(resource.RLIMIT_NPROC), _read_number('/proc/sys/kernel/threads-max')) if t]
    return dict(files=soft(resource.RLIMIT_NOFILE), files_open=files_open,
                memory=_read_number('/proc/meminfo', 'MemAvailable'),
                threads=min(threads) if threads else None, threads_running=threading.active_count())


def controller_capacity(limits):
    """(hosts, reason): how many hosts the controller can have in flight, and what bounds it.

    One file descriptor and one thread per host in flight, MEMORY_PER_HOST of half the available memory;
    FILES_RESERVED descriptors and THREADS_RESERVED threads are left to the rest of the controller."""
    bounds = []
    if limits.get('files') is not None:
        bounds.append((limits['files'] - limits.get('files_open', 0) - FILES_RESERVED,
                       'open files: ulimit -n %d, %d open' % (limits['files'], limits.get('files_open', 0))))
    if limits.get('memory') is not None:
        bounds.append((limits['memory'] // 2 // MEMORY_PER_HOST,
                       'memory: %d MiB available, %d KiB per host in flight counted against half of it'
                       % (limits['memory'] // (1 << 20), MEMORY_PER_HOST // 1024)))
    if limits.get('threads') is not None:
        bounds.append((limits['threads'] - limits.get('threads_running', 0) - THREADS_RESERVED,
                       'threads: at most %d, %d running' % (limits['threads'], limits.get('threads_running', 0))))
    if not bounds:
        return MAX_POOL, 'no limit known'
    hosts, reason = min(bounds)
    return max(0, hosts), reason


def pool_size(pool, hosts, limits=None):
    """(size, error): how many of `hosts` hosts to audit at once.

    pool None: min(what the controller can hold, AUTO_POOL, hosts). An explicit pool beyond what the
    controller can hold is an error naming the bound (nothing is read); otherwise min(pool, hosts)."""
    held, reason = controller_capacity(controller_limits() if limits is None else limits)
    if held < 1:
        return 0, 'the controller cannot hold one more connection (%s)' % reason
    if pool is None:
        return max(1, min(held, AUTO_POOL, hosts)), None
    if pool > held:
        return 0, ('pool %d is more hosts at once than this controller can hold: at most %d (%s); lower pool, '
                   'or leave it unset' % (pool, held, reason))
    return max(1, min(pool, hosts)), None


class _Watch(object):
    """One thread for every host's deadline: a heap of (due, seq, Deadline), woken when the earliest is due.

    A thread per host (threading.Timer) doubled the controller's threads for a large pool; this one thread
    expires each Deadline at its time, however many hosts are in flight."""

    def __init__(self):
        self._heap = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._thread = None
        self._pid = None

    def add(self, deadline, due):
        with self._cond:
            if self._thread is None or not self._thread.is_alive() or self._pid != os.getpid():
                self._heap = [entry for entry in self._heap if not entry[2].cancelled]
                self._thread = threading.Thread(target=self._run, name='verify_fleet-deadlines', daemon=True)
                self._pid = os.getpid()
                self._thread.start()
            heapq.heappush(self._heap, (due, next(self._seq), deadline))
            if self._heap[0][2] is deadline:
                self._cond.notify()

    def _run(self):
        while True:
            with self._cond:
                while True:
                    while self._heap and self._heap[0][2].cancelled:
                        heapq.heappop(self._heap)
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    if wait is not None and wait <= 0:
                        deadline = heapq.heappop(self._heap)[2]
                        break
                    self._cond.wait(wait)
            deadline._expire()        # outside the lock: shutting a socket down may take a moment


_WATCH = _Watch()


class Deadline(object):
    """The end of one host's whole exchange: when it passes, the connection's socket is shut down.

    A server that trickles a byte every few seconds never trips a per-read timeout; shutting the socket
    down wakes whatever read (TCP connect, TLS handshake, authentication, query) is waiting on it, and
    every later read of the connection fails at once (fleet_wire.FleetConnection._read_packet). One thread (_Watch) keeps
    every host's deadline."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.expired = False
        self.cancelled = False
        self._conn = None
        self._lock = threading.Lock()

    def start(self):
        _WATCH.add(self, time.monotonic() + self.seconds)
        return self

    def cancel(self):
        self.cancelled = True

    def attach(self, conn):
        with self._lock:
            self._conn = conn
            expired = self.expired
        if expired:
            _shutdown(conn)

    def _expire(self):
        with self._lock:
            if self.cancelled:
                return
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


def open_connection(params, timeout, deadline=None):
    """A PyMySQL connection with connect, read and write timeouts (seconds); raises connection.ConnectError.

    deadline: a Deadline for the whole exchange, attached before the first byte is read."""
    if connection.pymysql is None:
        raise connection.ConnectError('the PyMySQL library is not installed for the controller\'s Python')
    try:
        refusal = identity_refusal(params)
        # The TCP connect happens before there is a socket to shut down: it gets no longer than the deadline.
        connect_timeout = timeout if deadline is None else max(1, min(timeout, int(deadline.seconds)))
        kwargs = connection.connection_kwargs(dict(params, connect_timeout=connect_timeout))
    except ValueError as e:
        raise connection.ConnectError('cannot connect to %s: %s' % (describe_target(params), e))
    if refusal:
        raise connection.ConnectError(refusal)
    kwargs.update(read_timeout=timeout, write_timeout=timeout)
    try:
        conn = fleet_wire.FleetConnection(defer_connect=True, **kwargs)
        if deadline is not None:
            conn._dbfleet_deadline = deadline
            deadline.attach(conn)
        conn.connect()
        return conn
    except connection.pymysql.err.MySQLError as e:
        if deadline is not None and deadline.expired:
            raise connection.ConnectError('cannot connect to %s: %s' % (describe_target(params), deadline.message()))
        raise connection.ConnectError('cannot connect to %s: %s'
                                      % (describe_target(params), error_text(e)))
    except (OSError, ValueError) as e:
        raise connection.ConnectError('cannot connect to %s: %s' % (describe_target(params), e))
    except Exception:  # pylint: disable=broad-except  # a socket shut down mid-handshake (TLS) fails oddly
        if deadline is not None and deadline.expired:
            raise connection.ConnectError('cannot connect to %s: %s' % (describe_target(params), deadline.message()))
        raise


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


# ---------------------------------------------------------------- the pool
# The stack of each pool thread: PyMySQL, ssl and verify.audit() stay far below it (Python frames live on
# the heap); the default (8 MiB of address space each) is not needed for thousands of threads.
THREAD_STACK = 1 << 20


def run_pool(jobs, worker, pool=AUTO_POOL, on_result=None):
    """{name: worker(job)} for jobs ({name: job}), at most `pool` at a time (pool_size() sizes it).

    A worker that raises gives dict(failed=True, msg=...) for its host; the others complete. on_result(name,
    outcome), if given, is called for each host as it completes (one at a time) instead of keeping the
    results: the dict returned is then empty."""
    results = {}
    lock = threading.Lock()

    def one(name, job):
        try:
            outcome = worker(job)
        except Exception as e:  # pylint: disable=broad-except
            outcome = dict(failed=True, msg='%s: %s' % (type(e).__name__, e))
        with lock:
            if on_result is None:
                results[name] = outcome
            else:
                on_result(name, outcome)

    if not jobs:
        return results
    previous = threading.stack_size(THREAD_STACK)
    try:
        with ThreadPoolExecutor(max_workers=max(1, min(int(pool), len(jobs)))) as executor:
            for name, job in jobs.items():
                executor.submit(one, name, job)
    finally:
        threading.stack_size(previous)
    return results


# ---------------------------------------------------------------- worker processes
# One process audits at most one core's worth of hosts: a host costs the controller 4-7 ms of CPU (TLS, the
# protocol, verify.audit()), under one GIL per process. `workers` processes, each with its share of the
# hosts and of the pool, use as many cores. Below this many hosts per process a fork costs more than it saves.
MIN_HOSTS_PER_WORKER = 64
MAX_WORKERS = 256
_FRAME = struct.Struct('>I')
_NOT_PREPARED = 'not audited: no job was prepared for this host'


def usable_cpus():
    """The CPUs this process may run on (its affinity mask; os.cpu_count() where that is not known)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_count(workers, hosts, cpus=None):
    """(count, error): how many worker processes audit `hosts` hosts.

    workers None: one per usable CPU, with at least MIN_HOSTS_PER_WORKER hosts each (1 for a small fleet);
    set: 1 to MAX_WORKERS (an error otherwise), no more than the hosts. 1 means no extra process."""
    if workers is not None:
        if not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= MAX_WORKERS:
            return 0, 'workers must be 1-%d; got %r' % (MAX_WORKERS, workers)
        return max(1, min(workers, hosts)), None
    cpus = usable_cpus() if cpus is None else cpus
    return max(1, min(cpus, hosts // MIN_HOSTS_PER_WORKER)), None


def shard(names, count):
    """`names` dealt out over `count` shards in turn (hosts next to each other in the inventory, often on one
    site or one server, spread over every worker)."""
    return [names[i::count] for i in range(count)]


def _send(fd, name, outcome):
    try:
        data = pickle.dumps((name, outcome), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # pylint: disable=broad-except  # a value that does not pickle: that host's error
        data = pickle.dumps((name, dict(failed=True, msg='the result could not be passed back from its worker '
                                        'process: %s: %s' % (type(e).__name__, e))), protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_FRAME.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _child(jobs, worker, pool, fd, prepare=None):
    """In a worker process: a fresh deadline thread and lock (a fork keeps neither's state safely), the
    shard's jobs prepared (prepare()), its hosts audited, each result written to fd as it completes."""
    global _WATCH  # pylint: disable=global-statement
    _WATCH = _Watch()
    if fleet_wire.FleetConnection is not None:
        fleet_wire.FleetConnection._lock = threading.Lock()
    if prepare is not None:
        jobs, early = prepare(jobs)
        for name, outcome in early.items():
            _send(fd, name, outcome)
    run_pool(jobs, worker, pool, on_result=lambda name, outcome: _send(fd, name, outcome))


def _frames(buffer):
    """(decoded (name, outcome) frames, the bytes left) of a worker's stream."""
    out = []
    while len(buffer) >= _FRAME.size:
        size = _FRAME.unpack_from(buffer)[0]
        if len(buffer) < _FRAME.size + size:
            break
        out.append(pickle.loads(bytes(buffer[_FRAME.size:_FRAME.size + size])))
        del buffer[:_FRAME.size + size]
    return out


def _exit_text(status):
    if os.WIFSIGNALED(status):
        return 'killed by signal %d' % os.WTERMSIG(status)
    return 'exit code %d' % os.WEXITSTATUS(status)


def run_workers(jobs, worker, pool=AUTO_POOL, workers=1, prepare=None):
    """{name: worker(job)} for jobs, in the order of jobs: the hosts dealt out over `workers` processes
    (shard()), each running run_pool() over its share with its share of `pool`, results streamed back
    through a pipe as each host completes and merged here.

    prepare: called with each share of jobs ({name: job}) in its own process, in one thread, before the pool
    starts: returns (jobs for the pool, {name: result} of hosts done already, such as input errors). Work that
    is not safe in threads and costs CPU per host (reading each host's inputs) then runs on every core.
    workers 1 (or one job): prepare and run_pool() in this process. A worker process that ends before passing back all
    its hosts (killed, out of memory) gives each host it did not pass back dict(failed=True, msg=...) naming
    the process and how it ended; the other processes' hosts complete."""
    names = list(jobs)
    count = max(1, min(int(workers), len(names)))
    if count == 1:
        early = {}
        if prepare is not None:
            jobs, early = prepare(jobs)
        results = run_pool(jobs, worker, pool)
        results.update(early)
        return dict((name, results.get(name) or dict(failed=True, msg=_NOT_PREPARED)) for name in names)
    shares = shard(names, count)
    share_pool = max(1, -(-int(pool) // count))
    children = {}
    results = {}
    selector = selectors.DefaultSelector()
    try:
        for index, share in enumerate(shares):
            read_fd, write_fd = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child's coverage is its results
                code = 0
                try:
                    os.close(read_fd)
                    for other in children.values():
                        os.close(other['fd'])
                    _child(dict((name, jobs[name]) for name in share), worker, share_pool, write_fd, prepare)
                except BaseException:  # pylint: disable=broad-except
                    code = 1
                finally:
                    os._exit(code)  # pylint: disable=protected-access  # no atexit of the parent in a child
            os.close(write_fd)
            children[pid] = dict(fd=read_fd, index=index, share=share, buffer=bytearray())
            selector.register(read_fd, selectors.EVENT_READ, pid)
        open_pipes = len(children)
        while open_pipes:
            for key, _events in selector.select():
                child = children[key.data]
                data = os.read(key.fd, 1 << 16)
                if data:
                    child['buffer'] += data
                    for name, outcome in _frames(child['buffer']):
                        results[name] = outcome
                    continue
                selector.unregister(key.fd)
                os.close(key.fd)
                child['fd'] = None
                open_pipes -= 1
                child['status'] = os.waitpid(key.data, 0)[1]
                child['reaped'] = True
    finally:
        selector.close()
        for pid, child in children.items():
            if child.get('fd') is not None:
                os.close(child['fd'])
            if not child.get('reaped'):
                try:
                    os.kill(pid, signal.SIGTERM)
                    child['status'] = os.waitpid(pid, 0)[1]
                except OSError:
                    child['status'] = 0
    for pid, child in children.items():
        for name in child['share']:
            if name in results:
                continue
            if child['status'] == 0:
                results[name] = dict(failed=True, msg=_NOT_PREPARED)
            else:
                results[name] = dict(failed=True, msg='the audit worker process %d of %d (pid %d) ended (%s) before it '
                                     'passed back this host\'s result'
                                     % (child['index'] + 1, count, pid, _exit_text(child['status'])))
    return dict((name, results[name]) for name in names)


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
