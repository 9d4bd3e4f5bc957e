"""The switchover of an asynchronous primary (restart_primary: switchover) on the SSH fleet, with faults injected:
real processes, real SSH, real replication, the fleet's HAProxy in front (the `haproxy` endpoint method).

Each test runs playbooks/rolling_restart.yml on a pair while a writer commits through the pair's HAProxy address, and
injects one fault: the candidate's SQL thread stopped after its restart (refused by the checks made again before the switch), the old primary refusing read-only
(a session's table lock), the candidate killed while it waits for the old primary's GTID set, the old primary that
cannot be repointed at the new one (a wrong replication password). Each asserts what the run printed (the step named,
what was put back or what remains), which server is writable, the HAProxy backend's states through the runtime API,
and that nothing was lost: every acknowledged commit on both servers, the GTID sets without errant transactions.
"""
import os
import signal
import threading
import time

import pytest
from dbfleet_testing import clusterfaults
from dbfleet_testing.replication import one, pids, wait_replicating
from dbfleet_testing.runs import PLAYBOOKS, flat, playbook
from dbfleet_testing.switchover import Pair, extra, lb_states, logins, no_errant, replication_password, set_states


FIGURES = dict(faults_injected=0, runs_stopped_safely=0, rows_committed=0, rows_lost=0, writer_errors=0,
               checksums_compared=0)


@pytest.fixture(scope='module')
def pairs(fleet):
    """db1 -> db2 and db3 -> db4, replicating, writers sent to their primaries by HAProxy; figures at the end."""
    out = dict((p, Pair(fleet, p, r)) for p, r in (('db1', 'db2'), ('db3', 'db4')))
    for pair in out.values():
        primary, replica = pair.hosts
        assert lb_states(fleet, primary) == {primary: 'ready', replica: 'maint'}, \
            'the fleet\'s HAProxy does not send writers to %s: `lab.py --mode ssh up` starts it' % primary
        wait_replicating(fleet, replica)
    yield out
    clusterfaults.print_figures('switchover', FIGURES)


@pytest.fixture(autouse=True)
def db1_primary_after(fleet, pairs):
    """After each test db1 is the primary again, whatever the test left (a switch that went further than meant)."""
    del pairs
    yield
    if fleet.server_pid('db2') and read_only(fleet, 'db2') == (0, 0) and read_only(fleet, 'db1') != (0, 0):
        repoint(fleet, 'db1', 'db2')
        wait_replicating(fleet, 'db1')
        hand_back(fleet)


class Writing:
    """A writer committing through the pair's HAProxy address for the length of the with block (a fresh table)."""

    def __init__(self, pair):
        self.pair = pair
        clusterfaults.create_table(pair, pair.primary)
        self.writer = pair.writer()

    def __enter__(self):
        self.writer.start()
        time.sleep(1)
        return self.writer

    def __exit__(self, *exc):
        time.sleep(1)                     # the endpoint put back: writes flow again
        self.writer.stop.set()
        self.writer.join(10)


def held(fleet):
    """A fresh table beside the writer's, for a lock a fault holds."""
    fleet.query('db1', 'DROP TABLE IF EXISTS %s.held' % clusterfaults.SCHEMA)
    fleet.query('db1', 'CREATE TABLE %s.held (id INT PRIMARY KEY)' % clusterfaults.SCHEMA)


def nothing_lost(fleet, pair, writer, primary, replica):
    """Every acknowledged commit on both servers, the same contents, the replica without errant transactions."""
    no_errant(fleet, primary, replica)
    clusterfaults.compare(pair, writer, FIGURES)


def read_only(fleet, host):
    """(read_only, super_read_only) of a MySQL host, (read_only, read_only) of a MariaDB one (it has no super_)."""
    strict = 'super_read_only' if host in ('db1', 'db2') else 'read_only'
    return one(fleet, host, 'SELECT @@GLOBAL.read_only'), one(fleet, host, 'SELECT @@GLOBAL.%s' % strict)


def said(out):
    """The run's last word on the switchover (printed: the figures' run log shows each fault's message)."""
    lines = [line for line in flat(out).split("msg: ") if "switchover of" in line or "no switchover" in line]
    print(lines[-1][:600] if lines else out[-2000:])
    return flat(out)


def restarted(fleet, before, *hosts):
    """Which servers have a new process since before: exactly hosts (the replica restarts first, then the switch)."""
    after = pids(fleet)
    return sorted(h for h in before if after[h] != before[h]) == sorted(hosts)


def put_back(fleet, before, rc, out, primary, replica, step, *names):
    """The run stopped at step, before the promotion, naming names; the old primary writable again, HAProxy back on it,
    the old primary not restarted (its replica was, first)."""
    text = said(out)
    assert rc != 0, out
    assert 'the switchover of %s to %s failed at step %s' % (primary, replica, step) in text, out
    assert all(name in text for name in names), out
    assert 'Put back: %s is writable again' % primary in text and 'the writer endpoint on %s' % primary in text, out
    assert read_only(fleet, primary) == (0, 0)
    assert lb_states(fleet, primary) == {primary: 'ready', replica: 'maint'}
    assert restarted(fleet, before, replica), out
    FIGURES['runs_stopped_safely'] += 1


def test_a_candidate_stopped_after_its_restart_is_refused_before_the_switch(fleet, pairs, tmp_path):
    """MariaDB 10.11: db4 restarts first and passes its gate; then, before db3 hands its role away, db4's SQL thread
    stops. The checks made again just before the switch refuse it: nothing of db3 changed, HAProxy still on db3."""
    pair = pairs['db3']
    before = pids(fleet)
    with Writing(pair) as writer:
        run = clusterfaults.Run(pair, tmp_path, os.path.join(PLAYBOOKS, 'rolling_restart.yml'), extra(
            fleet, 'db3:db4', rolling_restart_primary_wait_timeout=5))
        try:
            assert run.wait_for(lambda: run.gate_passed('db4'), 240), 'db4 did not pass its gate'
            fleet.query('db4', 'STOP SLAVE SQL_THREAD')
            FIGURES['faults_injected'] += 1
            rc, out, _took = run.finish()
            states = lb_states(fleet, 'db3')
            writable = read_only(fleet, 'db3')
        finally:
            fleet.query('db4', 'START SLAVE SQL_THREAD')
    text = said(out)
    assert rc != 0, out
    assert 'no switchover of db3, nothing was changed: db3: no replica may take the primary role: db4: replication: ' \
           'SQL thread No' in text, out
    assert restarted(fleet, before, 'db4'), out
    assert writable == (0, 0) and states == {'db3': 'ready', 'db4': 'maint'}
    FIGURES['runs_stopped_safely'] += 1
    nothing_lost(fleet, pair, writer, 'db3', 'db4')


@pytest.fixture(scope='module')
def one_run(fleet, tmp_path_factory):
    """The fleet's inventory with a login for each server: each switch is one module run (step switch). The refused
    read-only runs it; the candidate killed during its wait needs the step-by-step switch (no inventory login), whose
    wait is long enough to be caught: inside one run the last wait takes milliseconds."""
    return [fleet.inventory, logins(fleet, tmp_path_factory.mktemp('logins') / 'logins.yml')]


def test_the_old_primary_refusing_read_only_is_put_back_within_the_limit(fleet, pairs, one_run):
    """A session on db1 holds a table lock, so SET GLOBAL super_read_only waits: bounded by
    restart_primary_sessions_timeout, then the switch is put back (nothing was demoted) and the run names the step."""
    pair = pairs['db1']
    before = pids(fleet)
    with Writing(pair) as writer:
        held(fleet)
        holder = fleet.connect('db1')
        try:
            with holder.cursor() as cur:
                cur.execute('LOCK TABLES %s.held WRITE' % clusterfaults.SCHEMA)
            FIGURES['faults_injected'] += 1
            started = time.monotonic()
            rc, out = playbook(one_run, 'rolling_restart.yml', extra(
                fleet, 'db1:db2', rolling_restart_primary_sessions_timeout=3), timeout=300)
            took = time.monotonic() - started
        finally:
            holder.close()
        put_back(fleet, before, rc, out, 'db1', 'db2', 'demote db1',
                 'super_read_only = ON was refused within 3 s, nothing was changed', 'Lock wait timeout exceeded')
        acked = len(writer.committed)
        time.sleep(1)
        assert len(writer.committed) > acked, 'no write acknowledged through HAProxy after the run'
    print('refused read-only: run %.1f s' % took)
    nothing_lost(fleet, pair, writer, 'db1', 'db2')


def test_the_candidate_killed_while_it_waits_for_the_gtid_set(fleet, pairs):
    """Once the switch starts (HAProxy drains db1), a session on db2 takes a read lock on a table and a row written
    to it on db1 waits in db2's SQL thread, so db2's wait for db1's GTID set cannot end; db2 is killed during that
    wait: db1 writable again, HAProxy back on db1, the step named; db2 started again catches up."""
    pair = pairs['db1']
    before = pids(fleet)
    done = {}

    def block_then_kill_the_candidate():
        holder = None
        try:
            deadline = time.monotonic() + 180
            while lb_states(fleet, 'db1')['db1'] != 'drain':
                assert time.monotonic() < deadline, 'db1 was never drained'
                time.sleep(0.1)
            holder = fleet.connect('db2')
            with holder.cursor() as cur:
                cur.execute('LOCK TABLES %s.held READ' % clusterfaults.SCHEMA)
            fleet.query('db1', 'INSERT INTO %s.held VALUES (1)' % clusterfaults.SCHEMA)
            while not fleet.query('db2', "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE "
                                         "'SELECT WAIT_FOR_EXECUTED_GTID_SET(%'"):
                assert time.monotonic() < deadline, 'db2 never waited for the GTID set'
                time.sleep(0.1)
            done['waiting'] = one(fleet, 'db1', 'SELECT @@GLOBAL.super_read_only') == 1
            done['pid'] = fleet.server_pid('db2')
            os.kill(done['pid'], signal.SIGKILL)
        except Exception as err:  # pylint: disable=broad-except
            done['error'] = repr(err)
        finally:
            if holder is not None:
                try:
                    holder.close()
                except Exception:  # pylint: disable=broad-except
                    pass

    with Writing(pair) as writer:
        held(fleet)
        wait_replicating(fleet, 'db2')
        killer = threading.Thread(target=block_then_kill_the_candidate)
        with fleet.killed_stays_down('db2'):
            killer.start()
            try:
                rc, out = playbook(fleet.inventory, 'rolling_restart.yml', extra(
                    fleet, 'db1:db2', rolling_restart_max_lag=3600, rolling_restart_primary_wait_timeout=120),
                    timeout=400)
            finally:
                killer.join(200)
        assert 'pid' in done, 'db2 was not killed during its wait (%s):\n%s' % (done.get('error'), out)
        FIGURES['faults_injected'] += 1
        assert done['waiting'], 'db1 was not read-only while db2 waited'
        put_back(fleet, before, rc, out, 'db1', 'db2', 'promote db2', 'Lost connection to MySQL server during query')
        assert not os.path.exists('/proc/%d' % done['pid']), 'db2 was not killed'
        acked = len(writer.committed)
        time.sleep(1)
        assert len(writer.committed) > acked, 'no write acknowledged through HAProxy after the run'
    # db2 back, as an operator would start it: it applies what db1 took meanwhile.
    fleet.run('up', 'db2')
    nothing_lost(fleet, pair, writer, 'db1', 'db2')


def test_the_old_primary_that_cannot_be_repointed_stops_consistent_and_names_what_remains(fleet, pairs):
    """After the promotion db1 is pointed at db2 with a wrong replication password: its IO thread cannot connect and
    the gate fails. The run stops with db2 the writable primary, HAProxy on db2, and names what remains; nothing was
    lost. The test then repairs db1 and hands the role back by hand, as a DBA following the message would."""
    pair = pairs['db1']
    before = pids(fleet)
    promoted = False
    try:
        with Writing(pair) as writer:
            FIGURES['faults_injected'] += 1
            rc, out = playbook(fleet.inventory, 'rolling_restart.yml', extra(
                fleet, 'db1:db2', rolling_restart_primary_replication_password='not-the-password',
                rolling_restart_timeout=25), timeout=300)
            promoted = read_only(fleet, 'db2') == (0, 0)
            try:
                text = said(out)
                assert rc != 0, out
                assert 'the switchover of db1 stopped after db2 became the primary (writable, the writer endpoint on ' \
                       'it): One or more items failed: db1: gate shut' in text, out
                assert "Access denied for user ''repl''" in text, out
                assert 'What remains: point the servers that do not replicate from db2 yet (of db1) at it with GTID ' \
                       'auto-positioning; db1 was not restarted.' in text, out
                assert restarted(fleet, before, 'db2'), out
                assert promoted and read_only(fleet, 'db1') == (1, 1)
                assert lb_states(fleet, 'db1') == {'db1': 'maint', 'db2': 'ready'}
                status = fleet.query('db1', 'SHOW REPLICA STATUS')[0]
                assert status['Replica_IO_Running'] != 'Yes' and status['Last_IO_Errno'] == 1045, status
                FIGURES['runs_stopped_safely'] += 1
                acked = len(writer.committed)
                time.sleep(1)
                assert len(writer.committed) > acked, 'no write acknowledged through HAProxy on db2'
            finally:
                if promoted:              # what remains, done as the message says: db1 pointed at db2
                    repoint(fleet, 'db1', 'db2')
        nothing_lost(fleet, Pair(fleet, 'db2', 'db1'), writer, 'db2', 'db1')
    finally:
        if promoted:
            hand_back(fleet)
    no_errant(fleet, 'db1', 'db2')


def repoint(fleet, host, source):
    fleet.query(host, 'STOP REPLICA')
    fleet.query(host, 'CHANGE REPLICATION SOURCE TO SOURCE_HOST = %s, SOURCE_PORT = 3306, SOURCE_USER = %s, '
                      'SOURCE_PASSWORD = %s, SOURCE_AUTO_POSITION = 1, SOURCE_SSL = 1, SOURCE_CONNECT_RETRY = 2',
                (fleet.hosts[source]['address'], 'repl', replication_password(fleet)))
    fleet.query(host, 'START REPLICA')


def hand_back(fleet):
    """db1 the primary again, db2 its replica, HAProxy on db1: the fleet as the other tests expect it."""
    fleet.query('db2', 'SET GLOBAL super_read_only = ON')
    position = one(fleet, 'db2', 'SELECT @@GLOBAL.gtid_executed')
    assert one(fleet, 'db1', 'SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, 30)', (position,)) == 0
    for statement in ('STOP REPLICA', 'RESET REPLICA ALL', 'SET GLOBAL super_read_only = OFF',
                      'SET GLOBAL read_only = OFF'):
        fleet.query('db1', statement)
    set_states(fleet, 'writer_db1', db1='ready', db2='maint')
    repoint(fleet, 'db2', 'db1')
    wait_replicating(fleet, 'db2')
    assert lb_states(fleet, 'db1') == {'db1': 'ready', 'db2': 'maint'}
