# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller audit's hosts run at once: a bounded pool of threads (run_pool(), one result per host, a host's
failure its own), dealt out over worker processes (run_workers(): each with its share of the hosts and of the pool,
results streamed back through a pipe as each host completes; a process that ends early fails only the hosts it did
not pass back). audit/fleet_capacity.py sizes both.
"""

from __future__ import annotations

import os
import pickle
import selectors
import signal
import struct
import threading
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_deadline
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_wire
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit.fleet_capacity import AUTO_POOL

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
_FRAME = struct.Struct('>I')
_NOT_PREPARED = 'not audited: no job was prepared for this host'


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
    fleet_deadline.after_fork()
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
