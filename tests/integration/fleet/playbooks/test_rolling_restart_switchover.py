"""The restart of asynchronous GTID primaries with restart_primary: switchover, on the SSH fleet: db1 -> db2 (MySQL
8.0.33) and db3 -> db4 (MariaDB 10.11), each pair behind the fleet's HAProxy (lab/dbfleet_lab/haproxy.py; the
`haproxy` endpoint method moves its writers through the runtime API).

- One rolling_restart.yml run restarts all four with the switchover and the hand-back while a writer per pair commits
  through HAProxy: no acknowledged commit lost, no errant GTID, replication running, the longest gap between two
  acknowledged commits small.
- A delayed candidate is refused before any change (the `tasks` endpoint method: tests/integration/tasks/switchover_endpoint.yml, a file naming the
  primary, is left alone).
"""
import json
import os
import re
import time

import pymysql
import pytest
from dbfleet_testing import clusterfaults
from dbfleet_testing.replication import one, pids, wait_replicating
from dbfleet_testing.runs import flat, playbook
from dbfleet_lab import haproxy  # pylint: disable=wrong-import-order
from dbfleet_lab.netns import GATEWAY  # pylint: disable=wrong-import-order

pytestmark = pytest.mark.fleet

TASKS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'tasks')
PORTS = dict((p, port) for p, _r, port in haproxy.PAIRS)


class Acks(set):
    """The committed seqs, with the time of each acknowledgement."""

    def __init__(self):
        super().__init__()
        self.times = []

    def add(self, seq):
        self.times.append(time.monotonic())
        super().add(seq)

    def longest_gap(self):
        return max((b - a for a, b in zip(self.times, self.times[1:])), default=None)


class Pair(clusterfaults.Queries):
    """A replicated pair as clusterfaults' Writer and compare() see it; 'endpoint' is its HAProxy address."""

    def __init__(self, fleet, primary, replica):
        self.fleet = fleet
        self.hosts = self.members = (primary, replica)
        self.primary = primary

    def connect(self, host, timeout=3, read_timeout=10):
        if host == 'endpoint':
            return pymysql.connect(host=GATEWAY, port=PORTS[self.primary], user=self.fleet.admin_user,
                                   password=self.fleet.admin_password, connect_timeout=timeout,
                                   read_timeout=read_timeout, autocommit=True)
        return self.fleet.connect(host, connect_timeout=timeout, read_timeout=read_timeout)

    def writer(self):
        writer = clusterfaults.Writer(self, ['endpoint'], connect_timeout=1, read_timeout=5, pause=0.01,
                                      error_pause=0.05)
        writer.committed = Acks()
        return writer


def lb_states(fleet, primary):
    return haproxy_states(fleet)['writer_%s' % primary]


def haproxy_states(fleet):
    from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import writer_endpoint  # pylint: disable=import-outside-toplevel
    path = haproxy.socket_path(os.path.join(fleet.lab_dir, 'fleet'))
    return dict(('writer_%s' % p, writer_endpoint.server_states(writer_endpoint.command(path, 'show servers state writer_%s' % p)))
                for p, _r, _port in haproxy.PAIRS)


def replication_password(fleet):
    with open(os.path.join(fleet.lab_dir, 'fleet', 'secrets.json'), encoding='utf-8') as handle:
        return json.load(handle)['replication_password']


def extra(fleet, hosts, endpoint='haproxy', **more):
    return dict(rolling_restart_hosts=hosts, rolling_restart_all=True, rolling_restart_primary='switchover',
                rolling_restart_primary_endpoint=endpoint,
                rolling_restart_primary_replication_password=replication_password(fleet), **more)


def logins(fleet, path):
    """A second inventory giving db1-db4 a login (the lab's admin; TLS required on MySQL 8, whose servers have no
    certificate a client could verify): with it each switch is one module run reaching both servers over the network
    (roles/restart/tasks/switchover.yml). The fleet's own inventory gives none (the collection finds the login on
    each host), so that file stays as a user's would be."""
    hosts = dict((h, dict(dbfleet_login_user=fleet.admin_user, dbfleet_login_password=fleet.admin_password))
                 for h in ('db1', 'db2', 'db3', 'db4'))
    for host in ('db1', 'db2'):
        hosts[host]['dbfleet_login_ssl_mode'] = 'required'
    path.write_text(json.dumps({'all': {'hosts': hosts}}))
    path.chmod(0o600)
    return str(path)


def no_errant(fleet, primary, replica):
    """The replica has all the primary has and nothing else (GTID sets equal once it caught up)."""
    wait_replicating(fleet, replica)
    if primary == 'db1':
        source = one(fleet, primary, 'SELECT @@GLOBAL.gtid_executed')
        assert one(fleet, replica, 'SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, 30)', (source,)) == 0
        assert one(fleet, replica, 'SELECT GTID_SUBTRACT(@@GLOBAL.gtid_executed, %s)', (source,)) == ''
    else:
        source = one(fleet, primary, 'SELECT @@GLOBAL.gtid_binlog_pos')
        assert one(fleet, replica, 'SELECT MASTER_GTID_WAIT(%s, 30)', (source,)) == 0
        assert one(fleet, replica, 'SELECT @@GLOBAL.gtid_slave_pos') == source


@pytest.fixture(scope='module')
def pairs(fleet):
    out = [Pair(fleet, p, r) for p, r, _port in haproxy.PAIRS]
    for pair in out:
        assert lb_states(fleet, pair.primary) == {pair.hosts[0]: 'ready', pair.hosts[1]: 'maint'}, \
            'the fleet\'s HAProxy does not send writers to %s: `lab.py --mode ssh up` starts it' % pair.primary
        clusterfaults.create_table(pair, pair.primary)
        wait_replicating(fleet, pair.hosts[1])
    return out


def test_a_delayed_candidate_is_refused_before_any_change(fleet, pairs, tmp_path):
    del pairs
    endpoint = tmp_path / 'endpoint'
    endpoint.write_text('db1')
    for statement in ('STOP REPLICA', 'CHANGE REPLICATION SOURCE TO SOURCE_DELAY = 3600', 'START REPLICA'):
        fleet.query('db2', statement)
    try:
        before = pids(fleet)
        rc, out = playbook(fleet.inventory, 'rolling_restart.yml', extra(
            fleet, 'db1:db2', 'tasks', rolling_restart_primary_endpoint_tasks=os.path.join(TASKS, 'switchover_endpoint.yml'),
            switchover_endpoint_file=str(endpoint)))
    finally:
        for statement in ('STOP REPLICA', 'CHANGE REPLICATION SOURCE TO SOURCE_DELAY = 0', 'START REPLICA'):
            fleet.query('db2', statement)
    text = flat(out)
    assert rc != 0, out
    assert 'no switchover of db1, nothing was changed: db1: no replica may take the primary role: db2: a delayed ' \
           'replica (SQL_Delay 3600 s)' in text, out
    assert pids(fleet) == before, out
    assert one(fleet, 'db1', 'SELECT @@GLOBAL.super_read_only') == 0
    assert endpoint.read_text() == 'db1'


def test_rolling_restart_with_switchover_and_hand_back_under_writes(fleet, pairs, tmp_path):
    writers = [pair.writer() for pair in pairs]
    before = pids(fleet)
    for writer in writers:
        writer.start()
    time.sleep(1)
    started = time.monotonic()
    rc, out = playbook([fleet.inventory, logins(fleet, tmp_path / 'logins.yml')], 'rolling_restart.yml',
                       extra(fleet, 'db1:db2:db3:db4', rolling_restart_primary_hand_back=True), args=['-v'])
    took = time.monotonic() - started
    time.sleep(1)
    for writer in writers:
        writer.stop.set()
        writer.join(10)
    text = flat(out)
    assert rc == 0, out
    for old, new in (('db1', 'db2'), ('db3', 'db4')):
        assert '%s hands the primary role to %s' % (old, new) in text and \
            '%s hands the primary role to %s' % (new, old) in text, out
    # Each of the four switches was one module run (step switch), which says how long writes stopped.
    windows = [float(w) for w in re.findall(r'writes stopped for ([0-9.]+) s', text)]
    assert len(windows) == 4 and max(windows) < 2, (windows, out)
    assert fleet.admin_password not in out
    after = pids(fleet)
    assert all(after[h] != before[h] for h in before), (before, after)
    for pair, writer in zip(pairs, writers):
        primary, replica = pair.hosts
        assert lb_states(fleet, primary) == {primary: 'ready', replica: 'maint'}
        no_errant(fleet, primary, replica)
        figures = dict(rows_lost=0, rows_committed=0, writer_errors=0, checksums_compared=0)
        clusterfaults.compare(pair, writer, figures)
        gap = writer.committed.longest_gap()
        print('%s/%s switchover and hand-back under writes through HAProxy: %d commits acknowledged, 0 lost, %d '
              'writer errors, longest gap between two acknowledged commits %.2f s (run %.1f s)'
              % (primary, replica, figures['rows_committed'], figures['writer_errors'], gap, took))
        # The bound: writes through the load balancer fail for at most 2 s per switch.
        assert gap <= 2, gap
