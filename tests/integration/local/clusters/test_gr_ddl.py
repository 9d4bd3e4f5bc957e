"""Guarded DDL on the lab's real Group Replication group (gr1 gr2 gr3: MySQL 8.0.33, single primary).

The fixture is test_group_replication.py's (starts the group when it is not up, stops it at the end of the
module if it started it); the primary is read from the group.

- drop_tables.yml on the group with the default ``drop_tables_ahi_strategy=auto`` (versions/flavors.py: MySQL 8.0 toggles AHI
  around a DROP): the DROP runs once, on the primary; a thread polls every member's AHI and the table every
  0.05 s: AHI stayed OFF on each secondary from its switch until the table disappeared there, ON again on every member after; the
  secondaries are reported "dropped by the cluster (the drop ran on <primary>)", rc 0, and the report task
  says what each host did;
- convert_tables.yml on the group: one ALTER on the primary, the secondaries verified (engine InnoDB there,
  same rows and checksum);
- refused before any change, naming the member and the reason: a run that leaves a member out (``--limit``),
  and a member out of the group (STOP GROUP_REPLICATION): the table still on every member, AHI untouched.
"""
import threading
import time

from dbfleet_testing.clusters import MEMBERS, primary_of, wait_all_online

from dbfleet_testing import runs
SCHEMA = 'dbfleet_it_gr_ddl'


def window_now():
    hour = time.gmtime().tm_hour
    return '%02d:00-%02d:00' % ((hour + 23) % 24, (hour + 2) % 24)


def playbook(grp, name, extra, limit='group_replication'):
    return runs.playbook(grp.inventory, name, extra, limit=limit, env_extra=dict(
        ANSIBLE_STDOUT_CALLBACK='ansible.builtin.default', ANSIBLE_LOAD_CALLBACK_PLUGINS='0',
        ANSIBLE_CALLBACK_RESULT_FORMAT='json'))


def drop(grp, table, limit='group_replication', **extra):
    args = dict(drop_tables_tables=['%s.%s' % (SCHEMA, table)], drop_tables_window=window_now(), drop_tables_confirm=True)
    args.update(extra)
    return playbook(grp, 'drop_tables.yml', args, limit)


def table_on(grp, host, table):
    return bool(grp.query(host, 'SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s',
                          (SCHEMA, table), tries=10))


def ahi(grp, host):
    return int(grp.query(host, 'SELECT @@GLOBAL.innodb_adaptive_hash_index AS v')[0]['v'])


def make_table(grp, primary, table, engine='InnoDB'):
    grp.query(primary, 'CREATE DATABASE IF NOT EXISTS %s' % SCHEMA)
    grp.query(primary, 'DROP TABLE IF EXISTS %s.%s' % (SCHEMA, table))
    grp.query(primary, 'CREATE TABLE %s.%s (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(64)) ENGINE=%s'
              % (SCHEMA, table, engine))
    if engine == 'InnoDB':
        grp.query(primary, "INSERT INTO %s.%s (v) WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
                           "WHERE n < 1000) SELECT REPEAT('x', 64) FROM s" % (SCHEMA, table))
    deadline = time.monotonic() + 60
    while not all(table_on(grp, h, table) for h in MEMBERS):
        assert time.monotonic() < deadline, 'the table did not reach every member'
        time.sleep(0.2)


class Poller:
    """Every member's AHI and whether the table is there, every ~0.05 s, one thread per member: {host: [(ahi, present)]}."""

    def __init__(self, grp, table):
        self.grp, self.table, self.stop = grp, table, threading.Event()
        self.samples = dict((h, []) for h in MEMBERS)
        self.threads = [threading.Thread(target=self.poll, args=(h,), daemon=True) for h in MEMBERS]

    def start(self):
        for thread in self.threads:
            thread.start()

    def join(self, timeout):
        for thread in self.threads:
            thread.join(timeout)

    def poll(self, host):
        conn = self.grp.connect(host)
        try:
            while not self.stop.is_set():
                with conn.cursor() as cur:
                    cur.execute('SELECT @@GLOBAL.innodb_adaptive_hash_index, (SELECT COUNT(*) FROM '
                                'information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s)',
                                (SCHEMA, self.table))
                    value, present = cur.fetchone()
                self.samples[host].append((int(value), bool(present)))
                time.sleep(0.05)
        finally:
            conn.close()


def test_drop_on_the_group_runs_once_on_the_primary_with_ahi_off_on_every_member(group):  # noqa: F811
    primary = primary_of(group)
    secondaries = [h for h in MEMBERS if h != primary]
    make_table(group, primary, 'big')
    before = dict((h, ahi(group, h)) for h in MEMBERS)
    for h in MEMBERS:
        group.query(h, 'SET GLOBAL innodb_adaptive_hash_index = ON')
    poller = Poller(group, 'big')
    poller.start()
    try:
        rc, out = drop(group, 'big')
    finally:
        poller.stop.set()
        poller.join(10)
        for h, value in before.items():
            group.query(h, 'SET GLOBAL innodb_adaptive_hash_index = %s' % ('ON' if value else 'OFF'))
    assert rc == 0, out[-5000:]
    assert not any(table_on(group, h, 'big') for h in MEMBERS)
    assert out.count('drops once for cluster') == 1, out[-5000:]
    flat = ' '.join(out.split())
    assert '%s (mysql 8.0.33): member (ONLINE PRIMARY) of group_replication' % primary in flat, flat[-5000:]
    assert all('%s (mysql 8.0.33): member (ONLINE SECONDARY) of group_replication' % h in flat for h in secondaries)
    assert out.count('the drop on %s reaches it through cluster' % primary) == 2, out[-5000:]
    assert out.count('dropped by the cluster (the drop ran on %s)' % primary) == 2, out[-5000:]
    assert 'switch AHI OFF' in out, out[-5000:]  # auto on MySQL 8.0: versions/flavors.py says toggle
    samples = poller.samples
    # AHI stayed OFF on each secondary from its switch until the table was gone there (the follower puts it back within
    # its 0.2 s poll after that, so the first sample without the table may already see it ON)
    for h in secondaries:
        gone = next(i for i, s in enumerate(samples[h]) if not s[1])
        off = next((i for i, s in enumerate(samples[h]) if s == (0, True)), None)
        assert off is not None and off < gone and samples[h][gone - 1] == (0, True), (h, samples[h][max(gone - 3, 0):gone + 3])
        assert all(s == (0, True) for s in samples[h][off:gone]), (h, samples[h][off:gone + 1])
    # the primary switches AHI off right before its DROP and back right after (too short for the poll): its report
    # says so, as the followers' do
    assert out.count('"ahi_toggled": true') == 3, out[-5000:]
    assert all(samples[h][-1] == (1, False) for h in MEMBERS), dict((h, samples[h][-1]) for h in MEMBERS)
    # The same GTIDs everywhere: the DROP was one transaction of the group, applied once on each member.
    wait_all_online(group)
    executed = dict((h, group.query(h, 'SELECT @@GLOBAL.gtid_executed AS g')[0]['g'].replace('\n', '')) for h in MEMBERS)
    deadline = time.monotonic() + 30
    while len(set(executed.values())) > 1 and time.monotonic() < deadline:
        time.sleep(0.5)
        executed = dict((h, group.query(h, 'SELECT @@GLOBAL.gtid_executed AS g')[0]['g'].replace('\n', '')) for h in MEMBERS)
    assert len(set(executed.values())) == 1, executed


def test_convert_on_the_group_alters_once_on_the_primary_and_verifies_the_secondaries(group):  # noqa: F811
    primary = primary_of(group)
    make_table(group, primary, 'legacy', engine='MyISAM')
    args = dict(convert_tables_tables=['%s.legacy' % SCHEMA], convert_tables_window=window_now())
    rc, out = playbook(group, 'convert_tables.yml', args)
    assert rc == 0, out[-5000:]
    engines = dict((h, group.query(h, 'SELECT ENGINE AS e FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s '
                                      'AND TABLE_NAME = %s', (SCHEMA, 'legacy'))[0]['e']) for h in MEMBERS)
    assert engines == dict((h, 'InnoDB') for h in MEMBERS), engines
    assert out.count('the ALTER on %s reaches it through cluster' % primary) == 2, out[-5000:]
    group.query(primary, 'DROP TABLE %s.legacy' % SCHEMA)


def test_a_run_without_every_member_is_refused_before_any_change(group):  # noqa: F811
    primary = primary_of(group)
    left_out = next(h for h in MEMBERS if h != primary)
    make_table(group, primary, 'kept')
    before = dict((h, ahi(group, h)) for h in MEMBERS)
    rc, out = drop(group, 'kept', limit=':'.join(h for h in MEMBERS if h != left_out), drop_tables_ahi_strategy='toggle')
    assert rc != 0, out[-4000:]
    assert 'stopped before any change' in out and left_out in out and 'missing' in out, out[-4000:]
    assert all(table_on(group, h, 'kept') for h in MEMBERS)
    assert dict((h, ahi(group, h)) for h in MEMBERS) == before


def test_a_member_out_of_the_group_is_refused_before_any_change(group):  # noqa: F811
    primary = primary_of(group)
    secondary = next(h for h in MEMBERS if h != primary)
    make_table(group, primary, 'kept')
    before = dict((h, ahi(group, h)) for h in MEMBERS)
    group.query(secondary, 'STOP GROUP_REPLICATION')
    try:
        rc, out = drop(group, 'kept', drop_tables_ahi_strategy='toggle')
        still = dict((h, table_on(group, h, 'kept')) for h in MEMBERS)
        ahi_now = dict((h, ahi(group, h)) for h in MEMBERS)
    finally:
        group.query(secondary, 'START GROUP_REPLICATION')
        wait_all_online(group)
    assert rc != 0, out[-4000:]
    flat = ' '.join(out.split())
    assert 'stopped before any change' in flat and '%s: state OFFLINE, not ONLINE' % secondary in flat, flat[-4000:]
    assert all(still.values()), still
    assert ahi_now == before
    group.query(primary, 'DROP DATABASE IF EXISTS %s' % SCHEMA)
