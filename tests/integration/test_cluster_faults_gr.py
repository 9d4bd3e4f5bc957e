"""Faults during rolling restarts of the SSH fleet's Group Replication group (real servers, real SSH).

Fleet hosts gr1-gr3 (MySQL 8.0.33 with group_replication.so, single primary, each in its namespace,
XCom over the namespaces' addresses) and gr_replica (GTID replica of gr1); the module's fixture starts
them when they are down and stops them at the end if it started them. A writer inserts through the
member that takes writes (it moves on when its member refuses or fails: a secondary is read-only), a
monitor samples every member's own state and how many ONLINE members it sees.

- a: playbooks/rolling_restart.yml, every member, with restart_cluster_switchover: the group keeps a
  majority ONLINE in every sample, no member stops while another is not ONLINE, the primary restarts
  last after handing its role over, and every host ends with the same rows and content checksum;
- b: SIGKILL of a member's server after the first member's gate passed: the run stops before the
  next member, the two others stay ONLINE, nothing is lost.
"""
import os
import time

import pytest

from conftest import REPO, _default_lab_dir
from clusterfaults import SCHEMA, FleetCluster, Monitor, Run, Writer, compare, create_table, kill, up

pytestmark = pytest.mark.fleet

MEMBERS = ('gr1', 'gr2', 'gr3')
REPLICA = 'gr_replica'
HOSTS = MEMBERS + (REPLICA,)
GATE_TIMEOUT = 8
FIGURES = dict(faults_injected=0, runs_stopped_safely=0, runs_completed=0, rows_committed=0, rows_lost=0,
               writer_errors=0, checksums_compared=0, samples=0, samples_below_majority=0,
               stops_while_another_not_online=0)


def gr_state(conn):
    """(own state, own role, ONLINE members it sees, members it sees)."""
    with conn.cursor() as cur:
        cur.execute("SELECT MEMBER_ID = @@server_uuid, MEMBER_STATE, MEMBER_ROLE"
                    " FROM performance_schema.replication_group_members")
        rows = cur.fetchall()
    own = next(((r[1], r[2]) for r in rows if r[0]), ('OFFLINE', ''))
    return own + (sum(1 for r in rows if r[1] == 'ONLINE'), len(rows))


def online(state):
    return state != 'down' and state[0] == 'ONLINE' and state[2] >= 2


class Group(FleetCluster):
    def states(self):
        out = {}
        for member in self.members:
            try:
                conn = self.connect(member, timeout=2)
                try:
                    out[member] = gr_state(conn)
                finally:
                    conn.close()
            except Exception:  # pylint: disable=broad-except
                out[member] = 'down'
        return out

    def wait_online(self, timeout=120):
        deadline = time.time() + timeout
        seen = {}
        while time.time() < deadline:
            seen = self.states()
            if all(s != 'down' and s[0] == 'ONLINE' and s[2] == 3 for s in seen.values()):
                return seen
            time.sleep(0.5)
        raise AssertionError('the group is not ONLINE with 3 members: %s' % seen)

    def primary(self):
        return next(m for m, s in self.wait_online().items() if s[1] == 'PRIMARY')


@pytest.fixture(scope='module')
def group():
    lab_dir = _default_lab_dir()
    started = up(lab_dir, HOSTS)
    handle = Group(lab_dir, MEMBERS, (REPLICA,), 'group_replication')
    handle.wait_online()
    yield handle
    print('\nGroup Replication fault figures: %s' % ', '.join('%s=%s' % kv for kv in FIGURES.items()))
    if started:
        handle.lab('down', '--purge', *HOSTS)      # gone from lab.py status: the default fleet's tests see db1-db4 only


def majority_check(samples, members=MEMBERS):
    below = [(t, s) for t, s in samples if sum(1 for m in members if online(s[m])) < 2]
    FIGURES['samples'] += len(samples)
    FIGURES['samples_below_majority'] += len(below)
    return below


def stops(samples):
    out = []
    for i in range(1, len(samples)):
        before, now = samples[i - 1][1], samples[i][1]
        for member in MEMBERS:
            if now[member] == 'down' and before[member] != 'down':
                out.append((samples[i][0], member, dict((m, before[m]) for m in MEMBERS if m != member)))
    return out


def run_with(group, tmp_path, extra, inject=None):
    primary = group.primary()
    create_table(group, primary)
    group.wait_online()
    monitor, writer = Monitor(group, gr_state), Writer(group, [primary] + [m for m in MEMBERS if m != primary])
    monitor.start()
    writer.start()
    try:
        time.sleep(0.5)
        run = Run(group, tmp_path, os.path.join(REPO, 'playbooks', 'rolling_restart.yml'),
                  dict({'rolling_restart_all': True, 'rolling_restart_timeout': GATE_TIMEOUT,
                        'restart_cluster_switchover': True}, **extra))
        injected = inject(run) if inject else None
        rc, output, took = run.finish()
        if injected:        # the cluster after the fault, also when the run stopped at once
            time.sleep(max(0.0, injected + 12 - time.time()))
    finally:
        writer.stop.set()
        writer.join(30)
        monitor.stop.set()
        monitor.join(30)
    return run, rc, ' '.join(output.split()), took, monitor.samples, writer, injected, primary


def heal_and_compare(group, writer):
    group.wait_online()
    executed = group.query('gr1', 'SELECT @@GLOBAL.gtid_executed')[0][0]
    conn = group.connect(REPLICA, read_timeout=90)
    try:
        with conn.cursor() as cur:
            cur.execute('SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, 60)', (executed,))
            assert cur.fetchone()[0] == 0, 'the replica did not reach %s' % executed
    finally:
        conn.close()
    return compare(group, writer, FIGURES)


def test_a_writer_under_load_for_a_whole_rolling_restart(group, tmp_path):
    pids = group.pids()
    run, rc, output, took, samples, writer, _injected, primary = run_with(group, tmp_path, {'rolling_restart_hosts': 'gr1:gr2:gr3'})
    assert rc == 0, output
    FIGURES['runs_completed'] += 1
    assert all(group.pid(h) != pids[h] for h in MEMBERS), 'not every member restarted'
    assert group.pid(REPLICA) == pids[REPLICA], 'the replica, outside the play, restarted'
    below = majority_check(samples)
    assert not below, 'below a majority: %s' % below[:3]
    seen = stops(samples)
    assert sorted(m for _t, m, _o in seen) == sorted(MEMBERS), seen
    assert seen[-1][1] == primary, 'the primary %s did not restart last: %s' % (primary, [m for _t, m, _o in seen])
    for stamp, member, others in seen:
        bad = dict((m, s) for m, s in others.items() if not online(s))
        FIGURES['stops_while_another_not_online'] += 1 if bad else 0
        assert not bad, '%s stopped at %.1f while %s' % (member, stamp, bad)
    for i, (stamp, member, _o) in enumerate(seen):
        passed = run.gate_passed(member)
        back = [t for t, states in samples if t > stamp and online(states[member])]
        assert passed and back and passed >= back[0] - 0.3, (member, passed, back[:1])
        if i + 1 < len(seen):
            assert passed < seen[i + 1][0], 'the next member stopped before the gate of %s passed' % member
    summary = heal_and_compare(group, writer)
    print('GR a: rolling restart under writes %.1f s, %d samples, 0 below a majority, stops %s (primary %s last), '
          '%d rows committed, %d writer errors %s, rows/checksum %s'
          % (took, len(samples), [m for _t, m, _o in seen], primary, len(writer.committed), len(writer.errors),
             sorted(set(e[2] for e in writer.errors)), summary['gr1']))


def test_b_a_member_killed_mid_run_stops_the_run(group, tmp_path):
    pids = group.pids()
    primary = group.primary()
    victim = {}

    def first_gate(run):
        passed = [(run.gate_passed(m), m) for m in MEMBERS]
        passed = [p for p in passed if p[0]]
        return min(passed)[1] if passed else None

    def inject(run):
        assert run.wait_for(lambda: first_gate(run), 240), 'no member gate passed'
        victim['first'] = first_gate(run)
        victim['host'] = next(m for m in MEMBERS if m not in (victim['first'], primary))
        victim['pid'] = kill(group, victim['host'])
        FIGURES['faults_injected'] += 1
        return time.time()

    _run, rc, output, took, samples, writer, killed_at, primary = run_with(
        group, tmp_path, {'rolling_restart_hosts': 'gr1:gr2:gr3'}, inject)
    assert rc != 0, output
    assert 'The run stopped at' in output, output
    untouched = [m for m in MEMBERS if m not in (victim['first'], victim['host'])]
    assert all(group.pid(m) == pids[m] for m in untouched), 'a member restarted after the kill: %s' % untouched
    FIGURES['runs_stopped_safely'] += 1
    survivors = [m for m in MEMBERS if m != victim['host']]
    after = [(t, s) for t, s in samples if t > killed_at + 10]
    assert after and not majority_check(after, survivors), 'the survivors lost their majority'
    assert all(online(s[m]) for _t, s in after[-3:] for m in survivors), after[-3:]
    group.lab('start', victim['host'])
    summary = heal_and_compare(group, writer)
    print('GR b: killed %s (pid %d) after the gate of %s; run stopped in %.1f s, %s untouched; %d rows committed, '
          '%d writer errors, rows/checksum %s'
          % (victim['host'], victim['pid'], victim['first'], took, untouched, len(writer.committed), len(writer.errors),
             summary['gr1']))
    group.query(group.primary(), 'DROP DATABASE IF EXISTS %s' % SCHEMA)
