"""The one restart path on the SSH fleet, with faults injected (real processes, real SSH, real replication).

Fleet: db1 -> db2 (MySQL 8.0, GTID auto-position), db3 -> db4 (MariaDB 10.11, GTID slave_pos).
Each test injects one fault during (or just before) playbooks/rolling_restart.yml or the adaptive_hash
role, asserts how the run ended and that nothing was lost: replication runs, the GTID sets of source and
replica are equal and CHECKSUM TABLE agrees on every table written. The figures (faults injected, runs
that stopped safely, rows lost) are printed at the end of the module and recorded in docs/topology.md.
"""
import os
import re
import signal
import subprocess
import threading
import time

import pymysql
import pytest
import yaml
from dbfleet_testing.replication import FIGURES, PAIRS, SCHEMA, assert_nothing_lost, one, pid_of, pids, wait_replicating, write_rows
from dbfleet_testing.runs import flat, playbook


@pytest.fixture(scope='module')
def topo(fleet, request):
    """The fleet, replicating, with a table written on both primaries; figures printed at the end."""
    assert all(row['state'] == 'up' for row in fleet.refresh().values()), fleet.hosts
    for primary, replica in PAIRS:
        wait_replicating(fleet, replica)
        fleet.query(primary, 'CREATE DATABASE IF NOT EXISTS %s' % SCHEMA)
        fleet.query(primary, 'CREATE TABLE IF NOT EXISTS %s.t (id INT AUTO_INCREMENT PRIMARY KEY, '
                             'tag VARCHAR(32) NOT NULL, v INT NOT NULL) ENGINE=InnoDB' % SCHEMA)
        write_rows(fleet, primary, 100, 'setup')
    yield fleet
    reporter = request.config.pluginmanager.get_plugin('terminalreporter')
    line = ('restart fault figures: %(faults_injected)d faults injected, %(runs_stopped_safely)d runs stopped '
            'safely, %(runs_completed)d runs completed, %(rows_lost)d rows lost (%(gtid_sets_compared)d GTID set '
            'and %(tables_compared)d CHECKSUM TABLE comparisons; %(sysbench_transactions)d sysbench transactions '
            'written during a restart)' % FIGURES)
    if reporter:
        reporter.write_line(line)
    print(line)


def untouched(before, after, hosts):
    return [h for h in hosts if before[h] == after[h]]


def refused_before_any_change(fleet, before, rc, out, *names):
    """The run failed, naming each of names, stopped before any change, and restarted nothing; nothing was lost."""
    text = flat(out)
    assert rc != 0, out
    assert all(name in text for name in names), out
    assert 'stopped before any change' in text, out
    assert pids(fleet) == before, out
    FIGURES['runs_stopped_safely'] += 1
    assert_nothing_lost(fleet)


# ---------------------------------------------------------------- fault 2: a replica's SQL thread stopped
def test_stopped_sql_thread_refused_before_any_restart(topo):
    fleet = topo
    before = pids(fleet)
    fleet.query('db2', 'STOP REPLICA SQL_THREAD')
    FIGURES['faults_injected'] += 1
    try:
        write_rows(fleet, 'db1', 50, 'sql-stopped')
        rc, out = playbook(fleet.inventory, 'rolling_restart.yml', dict(rolling_restart_all=True,
                                                                        rolling_restart_hosts='db1:db2'))
    finally:
        fleet.query('db2', 'START REPLICA SQL_THREAD')
    refused_before_any_change(fleet, before, rc, out, 'db2: replication: SQL thread No', 'Untouched: db2, db1')


# ---------------------------------------------------------------- fault 3: a host unreachable over SSH
def test_unreachable_host_named_and_nothing_restarted(topo):
    fleet = topo
    before = pids(fleet)
    veth = 'dbf%s-db4' % ('' if os.environ.get('DBFLEET_FLEET_NET', '7') == '7' else os.environ['DBFLEET_FLEET_NET'])
    subprocess.run(['ip', 'link', 'set', veth, 'down'], check=True)
    FIGURES['faults_injected'] += 1
    try:
        rc, out = playbook(fleet.inventory, 'rolling_restart.yml', dict(rolling_restart_all=True), timeout=300)
    finally:
        subprocess.run(['ip', 'link', 'set', veth, 'up'], check=True)
    refused_before_any_change(fleet, before, rc, out, 'db4: unreachable')


# ---------------------------------------------------------------- fault 5: an inventory that lists a replica as a primary
def test_inventory_listing_a_replica_as_primary_refused_before_any_change(topo, tmp_path):
    fleet = topo
    before = pids(fleet)
    with open(fleet.inventory, encoding='utf-8') as handle:
        data = yaml.safe_load(handle)
    children = data['all']['children']
    children['mysql']['hosts']['db2'].pop('dbfleet_replication_source', None)
    children['replicas']['hosts'].pop('db2', None)
    children['primaries']['hosts']['db2'] = {}
    wrong = tmp_path / 'hosts.yml'
    wrong.write_text(yaml.safe_dump(data), encoding='utf-8')
    FIGURES['faults_injected'] += 1
    rc, out = playbook(str(wrong), 'rolling_restart.yml', dict(rolling_restart_all=True))
    refused_before_any_change(fleet, before, rc, out, 'the inventory and the servers disagree',
                              'db2: the inventory says primary')


# ---------------------------------------------------------------- fault 1: a replica killed during the run
def test_replica_killed_during_rolling_restart_stops_before_the_primary(topo):
    fleet = topo
    before = pids(fleet)
    killed = {}

    def kill_restarted_db2():
        deadline = time.monotonic() + 120
        # A connection kept to db2 breaks when its restart stops it: its PID is read (a process inside its machine,
        # about 15 ms of CPU) only from then on, a ping before (almost none).
        kept = fleet.connect('db2', read_timeout=5, write_timeout=5)
        while kept is not None and time.monotonic() < deadline:
            try:
                kept.ping(reconnect=False)
                time.sleep(0.2)
            except pymysql.err.Error:
                kept = None
        while time.monotonic() < deadline:
            pid = pid_of(fleet, 'db2')
            if pid and pid != before['db2']:
                try:
                    fleet.query('db2', 'SELECT 1', tries=20)
                except pymysql.err.MySQLError:
                    pass
                os.kill(pid, signal.SIGKILL)
                killed['pid'] = pid
                return
            time.sleep(0.2)

    with fleet.killed_stays_down('db2'):       # a booted host's systemd would start it again
        killer = threading.Thread(target=kill_restarted_db2)
        killer.start()
        try:
            rc, out = playbook(fleet.inventory, 'rolling_restart.yml', dict(
                rolling_restart_all=True, rolling_restart_hosts='db1:db2', rolling_restart_timeout=20))
        finally:
            killer.join(150)
    assert killed, 'db2 never restarted, so nothing was killed:\n' + out
    FIGURES['faults_injected'] += 1
    assert rc != 0, out
    assert 'The run stopped at db2; not restarted: db1.' in flat(out), out
    assert pids(fleet)['db1'] == before['db1'], 'the primary restarted after its replica died:\n' + out
    FIGURES['runs_stopped_safely'] += 1
    # Bring db2 back as an operator would; it must catch up with what db1 wrote meanwhile.
    write_rows(fleet, 'db1', 50, 'db2-down')
    fleet.run('up', 'db2')
    assert_nothing_lost(fleet)


# ---------------------------------------------------------------- fault 6: writes on the primary during the run
def test_write_load_on_primary_while_its_replica_restarts(topo):
    fleet = topo
    before = pids(fleet)
    row = fleet.hosts['db1']
    conn_args = ['--mysql-host=%s' % row['address'], '--mysql-port=3306', '--mysql-user=%s' % fleet.admin_user,
                 '--mysql-password=%s' % fleet.admin_password, '--mysql-db=%s' % SCHEMA, '--tables=1',
                 '--table-size=2000', '--db-driver=mysql']
    subprocess.run(['sysbench', 'oltp_write_only'] + conn_args + ['cleanup'], capture_output=True, check=False,
                   timeout=60)
    prep = subprocess.run(['sysbench', 'oltp_write_only'] + conn_args + ['prepare'], capture_output=True,
                          text=True, check=False, timeout=120)
    assert prep.returncode == 0, prep.stdout + prep.stderr
    run_args = ['--threads=2', '--time=25', '--report-interval=0', 'run']
    load = subprocess.Popen(['sysbench', 'oltp_write_only'] + conn_args + run_args,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    FIGURES['faults_injected'] += 1
    try:
        time.sleep(2)
        rc, out = playbook(fleet.inventory, 'rolling_restart.yml', dict(rolling_restart_all=True, rolling_restart_hosts='db2'))
    finally:
        bench_out = load.communicate(timeout=120)[0]
    assert rc == 0, out
    assert load.returncode == 0, bench_out
    transactions = int(re.search(r'transactions:\s+(\d+)', bench_out).group(1))
    assert transactions > 0, bench_out
    FIGURES['sysbench_transactions'] += transactions
    after = pids(fleet)
    assert after['db2'] != before['db2'] and after['db1'] == before['db1'], out
    FIGURES['runs_completed'] += 1
    assert_nothing_lost(fleet, tables=('t', 'sbtest1'))


# ---------------------------------------------------------------- the roles: adaptive_hash_restart: allowed
def _log_times(fleet, host, pattern, since):
    out = []
    for line in fleet.error_log_lines(host):
        if pattern in line:
            # MySQL: 2026-11-23T14:40:31.213791Z ...; MariaDB: 2026-11-23 14:42:10 ..., its hour padded with a
            # space, not a zero (2026-11-26  0:07:48): zero-padded here, so that it compares with since as text.
            words = line.split()
            if 'T' in words[0]:
                stamp = words[0]
            else:
                hour, rest = words[1].split(':', 1)
                stamp = '%sT%02d:%s' % (words[0], int(hour), rest)
            if stamp >= since:
                out.append(stamp)
    return out


def test_adaptive_hash_restart_allowed_restarts_one_at_a_time_primary_last(topo, tmp_path):
    fleet = topo
    before = pids(fleet)
    current = int(one(fleet, 'db1', 'SELECT @@GLOBAL.innodb_adaptive_hash_index_parts'))
    parts = 4 if current != 4 else 16
    since = time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(time.time() - 1))
    play = tmp_path / 'ahi.yml'
    play.write_text('- name: Apply adaptive_hash with restarts allowed\n  hosts: db1:db2\n  gather_facts: false\n'
                    '  roles:\n    - role: dbfleet.innodb.adaptive_hash\n')
    extra = dict(adaptive_hash_parts=parts, adaptive_hash_restart='allowed')
    try:
        rc, out = playbook(fleet.inventory, str(play), extra, check=True, forks=10)
        assert rc == 0, out
        assert 'would restart one server at a time, in this order: db2 -> db1' in flat(out), out
        assert pids(fleet) == before
        rc, out = playbook(fleet.inventory, str(play), extra, forks=10)
        assert rc == 0, out
        after = pids(fleet)
        assert after['db1'] != before['db1'] and after['db2'] != before['db2'], out
        for host in ('db1', 'db2'):
            assert int(one(fleet, host, 'SELECT @@GLOBAL.innodb_adaptive_hash_index_parts')) == parts
        # db2 was up again (and passed its gate) before db1 went down: the two never were down together.
        db2_ready = _log_times(fleet, 'db2', 'ready for connections', since)
        db1_down = _log_times(fleet, 'db1', 'Received SHUTDOWN', since)
        db2_down = _log_times(fleet, 'db2', 'Received SHUTDOWN', since)
        assert len(db1_down) == 1 and len(db2_down) == 1 and db2_ready, (db1_down, db2_down, db2_ready)
        assert db2_down[0] < db2_ready[-1] < db1_down[0], (db2_down, db2_ready, db1_down)
        FIGURES['runs_completed'] += 1
        # Nothing pending any more: a second run restarts nothing.
        rc, out = playbook(fleet.inventory, str(play), extra, forks=10)
        assert rc == 0 and pids(fleet) == after, out
    finally:
        for host in ('db1', 'db2'):
            path = fleet.dropin_path(host, '60-dbfleet-adaptive_hash.cnf')
            if os.path.exists(path):
                os.remove(path)
    assert_nothing_lost(fleet)


def test_serial_2_forks_10_primaries_wait_for_their_replicas_batch(topo, tmp_path):
    """Inventory order db1, db3, db2, db4 with serial 2: both primaries are in the first batch, their
    replicas in the second. Each replica must be back before its primary goes down."""
    fleet = topo
    before = pids(fleet)
    data = yaml.safe_load(open(fleet.inventory, encoding='utf-8'))
    children = data['all']['children']
    data['all']['children'] = dict([('ordered', {'hosts': dict((h, {}) for h in ('db1', 'db3', 'db2', 'db4'))})]
                                   + list(children.items()))
    inventory = tmp_path / 'ordered.yml'
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    since = time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(time.time() - 1))
    rc, out = playbook(str(inventory), 'rolling_restart.yml', dict(rolling_restart_all=True, rolling_restart_serial=2),
                       forks=10)
    assert rc == 0, out
    text = flat(out)
    assert 'in this order: nothing; waiting for a later batch: db1, db3' in text, out
    assert 'in this order: db2 -> db1 -> db4 -> db3' in text, out
    after = pids(fleet)
    assert all(after[h] != before[h] for h in after), out
    for primary, replica in PAIRS:
        ready = _log_times(fleet, replica, 'ready for connections', since)
        down = _log_times(fleet, primary, 'Received SHUTDOWN' if primary == 'db1' else 'Normal shutdown', since)
        assert ready and len(down) == 1 and ready[-1] < down[0], (replica, ready, primary, down)
    FIGURES['runs_completed'] += 1
    assert_nothing_lost(fleet)
