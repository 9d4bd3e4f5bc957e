"""The one restart path on the lab's real Group Replication group (gr1 gr2 gr3: MySQL 8.0.33, single primary).

The module fixture starts the group when it is not up (`lab.py up gr1 gr2 gr3`) and stops it again at
the end of the module if it started it. The tests read the primary from the group itself (a switchover
moves it), run playbooks/rolling_restart.yml with every member pending, and check:

- the plan: one group topology, secondaries first, the primary last, and without restart_cluster_switchover
  the primary refused before any change, named;
- a member out of the group (STOP GROUP_REPLICATION): refused before any change, naming it;
- with it, a writer inserting on the primary the whole time (it follows the primary, as a router would)
  and a thread recording every member's own state: each gate passed only once its member was ONLINE
  again with an empty queue (the member was seen RECOVERING or OFFLINE after its restart), never two
  members out of ONLINE at once, the primary's role handed over before it stopped, and at the end every
  member holds every acknowledged row, with equal row counts and CHECKSUM TABLE.
"""
import json
import os
import tempfile
import threading
import time

import pymysql
import pytest


from dbfleet_testing.lab import REPO as ROOT
from dbfleet_testing.clusters import MEMBERS, MEMBER_STATE_SQL, pid_of, primary_of, wait_all_online
from dbfleet_testing.runs import CALLBACKS, playbook_proc
SCHEMA = 'dbfleet_it_gr'


def rolling_restart(group, extra, check=False, lean=False):
    """playbooks/rolling_restart.yml on the group, every member pending (lean: only the restart role, through
    tests/integration/playbooks/restart_group.yml); (rc, output, task results)."""
    results = tempfile.NamedTemporaryFile(prefix='gr-results-', suffix='.jsonl', delete=False)
    results.close()
    try:
        proc = playbook_proc(
            group.inventory,
            os.path.join(ROOT, 'tests', 'integration', 'playbooks', 'restart_group.yml') if lean else 'rolling_restart.yml',
            dict(dict(rolling_restart_hosts='group_replication', rolling_restart_all=True, rolling_restart_timeout=120),
                 **extra), check=check, timeout=400, env_extra=dict(
                     ANSIBLE_CALLBACK_PLUGINS=CALLBACKS, ANSIBLE_CALLBACKS_ENABLED='task_results',
                     DBFLEET_TASK_RESULTS_FILE=results.name,
                     DBFLEET_TASK_RESULTS_ACTIONS='restart_gate,cluster_switchover,command_restart,topology_plan'))
        with open(results.name, encoding='utf-8') as handle:
            lines = [json.loads(line) for line in handle if line.strip()]
    finally:
        os.unlink(results.name)
    return proc.returncode, ' '.join((proc.stdout + proc.stderr).split()), lines


class Poller(threading.Thread):
    """Every member's own state (MEMBER_STATE, MEMBER_ROLE) or DOWN, every ~0.1 s: [(time, {host: (state, role)})]."""

    def __init__(self, group):
        super().__init__(daemon=True)
        self.group = group
        self.rounds = []
        self.stop = threading.Event()
        self.conns = {}

    def look(self, host):
        try:
            if host not in self.conns:
                self.conns[host] = self.group.connect(host, connect_timeout=1, read_timeout=2)
            with self.conns[host].cursor() as cur:
                cur.execute(MEMBER_STATE_SQL)
                row = cur.fetchone()
            return (row[0], row[1]) if row else ('OFFLINE', '')
        except pymysql.err.MySQLError:
            conn = self.conns.pop(host, None)
            if conn is not None:
                try:
                    conn.close()
                except pymysql.err.Error:
                    pass
            return ('DOWN', '')

    def run(self):
        while not self.stop.is_set():
            states = dict((h, self.look(h)) for h in MEMBERS)
            self.rounds.append((time.time(), states))
            time.sleep(0.1)


class Writer(threading.Thread):
    """Inserts rows on whichever member is the primary now; keeps the acknowledged ids and the errors."""

    def __init__(self, group):
        super().__init__(daemon=True)
        self.group = group
        self.acked = []
        self.errors = []
        self.stop = threading.Event()

    def find_primary(self):
        for host in MEMBERS:
            try:
                rows = self.group.query(host, "SELECT MEMBER_HOST, MEMBER_PORT FROM performance_schema."
                                              "replication_group_members WHERE MEMBER_ROLE = 'PRIMARY' "
                                              "AND MEMBER_STATE = 'ONLINE'")
            except pymysql.err.MySQLError:
                continue
            ports = dict((self.group.hosts[h]['port'], h) for h in MEMBERS)
            if rows and rows[0]['MEMBER_PORT'] in ports:
                return ports[rows[0]['MEMBER_PORT']]
        return None

    def run(self):
        next_id, conn = 1, None
        while not self.stop.is_set():
            try:
                if conn is None:
                    host = self.find_primary()
                    if host is None:
                        time.sleep(0.1)
                        continue
                    conn = self.group.connect(host, connect_timeout=2, read_timeout=10, write_timeout=10)
                with conn.cursor() as cur:
                    cur.execute('INSERT INTO %s.t (id, v) VALUES (%%s, %%s)' % SCHEMA, (next_id, 'row %d' % next_id))
                self.acked.append(next_id)
                next_id += 1
                time.sleep(0.01)
            except pymysql.err.MySQLError as exc:
                self.errors.append((time.time(), exc.args[0]))
                next_id += 1          # the outcome of a failed statement is unknown: never reuse its id
                try:
                    if conn is not None:
                        conn.close()
                except pymysql.err.Error:
                    pass
                conn = None
                time.sleep(0.1)


def test_one_group_topology_primary_last_and_refused_without_switchover(group):
    primary = primary_of(group)
    before = dict((h, pid_of(group, h)) for h in MEMBERS)
    rc, out, results = rolling_restart(group, dict(restart_cluster_switchover=False), lean=True)
    # The plan: one group topology, secondaries first, the primary last; GR channels are no async source.
    plan = next(r for r in results if r['action'] == 'topology_plan')['result']['plan']
    topologies = [t for t in plan['topologies'] if set(t['members']) & set(MEMBERS)]
    assert len(topologies) == 1, topologies
    topo = topologies[0]
    assert topo['cluster']['kind'] == 'group_replication' and topo['name'].startswith('group_replication ')
    assert sorted(topo['members']) == sorted(MEMBERS) and topo['cluster']['size'] == 3
    assert plan['order'][-1] == primary and sorted(plan['order']) == sorted(MEMBERS), plan['order']
    for host in MEMBERS:
        info = plan['hosts'][host]
        assert info['role'] == 'primary' and info['channels'] == [], info
        assert info['cluster']['state'] == 'ONLINE'
        assert info['cluster']['role'] == ('PRIMARY' if host == primary else 'SECONDARY')
    # Without restart_cluster_switchover the primary is refused, named, before any change.
    assert not plan['ok'] and [r['host'] for r in plan['refused']] == [primary], plan['refused']
    assert rc != 0, out
    assert '%s: the PRIMARY of group_replication' % primary in out and 'restart_cluster_switchover: true' in out, out
    assert 'stopped before any change' in out
    assert not [r for r in results if r['action'] in ('command_restart', 'cluster_switchover')], 'something changed'
    assert dict((h, pid_of(group, h)) for h in MEMBERS) == before


def test_a_member_out_of_the_group_is_refused_before_any_change(group):
    primary = primary_of(group)
    secondary = next(h for h in MEMBERS if h != primary)
    before = dict((h, pid_of(group, h)) for h in MEMBERS)
    group.query(secondary, 'STOP GROUP_REPLICATION')
    try:
        rc, out, results = rolling_restart(group, dict(restart_cluster_switchover=True), lean=True)
    finally:
        group.query(secondary, 'START GROUP_REPLICATION')
    assert rc != 0, out
    assert 'stopped before any change' in out and '%s: state OFFLINE, not ONLINE: not in the group' % secondary in out, out
    assert not [r for r in results if r['action'] in ('command_restart', 'cluster_switchover')], 'something changed'
    assert dict((h, pid_of(group, h)) for h in MEMBERS) == before
    wait_all_online(group)


@pytest.mark.extended
def test_rolling_restart_with_a_writer_switches_over_and_gates_on_online(group):
    # `make test` runs this scenario on the SSH fleet's group (fleet/faults/test_cluster_faults_gr.py, GR a: the
    # same playbook with restart_cluster_switchover, a writer following the primary, the same checks over real
    # SSH); here in `make test-extended`.
    primary = primary_of(group)
    conn = group.connect(primary)
    with conn.cursor() as cur:
        cur.execute('DROP DATABASE IF EXISTS %s' % SCHEMA)
        cur.execute('CREATE DATABASE %s' % SCHEMA)
        cur.execute('CREATE TABLE %s.t (id BIGINT PRIMARY KEY, v VARCHAR(40) NOT NULL, '
                    'at TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6))' % SCHEMA)
    conn.close()
    wait_all_online(group)
    before = dict((h, pid_of(group, h)) for h in MEMBERS)
    poller, writer = Poller(group), Writer(group)
    poller.start()
    writer.start()
    time.sleep(1)
    try:
        rc, out, results = rolling_restart(group, dict(restart_cluster_switchover=True), lean=True)
    finally:
        time.sleep(1)
        writer.stop.set()
        writer.join(30)
        poller.stop.set()
        poller.join(10)
    if os.environ.get('DBFLEET_GR_DEBUG_DIR'):
        with open(os.path.join(os.environ['DBFLEET_GR_DEBUG_DIR'], 'gr-run.json'), 'w', encoding='utf-8') as handle:
            json.dump(dict(results=results, rounds=poller.rounds, acked=len(writer.acked), errors=writer.errors), handle)
    assert rc == 0, out[-3000:]
    after = dict((h, pid_of(group, h)) for h in MEMBERS)
    assert all(after[h] != before[h] for h in MEMBERS), (before, after)

    # Never two members out of ONLINE at once.
    rounds = poller.rounds
    assert len(rounds) > 50
    for at, states in rounds:
        out_of_online = [h for h, (s, _r) in states.items() if s != 'ONLINE']
        assert len(out_of_online) <= 1, (at, states)

    # Order: secondaries first, the primary last; each member is down once.
    restarts = [r for r in results if r['action'] == 'command_restart' and r['status'] == 'ok']
    order = [r['delegated'] for r in restarts]
    assert sorted(order) == sorted(MEMBERS) and order[-1] == primary, order

    # Each gate passed with its member ONLINE, nothing queued, after the poller saw it out of ONLINE.
    gates = [r for r in results if r['action'] == 'restart_gate' and 'Gate, up' in r['task']]
    assert [g['delegated'] for g in gates] == order
    restart_end = dict((r['delegated'], r['time']) for r in restarts)
    for gate in gates:
        host = gate['delegated']
        cluster = gate['result']['topology']['cluster']
        assert gate['status'] == 'ok' and cluster['state'] == 'ONLINE' and cluster['queue'] == 0, gate
        down_at = [at for at, states in rounds if states[host][0] != 'ONLINE' and at <= gate['time']]
        assert down_at, 'the poller never saw %s out of ONLINE before its gate passed' % host
        back = [at for at, states in rounds if at > max(down_at) and states[host][0] == 'ONLINE']
        seen = set(states[host][0] for at, states in rounds if min(down_at) <= at <= gate['time'])
        assert seen & {'RECOVERING', 'OFFLINE', 'DOWN'}, seen
        # not passed while the member was still out of ONLINE: the last non-ONLINE look precedes the gate's end
        assert max(down_at) <= gate['time'] and back, (host, max(down_at), gate['time'])
        assert restart_end[host] <= gate['time']

    # The next member went down only after the previous one was ONLINE again.
    for previous, following in zip(order, order[1:]):
        first_down = min(at for at, states in rounds if states[following][0] == 'DOWN')
        last_out = max(at for at, states in rounds if states[previous][0] != 'ONLINE' and at < first_down)
        online_again = [at for at, states in rounds if last_out < at < first_down and states[previous][0] == 'ONLINE']
        assert online_again, '%s went down before %s was ONLINE again' % (following, previous)

    # The primary handed its role over before it stopped; the secondaries needed no switchover.
    switches = dict((r['delegated'], r) for r in results if r['action'] == 'cluster_switchover')
    assert set(switches) == set(MEMBERS)
    assert switches[primary]['result']['changed'] and switches[primary]['result']['needed']
    new_primary = switches[primary]['result']['new_primary']['address']
    assert new_primary != switches[primary]['result']['old_primary']['address']
    assert not any(switches[h]['result']['changed'] for h in MEMBERS if h != primary)
    primary_down = min(at for at, states in rounds if states[primary][0] == 'DOWN')
    assert any(states[primary] == ('ONLINE', 'SECONDARY') for at, states in rounds if at < primary_down)
    assert primary_of(group) != primary

    # Every acknowledged row on every member, equal counts and checksums.
    wait_all_online(group)
    assert len(writer.acked) > 50, (len(writer.acked), writer.errors[:5])
    conn = group.connect(primary_of(group))
    with conn.cursor() as cur:
        cur.execute('SELECT @@gtid_executed')
        gtid = cur.fetchone()[0]
    conn.close()
    figures = {}
    for host in MEMBERS:
        conn = group.connect(host)
        with conn.cursor() as cur:
            cur.execute('SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, 60)', (gtid,))
            assert cur.fetchone()[0] == 0, host
            cur.execute('SELECT COUNT(*), MIN(id), MAX(id) FROM %s.t' % SCHEMA)
            count = cur.fetchone()
            cur.execute('CHECKSUM TABLE %s.t' % SCHEMA)
            checksum = cur.fetchone()[1]
            cur.execute('SELECT id FROM %s.t' % SCHEMA)
            ids = set(r[0] for r in cur.fetchall())
        conn.close()
        lost = [i for i in writer.acked if i not in ids]
        assert not lost, '%s lost %d acknowledged rows, e.g. %s' % (host, len(lost), lost[:5])
        figures[host] = (count[0], checksum)
    assert len(set(figures.values())) == 1, figures
    print('\nGROUP REPLICATION rolling restart: order %s, primary %s -> %s, rows acknowledged %d, writer errors %d '
          '(%s), rows lost 0, members %s' % (' -> '.join(order), primary, new_primary, len(writer.acked),
                                             len(writer.errors), sorted(set(e for _t, e in writer.errors)), figures))
