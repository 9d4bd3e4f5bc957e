"""The restart path on the lab's real 3-node Galera cluster (MariaDB 10.11 + Debian galera-4).

The fixture starts galera1, galera2, galera3 and galera_replica, an asynchronous replica of galera1
(lab.py up, inventory group ``galera``) when they are not all up, and stops them again at the end of
this module if it started them.

- the plan shows one cluster topology of three members, each Synced, with the replica in it, first;
- a node desynced (``SET GLOBAL wsrep_desync=ON``: Donor/Desynced) stops the rolling restart before any
  change, naming the node and its state, and the gate on such a node shuts after its timeout;
- a rolling restart through the collection's one restart path (role adaptive_hash, new
  ``adaptive_hash_parts``, restart allowed) with a writer inserting on galera1 the whole time: a
  thread records every node's wsrep state every 0.1 s; no node is stopped while another is not Synced,
  never two nodes down, each gate passed only once its node was Synced again, the new value runs
  everywhere, and every node ends with the same row count and checksum, holding every row the writer
  committed.
"""
import json
import os
import re
import subprocess
import sys
import time

import pytest
import yaml

from dbfleet_testing.lab import REPO, lab_py
from dbfleet_testing.clusterfaults import SCHEMA, Monitor, Writer, contents, create_table, stops, tasks_ok
from dbfleet_testing.runs import env
from dbfleet_testing.clusters import HOSTS, INVENTORY, NODES, REPLICA
from dbfleet_testing import runs


def run_playbook(playbook, extra, log_path=None, limit='galera'):
    return runs.playbook(INVENTORY, playbook, extra, limit=limit,
                         env_extra=dict(ANSIBLE_LOG_PATH=log_path) if log_path else None)


PLAN_PLAY = [{
    'name': 'Read the cluster and plan',
    'hosts': 'galera',
    'gather_facts': False,
    'tasks': [
        {'name': 'Read every node', 'dbfleet.innodb.topology_facts': {}, 'delegate_to': '{{ item }}',
         'loop': '{{ ansible_play_hosts_all }}', 'run_once': True, 'register': 'facts'},
        {'name': 'Plan', 'dbfleet.innodb.topology_plan': {'facts': '{{ facts }}', 'fail_closed': False},
         'run_once': True, 'register': 'plan'},
        {'name': 'Keep the plan',
         'ansible.builtin.copy': {'content': '{{ plan.plan | to_json }}', 'dest': '{{ out }}', 'mode': '0600'},
         'run_once': True, 'delegate_to': 'localhost'},
    ],
}]


def plan_of(tmp_path):
    playbook = tmp_path / 'plan.yml'
    playbook.write_text(yaml.safe_dump(PLAN_PLAY))
    out = tmp_path / 'plan.json'
    rc, output = run_playbook(str(playbook), {'out': str(out)})
    assert rc == 0, output
    return json.loads(out.read_text())


def test_plan_shows_one_cluster_topology(cluster, tmp_path):
    plan = plan_of(tmp_path)
    assert plan['ok'], plan['message']
    assert len(plan['topologies']) == 1, plan['topologies']
    topo = plan['topologies'][0]
    assert topo['name'] == 'galera dbfleet_galera'
    assert topo['cluster']['kind'] == 'galera' and topo['cluster']['size'] == 3 and topo['cluster']['missing'] == []
    assert topo['cluster']['members'] == list(NODES)
    # The asynchronous replica belongs to the cluster's topology and restarts first; galera1, whose clients
    # include the replica's connection, restarts last.
    assert plan['order'] == [REPLICA, 'galera2', 'galera3', 'galera1'], \
        (plan['order'], dict((n, plan['hosts'][n]['cluster']['clients']) for n in NODES))
    assert sorted(topo['members']) == sorted(HOSTS)
    assert plan['hosts'][REPLICA]['role'] == 'replica' and plan['hosts'][REPLICA]['sources'] == ['galera1']
    assert plan['hosts'][REPLICA]['cluster'] is None and plan['hosts'][REPLICA]['topology'] == 'galera dbfleet_galera'
    for node in NODES:
        info = plan['hosts'][node]
        assert info['topology'] == 'galera dbfleet_galera'
        assert info['cluster']['state'] == 'Synced' and info['cluster']['ready'] is True
        assert info['cluster']['member']['name'] == node


def test_a_desynced_node_stops_the_restart_before_any_change(cluster):
    pids = dict((n, cluster.pid(n)) for n in HOSTS)
    cluster.query('galera2', 'SET GLOBAL wsrep_desync = ON')
    try:
        assert cluster.wsrep('galera2')['wsrep_local_state_comment'] == 'Donor/Desynced'
        rc, output = run_playbook(os.path.join(REPO, 'playbooks', 'rolling_restart.yml'),
                                  {'rolling_restart_all': True, 'rolling_restart_hosts': 'galera'})
    finally:
        cluster.query('galera2', 'SET GLOBAL wsrep_desync = OFF')
    assert rc != 0, output
    assert 'stopped before any change' in output, output
    assert 'galera2: state Donor/Desynced, not Synced' in output, output
    assert dict((n, cluster.pid(n)) for n in HOSTS) == pids, 'a host restarted although the run refused'
    cluster.wait_synced()


def test_the_gate_on_a_node_that_stays_desynced_shuts_after_its_timeout(cluster):
    uuid = cluster.query('galera1', "SHOW GLOBAL STATUS LIKE 'wsrep_cluster_state_uuid'")[0][1]
    cluster.query('galera3', 'SET GLOBAL wsrep_desync = ON')
    try:
        started = time.time()
        proc = subprocess.run([os.path.join(REPO, '.venv', 'bin', 'ansible'), 'galera3', '-i', INVENTORY, '-m',
                               'dbfleet.innodb.restart_gate', '-a', json.dumps(
                                   {'expect_cluster': uuid, 'expect_cluster_size': 3, 'timeout': 3, 'interval': 1})],
                              env=env(), capture_output=True, text=True, timeout=120, cwd=REPO, check=False)
        took = time.time() - started
    finally:
        cluster.query('galera3', 'SET GLOBAL wsrep_desync = OFF')
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert 'gate shut after' in output and 'state Donor/Desynced, not Synced' in output, output
    assert took < 60, 'the gate did not stop at its timeout (%.0f s)' % took
    cluster.wait_synced()


def synced_state(conn):
    """A node's state for the monitor: wsrep_local_state_comment (+ '/not-ready' while wsrep_ready is OFF)."""
    with conn.cursor() as cur:
        cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_ready')")
        state = dict(cur.fetchall())
    text = state.get('wsrep_local_state_comment') or '?'
    return text if state.get('wsrep_ready') == 'ON' else text + '/not-ready'


def gate_passes(log_path):
    """{node: time its gate passed} from the Ansible log (the line of the gate task's result)."""
    out = {}
    for stamp, task, _host in tasks_ok(log_path):
        gate = re.search(r'Gate, up, replicating, caught up, new settings in effect: (\w+)$', task)
        if gate:
            out[gate.group(1)] = stamp
    return out


@pytest.mark.extended
def test_rolling_restart_under_writes_waits_for_synced(cluster, tmp_path):
    # `make test` runs this scenario on the SSH fleet's MariaDB 10.11 cluster (fleet/faults/test_cluster_faults.py,
    # Galera a: the same role, value and writer, the same checks over real SSH); here in `make test-extended`.
    # A value no node runs now (a lab kept from an earlier run may run another value on each node), never the
    # server default (8): every node must restart for it.
    current = set(int(cluster.query(n, 'SELECT @@innodb_adaptive_hash_index_parts')[0][0]) for n in HOSTS)
    parts = next(p for p in (16, 32, 64) if p not in current)
    create_table(cluster, 'galera1')
    cluster.wait_synced()
    pids = dict((n, cluster.pid(n)) for n in HOSTS)
    playbook = tmp_path / 'ahi.yml'
    playbook.write_text(yaml.safe_dump([{'name': 'AHI partitions on the cluster', 'hosts': 'galera',
                                         'gather_facts': False, 'roles': [{'role': 'dbfleet.innodb.adaptive_hash'}]}]))
    log_path = str(tmp_path / 'ansible.log')
    # The monitor reads every node every 0.1 s; the writer inserts on galera1 only (never another node), a row
    # at a time, and keeps the seq of every row committed.
    monitor = Monitor(cluster, synced_state, read_timeout=10)
    writer = Writer(cluster, ['galera1'], connect_timeout=2, read_timeout=10, pause=0.01, error_pause=0.2)
    monitor.start()
    writer.start()
    started = time.time()
    try:
        time.sleep(1)
        rc, output = run_playbook(str(playbook), {'adaptive_hash_parts': parts, 'adaptive_hash_restart': 'allowed',
                                                  'adaptive_hash_restart_timeout': 180}, log_path=log_path)
        time.sleep(1)
    finally:
        writer.stop.set()
        writer.join(30)
        monitor.stop.set()
        monitor.join(30)
    took = time.time() - started
    assert rc == 0, output
    samples = monitor.samples
    print('rolling restart under writes: %.1f s, %d rows committed, %d writer errors (%s), %d samples'
          % (took, len(writer.committed), len(writer.errors), sorted(set(e[2] for e in writer.errors)), len(samples)))

    # Every node restarted, once, and now runs the new value.
    assert all(cluster.pid(n) != pids[n] for n in HOSTS), 'not every host restarted'
    for node in HOSTS:
        assert int(cluster.query(node, 'SELECT @@innodb_adaptive_hash_index_parts')[0][0]) == parts

    # Never two nodes down; no node went down while another was not Synced (the previous sample).
    two = [(stamp, states) for stamp, states in samples if sum(1 for s in states.values() if s == 'down') > 1]
    assert not two, 'two nodes down at %.1f: %s' % two[0]
    downs = {}
    for stamp, node, others in stops(samples, NODES):
        assert all(s == 'Synced' for s in others.values()), '%s stopped at %.1f while the others were %s' % (
            node, stamp, others)
        downs.setdefault(node, stamp)
    assert sorted(downs) == list(NODES), 'the monitor did not see every node stop: %s' % downs
    order = sorted(downs, key=downs.get)
    assert order[-1] == 'galera1', 'the node taking the writes restarted before the others: %s' % order

    # Each gate passed only after its node was Synced again (and answering), and before the next node stopped.
    passes = gate_passes(log_path)
    assert set(HOSTS) <= set(passes), passes
    for i, node in enumerate(order):
        back = [stamp for stamp, states in samples if stamp > downs[node] and states[node] == 'Synced']
        assert back, '%s never seen Synced again' % node
        not_synced = [(stamp, states[node]) for stamp, states in samples
                      if downs[node] < stamp < passes[node] - 0.3 and states[node] != 'down']
        seen_states = sorted(set(s for _t, s in not_synced))
        # the node went through not-Synced states, or came back Synced at once; either way its gate
        # passed after the first Synced sample (0.3 s for the log line's own latency)
        assert passes[node] >= back[0] - 0.3, '%s: gate passed at %.1f, Synced only at %.1f (states %s)' % (
            node, passes[node], back[0], seen_states)
        if i + 1 < len(order):
            assert passes[node] < downs[order[i + 1]], 'the next node stopped before the gate of %s passed' % node
        print('%s: stopped at +%.1f s, states until its gate %s, Synced again at +%.1f s, gate passed at +%.1f s%s'
              % (node, downs[node] - started, seen_states, back[0] - started, passes[node] - started,
                 ', next stop at +%.1f s' % (downs[order[i + 1]] - started) if i + 1 < len(order) else ''))

    # The same rows everywhere (the replica once it applied galera1's position), every committed row kept.
    cluster.wait_synced()
    position = cluster.query('galera1', 'SELECT @@gtid_binlog_pos')[0][0]
    assert cluster.query(REPLICA, 'SELECT MASTER_GTID_WAIT(%s, 60)', (position,))[0][0] == 0
    seen = dict((node, contents(cluster, node)) for node in HOSTS)
    sums = dict((node, v[:2]) for node, v in seen.items())
    assert len(set(sums.values())) == 1, sums
    lost = writer.lost(seen['galera1'][2])
    assert not lost, '%d committed rows lost, e.g. %s' % (len(lost), sorted(lost)[:10])
    assert sums['galera1'][0] == len(writer.committed), (sums, len(writer.committed))
    assert writer.committed, 'the writer committed nothing'
    cluster.query('galera1', 'DROP DATABASE %s' % SCHEMA)


def test_lab_restart_makes_a_node_rejoin_not_bootstrap(cluster):
    before = cluster.query('galera1', "SHOW GLOBAL STATUS LIKE 'wsrep_cluster_state_uuid'")[0][1]
    lab_py('restart', 'galera3')
    cluster.wait_synced()
    after = cluster.query('galera3', "SHOW GLOBAL STATUS LIKE 'wsrep_cluster_state_uuid'")[0][1]
    assert after == before


if __name__ == '__main__':
    sys.exit(pytest.main([__file__, '-q'] + sys.argv[1:]))
