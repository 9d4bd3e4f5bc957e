"""playbooks/drop_tables.yml on the SSH fleet's real Galera cluster (galera1-3 + galera_replica), its controller killed.

The fixture, test_cluster_faults.py's (clusterfaults.cluster_fixture), starts the fleet's galera1-3 and galera_replica
(``lab.py --mode ssh up``, network namespaces, sshd, the playbook over real SSH) when they are not up, and takes them
down at the end of the last module of the session that uses them if it started them. Each test makes a fresh table on galera1 (it reaches
every node and the replica), switches AHI ON everywhere and runs drop_tables.yml with ``drop_tables_ahi_strategy=toggle`` on
group ``galera``: galera1 drops once, galera2 and galera3 follow it through the cluster, galera_replica through
replication; each follower switches AHI OFF before the drop reaches it.

The controller's ansible-playbook is killed as soon as a poll of the servers (every 0.05 s over one connection kept per
follower, no fixed sleep) sees AHI OFF on every follower:

- SIGTERM (a CI job cancelled, ``kill``): ansible stops its workers (the module running there gets SIGTERM
  and puts back what it changed); the followers are detached jobs on their hosts and put AHI back by themselves
  once ``drop_tables_follow_timeout`` has passed without the drop, on this run, without a next run;
- SIGKILL of the controller's whole process tree (the controller machine gone, its SSH connections with it): the
  followers outlive it on their hosts with AHI OFF; the next run finds them through their markers (guarded.py),
  cancels them (their finally puts AHI back), then drops.

Either way: AHI ON on every member and the replica at the end, the table dropped exactly once (one DROP TABLE
event for it in galera1's binary log, gone on every node and the replica) or not at all, the cluster Synced
with three members and the replica replicating. Figures printed at the end (docs/drop_tables.md).
"""
import json
import os
import signal
import subprocess
import threading
import time

import pytest

from dbfleet_testing.clusterfaults import Galera, cluster_fixture
from dbfleet_testing.runs import descendants, env, flat
from dbfleet_testing.lab import REPO


NODES = ('galera1', 'galera2', 'galera3')
REPLICA = 'galera_replica'      # an asynchronous replica of galera1
SCHEMA = 'galera_fault_it'
FOLLOWERS = ('galera2', 'galera3', REPLICA)
EVERY = NODES + (REPLICA,)
FIGURES = dict(faults_injected=0, runs_stopped=0, ahi_restored_this_run=0, ahi_restored_next_run=0,
               interrupted_followers_found=0, drops=0, rows_lost=0)


def window_now():
    hour = time.gmtime().tm_hour
    return '%02d:00-%02d:00' % ((hour + 23) % 24, (hour + 2) % 24)


# The module shares galera1-3 and galera_replica with test_cluster_faults.py (the same fixture name): started once
# for both when they run in one session.
galera = cluster_fixture('galera', Galera, NODES, (REPLICA,), 'galera')


def drop_cmd(cl, table, **extra):
    args = dict(drop_tables_tables=['%s.%s' % (SCHEMA, table)], drop_tables_window=window_now(), drop_tables_confirm=True,
                drop_tables_ahi_strategy='toggle')
    args.update(extra)
    return [os.path.join(REPO, '.venv', 'bin', 'ansible-playbook'), '-i', cl.fleet.inventory, '--limit', 'galera',
            os.path.join(REPO, 'playbooks', 'drop_tables.yml'), '-e', json.dumps(args)]


def run_env():
    return env(ANSIBLE_STDOUT_CALLBACK='ansible.builtin.default', ANSIBLE_LOAD_CALLBACK_PLUGINS='0')


def ahi(cl, node):
    return 'ON' if int(cl.query(node, 'SELECT @@GLOBAL.innodb_adaptive_hash_index')[0][0]) else 'OFF'


def table_on(cl, node, table):
    return bool(cl.query(node, 'SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s',
                         (SCHEMA, table)))


def wait_for(predicate, timeout, what, interval=0.05):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, 'gave up waiting %ss for: %s' % (timeout, what)
        time.sleep(interval)


def binlog_position(cl):
    row = cl.query('galera1', 'SHOW MASTER STATUS')[0]
    return row[0], int(row[1])


def drop_events(cl, since, table):
    """DROP TABLE events naming the table in galera1's binary log since a (file, position)."""
    files = [r[0] for r in cl.query('galera1', 'SHOW BINARY LOGS')]
    count = 0
    for name in files[files.index(since[0]):]:
        sql = 'SHOW BINLOG EVENTS IN %s' + (' FROM %d' % since[1] if name == since[0] else '')
        for row in cl.query('galera1', sql, (name,)):
            info = str(row[5])
            if 'DROP TABLE' in info.upper() and table in info:
                count += 1
    return count


def make_table(cl, table):
    cl.query('galera1', 'CREATE DATABASE IF NOT EXISTS %s' % SCHEMA)
    cl.query('galera1', 'DROP TABLE IF EXISTS %s.%s' % (SCHEMA, table))
    cl.query('galera1', 'CREATE TABLE %s.%s (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(64)) ENGINE=InnoDB'
             % (SCHEMA, table))
    cl.query('galera1', "INSERT INTO %s.%s (v) SELECT REPEAT('x', 64) FROM %s.seq_1_to_2000" % (SCHEMA, table, SCHEMA))
    wait_for(lambda: all(table_on(cl, n, table) for n in EVERY), 60, 'the table on every node and the replica', 0.2)


def cluster_intact(cl, table):
    """Three Synced members, the replica replicating and caught up; the table gone everywhere or the same everywhere."""
    cl.wait_synced()
    status = cl.query(REPLICA, 'SHOW SLAVE STATUS')
    assert status, 'galera_replica has no replication configured'
    position = cl.query('galera1', 'SELECT @@gtid_binlog_pos')[0][0]
    assert cl.query(REPLICA, 'SELECT MASTER_GTID_WAIT(%s, 60)', (position,))[0][0] == 0, 'galera_replica is not caught up'
    present = dict((n, table_on(cl, n, table)) for n in EVERY)
    assert len(set(present.values())) == 1, present
    if any(present.values()):
        sums = dict((n, cl.query(n, 'SELECT COUNT(*), SUM(CRC32(CONCAT_WS(0x1f, id, v))) FROM %s.%s' % (SCHEMA, table))[0])
                    for n in EVERY)
        assert len(set(sums.values())) == 1 and int(sums['galera1'][0]) == 2000, sums
        FIGURES['rows_lost'] += 2000 - min(int(s[0]) for s in sums.values())


@pytest.fixture(scope='module')
def faults(galera, request):
    before = dict((n, ahi(galera, n)) for n in EVERY)
    yield galera
    for n, value in before.items():
        galera.query(n, 'SET GLOBAL innodb_adaptive_hash_index = %s' % value)
    galera.query('galera1', 'DROP DATABASE IF EXISTS %s' % SCHEMA)
    line = ('cluster drop fault figures: %(faults_injected)d controller kills, %(runs_stopped)d runs stopped with AHI '
            'OFF on every follower, AHI back on every member on the same run %(ahi_restored_this_run)d time(s) and on '
            'the next run %(ahi_restored_next_run)d time(s) (%(interrupted_followers_found)d interrupted followers '
            'found and cancelled), %(drops)d DROP TABLE events (one per table), %(rows_lost)d rows lost' % FIGURES)
    reporter = request.config.pluginmanager.get_plugin('terminalreporter')
    if reporter:
        reporter.write_line(line)
    print(line)


class KeptAhi:
    """ahi() over one connection kept per node, for a poll every 0.05 s (a new login per look costs the test and
    the servers more than the look itself); an error fails the poll as ahi()'s would."""

    def __init__(self, cl):
        self.cl = cl
        self.conns = {}

    def __call__(self, node):
        if node not in self.conns:
            self.conns[node] = self.cl.connect(node)
        with self.conns[node].cursor() as cur:
            cur.execute('SELECT @@GLOBAL.innodb_adaptive_hash_index')
            return 'ON' if int(cur.fetchone()[0]) else 'OFF'

    def close(self):
        for conn in self.conns.values():
            conn.close()
        self.conns = {}


def start_and_kill(cl, table, signame, follow_timeout):
    """drop_tables.yml started, killed once every follower has AHI OFF; returns its output."""
    for n in EVERY:
        cl.query(n, 'SET GLOBAL innodb_adaptive_hash_index = ON')
    kept = KeptAhi(cl)
    proc = subprocess.Popen(drop_cmd(cl, table, drop_tables_follow_timeout=follow_timeout), env=run_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=REPO, start_new_session=True)
    output = []
    reader = threading.Thread(target=lambda: output.append(proc.stdout.read()), daemon=True)
    reader.start()
    try:
        wait_for(lambda: proc.poll() is not None or all(kept(n) == 'OFF' for n in FOLLOWERS), 240,
                 'AHI OFF on every follower (%s)' % ', '.join(FOLLOWERS))
        kept.close()
        assert proc.poll() is None, 'the run ended before every follower had AHI OFF'
        if signame == 'SIGKILL':
            for pid in [proc.pid] + descendants(proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        else:
            proc.send_signal(signal.SIGTERM)
        FIGURES['faults_injected'] += 1
        proc.wait(timeout=60)
    finally:
        kept.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    assert proc.returncode != 0
    FIGURES['runs_stopped'] += 1
    return ''.join(output)


def finish_with_next_run(cl, table, since):
    proc = subprocess.run(drop_cmd(cl, table), env=run_env(), capture_output=True, text=True, timeout=400, cwd=REPO,
                          check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-5000:]
    assert all(ahi(cl, n) == 'ON' for n in EVERY), dict((n, ahi(cl, n)) for n in EVERY)
    assert not any(table_on(cl, n, table) for n in EVERY)
    events = drop_events(cl, since, table)
    assert events == 1, 'DROP TABLE %s.%s ran %d times on the cluster' % (SCHEMA, table, events)
    FIGURES['drops'] += events
    cluster_intact(cl, table)
    return flat(out)


def test_sigterm_mid_cluster_drop_followers_put_ahi_back_on_this_run(faults):
    cl = faults
    table = 'sigterm_%d' % int(time.time())
    make_table(cl, table)
    since = binlog_position(cl)
    out = start_and_kill(cl, table, 'SIGTERM', follow_timeout=20)
    # No next run: galera1's module (if it ran) put its AHI back on SIGTERM; each detached follower gives up
    # after drop_tables_follow_timeout without the drop and puts AHI back itself.
    wait_for(lambda: all(ahi(cl, n) == 'ON' for n in EVERY), 90, 'AHI back ON on every member without a next run', 0.5)
    FIGURES['ahi_restored_this_run'] += 1
    dropped = drop_events(cl, since, table)
    assert dropped in (0, 1), dropped
    assert all(table_on(cl, n, table) for n in EVERY) == (dropped == 0), flat(out)[-3000:]
    cluster_intact(cl, table)
    text = finish_with_next_run(cl, table, since)
    assert 'dropped by the cluster (the drop ran on galera1)' in text or dropped == 1, text[-4000:]


def test_sigkill_mid_cluster_drop_next_run_cancels_followers_and_drops_once(faults):
    cl = faults
    table = 'sigkill_%d' % int(time.time())
    make_table(cl, table)
    since = binlog_position(cl)
    start_and_kill(cl, table, 'SIGKILL', follow_timeout=300)
    # The followers outlived their controller: AHI stays OFF on them until someone acts.
    dropped = drop_events(cl, since, table)
    assert dropped in (0, 1), dropped
    if dropped == 0:
        assert all(table_on(cl, n, table) for n in EVERY)
        off = [n for n in FOLLOWERS if ahi(cl, n) == 'OFF']
        assert off == list(FOLLOWERS), off
    cluster_intact(cl, table)
    text = finish_with_next_run(cl, table, since)
    if dropped == 0:
        assert 'would_cancel' in text and 'cancel the follower of run' in text, text[-5000:]
        assert text.count('interrupted_earlier_run: cancelled') == len(FOLLOWERS), text[-5000:]
        FIGURES['interrupted_followers_found'] += len(FOLLOWERS)
        assert text.count('dropped by the cluster (the drop ran on galera1)') == 2, text[-5000:]
    FIGURES['ahi_restored_next_run'] += 1
