"""What the cluster fault tests on the SSH fleet share (tests/integration/fleet/faults/test_cluster_faults*.py).

- ``FleetCluster``: a cluster of the fleet (Galera or Group Replication) as the tests see it: the
  members' admin connections over their namespaces' addresses, their pids, their state;
- ``Monitor``: a thread that samples every member's state every ~0.15 s (``down`` when it does not
  answer in 1 s), so that a test asserts on what the cluster went through, not only on how it ended;
- ``Writer``: a thread that inserts one row at a time through a member, moving to the next member
  that answers when its member fails (a client of a cluster behind a list of addresses), and keeps
  the sequence numbers of the rows whose COMMIT returned: rows lost = those not on a member at the end;
- ``Monitor``, ``Writer``, ``create_table``, ``contents`` and ``tasks_ok`` also serve the local lab's Galera
  tests (tests/integration/local/clusters/test_galera.py: its ``Cluster`` has members and connect() too);
- ``Run``: ansible-playbook in the background, with its log, so that a fault is injected when the
  log says a gate passed;
- ``faults``: SIGKILL of a member's server, a member's veth down (partition), nftables in a member's
  namespace dropping its state transfer ports (a state transfer that makes no progress).
"""
import json
import os
import re
import signal
import subprocess
import threading
import time

import pymysql
import pytest
import yaml

from dbfleet_testing.lab import REPO, Connection, LabHandle, default_lab_dir, lab_py, statement_rows
from dbfleet_testing.runs import env, flat
from dbfleet_lab.netns import Namespace, veth_name  # pylint: disable=wrong-import-order

SCHEMA = 'dbfleet_it_cluster'


def up(lab_dir, hosts):
    """Bring hosts of the fleet up when one of them is down; True when this started them."""
    status = json.loads(lab_py('--mode', 'ssh', '--lab-dir', lab_dir, 'status', '--json').stdout)
    rows = dict((r['host'], r) for r in status['hosts'])
    started = any(h not in rows or rows[h]['state'] != 'up' or rows[h]['sshd'] != 'up' for h in hosts)
    if started:
        lab_py('--mode', 'ssh', '--lab-dir', lab_dir, 'up', *hosts)
    return started


class Queries:
    """query() over the connections of self.connect(host): one statement, its rows; tries on a refused login."""

    def connect(self, host, timeout=3, read_timeout=10):
        raise NotImplementedError

    def query(self, host, sql, args=None, tries=1):
        return statement_rows(lambda: self.connect(host), sql, args, tries)


class FleetCluster(Queries):
    """Members (and async replicas) of one cluster of the fleet; a flavor's subclass says how to read a
    member's state (look), when a member serves (serving), when it counts toward the majority (in_majority),
    and how its async replica catches up (position_sql, wait_sql)."""

    what = 'cluster'
    serving_word = 'serving'        # the figure stops_while_another_not_<word>
    majority_word = 'quorum'        # the figure samples_below_<word>
    position_sql = wait_sql = None
    replica_status_sql = None       # SHOW REPLICA STATUS unless the flavor needs another statement

    def __init__(self, lab_dir, members, replicas, group):
        self.fleet = LabHandle('ssh', lab_dir)
        self.lab_dir = lab_dir
        self.members = tuple(members)
        self.replicas = tuple(replicas)
        self.hosts = self.members + self.replicas
        self.group = group
        missing = [h for h in self.hosts if self.fleet.hosts.get(h, {}).get('state') != 'up']
        assert not missing, 'fleet host(s) %s down: start them with `lab.py --mode ssh up %s`' % (
            ', '.join(missing), ' '.join(self.hosts))

    @staticmethod
    def look(conn):
        raise NotImplementedError

    @staticmethod
    def serving(state):
        raise NotImplementedError

    @staticmethod
    def in_majority(state):
        raise NotImplementedError

    @staticmethod
    def counted(state):
        """Members this member's state says the cluster has (for wait_ready)."""
        raise NotImplementedError

    def address(self, host):
        return self.fleet.hosts[host]['address']

    def connect(self, host, timeout=3, read_timeout=10):
        return Connection(host=self.address(host), port=3306, user=self.fleet.admin_user,
                          password=self.fleet.admin_password, connect_timeout=timeout, read_timeout=read_timeout,
                          write_timeout=read_timeout, autocommit=True)

    def states(self, members=None):
        out = {}
        for member in members or self.members:
            try:
                conn = self.connect(member, timeout=2)
                try:
                    out[member] = self.look(conn)
                finally:
                    conn.close()
            except Exception:  # pylint: disable=broad-except
                out[member] = 'down'
        return out

    def wait_ready(self, size=3, timeout=120, members=None):
        """Every member serving in a cluster of size members; their states."""
        deadline = time.time() + timeout
        seen = {}
        while time.time() < deadline:
            seen = self.states(members)
            if all(self.serving(s) and self.counted(s) == size for s in seen.values()):
                return seen
            time.sleep(0.5)
        raise AssertionError('the %s is not %s with %d members: %s' % (self.what, self.serving_word, size, seen))

    def pid(self, host):
        try:
            with open(os.path.join(self.lab_dir, 'fleet', host, 'mysqld.pid'), encoding='utf-8') as handle:
                return int(handle.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def pids(self):
        return dict((h, self.pid(h)) for h in self.hosts)

    def lab(self, *args, check=True):
        return lab_py('--mode', 'ssh', '--lab-dir', self.lab_dir, *args, check=check)


def wsrep(conn):
    with conn.cursor() as cur:
        cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_ready', "
                    "'wsrep_cluster_status', 'wsrep_cluster_size')")
        values = dict(cur.fetchall())
    return (values.get('wsrep_local_state_comment'), values.get('wsrep_ready'), values.get('wsrep_cluster_status'),
            int(values.get('wsrep_cluster_size') or 0))


class Galera(FleetCluster):
    """A Galera cluster of the fleet: a member serves when Synced, ready and in the Primary component; it
    counts toward quorum while in a Primary component of two members or more (a Donor too)."""

    what = 'cluster'
    serving_word = 'synced'
    majority_word = 'quorum'
    position_sql = 'SELECT @@gtid_binlog_pos'
    wait_sql = 'SELECT MASTER_GTID_WAIT(%s, 60)'
    replica_status_sql = 'SHOW SLAVE STATUS'
    look = staticmethod(wsrep)

    @staticmethod
    def serving(state):
        return state != 'down' and state[0] == 'Synced' and state[1] == 'ON' and state[2] == 'Primary'

    @staticmethod
    def in_majority(state):
        return state != 'down' and state[2] == 'Primary' and state[3] >= 2

    @staticmethod
    def counted(state):
        return state[3]

    wait_synced = FleetCluster.wait_ready


# The fleet's hosts a cluster fixture of this session started: the module that takes them down is the last one of the
# session to use them (test_cluster_drop_faults.py and test_cluster_faults.py run one after the other on galera1-3).
STARTED = set()
HOSTS_OF = {}       # id(a module's cluster fixture) -> its hosts


def later_module_uses(request, name, hosts):
    """Whether a test of a later module of this session uses a cluster fixture called name over the same hosts."""
    module = request.node.nodeid
    items = request.session.items
    mine = [i for i, item in enumerate(items) if item.nodeid.split('::')[0] == module]
    return any(name in item.fixturenames and item.nodeid.split('::')[0] != module
               and HOSTS_OF.get(id(getattr(item.module, name, None))) == hosts for item in items[max(mine) + 1:])


def cluster_fixture(name, cls, members, replicas, group, title=None, figures=None):
    """A module's cluster fixture called name: its hosts started when one is down (and stopped at the end
    then, unless a later module of the session has a fixture of that name: its end stops them; at once when
    the cluster does not come up whole); the module's figures printed at its end (title given)."""
    hosts = tuple(members) + tuple(replicas)

    @pytest.fixture(scope='module', name=name)
    def fixture(request):
        lab_dir = default_lab_dir()
        try:
            if up(lab_dir, hosts):
                STARTED.add(hosts)
            cluster = cls(lab_dir, members, replicas, group)
            cluster.wait_ready()
        except BaseException:
            # A cluster half up (a node that could not join) stays out of the way of the next module and run.
            STARTED.discard(hosts)
            lab_py('--mode', 'ssh', '--lab-dir', lab_dir, 'down', '--purge', *hosts, check=False)
            raise
        yield cluster
        if title:
            print_figures(title, figures)
        if hosts in STARTED and not later_module_uses(request, name, hosts):
            STARTED.discard(hosts)
            cluster.lab('down', '--purge', *hosts)     # gone from lab.py status: the default fleet's tests see db1-db4 only
    HOSTS_OF[id(fixture)] = hosts
    return fixture


def veth(host):
    return veth_name(host)


def namespace(host):
    return Namespace(host, '').name


def kill(cluster, host):
    """SIGKILL of a member's server (the pid file stays: lab.py start cleans up after it)."""
    pid = cluster.pid(host)
    assert pid, '%s runs no server' % host
    os.kill(pid, signal.SIGKILL)
    return pid


def link(host, state):
    """Take a member's veth down (a network partition of that member) or up again."""
    subprocess.run(['ip', 'link', 'set', veth(host), state], check=True)


def drop_ports(host, ports, to=()):
    """nftables in the member's namespace: drop what arrives on ports (a transfer that makes no progress);
    with to (addresses), drop instead what the member sends to those ports of those addresses (a joiner
    that cannot reach its donors)."""
    if to:
        chain = ('  type filter hook output priority 0; policy accept;\n  ip daddr { %s } tcp dport { %s } drop\n'
                 % (', '.join(to), ', '.join(str(p) for p in ports)))
    else:
        chain = '  type filter hook input priority 0; policy accept;\n  tcp dport { %s } drop\n' % (
            ', '.join(str(p) for p in ports))
    rules = 'table inet dbfleet_fault {\n chain filter {\n%s }\n}\n' % chain
    subprocess.run(['ip', 'netns', 'exec', namespace(host), 'nft', '-f', '-'], input=rules, text=True, check=True)


def undrop(host):
    subprocess.run(['ip', 'netns', 'exec', namespace(host), 'nft', 'delete', 'table', 'inet', 'dbfleet_fault'],
                   check=False, stderr=subprocess.DEVNULL)


class Monitor(threading.Thread):
    """[(time, {member: state})] every ~0.15 s over cluster.members, one connection kept per member (a new login
    per look is slow under load); state is what look(conn) returns (default cluster.look), or 'down' when the
    member does not answer within read_timeout."""

    def __init__(self, cluster, look=None, read_timeout=2):
        super().__init__(daemon=True)
        self.cluster = cluster
        self.look_at = look or cluster.look
        self.read_timeout = read_timeout
        self.samples = []
        self.stop = threading.Event()
        self.conns = dict((n, None) for n in cluster.members)

    def look(self, member):
        try:
            if self.conns[member] is None:
                self.conns[member] = self.cluster.connect(member, timeout=1, read_timeout=self.read_timeout)
            return self.look_at(self.conns[member])
        except pymysql.err.MySQLError:
            if self.conns[member] is not None:
                try:
                    self.conns[member].close()
                except pymysql.err.Error:
                    pass
            self.conns[member] = None
            return 'down'

    def run(self):
        while not self.stop.is_set():
            self.samples.append((time.time(), dict((n, self.look(n)) for n in self.cluster.members)))
            time.sleep(0.1)
        for conn in self.conns.values():
            if conn is not None:
                conn.close()


class Writer(threading.Thread):
    """One row per INSERT (seq 1, 2, ...) into the test table through a member of order, as a client of a cluster
    behind a list of addresses: on an error, the next member of order (an order of one member: that member again).

    committed: the seq of every row whose INSERT returned (autocommit: its COMMIT); errors: (time, member, error
    code). The choices the tests make: the members (order), the connection's timeouts, the pause between two
    inserts and the pause after an error."""

    def __init__(self, cluster, order, connect_timeout=1, read_timeout=5, pause=0.02, error_pause=0.1):
        super().__init__(daemon=True)
        self.cluster = cluster
        self.order = list(order)
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.pause = pause
        self.error_pause = error_pause
        self.committed = set()
        self.errors = []
        self.stop = threading.Event()

    def run(self):
        conn = None
        at = 0
        seq = 0
        while not self.stop.is_set():
            member = self.order[at % len(self.order)]
            try:
                if conn is None:
                    conn = self.cluster.connect(member, timeout=self.connect_timeout, read_timeout=self.read_timeout)
                seq += 1
                with conn.cursor() as cur:
                    cur.execute('INSERT INTO %s.t (seq, payload) VALUES (%%s, %%s)' % SCHEMA, (seq, 'row %d' % seq))
                self.committed.add(seq)
            except pymysql.err.MySQLError as exc:
                self.errors.append((time.time(), member, exc.args[0] if exc.args else None))
                if conn is not None:
                    try:
                        conn.close()
                    except pymysql.err.Error:
                        pass
                conn = None
                at += 1
                time.sleep(self.error_pause)
            time.sleep(self.pause)
        if conn is not None:
            conn.close()

    def lost(self, seqs):
        """The committed rows not among seqs (the seq column of a host's table)."""
        return self.committed - set(seqs)


def create_table(cluster, via):
    cluster.query(via, 'CREATE DATABASE IF NOT EXISTS %s' % SCHEMA)
    cluster.query(via, 'DROP TABLE IF EXISTS %s.t' % SCHEMA)
    cluster.query(via, 'CREATE TABLE %s.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, seq INT NOT NULL UNIQUE, '
                       'payload VARCHAR(64) NOT NULL) ENGINE=InnoDB' % SCHEMA)


def contents(cluster, host):
    """(rows, content checksum, set of seq) of the test table on host."""
    count, checksum = cluster.query(host, 'SELECT COUNT(*), COALESCE(SUM(CRC32(CONCAT_WS(0x1f, id, seq, payload))), 0) '
                                          'FROM %s.t' % SCHEMA, tries=10)[0]
    seqs = set(r[0] for r in cluster.query(host, 'SELECT seq FROM %s.t' % SCHEMA, tries=10))
    return int(count), int(checksum), seqs


def compare(cluster, writer, figures):
    """Every host: the same rows and checksum; every committed row kept. Returns {host: (rows, checksum)}."""
    seen = dict((h, contents(cluster, h)) for h in cluster.hosts)
    lost = writer.lost(seen[cluster.members[0]][2])
    figures['rows_lost'] += len(lost)
    figures['rows_committed'] += len(writer.committed)
    figures['writer_errors'] += len(writer.errors)
    figures['checksums_compared'] += len(seen)
    summary = dict((h, v[:2]) for h, v in seen.items())
    assert len(set(summary.values())) == 1, 'the hosts disagree: %s' % summary
    assert not lost, '%d committed rows lost, e.g. %s' % (len(lost), sorted(lost)[:10])
    assert writer.committed, 'the writer committed nothing'
    return summary


LOG_LINE = re.compile(r'(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d+) .*?\| (.*)$')


def passed_tasks(lines, task=None):
    """[(time, task name, host)] of the tasks that passed in lines of an Ansible log (ANSIBLE_LOG_PATH), and the task
    the last of them is in (to go on with the lines that follow)."""
    out = []
    for line in lines:
        match = LOG_LINE.match(line)
        if not match:
            continue
        text = match.group(3)
        if text.startswith('TASK ['):
            task = text[6:].split(']')[0]
        elif text.startswith('ok: [') and task:
            stamp = time.mktime(time.strptime(match.group(1), '%Y-%m-%d %H:%M:%S')) + int(match.group(2)) / 1000.0
            out.append((stamp, task, text[5:].split(']')[0]))
    return out, task


def tasks_ok(log):
    """[(time, task name, host)] of the tasks that passed, from an Ansible log (ANSIBLE_LOG_PATH)."""
    try:
        handle = open(log, encoding='utf-8')      # pylint: disable=consider-using-with
    except OSError:
        return []
    with handle:
        return passed_tasks(handle)[0]


class Run:
    """ansible-playbook in the background, its output and log kept."""

    def __init__(self, cluster, tmp_path, playbook, extra):
        self.log = str(tmp_path / 'ansible.log')
        self.out = open(str(tmp_path / 'output.txt'), 'w+', encoding='utf-8')    # pylint: disable=consider-using-with
        cmd = [os.path.join(REPO, '.venv', 'bin', 'ansible-playbook'), '-i', cluster.fleet.inventory,
               playbook, '-e', json.dumps(extra)]
        self.started = time.time()
        self.proc = subprocess.Popen(cmd, env=env(ANSIBLE_LOG_PATH=self.log), stdout=self.out,  # pylint: disable=consider-using-with
                                     stderr=subprocess.STDOUT, cwd=REPO, text=True)
        self._ok, self._read, self._task = [], 0, None

    def tasks_ok(self):
        """[(time, task name, host)] of the tasks that passed, from the log: only the lines written since the last
        call are read (wait_for polls it while the run writes)."""
        try:
            with open(self.log, 'rb') as handle:
                handle.seek(self._read)
                new = handle.read()
        except OSError:
            return list(self._ok)
        whole = new[:new.rfind(b'\n') + 1]       # a line still being written waits for the next call
        self._read += len(whole)
        ok, self._task = passed_tasks(whole.decode('utf-8', 'replace').splitlines(), self._task)
        self._ok.extend(ok)
        return list(self._ok)

    def gate_passed(self, host, ok=None):
        """Time the gate of host passed, else None (from ok, the tasks_ok() already read, when given)."""
        for stamp, task, _where in self.tasks_ok() if ok is None else ok:
            if task.endswith('new settings in effect: %s' % host) and 'Gate, up' in task:
                return stamp
        return None

    def wait_for(self, condition, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline and self.proc.poll() is None:
            if condition():
                return True
            time.sleep(0.2)
        return condition()

    def finish(self, timeout=400):
        rc = self.proc.wait(timeout)
        self.out.seek(0)
        output = self.out.read()
        self.out.close()
        return rc, output, time.time() - self.started


# ---------------------------------------------------------------- the steps every flavor's tests share

def new_figures(cluster_class):
    """The figures a fault test module prints at its end."""
    return dict(faults_injected=0, runs_stopped_safely=0, runs_completed=0, rows_committed=0, rows_lost=0,
                writer_errors=0, checksums_compared=0, samples=0,
                **{'samples_below_' + cluster_class.majority_word: 0,
                   'stops_while_another_not_' + cluster_class.serving_word: 0})


def print_figures(title, figures):
    print('\n%s fault figures: %s' % (title, ', '.join('%s=%s' % kv for kv in figures.items())))


def below_majority(cluster, samples, figures, members=None):
    """Samples where fewer than two of members counted toward the cluster's majority."""
    members = members or cluster.members
    below = [(t, s) for t, s in samples if sum(1 for m in members if cluster.in_majority(s[m])) < 2]
    figures['samples'] += len(samples)
    figures['samples_below_' + cluster.majority_word] += len(below)
    return below


def stops(samples, members):
    """[(time, member, the others' states in the sample before)] for every member seen going down."""
    out = []
    for i in range(1, len(samples)):
        before, now = samples[i - 1][1], samples[i][1]
        for member in members:
            if now[member] == 'down' and before[member] != 'down':
                out.append((samples[i][0], member, dict((m, before[m]) for m in members if m != member)))
    return out


def first_member_gate(run, members):
    """The first member whose gate passed, once one did."""
    ok = run.tasks_ok()
    passed = [(run.gate_passed(m, ok), m) for m in members]
    passed = [p for p in passed if p[0]]
    return min(passed)[1] if passed else None


def run_with(cluster, tmp_path, playbook, extra, writer_order, inject=None, hold=12, look=None):
    """Writer (through writer_order) + monitor (its look: cluster.look unless given) around one playbook run;
    inject(run) is called once and returns the time of its fault; the monitor then runs at least hold seconds past it."""
    create_table(cluster, writer_order[0])
    cluster.wait_ready()
    # One row every ~0.1 s: a write between any two of the monitor's samples, at a fifth of the rows (and of the
    # cluster's certification and replication work) of the Writer's default pause.
    monitor, writer = Monitor(cluster, look), Writer(cluster, writer_order, pause=0.1)
    monitor.start()
    writer.start()
    try:
        time.sleep(0.5)
        run = Run(cluster, tmp_path, playbook, extra)
        injected = inject(run) if inject else None
        rc, output, took = run.finish()
        if injected:        # the cluster after the fault, also when the run stopped at once
            time.sleep(max(0.0, injected + hold - time.time()))
    finally:
        writer.stop.set()
        writer.join(30)
        monitor.stop.set()
        monitor.join(30)
    return run, rc, flat(output), took, monitor.samples, writer, injected


def heal_and_compare(cluster, writer, figures):
    """Every member serving again, every async replica caught up, then compare()."""
    cluster.wait_ready()
    position = cluster.query(cluster.members[0], cluster.position_sql)[0][0]
    for replica in cluster.replicas:
        conn = cluster.connect(replica, read_timeout=90)
        try:
            with conn.cursor() as cur:
                cur.execute(cluster.wait_sql, (position,))
                assert cur.fetchone()[0] == 0, '%s did not reach %s' % (replica, position)
        finally:
            conn.close()
    return compare(cluster, writer, figures)


def rolling_restart_under_writes(cluster, tmp_path, playbook, extra, writer_order, figures, look=None,
                                 replicas_in_play=False):
    """The run completes; the cluster never below its majority; no member stopped while another was not
    serving; each gate passed only once its member served again, before the next member stopped; the
    async replicas never restarted (outside the play), or (replicas_in_play) restarted each before the first
    member stopped and replicate again; every host ends with the same rows and checksum.
    Returns (seconds, samples, [(time, member, others)] of the stops, writer, {host: (rows, checksum)}, output)."""
    pids = cluster.pids()
    run, rc, output, took, samples, writer, _injected = run_with(cluster, tmp_path, playbook, extra, writer_order,
                                                                 look=look)
    assert rc == 0, output
    figures['runs_completed'] += 1
    assert all(cluster.pid(h) != pids[h] for h in cluster.members), 'not every member restarted'
    if not replicas_in_play:
        assert all(cluster.pid(h) == pids[h] for h in cluster.replicas), 'the replica, outside the play, restarted'
    below = below_majority(cluster, samples, figures)
    assert not below, 'below %s: %s' % (cluster.majority_word, below[:3])
    seen = stops(samples, cluster.members)
    assert sorted(m for _t, m, _o in seen) == sorted(cluster.members), seen
    for stamp, member, others in seen:
        # The one expected exception (Galera): the donor of the member that rejoined before is no longer in the sample.
        bad = dict((m, s) for m, s in others.items() if not cluster.serving(s))
        figures['stops_while_another_not_' + cluster.serving_word] += 1 if bad else 0
        assert not bad, '%s stopped at %.1f while %s' % (member, stamp, bad)
    for i, (stamp, member, _o) in enumerate(seen):
        passed = run.gate_passed(member)
        back = [t for t, states in samples if t > stamp and cluster.serving(states[member])]
        assert passed and back and passed >= back[0] - 0.3, (member, passed, back[:1])
        if i + 1 < len(seen):
            assert passed < seen[i + 1][0], 'the next member stopped before the gate of %s passed' % member
    if replicas_in_play:
        for replica in cluster.replicas:
            # an async replica of a member belongs to the cluster's topology and restarts first
            assert cluster.pid(replica) != pids[replica], '%s did not restart' % replica
            passed = run.gate_passed(replica)
            assert passed and passed < seen[0][0], '%s: gate at %s, first member stopped at %.1f' % (replica, passed, seen[0][0])
    summary = heal_and_compare(cluster, writer, figures)
    for replica in cluster.replicas:
        assert replicating(cluster, replica), '%s does not replicate after the run' % replica
    return took, samples, seen, writer, summary, output


def replicating(cluster, replica):
    """Both replication threads of an async replica run (MariaDB SHOW SLAVE STATUS / MySQL SHOW REPLICA STATUS)."""
    conn = cluster.connect(replica)
    try:
        with conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute('SHOW REPLICA STATUS' if cluster.replica_status_sql is None else cluster.replica_status_sql)
            rows = cur.fetchall()
    finally:
        conn.close()
    return bool(rows) and all((r.get('Slave_IO_Running') or r.get('Replica_IO_Running')) == 'Yes'
                              and (r.get('Slave_SQL_Running') or r.get('Replica_SQL_Running')) == 'Yes' for r in rows)


def wsrep_drain(conn):
    """wsrep(conn) + (wsrep_reject_queries, 'ok' or 'refused': a read of the test table, refused with 1047 or not)."""
    state = wsrep(conn)
    with conn.cursor() as cur:
        cur.execute("SHOW GLOBAL VARIABLES LIKE 'wsrep_reject_queries'")
        reject = cur.fetchone()[1]
        try:
            cur.execute('SELECT COUNT(*) FROM %s.t WHERE id < 0' % SCHEMA)
            cur.fetchall()
            probe = 'ok'
        except pymysql.err.MySQLError as exc:
            if not exc.args or exc.args[0] != 1047:
                raise
            probe = 'refused'
    return state + (reject, probe)


def drained_one_at_a_time(cluster, samples, seen, writer):
    """From samples of wsrep_drain and the stops seen: each member was drained (wsrep_reject_queries=ALL, a read
    refused) only between the previous member's stop and its own stop, never two members at once; the writer
    had a query refused (1047) by its member while that member was drained; every member is back to NONE.
    Returns {member: (first, last) time it was seen drained}."""
    two = [(t, s) for t, s in samples if sum(1 for m in cluster.members if s[m] != 'down' and s[m][4] != 'NONE') > 1]
    assert not two, 'two members drained at once: %s' % two[:2]
    windows = {}
    for i, (stop_at, member, _others) in enumerate(seen):
        since = seen[i - 1][0] if i else 0
        drained = [t for t, s in samples if s[member] != 'down' and s[member][4] == 'ALL']
        refused = [t for t, s in samples if s[member] != 'down' and s[member][4] == 'ALL' and s[member][5] == 'refused']
        assert drained and refused, '%s never seen drained with a read refused' % member
        assert since < drained[0] and drained[-1] < stop_at, \
            '%s drained %.1f-%.1f, outside its turn %.1f-%.1f' % (member, drained[0], drained[-1], since, stop_at)
        windows[member] = (drained[0], drained[-1])
    refused = [(t, m) for t, m, code in writer.errors if code == 1047 and m in windows
               and windows[m][0] - 1 <= t <= windows[m][1] + 1]
    assert refused, 'the writer never had a query refused by a drained member: %s' % writer.errors[:5]
    after = dict((m, cluster.query(m, "SHOW GLOBAL VARIABLES LIKE 'wsrep_reject_queries'")[0][1]) for m in cluster.members)
    assert set(after.values()) == {'NONE'}, 'left drained: %s' % after
    return windows


def _fault_mid_run(cluster, tmp_path, playbook, extra, writer_order, figures, choose, fault, hold):
    """A run with fault(victim) injected once the first member's gate passed; the run must stop safely:
    no member but the first restarted. Returns (victim dict, run result)."""
    pids = cluster.pids()
    victim = {}

    def inject(run):
        assert run.wait_for(lambda: first_member_gate(run, cluster.members), 240), 'no member gate passed'
        victim['first'] = first_member_gate(run, cluster.members)
        victim['host'] = choose(victim['first'])
        victim['pid'] = cluster.pid(victim['host'])
        fault(victim['host'])
        figures['faults_injected'] += 1
        return time.time()

    result = run_with(cluster, tmp_path, playbook, extra, writer_order, inject, hold)
    rc, output = result[1], result[2]
    assert rc != 0, output
    assert 'The run stopped at' in output, output
    victim['untouched'] = [m for m in cluster.members if m != victim['first']]
    assert all(cluster.pid(m) == pids[m] for m in victim['untouched'] if m != victim['host']), \
        'a member restarted after the fault: %s' % victim['untouched']
    figures['runs_stopped_safely'] += 1
    return victim, result


def _majority_kept(cluster, samples, since, figures, victim, what):
    majority = [m for m in cluster.members if m != victim]
    after = [(t, s) for t, s in samples if t > since]
    assert after, 'no sample %s' % what
    assert not below_majority(cluster, after, figures, majority), 'the members left lost their %s' % cluster.majority_word
    assert all(cluster.serving(s[m]) for _t, s in after[-3:] for m in majority), after[-3:]


def member_killed_mid_run(cluster, tmp_path, playbook, extra, writer_order, figures, choose):
    """SIGKILL of the server of choose(first member restarted) once that member's gate passed: the run
    stops before the next member, the two others keep the majority and serve; the victim started again
    rejoins and nothing is lost. Returns (victim dict, seconds, writer, {host: (rows, checksum)})."""
    victim, (_run, _rc, _output, took, samples, writer, killed_at) = _fault_mid_run(
        cluster, tmp_path, playbook, extra, writer_order, figures, choose, lambda host: kill(cluster, host), 12)
    victim['untouched'] = [m for m in victim['untouched'] if m != victim['host']]
    _majority_kept(cluster, samples, killed_at + 10, figures, victim['host'], '10 s after the kill')
    cluster.lab('start', victim['host'])
    return victim, took, writer, heal_and_compare(cluster, writer, figures)


def member_partitioned_mid_run(cluster, tmp_path, playbook, extra, writer_order, figures, choose, settle=15):
    """choose(first member restarted) cut off the network (its veth down) once the first member's gate
    passed: the run stops, no member restarts after it, the others keep the majority and serve; once
    healed the victim rejoins by itself and every host has the same rows and checksum.
    Returns (victim dict, seconds, writer, {host: (rows, checksum)})."""
    cut = []

    def fault(host):
        link(host, 'down')
        cut.append(host)
    try:
        victim, (_run, _rc, _output, took, samples, writer, cut_at) = _fault_mid_run(
            cluster, tmp_path, playbook, extra, writer_order, figures, choose, fault, settle + 3)
    finally:
        for host in cut:
            link(host, 'up')
    assert cluster.pid(victim['host']) == victim['pid'], 'the partitioned member restarted'
    _majority_kept(cluster, samples, cut_at + settle, figures, victim['host'], '%d s after the partition' % settle)
    healed = time.time()
    summary = heal_and_compare(cluster, writer, figures)
    victim['rejoined_in'] = time.time() - healed
    return victim, took, writer, summary


def member_left_joining(cluster, tmp_path, playbook, extra, writer_order, figures, block, joining, why, gate_timeout):
    """block() (undone by the returned callable) keeps a restarted member from catching up: the run
    restarts one member only, stops at it with its gate shut past the timeout and names why (the member
    not serving: why, or one of the strings why lists, in the run's output) within a few seconds of the gate
    timeout; the monitor saw the member joining(state) for the gate timeout; the cluster never went
    below its majority; once unblocked, every host agrees. Returns (member, seconds joining, seconds,
    writer, {host: (rows, checksum)}, seconds to serve again once unblocked, seconds the gate waited)."""
    pids = cluster.pids()
    unblock = block()
    figures['faults_injected'] += 1
    try:
        _run, rc, output, took, samples, writer, _injected = run_with(cluster, tmp_path, playbook, extra, writer_order)
    finally:
        unblock()
    assert rc != 0, output
    restarted = [m for m in cluster.members if cluster.pid(m) != pids[m]]
    assert len(restarted) == 1, 'members restarted: %s; the run: %s' % (restarted, output[-4000:])
    stuck = restarted[0]
    assert 'The run stopped at %s' % stuck in output, output
    whys = (why,) if isinstance(why, str) else tuple(why)
    assert 'gate shut after' in output and any(w in output for w in whys), output
    # The gate shuts at its timeout: a look may run past it by its read bound (restart_gate.READ_MARGIN, 5 s),
    # its connect timeout (5 s) and a little more on this loaded machine.
    waited = max(int(w) for w in re.findall(r'gate shut after (\d+) s', output))
    assert waited <= gate_timeout + 12, 'the gate of timeout %d s shut after %d s' % (gate_timeout, waited)
    seen = [t for t, s in samples if s[stuck] != 'down' and joining(s[stuck])]
    assert seen and seen[-1] - seen[0] >= gate_timeout - 2, 'never seen joining for the gate timeout: %s' % seen[:1]
    figures['runs_stopped_safely'] += 1
    below = below_majority(cluster, samples, figures)
    assert not below, 'below %s in %d of %d samples, the first: %s' % (
        cluster.majority_word, len(below), len(samples), below[:3])
    unblocked = time.time()
    summary = heal_and_compare(cluster, writer, figures)
    return stuck, seen[-1] - seen[0], took, writer, summary, time.time() - unblocked, waited


def adaptive_hash_parts_under_writes(cluster, tmp_path, figures, label):
    """Fault a on any Galera cluster: adaptive_hash_parts changed (restart allowed) with a writer on its first member,
    which restarts last."""
    members = cluster.members
    current = int(cluster.query(members[0], 'SELECT @@innodb_adaptive_hash_index_parts')[0][0])
    parts = 32 if current == 16 else 16        # never the server default (8)
    playbook = tmp_path / 'ahi.yml'
    playbook.write_text(yaml.safe_dump([{'name': 'AHI partitions on the cluster', 'hosts': ':'.join(members),
                                         'gather_facts': False, 'roles': [{'role': 'dbfleet.innodb.adaptive_hash'}]}]))
    took, samples, seen, writer, summary, _output = rolling_restart_under_writes(
        cluster, tmp_path, str(playbook), {'adaptive_hash_parts': parts, 'adaptive_hash_restart': 'allowed',
                                           'adaptive_hash_restart_timeout': 120}, members, figures)
    for host in members:
        assert int(cluster.query(host, 'SELECT @@innodb_adaptive_hash_index_parts')[0][0]) == parts
    # The node taking the writes (the most client connections) restarts last.
    assert seen[-1][1] == members[0], 'the writer\'s node %s did not restart last: %s' % (
        members[0], [m for _t, m, _o in seen])
    print('%s: rolling restart under writes %.1f s, %d samples, 0 below quorum, stops %s, %d rows committed, '
          '%d writer errors %s, rows/checksum %s'
          % (label, took, len(samples), [m for _t, m, _o in seen], len(writer.committed), len(writer.errors),
             sorted(set(e[2] for e in writer.errors)), summary[members[0]]))
