"""Faults during rolling restarts of the SSH fleet's Galera cluster (real servers, real SSH, real network).

Fleet hosts galera1-3 (MariaDB 10.11 + Debian galera-4, each in its namespace, gcomm over the namespaces'
addresses) and galera_replica (GTID replica of galera1); the module's fixture starts them when they are
down and stops them at the end if it started them. Each test runs a writer through a surviving member
(one INSERT at a time, moving to the next member on an error) and a monitor that samples every member's
wsrep state; it injects one fault, asserts how the run ended, that the cluster never went below quorum,
and after healing, that every host has the same row count and content checksum with every committed row.

- a: the adaptive_hash role on the members with a new adaptive_hash_parts (restart allowed): no member stopped while
  another was not Synced, each gate passed only after its member was Synced again;
- b: SIGKILL of a member's server after the first member's gate passed: the run stops before the next;
- c: a member left Joining by a state transfer that makes no progress (its IST port dropped by
  nftables in its namespace): the gate waits, shuts past its timeout, the next member never restarts;
- d: a network partition of a member (its veth down) after the first member's gate passed.
The figures are printed at the end of the module (docs/topology.md, "On the fleet: fault tests").
"""
import os
import time

import pytest
import yaml

from conftest import REPO, _default_lab_dir
from clusterfaults import (SCHEMA, FleetCluster, Monitor, Run, Writer, compare, create_table, drop_ports, flat, kill,
                           link, undrop, up)

pytestmark = pytest.mark.fleet

MEMBERS = ('galera1', 'galera2', 'galera3')
REPLICA = 'galera_replica'
HOSTS = MEMBERS + (REPLICA,)
IST_PORT = 4568
GATE_TIMEOUT = 8
FIGURES = dict(faults_injected=0, runs_stopped_safely=0, runs_completed=0, rows_committed=0, rows_lost=0,
               writer_errors=0, checksums_compared=0, samples=0, samples_below_quorum=0,
               stops_while_another_not_synced=0)


def wsrep(conn):
    with conn.cursor() as cur:
        cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_ready', "
                    "'wsrep_cluster_status', 'wsrep_cluster_size')")
        values = dict(cur.fetchall())
    return (values.get('wsrep_local_state_comment'), values.get('wsrep_ready'), values.get('wsrep_cluster_status'),
            int(values.get('wsrep_cluster_size') or 0))


def serving(state):
    return state != 'down' and state[0] == 'Synced' and state[1] == 'ON' and state[2] == 'Primary'


class Galera(FleetCluster):
    def wait_synced(self, size=3, timeout=120, members=MEMBERS):
        deadline = time.time() + timeout
        seen = {}
        while time.time() < deadline:
            seen = {}
            for member in members:
                try:
                    conn = self.connect(member, timeout=2)
                    try:
                        seen[member] = wsrep(conn)
                    finally:
                        conn.close()
                except Exception:  # pylint: disable=broad-except
                    seen[member] = 'down'
            if all(serving(s) and s[3] == size for s in seen.values()):
                return seen
            time.sleep(0.5)
        raise AssertionError('the cluster is not Synced with %d members: %s' % (size, seen))


@pytest.fixture(scope='module')
def galera():
    lab_dir = _default_lab_dir()
    started = up(lab_dir, HOSTS)
    cluster = Galera(lab_dir, MEMBERS, (REPLICA,), 'galera')
    cluster.wait_synced()
    yield cluster
    print('\nGalera fault figures: %s' % ', '.join('%s=%s' % kv for kv in FIGURES.items()))
    if started:
        cluster.lab('down', '--purge', *HOSTS)     # gone from lab.py status: the default fleet's tests see db1-db4 only


def quorum_check(samples, members=MEMBERS):
    """Samples where fewer than two members answered as Synced/Donor members of a Primary component."""
    below = []
    for stamp, states in samples:
        primary = [m for m in members if states[m] != 'down' and states[m][2] == 'Primary' and states[m][3] >= 2]
        if len(primary) < 2:
            below.append((stamp, states))
    FIGURES['samples'] += len(samples)
    FIGURES['samples_below_quorum'] += len(below)
    return below


def stops(samples, members=MEMBERS):
    """[(time, member, the others' states in the sample before)] for every member seen going down."""
    out = []
    for i in range(1, len(samples)):
        before, now = samples[i - 1][1], samples[i][1]
        for member in members:
            if now[member] == 'down' and before[member] != 'down':
                out.append((samples[i][0], member, dict((m, before[m]) for m in members if m != member)))
    return out


def run_with(cluster, tmp_path, playbook, extra, inject=None):
    """Writer + monitor around one playbook run; inject(run) is called once it returns True."""
    create_table(cluster, 'galera1')
    cluster.wait_synced()
    monitor, writer = Monitor(cluster, wsrep), Writer(cluster, MEMBERS)
    monitor.start()
    writer.start()
    try:
        time.sleep(0.5)
        run = Run(cluster, tmp_path, playbook, extra)
        injected = inject(run) if inject else None
        rc, output, took = run.finish()
        if injected:        # the cluster after the fault, also when the run stopped at once
            time.sleep(max(0.0, injected + 12 - time.time()))
    finally:
        writer.stop.set()
        writer.join(30)
        monitor.stop.set()
        monitor.join(30)
    return run, rc, flat(output), took, monitor.samples, writer, injected


def heal_and_compare(cluster, writer):
    cluster.wait_synced()
    position = cluster.query('galera1', 'SELECT @@gtid_binlog_pos')[0][0]
    conn = cluster.connect(REPLICA, read_timeout=90)
    try:
        with conn.cursor() as cur:
            cur.execute('SELECT MASTER_GTID_WAIT(%s, 60)', (position,))
            assert cur.fetchone()[0] == 0, 'the replica did not reach %s' % position
    finally:
        conn.close()
    return compare(cluster, writer, FIGURES)


def rolling_restart(timeout=GATE_TIMEOUT):
    return os.path.join(REPO, 'playbooks', 'rolling_restart.yml'), {
        'rolling_restart_hosts': 'galera1:galera2:galera3', 'rolling_restart_all': True, 'rolling_restart_timeout': timeout}


def test_a_writer_under_load_for_a_whole_rolling_restart(galera, tmp_path):
    current = int(galera.query('galera1', 'SELECT @@innodb_adaptive_hash_index_parts')[0][0])
    parts = 32 if current == 16 else 16        # never the server default (8)
    playbook = tmp_path / 'ahi.yml'
    playbook.write_text(yaml.safe_dump([{'name': 'AHI partitions on the cluster', 'hosts': 'galera1:galera2:galera3',
                                         'gather_facts': False, 'roles': [{'role': 'dbfleet.innodb.adaptive_hash'}]}]))
    pids = galera.pids()
    run, rc, output, took, samples, writer, _injected = run_with(
        galera, tmp_path, str(playbook), {'adaptive_hash_parts': parts, 'adaptive_hash_restart': 'allowed',
                                          'adaptive_hash_restart_timeout': 120})
    assert rc == 0, output
    FIGURES['runs_completed'] += 1
    assert all(galera.pid(h) != pids[h] for h in MEMBERS), 'not every member restarted'
    assert galera.pid(REPLICA) == pids[REPLICA], 'the replica, outside the play, restarted'
    for host in MEMBERS:
        assert int(galera.query(host, 'SELECT @@innodb_adaptive_hash_index_parts')[0][0]) == parts
    below = quorum_check(samples)
    assert not below, 'below quorum: %s' % below[:3]
    seen = stops(samples)
    assert sorted(m for _t, m, _o in seen) == sorted(MEMBERS), seen
    for stamp, member, others in seen:
        # The one expected exception: the donor of the member that rejoined before is no longer in the sample.
        bad = dict((m, s) for m, s in others.items() if not serving(s))
        FIGURES['stops_while_another_not_synced'] += 1 if bad else 0
        assert not bad, '%s stopped at %.1f while %s' % (member, stamp, bad)
    for i, (stamp, member, _o) in enumerate(seen):
        passed = run.gate_passed(member)
        back = [t for t, states in samples if t > stamp and serving(states[member])]
        assert passed and back and passed >= back[0] - 0.3, (member, passed, back[:1])
        if i + 1 < len(seen):
            assert passed < seen[i + 1][0], 'the next member stopped before the gate of %s passed' % member
    summary = heal_and_compare(galera, writer)
    print('a: rolling restart under writes %.1f s, %d samples, 0 below quorum, stops %s, %d rows committed, '
          '%d writer errors %s, rows/checksum %s'
          % (took, len(samples), [m for _t, m, _o in seen], len(writer.committed), len(writer.errors),
             sorted(set(e[2] for e in writer.errors)), summary['galera1']))


def first_member_gate(run):
    """The first member whose gate passed, once one did."""
    passed = [(run.gate_passed(m), m) for m in MEMBERS]
    passed = [p for p in passed if p[0]]
    return min(passed)[1] if passed else None


def test_b_a_member_killed_mid_run_stops_the_run(galera, tmp_path):
    pids = galera.pids()
    victim = {}

    def inject(run):
        assert run.wait_for(lambda: first_member_gate(run), 240), 'no member gate passed'
        first = first_member_gate(run)
        victim['host'] = next(m for m in ('galera1', 'galera2') if m != first)
        victim['first'] = first
        victim['pid'] = kill(galera, victim['host'])
        FIGURES['faults_injected'] += 1
        return time.time()

    playbook, extra = rolling_restart()
    _run, rc, output, took, samples, writer, killed_at = run_with(galera, tmp_path, playbook, extra, inject)
    assert rc != 0, output
    assert 'The run stopped at' in output, output
    untouched = [m for m in MEMBERS if m not in (victim['first'], victim['host'])]
    assert all(galera.pid(m) == pids[m] for m in untouched), 'a member restarted after the kill: %s' % untouched
    FIGURES['runs_stopped_safely'] += 1
    survivors = [m for m in MEMBERS if m != victim['host']]
    after = [(t, s) for t, s in samples if t > killed_at + 10]
    assert after, 'no sample 10 s after the kill'
    assert not quorum_check(after, survivors), 'the survivors lost quorum'
    assert all(serving(s[survivors[0]]) and serving(s[survivors[1]]) for _t, s in after[-3:]), after[-3:]
    galera.lab('start', victim['host'])
    summary = heal_and_compare(galera, writer)
    print('b: killed %s (pid %d) after the gate of %s; run stopped in %.1f s, %s untouched; %d rows committed, '
          '%d writer errors, rows/checksum %s'
          % (victim['host'], victim['pid'], victim['first'], took, untouched, len(writer.committed), len(writer.errors),
             summary['galera1']))


def test_c_a_member_left_joining_stops_the_run_past_the_gate_timeout(galera, tmp_path):
    pids = galera.pids()
    for member in MEMBERS:
        drop_ports(member, [IST_PORT])
    FIGURES['faults_injected'] += 1
    try:
        playbook, extra = rolling_restart()
        _run, rc, output, took, samples, writer, _injected = run_with(galera, tmp_path, playbook, extra)
    finally:
        for member in MEMBERS:
            undrop(member)
    assert rc != 0, output
    restarted = [m for m in MEMBERS if galera.pid(m) != pids[m]]
    assert len(restarted) == 1, 'members restarted: %s' % restarted
    stuck = restarted[0]
    assert 'The run stopped at %s' % stuck in output, output
    assert 'gate shut after' in output and 'not Synced' in output, output
    joining = [t for t, s in samples if s[stuck] != 'down' and s[stuck][0].startswith('Joining')]
    assert joining and joining[-1] - joining[0] >= GATE_TIMEOUT - 2, 'never seen Joining for the gate timeout'
    FIGURES['runs_stopped_safely'] += 1
    others = [m for m in MEMBERS if m != stuck]
    assert not quorum_check(samples), 'below quorum'
    summary = heal_and_compare(galera, writer)
    print('c: %s Joining for %.1f s (IST port dropped); run stopped in %.1f s, %s untouched; %d rows committed, '
          '%d writer errors, rows/checksum %s'
          % (stuck, joining[-1] - joining[0], took, others, len(writer.committed), len(writer.errors), summary['galera1']))


def test_d_a_network_partition_mid_run_stops_the_run(galera, tmp_path):
    pids = galera.pids()
    victim = {}

    def inject(run):
        assert run.wait_for(lambda: first_member_gate(run), 240), 'no member gate passed'
        first = first_member_gate(run)
        victim['host'] = next(m for m in ('galera3', 'galera2') if m != first)
        victim['first'] = first
        link(victim['host'], 'down')
        FIGURES['faults_injected'] += 1
        return time.time()

    playbook, extra = rolling_restart()
    try:
        _run, rc, output, took, samples, writer, cut_at = run_with(galera, tmp_path, playbook, extra, inject)
    finally:
        if victim:
            link(victim['host'], 'up')
    assert rc != 0, output
    assert 'The run stopped at' in output, output
    untouched = [m for m in MEMBERS if m != victim['first']]
    assert all(galera.pid(m) == pids[m] for m in untouched), 'a member restarted after the partition'
    FIGURES['runs_stopped_safely'] += 1
    majority = [m for m in MEMBERS if m != victim['host']]
    after = [(t, s) for t, s in samples if t > cut_at + 15]
    assert after, 'no sample 15 s after the partition'
    assert not quorum_check(after, majority), 'the majority lost quorum'
    assert all(serving(s[m]) for _t, s in after[-3:] for m in majority), after[-3:]
    summary = heal_and_compare(galera, writer)
    print('d: partitioned %s after the gate of %s; run stopped in %.1f s, nothing restarted after; %d rows committed, '
          '%d writer errors, rows/checksum %s'
          % (victim['host'], victim['first'], took, len(writer.committed), len(writer.errors), summary['galera1']))
    galera.query('galera1', 'DROP DATABASE IF EXISTS %s' % SCHEMA)
