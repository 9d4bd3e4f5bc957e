"""playbooks/drop_tables.yml on the SSH fleet, with faults injected (real processes, real SSH, real replication).

Fleet: db1 -> db2 (MySQL 8.0, GTID auto-position), db3 -> db4 (MariaDB 10.11). The helpers and the
"nothing lost" check (replication runs, GTID sets equal, CHECKSUM TABLE and row counts equal) are those of
test_restart_faults.py. Faults:

- 4: the controller's ansible-playbook killed (SIGTERM, and separately SIGKILL) while the primary's DROP
  waits for a lock, with AHI switched off on the primary and on its replica. AHI ends as it began: on
  the primary at once (its module finishes its guarded sequence), on the replica on the next run, which
  finds the interrupted follower (its marker), cancels it and then finishes the drop.
- 5: an inventory that lists replica db2 as a primary, one whose group `replicas` leaves db2 out, and a
  run that leaves db2 out: each refused before any change, naming db2.

The figures (faults injected, runs stopped safely, rows lost) are printed at the end and recorded in
docs/drop_tables.md.
"""
import json
import os
import signal
import subprocess
import time

import pytest
import yaml

from dbfleet_testing import replication, runs
from dbfleet_testing.lab import REPO

ROOT = REPO
FIGURES = dict(faults_injected=0, runs_stopped_safely=0, runs_completed=0, interrupted_runs_found=0)
TABLE_SCHEMA = replication.SCHEMA


def window_now():
    hour = time.gmtime().tm_hour
    return '%02d:00-%02d:00' % ((hour + 23) % 24, (hour + 2) % 24)


def drop_cmd(fleet, extra, inventory=None):
    args = dict(drop_tables_window=window_now(), drop_tables_confirm=True, drop_tables_ahi_strategy='toggle')
    args.update(extra)
    return [os.path.join(ROOT, '.venv', 'bin', 'ansible-playbook'), '-i', inventory or fleet.inventory,
            os.path.join(ROOT, 'playbooks', 'drop_tables.yml'), '-e', json.dumps(args)]


def run_drop(fleet, extra, inventory=None):
    proc = subprocess.run(drop_cmd(fleet, extra, inventory), env=runs.env(), capture_output=True, text=True,
                          timeout=400, cwd=ROOT, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def ahi(fleet, host):
    return 'ON' if int(replication.one(fleet, host, 'SELECT @@GLOBAL.innodb_adaptive_hash_index')) else 'OFF'


def exists(fleet, host, table):
    return bool(fleet.query(host, 'SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND '
                                  'TABLE_NAME = %s', (TABLE_SCHEMA, table), tries=30))


def make_dropped_table(fleet, table):
    """A table on db1 that has replicated to db2."""
    fleet.query('db1', 'DROP TABLE IF EXISTS %s.%s' % (TABLE_SCHEMA, table))
    fleet.query('db1', 'CREATE TABLE %s.%s (id INT PRIMARY KEY, v INT) ENGINE=InnoDB' % (TABLE_SCHEMA, table))
    fleet.query('db1', 'INSERT INTO %s.%s VALUES (1, 1), (2, 2), (3, 3)' % (TABLE_SCHEMA, table))
    deadline = time.monotonic() + 30
    while not exists(fleet, 'db2', table):
        assert time.monotonic() < deadline, '%s did not replicate to db2' % table
        time.sleep(0.3)


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, 'gave up waiting for: %s' % what
        time.sleep(0.2)


@pytest.fixture(scope='module')
def drops(fleet, request):
    assert all(row['state'] == 'up' for row in fleet.refresh().values()), (
        'the SSH fleet is not up: start it with `make fleet-up` (export DBFLEET_FLEET_NET first): %s' % fleet.hosts)
    for primary, replica in replication.PAIRS:
        replication.wait_replicating(fleet, replica)
        fleet.query(primary, 'CREATE DATABASE IF NOT EXISTS %s' % TABLE_SCHEMA)
        fleet.query(primary, 'CREATE TABLE IF NOT EXISTS %s.t (id INT AUTO_INCREMENT PRIMARY KEY, '
                             'tag VARCHAR(32) NOT NULL, v INT NOT NULL) ENGINE=InnoDB' % TABLE_SCHEMA)
        replication.write_rows(fleet, primary, 100, 'drop-setup')
    before = dict((h, ahi(fleet, h)) for h in ('db1', 'db2'))
    for host in ('db1', 'db2'):
        fleet.query(host, 'SET GLOBAL innodb_adaptive_hash_index = ON')
    lost_before = replication.FIGURES['rows_lost']
    gtid_before, tables_before = replication.FIGURES['gtid_sets_compared'], replication.FIGURES['tables_compared']
    yield fleet
    for host, value in before.items():
        fleet.query(host, 'SET GLOBAL innodb_adaptive_hash_index = %s' % value)
    line = ('drop fault figures: %d faults injected, %d runs stopped safely, %d runs completed (%d interrupted '
            'runs found and finished by the next run), %d rows lost (%d GTID set and %d CHECKSUM TABLE comparisons)'
            % (FIGURES['faults_injected'], FIGURES['runs_stopped_safely'], FIGURES['runs_completed'],
               FIGURES['interrupted_runs_found'], replication.FIGURES['rows_lost'] - lost_before,
               replication.FIGURES['gtid_sets_compared'] - gtid_before, replication.FIGURES['tables_compared'] - tables_before))
    reporter = request.config.pluginmanager.get_plugin('terminalreporter')
    if reporter:
        reporter.write_line(line)
    print(line)


def nothing_changed_and_nothing_lost(fleet, table):
    assert exists(fleet, 'db1', table) and exists(fleet, 'db2', table)
    assert ahi(fleet, 'db1') == 'ON' and ahi(fleet, 'db2') == 'ON'
    replication.assert_nothing_lost(fleet)
    name = '%s.%s' % (TABLE_SCHEMA, table)
    a = fleet.query('db1', 'CHECKSUM TABLE %s' % name, tries=30)[0]['Checksum']
    b = fleet.query('db2', 'CHECKSUM TABLE %s' % name, tries=30)[0]['Checksum']
    assert a == b and a is not None, '%s: CHECKSUM TABLE %s on db1, %s on db2' % (name, a, b)
    replication.FIGURES['tables_compared'] += 1


# ---------------------------------------------------------------- fault 5: the inventory disagrees with the servers
def _inventory(fleet, tmp_path, how):
    data = yaml.safe_load(open(fleet.inventory, encoding='utf-8'))
    if how == 'role':
        data['all']['children']['mysql']['hosts']['db2']['dbfleet_replication_role'] = 'primary'
    else:  # a group `replicas` that leaves db2 out
        data['all']['children']['replicas'] = {'hosts': {'db4': {}}}
    path = tmp_path / ('%s.yml' % how)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


@pytest.mark.parametrize('how, words', [
    ('role', 'db2: the inventory says primary (dbfleet_replication_role), replica: the server replicates from db1'),
    ('group', 'db2: the inventory says primary (group replicas), replica: the server replicates from db1'),
])
def test_replica_listed_as_primary_refused_before_any_change(drops, tmp_path, how, words):
    fleet = drops
    make_dropped_table(fleet, 'fault5')
    replication.write_rows(fleet, 'db1', 20, 'fault5-%s' % how)
    FIGURES['faults_injected'] += 1
    rc, out = run_drop(fleet, dict(drop_tables_tables=['%s.fault5' % TABLE_SCHEMA], drop_tables_hosts='db1:db2'),
                       inventory=_inventory(fleet, tmp_path, how))
    assert rc != 0, out
    assert 'stopped before any change' in runs.flat(out) and words in runs.flat(out), out
    FIGURES['runs_stopped_safely'] += 1
    nothing_changed_and_nothing_lost(fleet, 'fault5')


def test_replica_left_out_of_the_run_refused_before_any_change(drops):
    fleet = drops
    make_dropped_table(fleet, 'fault5')
    server_id = replication.one(fleet, 'db2', 'SELECT @@GLOBAL.server_id')
    FIGURES['faults_injected'] += 1
    rc, out = run_drop(fleet, dict(drop_tables_tables=['%s.fault5' % TABLE_SCHEMA], drop_tables_hosts='db1'))
    assert rc != 0, out
    assert ('stopped before any change: replicas are missing from the run (or the inventory): db1 has replica '
            'server_id %s' % server_id) in runs.flat(out), out
    FIGURES['runs_stopped_safely'] += 1
    nothing_changed_and_nothing_lost(fleet, 'fault5')


# ---------------------------------------------------------------- fault 4: the controller killed mid-drop
@pytest.mark.parametrize('signame', ['SIGTERM', 'SIGKILL'])
def test_controller_killed_mid_drop_ahi_ends_as_it_began(drops, signame):
    fleet = drops
    table = 'fault4_%s' % signame.lower()
    make_dropped_table(fleet, table)
    replication.write_rows(fleet, 'db1', 20, 'fault4')
    # A backup lock makes db1's DROP wait (it blocks DDL only), after AHI went off on db1 and db2.
    blocker = fleet.connect('db1')
    blocker.cursor().execute('LOCK INSTANCE FOR BACKUP')
    extra = dict(drop_tables_tables=['%s.%s' % (TABLE_SCHEMA, table)], drop_tables_hosts='db1:db2', drop_tables_lock_wait_timeout=4,
                 drop_tables_retries=0, drop_tables_follow_timeout=300)
    proc = subprocess.Popen(drop_cmd(fleet, extra), env=runs.env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    try:
        wait_for(lambda: ahi(fleet, 'db1') == 'OFF' and ahi(fleet, 'db2') == 'OFF', 90,
                 'AHI off on db1 (drop waiting for the lock) and db2 (follower)')
        time.sleep(1)
        proc.send_signal(getattr(signal, signame))
        FIGURES['faults_injected'] += 1
        proc.communicate(timeout=60)
        # db1: its module goes on without the controller, gives up after lock_wait_timeout and puts AHI back.
        wait_for(lambda: ahi(fleet, 'db1') == 'ON', 30, 'AHI back ON on db1 at once')
        assert exists(fleet, 'db1', table) and exists(fleet, 'db2', table)
    finally:
        if proc.poll() is None:
            proc.kill()
        blocker.close()
    # db2's follower outlived its controller (AHI still OFF there): the next run finds it and finishes the drop.
    assert ahi(fleet, 'db2') == 'OFF'
    FIGURES['runs_stopped_safely'] += 1
    rc, out = run_drop(fleet, extra)
    assert rc == 0, out
    text = runs.flat(out)
    assert 'would_cancel' in text and 'cancel the follower of run' in text, out  # said by the preflight
    assert 'interrupted_earlier_run: cancelled' in text, out  # done by this run's follower on db2
    FIGURES['interrupted_runs_found'] += 1
    FIGURES['runs_completed'] += 1
    assert not exists(fleet, 'db1', table) and not exists(fleet, 'db2', table)
    assert ahi(fleet, 'db1') == 'ON' and ahi(fleet, 'db2') == 'ON'
    replication.assert_nothing_lost(fleet)
