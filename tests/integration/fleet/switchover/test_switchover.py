"""The restart of an asynchronous GTID primary with restart_primary: switchover, on the SSH fleet (db1 -> db2, MySQL
8.0.33): a writer commits through the writer endpoint (the `tasks` method: a file naming the primary, rewritten by
endpoint.yml as a DNS record or a VIP would be) while playbooks/rolling_restart.yml restarts db2 then db1 with the
switchover and hands the role back; and a delayed candidate refused before any change."""
import time

import pytest
from dbfleet_testing import clusterfaults
from dbfleet_testing.replication import one, pids, wait_replicating
from dbfleet_testing.runs import flat, playbook

pytestmark = pytest.mark.fleet

HERE = __file__.rsplit('/', 1)[0]


class Endpoint:
    """The writer's list of addresses: one entry, the host the endpoint file names now ('' while drained)."""

    def __init__(self, path):
        self.path = path

    def __len__(self):
        return 1

    def __getitem__(self, _index):
        with open(self.path, encoding='utf-8') as handle:
            return handle.read().strip() or 'drained'


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
    def __init__(self, fleet):
        self.fleet = fleet
        self.hosts = ('db1', 'db2')
        self.members = self.hosts

    def connect(self, host, timeout=3, read_timeout=10):
        if host == 'drained':
            raise __import__('pymysql').err.OperationalError(2003, 'the endpoint names no host')
        return self.fleet.connect(host, connect_timeout=timeout, read_timeout=read_timeout)


def replication_password(fleet):
    with open(fleet.lab_dir + '/fleet/secrets.json', encoding='utf-8') as handle:
        return __import__('json').load(handle)['replication_password']


def extra(fleet, endpoint_file, **more):
    return dict(rolling_restart_hosts='db1:db2', rolling_restart_all=True, rolling_restart_primary='switchover',
                rolling_restart_primary_endpoint='tasks',
                rolling_restart_primary_endpoint_tasks=HERE + '/endpoint.yml',
                rolling_restart_primary_replication_password=replication_password(fleet),
                switchover_endpoint_file=endpoint_file, **more)


def test_a_delayed_candidate_is_refused_before_any_change(fleet, tmp_path):
    endpoint = tmp_path / 'endpoint'
    endpoint.write_text('db1')
    for statement in ('STOP REPLICA', 'CHANGE REPLICATION SOURCE TO SOURCE_DELAY = 3600', 'START REPLICA'):
        fleet.query('db2', statement)
    try:
        before = pids(fleet)
        rc, out = playbook(fleet.inventory, 'rolling_restart.yml', extra(fleet, str(endpoint)))
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


def test_rolling_restart_with_switchover_and_hand_back_under_writes(fleet, tmp_path):
    pair = Pair(fleet)
    clusterfaults.create_table(pair, 'db1')
    wait_replicating(fleet, 'db2')
    endpoint = tmp_path / 'endpoint'
    endpoint.write_text('db1')
    writer = clusterfaults.Writer(pair, [], connect_timeout=1, read_timeout=5, pause=0.01, error_pause=0.05)
    writer.order = Endpoint(str(endpoint))
    writer.committed = Acks()
    before = pids(fleet)
    writer.start()
    time.sleep(1)
    started = time.monotonic()
    rc, out = playbook(fleet.inventory, 'rolling_restart.yml', extra(fleet, str(endpoint),
                                                                     rolling_restart_primary_hand_back=True))
    took = time.monotonic() - started
    time.sleep(1)
    writer.stop.set()
    writer.join(10)
    text = flat(out)
    assert rc == 0, out
    assert 'db1 hands the primary role to db2' in text and 'db2 hands the primary role to db1' in text, out
    after = pids(fleet)
    assert after['db1'] != before['db1'] and after['db2'] != before['db2'], (before, after)
    assert endpoint.read_text() == 'db1'
    wait_replicating(fleet, 'db2')
    assert one(fleet, 'db1', 'SELECT @@GLOBAL.super_read_only') == 0
    assert one(fleet, 'db2', 'SELECT @@GLOBAL.super_read_only') == 1
    # No errant transaction either way, every acknowledged commit on both servers.
    source = one(fleet, 'db1', 'SELECT @@GLOBAL.gtid_executed')
    one(fleet, 'db2', 'SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, 30)', (source,))
    assert one(fleet, 'db2', 'SELECT GTID_SUBTRACT(@@GLOBAL.gtid_executed, %s)', (source,)) == ''
    figures = dict(rows_lost=0, rows_committed=0, writer_errors=0, checksums_compared=0)
    clusterfaults.compare(pair, writer, figures)
    gap = writer.committed.longest_gap()
    print('switchover under writes: %d commits acknowledged, %d lost, %d writer errors, longest gap between two '
          'acknowledged commits %.2f s, run %.1f s' % (figures['rows_committed'], figures['rows_lost'],
                                                      figures['writer_errors'], gap, took))
    # Twice a switch (there and back), never the restart's length: a restart of db1 alone takes longer.
    assert gap < 5, gap
