# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""verify_fleet: the controller's login per host, the bounded pool, the per-host timeout, errors isolated."""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import describe_target, resolve_login
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_wire
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify_fleet as fa
from ansible_collections.dbfleet.innodb.plugins.module_utils.host.process import local_process
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify


# ---------------------------------------------------------------- controller_login
def test_socket_and_option_file_are_never_used_from_the_controller():
    params, notes = fa.controller_login(
        dict(login_user='u', login_password='secret', login_unix_socket='/run/mysqld/mysqld.sock',
             config_file='/root/.my.cnf'),
        dict(ansible_host='10.0.0.5', ansible_connection='ssh'), 'db1')
    assert params['login_host'] == '10.0.0.5'
    assert 'login_unix_socket' not in params
    assert params['config_file'] is None
    assert any('/root/.my.cnf' in n and 'not read' in n for n in notes)
    assert any('socket /run/mysqld/mysqld.sock' in n and '10.0.0.5' in n for n in notes)
    assert not any('secret' in n for n in notes)


def test_loopback_login_host_means_the_host_itself_unless_it_is_the_controller():
    remote, _notes = fa.controller_login(dict(login_host='127.0.0.1', login_port=3307), {}, 'db2.example')
    assert remote['login_host'] == 'db2.example'          # no ansible_host: the inventory name
    assert remote['login_port'] == 3307
    local, notes = fa.controller_login(dict(login_host='127.0.0.1'), dict(ansible_connection='local'), 'lab1')
    assert local['login_host'] == '127.0.0.1' and notes == []


def test_a_host_behind_the_controllers_loopback_is_refused_unless_the_login_host_names_it():
    for host_vars in (dict(ansible_host='127.0.0.1', ansible_port=2222), dict(ansible_host='::1'), {}):
        name = 'localhost' if not host_vars else 'db7'
        with pytest.raises(ValueError, match="reached through the controller's own loopback") as refused:
            fa.controller_login(dict(login_user='u', login_password='secret'), host_vars, name)
        assert 'dbfleet_login_host' in str(refused.value) and 'secret' not in str(refused.value)
    named, _notes = fa.controller_login(dict(login_host='127.0.0.1', login_port=13306),
                                        dict(ansible_host='127.0.0.1'), 'db7')
    assert (named['login_host'], named['login_port']) == ('127.0.0.1', 13306)
    local, _notes = fa.controller_login({}, dict(ansible_host='127.0.0.1', ansible_connection='local'), 'lab1')
    assert local['login_host'] == '127.0.0.1'


def test_a_real_login_host_is_kept():
    params, notes = fa.controller_login(dict(login_host='db3.internal'), dict(ansible_host='10.9.9.9'), 'db3')
    assert params['login_host'] == 'db3.internal' and notes == []


def test_no_login_host_on_a_remote_host_uses_ansible_host():
    params, _notes = fa.controller_login({}, dict(ansible_host='10.0.0.7'), 'db4')
    assert params['login_host'] == '10.0.0.7'
    # resolve_login() then reads no option file of the controller
    assert resolve_login(params)['host'] == '10.0.0.7'


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
    results = fa.run_pool(jobs, worker, pool=5)
    assert sorted(results) == sorted(jobs)
    assert peak[0] <= 5
    assert results['h07'] == dict(failed=True, msg='RuntimeError: kaput')
    assert fa.summarize(results) == dict(hosts=40, hosts_ok=38, hosts_startup_unknown=0, hosts_drift=1, hosts_error=1)


def test_pool_with_no_jobs():
    assert fa.run_pool({}, lambda job: job) == {}


# ---------------------------------------------------------------- one host
class FakeConn(object):
    def __init__(self):
        self.closed = False

    def close(self):
        self.closed = True


def test_unreachable_host_is_an_error_item_with_the_target_and_no_password():
    def refuse(params, timeout, deadline=None):
        raise connection.ConnectError('cannot connect to %s: (2003) refused' % describe_target(params))

    out = fa.audit_host(dict(login_host='10.0.0.9', login_port=3306, login_user='u', login_password='secret'),
                        {}, connect=refuse)
    assert out['failed'] is True
    assert out['connected_to'] == 'u@10.0.0.9:3306'
    assert 'secret' not in repr(out)


def test_bad_role_input_fails_that_host_and_closes_its_connection(monkeypatch):
    conn = FakeConn()

    def bad_input(*args, **kwargs):
        assert kwargs['proc_root'] is None and kwargs['desired_from'] == ['adaptive_hash']
        raise desired.InputError(['adaptive_hash: adaptive_hash_parts must be 1-512; got 1000'])
    monkeypatch.setattr(verify, 'audit', bad_input)
    out = fa.audit_host(dict(login_host='h'), {}, ['adaptive_hash'], dict(adaptive_hash_parts=1000),
                        connect=lambda params, timeout, deadline=None: conn)
    assert out['failed'] and 'adaptive_hash_parts must be 1-512' in out['msg']
    assert conn.closed


def test_an_exception_while_auditing_is_that_hosts_error(monkeypatch):
    conn = FakeConn()

    def broken(*args, **kwargs):
        raise KeyError('version')
    monkeypatch.setattr(verify, 'audit', broken)
    out = fa.audit_host(dict(login_host='h', login_port=1), {}, connect=lambda params, timeout, deadline=None: conn)
    assert out['failed'] and 'KeyError' in out['msg'] and conn.closed


def test_open_connection_passes_the_timeout_for_connect_read_and_write(monkeypatch):
    seen = {}

    class Fake(object):
        def __init__(self, **kwargs):
            seen.update(kwargs)

        def connect(self):
            pass
    monkeypatch.setattr(fleet_wire, 'FleetConnection', Fake)
    fa.open_connection(dict(login_host='h', login_port=3306, login_user='u', config_file=None), 7)
    assert (seen['connect_timeout'], seen['read_timeout'], seen['write_timeout']) == (7, 7, 7)


def test_the_tcp_connect_gets_no_longer_than_the_deadline(monkeypatch):
    seen = {}

    class Fake(object):
        _sock = None

        def __init__(self, **kwargs):
            seen.update(kwargs)

        def connect(self):
            seen['connected'] = True
    monkeypatch.setattr(fleet_wire, 'FleetConnection', Fake)
    conn = fa.open_connection(dict(login_host='h', login_port=3306, login_user='u', config_file=None), 10,
                              fa.Deadline(3))
    assert (seen['connect_timeout'], seen['read_timeout'], seen['defer_connect'], seen['connected']) == (3, 10, True, True)
    assert conn._dbfleet_deadline.seconds == 3


def test_a_server_that_never_answers_times_out():
    """A real TCP listener that accepts and says nothing: the audit of that host ends after the timeout."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(('127.0.0.1', 0))
    listener.listen(5)
    port = listener.getsockname()[1]
    try:
        start = time.monotonic()
        out = fa.audit_host(dict(login_host='127.0.0.1', login_port=port, login_user='u', login_password='pw',
                                 config_file=None), {}, timeout=1)
        elapsed = time.monotonic() - start
    finally:
        listener.close()
    assert out['failed'] is True
    assert 'cannot connect to u@127.0.0.1:%d' % port in out['msg']
    assert elapsed < 5


# ---------------------------------------------------------------- the deadline per host
def _packet(seq, payload):
    return struct.pack('<I', len(payload))[:3] + bytes([seq]) + payload


def _greeting():
    caps = 0x0001 | 0x0200 | 0x2000 | 0x8000 | 0x80000     # long password, 4.1, transactions, secure conn, plugin auth
    return _packet(0, b'\x0a' + b'8.0.33-trickle\0' + struct.pack('<I', 7) + b'abcdefgh\0'
                   + struct.pack('<H', caps & 0xffff) + b'\x21' + struct.pack('<H', 2) + struct.pack('<H', caps >> 16)
                   + b'\x15' + b'\0' * 10 + b'ijklmnopqrst\0' + b'mysql_native_password\0')


class TricklingServer(object):
    """A fake server on loopback that sends one byte every `every` seconds and never finishes a packet:
    in the greeting (phase 'connect'), or after a real handshake and login, in the reply to the first
    query (phase 'query'). Each byte resets a per-read timeout; only a deadline ends the exchange."""

    def __init__(self, phase, every=0.3):
        self.phase, self.every = phase, every
        self.stop = threading.Event()
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(('127.0.0.1', 0))
        self.listener.listen(5)
        self.port = self.listener.getsockname()[1]
        self.bytes_sent = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _trickle(self, client, data):
        for i in range(len(data)):
            if self.stop.wait(self.every):
                return
            client.sendall(data[i:i + 1])
            self.bytes_sent += 1

    def _serve(self):
        self.listener.settimeout(10)
        try:
            client, _addr = self.listener.accept()
        except OSError:
            return
        try:
            if self.phase == 'connect':
                self._trickle(client, _greeting() * 100)
                return
            client.sendall(_greeting())
            client.recv(65536)                                  # the login
            client.sendall(_packet(2, b'\0\0\0' + struct.pack('<HH', 2, 0)))
            client.recv(65536)                                  # the first query
            self._trickle(client, _packet(1, b'\x01') + _packet(2, b'\x03def' * 400))
        except OSError:
            pass
        finally:
            client.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.listener.close()
        self.thread.join(5)


@pytest.mark.parametrize('phase', ['connect', 'query'])
def test_a_trickling_server_is_cut_off_at_the_deadline(phase):
    """One byte every 0.3 s never trips the 1 s read timeout; the 2 s deadline for the whole exchange ends it."""
    with TricklingServer(phase) as server:
        start = time.monotonic()
        out = fa.audit_host(dict(login_host='127.0.0.1', login_port=server.port, login_user='u', login_password='pw',
                                 config_file=None), {}, timeout=1, deadline=2)
        elapsed = time.monotonic() - start
    assert out['failed'] is True, out
    assert 'within the deadline of 2s for the whole exchange' in out['msg'], out
    assert 'pw' not in out['msg']
    assert server.bytes_sent >= 4            # it did keep talking, more slowly than the read timeout
    assert 1.9 <= elapsed < 3.5, elapsed


def test_the_deadline_covers_a_pool_of_tricklers():
    """Three trickling hosts with a pool of 3: the pool ends by the deadline, not by the servers."""
    servers = [TricklingServer('query') for _i in range(3)]
    for server in servers:
        server.__enter__()
    try:
        jobs = dict(('h%d' % i, server.port) for i, server in enumerate(servers))
        start = time.monotonic()
        results = fa.run_pool(jobs, lambda port: fa.audit_host(
            dict(login_host='127.0.0.1', login_port=port, login_user='u', config_file=None), {}, timeout=1,
            deadline=2), pool=3)
        elapsed = time.monotonic() - start
    finally:
        for server in servers:
            server.__exit__()
    assert all(r['failed'] and 'deadline of 2s' in r['msg'] for r in results.values()), results
    assert elapsed < 4, elapsed


@pytest.mark.parametrize('pool,timeout,deadline,error', [
    (32, 10, 60, None),
    (256, 3600, 3600, None),
    (None, 10, 60, None),
    (65536, 10, 60, None),
    (0, 10, 60, 'pool must be 1-65536; got 0'),
    (65537, 10, 60, 'pool must be 1-65536; got 65537'),
    (32, 0, 60, 'timeout must be 1-3600; got 0'),
    (32, 10, 86400, 'deadline must be 1-3600; got 86400'),
])
def test_limits(pool, timeout, deadline, error):
    errors = fa.check_limits(pool, timeout, deadline)
    assert errors == ([] if error is None else [error])


def test_host_file_paths_are_never_used_from_the_controller():
    params, notes = fa.controller_login(
        dict(login_host='db5.internal', ca_cert='/etc/mysql/ca.pem', client_cert='/etc/mysql/client.pem',
             client_key='/etc/mysql/client-key.pem', check_hostname=True), {}, 'db5')
    assert not any(k in params for k in ('ca_cert', 'client_cert', 'client_key'))
    assert params['check_hostname'] is True
    for path in ('/etc/mysql/ca.pem', '/etc/mysql/client.pem', '/etc/mysql/client-key.pem'):
        assert any(path in n and 'not read from the controller' in n for n in notes), notes


# ---------------------------------------------------------------- desired state and notes
def test_flush_neighbors_only_with_a_storage_class_and_storage_is_never_inspected():
    roles, notes = fa.controller_roles(['adaptive_hash', 'flush_neighbors'], dict(adaptive_hash_enabled=False))
    assert roles == ['adaptive_hash'] and notes == [fa.storage_note("flush_neighbors")]
    assert notes[0].startswith("flush_neighbors: ") and "set flush_neighbors_storage_class to audit" in notes[0]
    roles, notes = fa.controller_roles(['flush_neighbors'], dict(flush_neighbors_storage_class='hdd'))
    assert roles == ['flush_neighbors'] and notes == []
    found = fa.storage_not_inspected('/var/lib/mysql', True)
    assert found['storage_class'] == 'unknown' and 'not inspected' in found['reasons'][0]
    facts = dict(flavor='mysql', version=[8, 0, 33], version_text='8.0.33', datadir='/var/lib/mysql',
                 capabilities={}, variables=dict(innodb_flush_neighbors=dict(exists=True, settable=True,
                                                                             runtime='0')))
    state = desired.for_role('flush_neighbors', dict(flush_neighbors_storage_class='hdd'), facts,
                             fa.storage_not_inspected)
    assert state['settings'] == dict(innodb_flush_neighbors=1)


@pytest.mark.parametrize('item, fragment', [
    (dict(startup=dict(state='known')), None),
    (dict(startup=dict(state='unavailable'), origin=None), 'only the running value was checked'),
    (dict(startup=dict(state='unavailable'), origin='COMPILED'), 'compiled-in default when it started'),
    (dict(startup=dict(state='unavailable'), origin='EXPLICIT', origin_path='/etc/my.cnf'),
     'an option file (/etc/my.cnf) when it started'),
    (dict(startup=dict(state='unavailable'), origin='SQL'), 'set at runtime'),
])
def test_startup_notes_say_what_sql_tells_and_what_it_does_not(item, fragment):
    notes = fa.startup_notes(item)
    if fragment is None:
        assert notes == []
    else:
        assert len(notes) == 1 and fragment in notes[0]


def test_local_process_is_never_read_from_the_controller(tmp_path):
    pid_file = tmp_path / 'mysqld.pid'
    pid_file.write_text('1\n')
    process, reason = local_process(dict(pid_file=str(pid_file)), dict(login_host='127.0.0.1'),
                                    proc_root=None)
    assert process is None and 'controller' in reason


# ---------------------------------------------------------------- how many at once
LIMITS = dict(files=20000, files_open=40, memory=64 << 30, threads=60000, threads_running=3)


@pytest.mark.parametrize('limits,held,bound', [
    (LIMITS, 20000 - 40 - fa.FILES_RESERVED, 'open files: ulimit -n 20000, 40 open'),
    (dict(LIMITS, files=1024), 1024 - 40 - fa.FILES_RESERVED, 'open files: ulimit -n 1024'),
    (dict(LIMITS, memory=1 << 30), (1 << 30) // 2 // fa.MEMORY_PER_HOST, 'memory: 1024 MiB available'),
    (dict(LIMITS, threads=500), 500 - 3 - fa.THREADS_RESERVED, 'threads: at most 500, 3 running'),
    (dict(files=None, memory=None, threads=None), fa.MAX_POOL, 'no limit known'),
    (dict(LIMITS, files=80), 0, 'open files: ulimit -n 80, 40 open'),
])
def test_the_controller_capacity_is_its_lowest_bound(limits, held, bound):
    hosts, reason = fa.controller_capacity(limits)
    assert hosts == held
    assert reason.startswith(bound), reason


@pytest.mark.parametrize('pool,hosts,limits,size,error', [
    (None, 10000, LIMITS, fa.AUTO_POOL, None),                  # unset: as many as held, at most AUTO_POOL
    (None, 40, LIMITS, 40, None),                               # never more threads than hosts
    (None, 10000, dict(LIMITS, files=300), 300 - 40 - fa.FILES_RESERVED, None),
    (2000, 10000, LIMITS, 2000, None),                          # explicit: beyond AUTO_POOL when it fits
    (2000, 10, LIMITS, 10, None),
    (5000, 10000, dict(LIMITS, files=1024), 0,
     'pool 5000 is more hosts at once than this controller can hold: at most 920 (open files: ulimit -n 1024, 40 open)'),
    (None, 10, dict(LIMITS, files=100), 0, 'the controller cannot hold one more connection (open files'),
])
def test_pool_size(pool, hosts, limits, size, error):
    got, problem = fa.pool_size(pool, hosts, limits)
    assert got == size
    if error is None:
        assert problem is None
    else:
        assert problem.startswith(error), problem


def test_the_controller_limits_are_read_from_this_process():
    limits = fa.controller_limits()
    assert limits['files'] is None or limits['files'] >= limits['files_open'] > 0
    assert limits['memory'] is None or limits['memory'] > 0
    assert limits['threads_running'] >= 1


def test_one_thread_keeps_every_deadline():
    """Hundreds of deadlines: each expires at its time, cancelled ones never, and no thread per deadline."""
    before = threading.active_count()
    start = time.monotonic()
    late = [fa.Deadline(0.3).start() for _i in range(300)]
    early = [fa.Deadline(0.1).start() for _i in range(300)]
    cancelled = [fa.Deadline(0.2).start() for _i in range(300)]
    assert threading.active_count() <= before + 1
    for deadline in cancelled:
        deadline.cancel()
    while not all(d.expired for d in early) and time.monotonic() - start < 2:
        time.sleep(0.01)
    assert all(d.expired for d in early)
    assert 0.09 <= time.monotonic() - start < 0.3
    assert not any(d.expired for d in late)
    while not all(d.expired for d in late) and time.monotonic() - start < 2:
        time.sleep(0.01)
    assert all(d.expired for d in late) and time.monotonic() - start < 0.6
    assert not any(d.expired for d in cancelled)


def test_a_deadline_shuts_the_socket_it_watches():
    left, right = socket.socketpair()

    class Conn(object):
        _sock = left
    try:
        deadline = fa.Deadline(0.1).start()
        deadline.attach(Conn())
        right.settimeout(2)
        start = time.monotonic()
        assert right.recv(10) == b''             # the peer sees the shutdown
        assert deadline.expired and time.monotonic() - start < 1
    finally:
        left.close()
        right.close()


# ---------------------------------------------------------------- worker processes
def test_worker_count_one_per_cpu_with_enough_hosts_each():
    assert fa.worker_count(None, 10000, cpus=2) == (2, None)
    assert fa.worker_count(None, 10000, cpus=1) == (1, None)
    # a small fleet: a fork would cost more than it saves
    assert fa.worker_count(None, fa.MIN_HOSTS_PER_WORKER * 2 - 1, cpus=8) == (1, None)
    assert fa.worker_count(None, fa.MIN_HOSTS_PER_WORKER * 3, cpus=8) == (3, None)
    assert fa.worker_count(None, 0, cpus=4) == (1, None)


def test_explicit_worker_count_wins_and_is_checked():
    assert fa.worker_count(3, 10, cpus=1) == (3, None)
    assert fa.worker_count(8, 5, cpus=1) == (5, None)
    for bad in (0, -1, fa.MAX_WORKERS + 1, True, '2'):
        count, error = fa.worker_count(bad, 100, cpus=2)
        assert count == 0 and error.startswith('workers must be 1-%d' % fa.MAX_WORKERS), bad


def test_shard_deals_hosts_out_in_turn():
    names = ['h%d' % i for i in range(7)]
    shares = fa.shard(names, 3)
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

    results = fa.run_workers(jobs, worker, pool=8, workers=3)
    assert list(results) == list(jobs)                       # the order of the jobs, not of completion
    assert results[names[-8]] == dict(failed=True, msg='ValueError: bad host')
    assert all(results[n]['value'] == jobs[n] * 2 for n in names if jobs[n] != 7)
    pids = set(r['pid'] for r in results.values() if 'pid' in r)
    assert len(pids) == 3 and os.getpid() not in pids


def test_run_workers_one_worker_stays_in_this_process():
    import os
    results = fa.run_workers({'a': 1, 'b': 2}, lambda job: dict(pid=os.getpid(), job=job), pool=4, workers=1)
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

    results = fa.run_workers(jobs, worker, pool=1, workers=2)
    assert [results['h%d' % i] for i in (0, 2, 4)] == [dict(ok=0), dict(ok=2), dict(ok=4)]
    assert results['h1'] == dict(ok=1)                 # passed back before its process ended
    for name in ('h3', 'h5'):
        assert results[name]['failed'] is True
        assert 'worker process 2 of 2' in results[name]['msg'] and 'exit code 9' in results[name]['msg']


def test_a_result_that_does_not_pickle_is_that_hosts_error():
    results = fa.run_workers({'a': 1, 'b': 2}, lambda job: dict(value=(lambda: job) if job == 2 else job),
                             pool=2, workers=2)
    assert results['a'] == dict(value=1)
    assert results['b']['failed'] is True and 'could not be passed back' in results['b']['msg']


def test_run_pool_streams_results_when_asked():
    seen = []
    assert fa.run_pool({'a': 1, 'b': 2}, lambda job: job + 1, pool=2, on_result=lambda n, o: seen.append((n, o))) == {}
    assert sorted(seen) == [('a', 2), ('b', 3)]


def test_frames_decode_a_stream_cut_anywhere():
    import pickle
    stream = b''
    for item in (('a', {'x': 1}), ('b', {'y': [2, 3]})):
        data = pickle.dumps(item)
        stream += fa._FRAME.pack(len(data)) + data
    for cut in range(len(stream) + 1):
        buffer, got = bytearray(stream[:cut]), []
        got.extend(fa._frames(buffer))
        buffer += stream[cut:]
        got.extend(fa._frames(buffer))
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

    results = fa.run_workers(dict((n, n) for n in names), lambda job: dict(host=job[0], prepared_pid=job[1],
                                                                           audit_pid=os.getpid()),
                             pool=4, workers=workers, prepare=prepare)
    assert list(results) == names
    assert results['h05'] == dict(failed=True, msg='cannot read the host variables')
    assert results['h07'] == dict(failed=True, msg=fa._NOT_PREPARED)
    audited = [r for n, r in results.items() if n not in ('h05', 'h07')]
    assert all(r['prepared_pid'] == r['audit_pid'] for r in audited)
    prepared_in = set(r['prepared_pid'] for r in audited)
    assert len(prepared_in) == workers and (os.getpid() in prepared_in) == (workers == 1)
