"""The drain of a cluster member before its restart (role restart, ``restart_cluster_drain``) on the lab's real
Galera cluster (galera1-3 + galera_replica) and Group Replication group (gr1-3) (the directory's fixtures start them
when they are not up).

One run of tests/integration/playbooks/restart_drain.yml (fixture ``drained``) restarts three members, one at a time,
each drained its own way, as an inventory's host variables set a drain per member: galera3 by reject_queries, galera2
by drain tasks, a secondary of the group by offline_mode. A client keeps one connection to galera3 and samples it
every 0.1 s with a query on a table (``ok``, ``rejected``: error 1047, ``down``: no answer); an application's session
on the group's secondary does the same (``ok``, ``cut``, ``refused``: error 3032 at login, ``down``). The tests read
that one run:

- reject_queries: the client's queries are rejected for the drain's seconds before the node goes down, the node
  serves again after its gate, wsrep_reject_queries is NONE at the end; check mode says what it would set, sets nothing;
- tasks: the drain task file runs before the stop, the restore file after the gate;
- offline_mode on a secondary of the group: an ordinary user's session is cut and a new login refused with error 3032
  before the stop, it logs in again after the gate, offline_mode is OFF at the end.

And runs of their own, none of which restarts anything:

- a restart that fails after the drain (a restart command that exits 1): the rescue puts wsrep_reject_queries
  back, the node was never stopped, the message says the drain was put back;
- offline_mode on a MariaDB node: refused before any change, naming the input; a drain method that does not exist and
  two drain task mappings that cannot run (one per node, one run: every host's inputs are checked before anything
  restarts): each refused, naming its host and the input.
"""
import os
import tempfile
import threading
import time

import pymysql
import pytest
import yaml

from dbfleet_testing.clusters import HOSTS, INVENTORY, MEMBERS
from dbfleet_testing.clusters import pid_of, primary_of, wait_all_online
from dbfleet_testing.lab import REPO
from dbfleet_testing.runs import flat, playbook

SCHEMA = 'galera_drain_it'
NODE = 'galera3'            # drained by reject_queries
TASKS_NODE = 'galera2'      # drained by the drain tasks
PLAYBOOK = os.path.join(REPO, 'tests', 'integration', 'playbooks', 'restart_drain.yml')
TASK_FILES = os.path.join('..', 'tasks')     # relative to the playbook's directory (tests/integration/playbooks)
ER_UNKNOWN_COM_ERROR = 1047
# How often the clients below query (the drains last 1-3 s, the shortest phase a test reads; a client's query costs this
# process CPU for the whole run, every phase of three restarts).
SAMPLE_SECONDS = 0.1


def run(extra, check=False, limit='galera', host_vars=None):
    """restart_drain.yml on the play `limit`, NODE restarting unless extra says otherwise; host_vars: {host: {variable:
    value}} given to the hosts by a second inventory source, as an inventory's host_vars give a drain per member."""
    args = dict(restart_drain_hosts=[NODE], restart_drain_play=limit)
    args.update(extra)
    inventories = [INVENTORY]
    with tempfile.TemporaryDirectory(prefix='drain-hostvars-') as where:
        if host_vars:
            inventories.append(os.path.join(where, 'host_vars.yml'))
            with open(inventories[-1], 'w', encoding='utf-8') as handle:
                yaml.safe_dump({'all': {'hosts': host_vars}}, handle)
        rc, out = playbook(inventories, PLAYBOOK, args, check=check, limit=limit,
                           env_extra=dict(ANSIBLE_STDOUT_CALLBACK='ansible.builtin.default'))
    return rc, flat(out)


def close_quietly(conn):
    """Close a client's connection when it stops (a session left open counts as a client of the member, and the
    restart order of later tests puts the member with the most clients last: test_galera.py)."""
    if conn is not None:
        try:
            conn.close()
        except Exception:  # pylint: disable=broad-except
            pass


class Sampler(threading.Thread):
    """One client of NODE, as an application behind a load balancer: a query on a table every 0.1 s."""

    def __init__(self, cl):
        super().__init__(daemon=True)
        self.cl = cl
        self.samples = []
        self.stop = threading.Event()

    def run(self):
        conn = None
        while not self.stop.is_set():
            try:
                if conn is None:
                    conn = self.cl.connect(NODE, timeout=1)
                with conn.cursor() as cur:
                    cur.execute('SELECT COUNT(*) FROM %s.t' % SCHEMA)
                    cur.fetchall()
                what = 'ok'
            except pymysql.err.MySQLError as e:
                what = 'rejected' if e.args and e.args[0] == ER_UNKNOWN_COM_ERROR else 'down'
                if what == 'down':
                    close_quietly(conn)
                    conn = None
            self.samples.append((time.monotonic(), what))
            self.stop.wait(SAMPLE_SECONDS)
        close_quietly(conn)

    def finish(self):
        self.stop.set()
        self.join(10)
        return self.samples


def phases(samples):
    """The samples' runs of one kind, in order: [(kind, first time, last time)]."""
    out = []
    for stamp, what in samples:
        if out and out[-1][0] == what:
            out[-1][2] = stamp
        else:
            out.append([what, stamp, stamp])
    return [tuple(p) for p in out]


def reject_queries(cl):
    return cl.query(NODE, 'SELECT @@GLOBAL.wsrep_reject_queries')[0][0]


def prepare(cl):
    cl.wait_synced()
    cl.query('galera1', 'CREATE DATABASE IF NOT EXISTS %s' % SCHEMA)
    cl.query('galera1', 'CREATE TABLE IF NOT EXISTS %s.t (id INT PRIMARY KEY)' % SCHEMA)
    deadline = time.time() + 30
    while not cl.query(NODE, "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = 't'",
                       (SCHEMA,)):
        assert time.time() < deadline, 'the table did not reach %s' % NODE
        time.sleep(0.2)


ER_SERVER_OFFLINE_MODE = 3032
APP_USER, APP_PASSWORD = 'drain_app', 'drain-app-pw-1'


class AppClient(threading.Thread):
    """An application's session on one member (a user without CONNECTION_ADMIN): SELECT 1 every 0.1 s, logging in
    again when its session is gone: ``ok``, ``cut`` (the session ended under it), ``refused`` (error 3032 at login),
    ``down`` (no server)."""

    def __init__(self, address, port):
        super().__init__(daemon=True)
        self.where = dict(host=address, port=port)
        self.samples = []
        self.stop = threading.Event()

    def run(self):
        conn = None
        while not self.stop.is_set():
            if conn is None:
                try:
                    conn = pymysql.connect(user=APP_USER, password=APP_PASSWORD, connect_timeout=1, read_timeout=2,
                                           autocommit=True, **self.where)
                except pymysql.err.MySQLError as e:
                    self.samples.append((time.monotonic(), 'refused' if e.args and e.args[0] == ER_SERVER_OFFLINE_MODE
                                         else 'down'))
                    self.stop.wait(SAMPLE_SECONDS)
                    continue
            try:
                with conn.cursor() as cur:
                    cur.execute('SELECT 1')
                    cur.fetchall()
                self.samples.append((time.monotonic(), 'ok'))
            except pymysql.err.MySQLError:
                self.samples.append((time.monotonic(), 'cut'))
                close_quietly(conn)
                conn = None
            self.stop.wait(SAMPLE_SECONDS)
        close_quietly(conn)

    def finish(self):
        self.stop.set()
        self.join(10)
        return self.samples


def shown(seen, started):
    return ', '.join('%s %.2f-%.2f' % (w, a - started, b - started) for w, a, b in seen)


@pytest.fixture(scope='module')
def drained(cluster, group, tmp_path_factory):
    """One run of restart_drain.yml on the cluster and the group that restarts three members one at a time, each with
    its own drain (host variables of a second inventory source): NODE by reject_queries (3 s), TASKS_NODE by the drain
    tasks (marks in a file), a secondary of the group by offline_mode (2 s); NODE's client (Sampler) and the
    secondary's application session (AppClient) sample the whole run. Returns what the tests read."""
    prepare(cluster)
    primary = primary_of(group)
    secondary = sorted(m for m in MEMBERS if m != primary)[0]
    group.query(primary, "CREATE USER IF NOT EXISTS %s@'%%' IDENTIFIED BY %s", (APP_USER, APP_PASSWORD))
    group.query(primary, "GRANT SELECT ON *.* TO %s@'%%'", (APP_USER,))
    mark = tmp_path_factory.mktemp('drain-marks') / 'marks'
    pids = dict((n, cluster.pid(n)) for n in (NODE, TASKS_NODE))
    pids[secondary] = pid_of(group, secondary)
    row = group.hosts[secondary]
    sampler = Sampler(cluster)
    client = AppClient(row.get('address') or '127.0.0.1', row['port'])
    sampler.start()
    client.start()
    time.sleep(0.5)
    started = time.monotonic()
    rc, output = run({'restart_drain_hosts': [NODE, TASKS_NODE, secondary], 'restart_drain_mark_file': str(mark)},
                     limit='galera:group_replication', host_vars={
                         NODE: {'restart_cluster_drain': 'reject_queries', 'restart_cluster_drain_seconds': 3},
                         TASKS_NODE: {'restart_cluster_drain': 'tasks', 'restart_cluster_drain_seconds': 0,
                                      'restart_cluster_drain_tasks': {
                                          'drain': os.path.join(TASK_FILES, 'drain_mark.yml'),
                                          'restore': os.path.join(TASK_FILES, 'restore_mark.yml')}},
                         secondary: {'restart_cluster_drain': 'offline_mode', 'restart_cluster_drain_seconds': 2}})
    time.sleep(1)
    seen = phases(sampler.finish())
    app_seen = phases(client.finish())
    print('\n%s drain phases (s from the run start): %s' % (NODE, shown(seen, started)))
    print('%s offline_mode phases (s from the run start): %s' % (secondary, shown(app_seen, started)))
    return dict(rc=rc, output=output, pids=pids, seen=seen, app_seen=app_seen, secondary=secondary,
                marks=mark.read_text() if mark.exists() else '')


def test_reject_queries_drains_before_the_stop_and_serves_after_the_gate(cluster, drained):  # noqa: F811
    rc, output = run({'restart_cluster_drain': 'reject_queries', 'restart_cluster_drain_seconds': 3}, check=True)
    assert rc == 0, output
    assert '%s: reject_queries, would set wsrep_reject_queries=ALL (now NONE), then wait 3 s' % NODE in output, output
    assert reject_queries(cluster) == 'NONE'

    rc, output, seen = drained['rc'], drained['output'], drained['seen']
    assert rc == 0, output
    assert cluster.pid(NODE) != drained['pids'][NODE], 'the node did not restart'
    kinds = [w for w, _a, _b in seen]
    # ok (before the run), rejected (the drain), down (the restart), then ok again (after the gate).
    assert kinds[0] == 'ok' and kinds[-1] == 'ok', seen
    assert 'rejected' in kinds and 'down' in kinds, seen
    first_rejected = kinds.index('rejected')
    first_down = kinds.index('down')
    assert first_rejected < first_down, 'the node went down before its queries were rejected: %s' % seen
    assert kinds[first_rejected:first_down] == ['rejected'], seen
    rejected = seen[first_rejected]
    assert rejected[2] - rejected[1] >= 2.5, 'rejected for %.2f s only, the drain waits 3 s: %s' % (
        rejected[2] - rejected[1], seen)
    # After the restart the node may refuse a query or two while it rejoins (wsrep_ready OFF until Synced: the same
    # error 1047); it ends serving, and serves for the whole second after the run.
    assert seen[-1][2] - seen[-1][1] >= 1.0, seen
    assert "Take the member out of its clients' view before the stop: %s] *** changed: [galera1 -> %s]" % (NODE, NODE) \
        in output, output
    # The restart put the server's own value back already: the restore after the gate has nothing to change.
    assert "Put the member back in its clients' view after its gate: %s] *** ok: [galera1 -> %s]" % (NODE, NODE) \
        in output, output
    assert reject_queries(cluster) == 'NONE'
    cluster.wait_synced()


def test_a_failure_after_the_drain_puts_the_node_back(cluster):  # noqa: F811
    prepare(cluster)
    pid = cluster.pid(NODE)
    sampler = Sampler(cluster)
    sampler.start()
    # The restart command fails: the run stops after the drain, the node never stopped.
    rc, output = run({'restart_cluster_drain': 'reject_queries', 'restart_cluster_drain_seconds': 1,
                      'dbfleet_restart_method': 'command', 'dbfleet_restart_command': ['/bin/false']})
    time.sleep(0.5)
    seen = phases(sampler.finish())
    assert rc != 0, output
    assert cluster.pid(NODE) == pid, 'the node restarted'
    assert reject_queries(cluster) == 'NONE', 'the node was left rejecting queries'
    assert 'The drain was put back (set wsrep_reject_queries=NONE (was ALL))' in output, output
    assert 'The run stopped at %s' % NODE in output, output
    kinds = [w for w, _a, _b in seen]
    assert kinds == ['ok', 'rejected', 'ok'], seen


def test_a_drain_the_server_lacks_and_a_bad_method_are_refused_before_any_change(cluster):  # noqa: F811
    prepare(cluster)
    pids = dict((h, cluster.pid(h)) for h in HOSTS)
    rc, output = run({'restart_cluster_drain': 'offline_mode'})
    assert rc != 0, output
    assert 'drain offline_mode needs offline_mode (MySQL/Percona Server 5.7.5 and later); this server runs MariaDB 10.11' \
        in output, output
    # Every host's restart inputs are checked before anything restarts, the pending one's and the others': one wrong
    # drain per node, each named with its host in the one run.
    rc, output = run({}, host_vars={
        'galera1': {'restart_cluster_drain': 'haproxy'},
        'galera2': {'restart_cluster_drain': 'tasks', 'restart_cluster_drain_tasks': {'drain': '/nonexistent.yml'}},
        'galera3': {'restart_cluster_drain': 'tasks',
                    'restart_cluster_drain_tasks': {'drain': os.path.join(TASK_FILES, 'drain_mark.yml'),
                                                    'restore': os.path.join(TASK_FILES, 'nope.yml')}}})
    assert rc != 0, output
    assert 'galera1: restart_cluster_drain must be null, reject_queries, offline_mode or tasks (got "haproxy")' \
        in output, output
    assert 'galera2: restart_cluster_drain_tasks must be a mapping with drain and restore task files' in output, output
    assert 'galera3: restart_cluster_drain_tasks.restore: no such file %s' % os.path.join(
        os.path.dirname(PLAYBOOK), '..', 'tasks', 'nope.yml') in output, output
    assert dict((h, cluster.pid(h)) for h in HOSTS) == pids, 'a host restarted although the run refused'
    assert reject_queries(cluster) == 'NONE'


def test_drain_tasks_run_before_the_stop_and_after_the_gate(cluster, drained):  # noqa: F811
    rc, output = drained['rc'], drained['output']
    assert rc == 0, output
    assert cluster.pid(TASKS_NODE) != drained['pids'][TASKS_NODE], 'the node did not restart'
    marks = drained['marks']
    assert marks.split('\n')[:2] == ['drain %s' % TASKS_NODE, 'restore %s' % TASKS_NODE], marks
    # The drain ran before the node's restart, the restore after its gate passed.
    assert output.index('Record the drain of the member') \
        < output.index('Restart the server with its restart command and wait for it to answer: %s' % TASKS_NODE) \
        < output.index('Gate, up, replicating, caught up, new settings in effect: %s' % TASKS_NODE) \
        < output.index('Record the restore of the member'), output
    cluster.wait_synced()


def test_offline_mode_cuts_ordinary_sessions_of_a_group_secondary(group, drained):  # noqa: F811
    rc, output, seen, secondary = drained['rc'], drained['output'], drained['app_seen'], drained['secondary']
    assert rc == 0, output
    assert pid_of(group, secondary) != drained['pids'][secondary], 'the member did not restart'
    kinds = [w for w, _a, _b in seen]
    assert kinds[0] == 'ok' and kinds[-1] == 'ok', seen
    # The session is cut, then every login refused with 3032, before the server goes down.
    assert 'refused' in kinds and 'down' in kinds, seen
    assert kinds.index('refused') < kinds.index('down'), seen
    assert set(kinds[1:kinds.index('down')]) <= {'cut', 'refused'}, seen
    refused = seen[kinds.index('refused')]
    assert refused[2] - refused[1] >= 1.5, 'refused for %.2f s only, the drain waits 2 s: %s' % (refused[2] - refused[1], seen)
    assert "Take the member out of its clients' view before the stop: %s] *** changed:" % secondary in output, output
    assert group.query(secondary, 'SELECT @@GLOBAL.offline_mode AS v')[0]['v'] == 0
    wait_all_online(group)
