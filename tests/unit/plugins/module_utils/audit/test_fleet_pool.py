# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller audit's hosts run at once (audit/fleet_pool.py): the bounded pool, one failure that host's error,
the worker processes (hosts dealt out in turn, merged in host order, each share prepared in its own process, a
process that dies failing only the hosts it did not pass back, the stream of results cut anywhere)."""

from __future__ import annotations

import threading
import time

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_pool as fp
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify_fleet


# ---------------------------------------------------------------- the pool
def test_pool_is_bounded_and_one_failure_is_that_hosts_error():
    running, peak, lock = [0], [0], threading.Lock()

    def worker(job):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            time.sleep(0.02)
            if job == 'boom':
                raise RuntimeError('kaput')
            return dict(failed=False, drift=job == 'drift')
        finally:
            with lock:
                running[0] -= 1

    jobs = dict(('h%02d' % i, 'ok') for i in range(40))
    jobs['h07'] = 'boom'
    jobs['h08'] = 'drift'
    results = fp.run_pool(jobs, worker, pool=5)
    assert sorted(results) == sorted(jobs)
    assert peak[0] <= 5
    assert results['h07'] == dict(failed=True, msg='RuntimeError: kaput')
    assert verify_fleet.summarize(results) == dict(hosts=40, hosts_ok=38, hosts_startup_unknown=0, hosts_drift=1, hosts_error=1)


def test_pool_with_no_jobs():
    assert fp.run_pool({}, lambda job: job) == {}


# ---------------------------------------------------------------- worker processes
def test_shard_deals_hosts_out_in_turn():
    names = ['h%d' % i for i in range(7)]
    shares = fp.shard(names, 3)
    assert shares == [['h0', 'h3', 'h6'], ['h1', 'h4'], ['h2', 'h5']]
    assert sorted(n for share in shares for n in share) == sorted(names)


def test_run_workers_merges_every_process_in_host_order():
    import os
    names = ['db%03d' % i for i in range(50)]
    jobs = dict((name, i) for i, name in enumerate(reversed(names)))

    def worker(job):
        if job == 7:
            raise ValueError('bad host')
        return dict(value=job * 2, pid=os.getpid())

    results = fp.run_workers(jobs, worker, pool=8, workers=3)
    assert list(results) == list(jobs)                       # the order of the jobs, not of completion
    assert results[names[-8]] == dict(failed=True, msg='ValueError: bad host')
    assert all(results[n]['value'] == jobs[n] * 2 for n in names if jobs[n] != 7)
    pids = set(r['pid'] for r in results.values() if 'pid' in r)
    assert len(pids) == 3 and os.getpid() not in pids


def test_run_workers_one_worker_stays_in_this_process():
    import os
    results = fp.run_workers({'a': 1, 'b': 2}, lambda job: dict(pid=os.getpid(), job=job), pool=4, workers=1)
    assert results == {'a': dict(pid=os.getpid(), job=1), 'b': dict(pid=os.getpid(), job=2)}


def test_a_worker_process_that_dies_fails_only_the_hosts_it_did_not_pass_back():
    import os
    jobs = dict(('h%d' % i, i) for i in range(6))      # workers 2: h0 h2 h4 | h1 h3 h5

    def worker(job):
        if job == 3:
            os._exit(9)       # the process ends mid-audit (as the kernel's OOM killer would end it)
        if job == 5:
            time.sleep(0.5)   # still in flight when its process ends
        return dict(ok=job)

    results = fp.run_workers(jobs, worker, pool=1, workers=2)
    assert [results['h%d' % i] for i in (0, 2, 4)] == [dict(ok=0), dict(ok=2), dict(ok=4)]
    assert results['h1'] == dict(ok=1)                 # passed back before its process ended
    for name in ('h3', 'h5'):
        assert results[name]['failed'] is True
        assert 'worker process 2 of 2' in results[name]['msg'] and 'exit code 9' in results[name]['msg']


def test_a_result_that_does_not_pickle_is_that_hosts_error():
    results = fp.run_workers({'a': 1, 'b': 2}, lambda job: dict(value=(lambda: job) if job == 2 else job),
                             pool=2, workers=2)
    assert results['a'] == dict(value=1)
    assert results['b']['failed'] is True and 'could not be passed back' in results['b']['msg']


def test_run_pool_streams_results_when_asked():
    seen = []
    assert fp.run_pool({'a': 1, 'b': 2}, lambda job: job + 1, pool=2, on_result=lambda n, o: seen.append((n, o))) == {}
    assert sorted(seen) == [('a', 2), ('b', 3)]


def test_frames_decode_a_stream_cut_anywhere():
    import pickle
    stream = b''
    for item in (('a', {'x': 1}), ('b', {'y': [2, 3]})):
        data = pickle.dumps(item)
        stream += fp._FRAME.pack(len(data)) + data
    for cut in range(len(stream) + 1):
        buffer, got = bytearray(stream[:cut]), []
        got.extend(fp._frames(buffer))
        buffer += stream[cut:]
        got.extend(fp._frames(buffer))
        assert got == [('a', {'x': 1}), ('b', {'y': [2, 3]})] and not buffer


@pytest.mark.parametrize('workers', [1, 3])
def test_run_workers_prepares_each_share_in_its_own_process(workers):
    import os
    names = ['h%02d' % i for i in range(12)]
    prepared_in = {}

    def prepare(share):
        jobs, early = {}, {}
        for name in share:
            if name == 'h05':
                early[name] = dict(failed=True, msg='cannot read the host variables')
            elif name != 'h07':                      # h07: no job and no result
                jobs[name] = (name, os.getpid())
        return jobs, early

    results = fp.run_workers(dict((n, n) for n in names), lambda job: dict(host=job[0], prepared_pid=job[1],
                                                                           audit_pid=os.getpid()),
                             pool=4, workers=workers, prepare=prepare)
    assert list(results) == names
    assert results['h05'] == dict(failed=True, msg='cannot read the host variables')
    assert results['h07'] == dict(failed=True, msg=fp._NOT_PREPARED)
    audited = [r for n, r in results.items() if n not in ('h05', 'h07')]
    assert all(r['prepared_pid'] == r['audit_pid'] for r in audited)
    prepared_in = set(r['prepared_pid'] for r in audited)
    assert len(prepared_in) == workers and (os.getpid() in prepared_in) == (workers == 1)
