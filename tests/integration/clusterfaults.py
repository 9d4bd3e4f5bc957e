"""What the cluster fault tests on the SSH fleet share (tests/integration/test_cluster_faults*.py).

- ``FleetCluster``: a cluster of the fleet (Galera or Group Replication) as the tests see it: the
  members' admin connections over their namespaces' addresses, their pids, their state;
- ``Monitor``: a thread that samples every member's state every ~0.15 s (``down`` when it does not
  answer in 1 s), so that a test asserts on what the cluster went through, not only on how it ended;
- ``Writer``: a thread that inserts one row at a time through a member, moving to the next member
  that answers when its member fails (a client of a cluster behind a list of addresses), and keeps
  the sequence numbers of the rows whose COMMIT returned: rows lost = those not on a member at the end;
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

from conftest import REPO, LabHandle, lab_py
from dbfleet_lab.netns import Namespace, veth_name  # pylint: disable=wrong-import-order

SCHEMA = 'dbfleet_it_cluster'


def env(**extra):
    return dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'),
                ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, '.collections'), ANSIBLE_NOCOLOR='1',
                ANSIBLE_FORCE_COLOR='0', PATH=os.path.join(REPO, '.venv', 'bin') + ':' + os.environ['PATH'], **extra)


def flat(text):
    return ' '.join(text.split())


def up(lab_dir, hosts):
    """Bring hosts of the fleet up when one of them is down; True when this started them."""
    status = json.loads(lab_py('--mode', 'ssh', '--lab-dir', lab_dir, 'status', '--json').stdout)
    rows = dict((r['host'], r) for r in status['hosts'])
    started = any(h not in rows or rows[h]['state'] != 'up' or rows[h]['sshd'] != 'up' for h in hosts)
    if started:
        lab_py('--mode', 'ssh', '--lab-dir', lab_dir, 'up', *hosts)
    return started


class FleetCluster:
    """Members (and async replicas) of one cluster of the fleet."""

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

    def address(self, host):
        return self.fleet.hosts[host]['address']

    def connect(self, host, timeout=3, read_timeout=10):
        return pymysql.connect(host=self.address(host), port=3306, user=self.fleet.admin_user,
                               password=self.fleet.admin_password, connect_timeout=timeout, read_timeout=read_timeout,
                               write_timeout=read_timeout, autocommit=True)

    def query(self, host, sql, args=None, tries=1):
        for attempt in range(tries):
            try:
                conn = self.connect(host)
                try:
                    with conn.cursor() as cur:
                        cur.execute(sql, args)
                        return cur.fetchall()
                finally:
                    conn.close()
            except pymysql.err.OperationalError:
                if attempt >= tries - 1:
                    raise
                time.sleep(1)
        return None

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


def drop_ports(host, ports):
    """nftables in the member's namespace: drop what arrives on ports (a transfer that makes no progress)."""
    rules = ('table inet dbfleet_fault {\n chain input {\n  type filter hook input priority 0; policy accept;\n'
             '  tcp dport { %s } drop\n }\n}\n' % ', '.join(str(p) for p in ports))
    subprocess.run(['ip', 'netns', 'exec', namespace(host), 'nft', '-f', '-'], input=rules, text=True, check=True)


def undrop(host):
    subprocess.run(['ip', 'netns', 'exec', namespace(host), 'nft', 'delete', 'table', 'inet', 'dbfleet_fault'],
                   check=False, stderr=subprocess.DEVNULL)


class Monitor(threading.Thread):
    """[(time, {member: state})] every ~0.15 s; state is what look(conn) returns, or 'down'."""

    def __init__(self, cluster, look):
        super().__init__(daemon=True)
        self.cluster = cluster
        self.look_at = look
        self.samples = []
        self.stop = threading.Event()
        self.conns = dict((n, None) for n in cluster.members)

    def look(self, member):
        try:
            if self.conns[member] is None:
                self.conns[member] = self.cluster.connect(member, timeout=1, read_timeout=2)
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
    """One row per INSERT through a member; on an error, the next member that answers."""

    def __init__(self, cluster, order):
        super().__init__(daemon=True)
        self.cluster = cluster
        self.order = list(order)
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
                    conn = self.cluster.connect(member, timeout=1, read_timeout=5)
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
                time.sleep(0.1)
            time.sleep(0.02)
        if conn is not None:
            conn.close()


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
    lost = writer.committed - seen[cluster.members[0]][2]
    figures['rows_lost'] += len(lost)
    figures['rows_committed'] += len(writer.committed)
    figures['writer_errors'] += len(writer.errors)
    figures['checksums_compared'] += len(seen)
    summary = dict((h, v[:2]) for h, v in seen.items())
    assert len(set(summary.values())) == 1, 'the hosts disagree: %s' % summary
    assert not lost, '%d committed rows lost, e.g. %s' % (len(lost), sorted(lost)[:10])
    assert writer.committed, 'the writer committed nothing'
    return summary


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

    def tasks_ok(self):
        """[(time, task name, host)] of the tasks that passed, from the log."""
        out = []
        task = None
        try:
            handle = open(self.log, encoding='utf-8')      # pylint: disable=consider-using-with
        except OSError:
            return out
        with handle:
            for line in handle:
                match = re.match(r'(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d+) .*?\| (.*)$', line)
                if not match:
                    continue
                stamp = time.mktime(time.strptime(match.group(1), '%Y-%m-%d %H:%M:%S')) + int(match.group(2)) / 1000.0
                text = match.group(3)
                if text.startswith('TASK ['):
                    task = text[6:].split(']')[0]
                elif text.startswith('ok: [') and task:
                    out.append((stamp, task, text[5:].split(']')[0]))
        return out

    def gate_passed(self, host):
        """Time the gate of host passed, else None."""
        for stamp, task, _where in self.tasks_ok():
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
