# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/settings.yml (role dbfleet.innodb.settings) on the SSH fleet's booted machines, over SSH as `deploy` with
become: db1 (MySQL 8.0.33) -> db2, db3 (Debian's MariaDB 10.11 package) -> db4.

One map of InnoDB settings - dynamic, read-only, renamed (the redo log's size, written once as
innodb_redo_log_capacity) and rounded (the buffer pool as a percentage of the machine's memory, an unaligned log
buffer) - every value different from what the servers run before, with settings_restart: allowed:
- a misspelt name fails on every host before any change, naming the closest real name;
- check mode (--check --diff) predicts the real run task by task, and the restart order;
- the real run sets the dynamic ones, writes the drop-in in the package's drop-in directory, and restarts every
  server for its read-only ones one at a time, replicas first (db2 before db1, db4 before db3; never both servers of
  a pair down at once, watched from outside), replication running and GTIDs advancing after;
- a second run changes nothing; verify (desired_from [settings]) reports no drift on all four.
The hosts get back what they ran before: the drop-in removed, each restarted once by the lab, replicas first."""

from __future__ import annotations

import json
import os
import re
import time

import pymysql
import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils import values

from dbfleet_testing.background import Background
from dbfleet_testing.lab import REPO
from dbfleet_testing.replication import PAIRS, SCHEMA, assert_nothing_lost, one, wait_replicating, write_rows
from dbfleet_testing.runs import adhoc_result, ansible, flat
from dbfleet_testing.settings_role import DROPIN, MAP, changed_by_host, changed_by_task, play

HOSTS = tuple(h for pair in PAIRS for h in pair)
PLAYBOOK = os.path.join(REPO, 'playbooks', 'settings.yml')
# The lab's map with the fleet's own rounded values: 3% of the machine's memory (MemTotal; the machines set no
# cgroup limit) for the buffer pool, rounded by MySQL to chunk x instances, and a log buffer that is no multiple of
# its 1 KiB block. Read-only here: innodb_sort_buffer_size everywhere, innodb_read_io_threads on MySQL,
# innodb_log_buffer_size on MariaDB - so every server restarts.
FLEET_MAP = dict(MAP, innodb_buffer_pool_size='3%', innodb_log_buffer_size=34000000)
READ_ONLY = dict(db1={'innodb_sort_buffer_size', 'innodb_read_io_threads'},
                 db3={'innodb_sort_buffer_size', 'innodb_log_buffer_size'})
READ_ONLY.update(db2=READ_ONLY['db1'], db4=READ_ONLY['db3'])


def kind(value):
    return 'str' if isinstance(value, str) else 'int'


def running(fleet, host, names):
    rows = fleet.query(host, 'SHOW GLOBAL VARIABLES WHERE Variable_name IN (%s)' % ', '.join(['%s'] * len(names)),
                       list(names), tries=30)
    return dict((r['Variable_name'], r['Value']) for r in rows)


def started_at(fleet, host):
    """When the server started (its clock minus Uptime; the machines share this machine's clock)."""
    now = one(fleet, host, 'SELECT UNIX_TIMESTAMP()')
    uptime = fleet.query(host, "SHOW GLOBAL STATUS LIKE 'Uptime'", tries=30)[0]['Value']
    return int(now) - int(uptime)


def gtid(fleet, host):
    return one(fleet, host, 'SELECT @@GLOBAL.gtid_executed' if host in ('db1', 'db2')
               else 'SELECT @@GLOBAL.gtid_binlog_pos').replace('\n', '')


class DownWatch(Background):
    """Asks every host of the pairs, from outside, about five times a second while inside whether it answers: the
    sweeps, each the set of hosts that were down (no answer in 3 s on the connection kept to it, nor to a new login:
    connection refused or no answer in 3 s). One connection per host while it answers, a new login only after it
    stopped answering (a login costs the watch's CPU, a ping almost none)."""

    def __init__(self, fleet):
        self.fleet, self.sweeps, self.kept = fleet, [], {}
        super().__init__()

    def answers(self, host):
        conn = self.kept.pop(host, None)
        if conn is not None:
            try:
                conn.ping(reconnect=False)
                self.kept[host] = conn
                return True
            except pymysql.err.Error:
                if conn.open:
                    conn.close()
        try:
            self.kept[host] = self.fleet.connect(host, connect_timeout=3, read_timeout=3, write_timeout=3)
            return True
        except pymysql.err.OperationalError:
            return False

    def loop(self):
        try:
            while not self.stop.is_set():
                down = set(host for host in HOSTS if not self.answers(host))
                self.sweeps.append((time.time(), down))
                time.sleep(0.2)
        finally:
            for conn in self.kept.values():
                if conn.open:
                    conn.close()

    def seen_down(self, host):
        """The moments host was seen down."""
        return [at for at, down in self.sweeps if host in down]


@pytest.fixture()
def fleet_as_found(fleet):
    """db1-db4 replicating, without the role's drop-in, before and after (the lab restarts each server once, replicas
    first, which also drops what SET GLOBAL changed); the values a run changes put back."""
    assert all(fleet.refresh()[h]['state'] == 'up' for h in HOSTS), fleet.hosts

    def clean():
        for primary, replica in PAIRS:
            for host in (replica, primary):
                path = fleet.dropin_path(host, DROPIN)
                if os.path.exists(path):
                    os.remove(path)
                    fleet.run('restart', host)
            wait_replicating(fleet, replica)
    clean()
    for primary, _replica in PAIRS:
        fleet.query(primary, 'CREATE DATABASE IF NOT EXISTS %s' % SCHEMA)
        fleet.query(primary, 'CREATE TABLE IF NOT EXISTS %s.t (id INT AUTO_INCREMENT PRIMARY KEY, '
                             'tag VARCHAR(32) NOT NULL, v INT NOT NULL) ENGINE=InnoDB' % SCHEMA)
    kept = ('innodb_io_capacity', 'innodb_buffer_pool_size', 'innodb_sort_buffer_size')
    before = dict((h, running(fleet, h, kept)) for h in HOSTS)
    yield before
    clean()
    for host in HOSTS:
        assert running(fleet, host, kept) == before[host], host


def test_a_settings_map_reaches_the_ssh_fleet(fleet, fleet_as_found, tmp_path):
    began = time.monotonic()
    where = dict(hosts=HOSTS, inventory=fleet.inventory, playbook=PLAYBOOK)
    extra = dict(settings_values=FLEET_MAP, settings_restart='allowed')

    # A misspelt name: every host fails before any change, naming the closest real name.
    rc, out, _results = play(tmp_path, dict(extra, settings_values=dict(FLEET_MAP, innodb_bufer_pool_size='1G')),
                             **where)
    assert rc != 0, out
    failed = dict(re.findall(r'^(db\d)\s+: ok=\d+\s+changed=0\s+unreachable=0\s+failed=(\d+)', out, re.M))
    assert failed == dict((h, '1') for h in HOSTS), out
    for version in ('MySQL 8.0.33', 'MariaDB 10.11.18'):
        assert ('settings_values.innodb_bufer_pool_size: %s has no such variable (closest: innodb_buffer_pool_size'
                % version) in flat(out), out
    for host in HOSTS:
        assert not os.path.exists(fleet.dropin_path(host, DROPIN)), host
        assert running(fleet, host, ['innodb_io_capacity']) == dict(
            innodb_io_capacity=fleet_as_found[host]['innodb_io_capacity']), host

    # Check mode: what each server would run with, every value different from what it runs now.
    rc, out, check_results = play(tmp_path, extra, '--check', '--diff', **where)
    assert rc == 0, out
    # The scaffold publishes the record's outputs, one fact per loop item (roles/scaffold/tasks/desired.yml).
    wanted = dict((r['host'], r['result']['ansible_facts']['settings_desired_settings'])
                  for r in check_results if 'Publish the outputs that the desired state says of' in r['task']
                  and 'settings_desired_settings' in (r['result'].get('ansible_facts') or {}))
    assert set(wanted) == set(HOSTS), check_results
    for host, state in wanted.items():
        assert len(state) >= 10, (host, state)
        now = running(fleet, host, state)
        for name, value in state.items():
            assert not values.equal(value, now[name], kind(value)), (host, name, value)     # else it proves nothing
        assert not os.path.exists(fleet.dropin_path(host, DROPIN)), host
    assert 'innodb_redo_log_capacity' in wanted['db1'] and 'innodb_log_file_size' in wanted['db3'], wanted
    assert wanted['db1']['innodb_buffer_pool_size'] % (128 << 20) == 0, wanted['db1']        # chunk x instances
    # The unaligned log buffer as each server rounds it: MySQL to its 1 KiB block, MariaDB to 4 KiB.
    assert (wanted['db1']['innodb_log_buffer_size'], wanted['db3']['innodb_log_buffer_size']) == (33999872, 33996800)
    assert 'would restart one server at a time, in this order: db2 -> db1 -> db4 -> db3' in flat(out), out
    assert '+innodb_sort_buffer_size = 2097152' in out and '+innodb_log_file_size = 201326592' in out, out

    # The real run, watched from outside: who is down when.
    before = dict((h, started_at(fleet, h)) for h in HOSTS)
    gtids = dict((p, gtid(fleet, p)) for p, _r in PAIRS)
    with DownWatch(fleet) as watch:
        rc, out, real_results = play(tmp_path, extra, **where)
    assert rc == 0, out
    # Task by task, the role's own and the scaffold's; the restart role's steps by the order it names (above, below).
    predicted, done = [dict((k, v) for k, v in changed_by_task(results).items()
                            if not k[0].startswith('dbfleet.innodb.restart :'))
                       for results in (check_results, real_results)]
    # Check mode restarts nothing, so its report still names the read-only settings as pending - exactly those the
    # real run's restart applied (and no longer reports).
    pending = dict((h, set()) for h in HOSTS)
    for key in [k for k in predicted if k[2] and ': pending_restart: ' in k[2]]:
        pending[key[1]].add(json.loads(key[2]).split(':')[0])
        del predicted[key]
    assert pending == READ_ONLY, pending
    assert predicted == done, sorted(set(predicted.items()) ^ set(done.items()), key=str)
    assert 'restarts one server at a time, in this order: db2 -> db1 -> db4 -> db3' in flat(out), out
    for host in HOSTS:
        # The dynamic ones at runtime (one run, in their order), the drop-in in the package's drop-in directory.
        set_now = set(name for r in real_results if r['host'] == host and r['status'] == 'ok'
                      and r['task'].endswith(': Set at runtime, in the order of the desired state, the settings of '
                                             'settings') for name in r['result']['order'])
        assert set_now == set(wanted[host]) - READ_ONLY[host], (host, set_now)
        path = fleet.dropin_path(host, DROPIN)
        assert os.path.dirname(path).endswith('/etc/mysql/mysql.conf.d' if host in ('db1', 'db2')
                                              else '/etc/mysql/mariadb.conf.d'), path
        with open(path, encoding='utf-8') as handle:
            assert 'innodb_sort_buffer_size = 2097152' in handle.read().splitlines(), path
        # The read-only ones applied by the restart: the server runs every value the role predicted.
        now = running(fleet, host, wanted[host])
        assert all(values.equal(v, now[n], kind(v)) for n, v in wanted[host].items()), (host, now, wanted[host])
    # One server of a pair at a time, the replica first: the servers' start times, and what the watch saw.
    after = dict((h, started_at(fleet, h)) for h in HOSTS)
    assert all(after[h] > before[h] for h in HOSTS), (before, after)
    for primary, replica in PAIRS:
        assert after[replica] < after[primary], (after, primary, replica)
        # Never both of a pair down in one sweep; a server seen down (a fast MariaDB restart may fall between two
        # sweeps) only in its turn: the replica's before the primary's.
        assert not [at for at, down in watch.sweeps if {primary, replica} <= down], watch.sweeps
        if watch.seen_down(replica) and watch.seen_down(primary):
            assert max(watch.seen_down(replica)) < min(watch.seen_down(primary)), (replica, primary, watch.sweeps)
    assert len(watch.sweeps) > 20 and any(down for _at, down in watch.sweeps), watch.sweeps
    # Replication runs and GTIDs advance: rows written on each primary now reach its replica.
    for primary, replica in PAIRS:
        wait_replicating(fleet, replica)
        write_rows(fleet, primary, 20, 'settings')
        assert gtid(fleet, primary) != gtids[primary], primary
    assert_nothing_lost(fleet)

    # A second run changes nothing; verify finds no drift on any of the four.
    rc, out, _results = play(tmp_path, extra, **where)
    assert rc == 0 and set(changed_by_host(out, HOSTS).values()) == {0}, out   # the inputs are checked on the hosts' play
    rc, out = ansible('ansible', ':'.join(HOSTS), '-i', fleet.inventory, '-m', 'dbfleet.innodb.verify', '-a', json.dumps(
        dict(settings={}, desired_from=['settings'], role_variables=dict(settings_values=FLEET_MAP))))
    assert rc == 0, out
    for host in HOSTS:
        result = adhoc_result(host, out)
        bad = dict((k, v['status']) for k, v in result['variables'].items() if v['status'] != 'ok')
        assert result['drift'] is False and not bad, (host, bad)
        assert set(wanted[host]) <= set(result['variables']), (host, sorted(result['variables']))
    print('settings on the SSH fleet: %.0f s' % (time.monotonic() - began))
