# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How many hosts the controller audits at once, and in how many processes: what this controller process can hold
(open files, memory, threads: controller_limits(), controller_capacity()), the pool size checked against it
(pool_size()), and the worker processes, one per usable CPU with enough hosts each (worker_count()).
"""

from __future__ import annotations

import os
import resource
import threading

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


# One process audits at most one core's worth of hosts: a host costs the controller 4-7 ms of CPU (TLS, the
# protocol, verify.audit()), under one GIL per process. `workers` processes, each with its share of the
# hosts and of the pool, use as many cores. Below this many hosts per process a fork costs more than it saves.
MIN_HOSTS_PER_WORKER = 64
MAX_WORKERS = 256


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
