"""The restart of asynchronous GTID primaries with restart_primary: switchover, on the SSH fleet: db1 -> db2 (MySQL
8.0.33) and db3 -> db4 (MariaDB 10.11), each pair behind the fleet's HAProxy (lab/dbfleet_lab/haproxy.py; the
`haproxy` endpoint method moves its writers through the runtime API).

- One rolling_restart.yml run restarts all four with the switchover and the hand-back while a writer per pair commits
  through HAProxy: no acknowledged commit lost, no errant GTID, replication running, the longest gap between two
  acknowledged commits small.
- A delayed candidate is refused before any change (the `tasks` endpoint method: tests/integration/tasks/switchover_endpoint.yml, a file naming the
  primary, is left alone).
"""
import os
import re
import time

import pytest
from dbfleet_testing import clusterfaults
from dbfleet_testing.replication import one, pids, wait_replicating
from dbfleet_testing.runs import flat, playbook
from dbfleet_testing.switchover import Pair, extra, lb_states, logins, no_errant, replication_password
from dbfleet_lab import haproxy  # pylint: disable=wrong-import-order


TASKS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'tasks')


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


def test_a_switchover_for_a_primary_without_its_replicas_in_the_play_is_refused(fleet, pairs):
    """rolling_restart_hosts=db1 with the switchover: db2, its replica (the inventory's dbfleet_replication_source),
    is not in the play, so no replica could take the role: refused before any change instead of a restart in place."""
    del pairs
    before = pids(fleet)
    rc, out = playbook(fleet.inventory, 'rolling_restart.yml', extra(fleet, 'db1'))
    assert rc != 0, out
    assert 'restart_primary: switchover: db1 is a primary whose replicas db2 (their dbfleet_replication_source) are ' \
           'not in this play' in flat(out), out
    assert pids(fleet) == before, out
    assert one(fleet, 'db1', 'SELECT @@GLOBAL.super_read_only') == 0


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
    assert fleet.admin_password not in out and replication_password(fleet) not in out
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
