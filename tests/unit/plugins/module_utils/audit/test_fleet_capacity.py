# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How many hosts at once and in how many processes (audit/fleet_capacity.py): the controller's capacity is its
lowest bound, the pool size checked against it, the limits read from this process, the worker count."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_capacity as fc


# ---------------------------------------------------------------- how many at once
LIMITS = dict(files=20000, files_open=40, memory=64 << 30, threads=60000, threads_running=3)


@pytest.mark.parametrize('limits,held,bound', [
    (LIMITS, 20000 - 40 - fc.FILES_RESERVED, 'open files: ulimit -n 20000, 40 open'),
    (dict(LIMITS, files=1024), 1024 - 40 - fc.FILES_RESERVED, 'open files: ulimit -n 1024'),
    (dict(LIMITS, memory=1 << 30), (1 << 30) // 2 // fc.MEMORY_PER_HOST, 'memory: 1024 MiB available'),
    (dict(LIMITS, threads=500), 500 - 3 - fc.THREADS_RESERVED, 'threads: at most 500, 3 running'),
    (dict(files=None, memory=None, threads=None), fc.MAX_POOL, 'no limit known'),
    (dict(LIMITS, files=80), 0, 'open files: ulimit -n 80, 40 open'),
])
def test_the_controller_capacity_is_its_lowest_bound(limits, held, bound):
    hosts, reason = fc.controller_capacity(limits)
    assert hosts == held
    assert reason.startswith(bound), reason


@pytest.mark.parametrize('pool,hosts,limits,size,error', [
    (None, 10000, LIMITS, fc.AUTO_POOL, None),                  # unset: as many as held, at most AUTO_POOL
    (None, 40, LIMITS, 40, None),                               # never more threads than hosts
    (None, 10000, dict(LIMITS, files=300), 300 - 40 - fc.FILES_RESERVED, None),
    (2000, 10000, LIMITS, 2000, None),                          # explicit: beyond AUTO_POOL when it fits
    (2000, 10, LIMITS, 10, None),
    (5000, 10000, dict(LIMITS, files=1024), 0,
     'pool 5000 is more hosts at once than this controller can hold: at most 920 (open files: ulimit -n 1024, 40 open)'),
    (None, 10, dict(LIMITS, files=100), 0, 'the controller cannot hold one more connection (open files'),
])
def test_pool_size(pool, hosts, limits, size, error):
    got, problem = fc.pool_size(pool, hosts, limits)
    assert got == size
    if error is None:
        assert problem is None
    else:
        assert problem.startswith(error), problem


def test_the_controller_limits_are_read_from_this_process():
    limits = fc.controller_limits()
    assert limits['files'] is None or limits['files'] >= limits['files_open'] > 0
    assert limits['memory'] is None or limits['memory'] > 0
    assert limits['threads_running'] >= 1


def test_worker_count_one_per_cpu_with_enough_hosts_each():
    assert fc.worker_count(None, 10000, cpus=2) == (2, None)
    assert fc.worker_count(None, 10000, cpus=1) == (1, None)
    # a small fleet: a fork would cost more than it saves
    assert fc.worker_count(None, fc.MIN_HOSTS_PER_WORKER * 2 - 1, cpus=8) == (1, None)
    assert fc.worker_count(None, fc.MIN_HOSTS_PER_WORKER * 3, cpus=8) == (3, None)
    assert fc.worker_count(None, 0, cpus=4) == (1, None)


def test_explicit_worker_count_wins_and_is_checked():
    assert fc.worker_count(3, 10, cpus=1) == (3, None)
    assert fc.worker_count(8, 5, cpus=1) == (5, None)
    for bad in (0, -1, fc.MAX_WORKERS + 1, True, '2'):
        count, error = fc.worker_count(bad, 100, cpus=2)
        assert count == 0 and error.startswith('workers must be 1-%d' % fc.MAX_WORKERS), bad
