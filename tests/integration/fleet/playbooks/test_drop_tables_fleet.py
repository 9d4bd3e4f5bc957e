"""playbooks/drop_tables.yml on the SSH fleet (db1 -> db2, booted Debian hosts reached as `deploy` with become): one
replicated drop with AHI toggled and the files removed staged, read by several tests: the drop reaches the replica
and puts AHI back as it was; the primary and the replica each link their own copy of the table's file (as the
server's user) before the statement reaches them, shrink it and remove it, nothing left behind; replication stays
healthy (the local lab's tests are local/playbooks/test_drop_tables.py and test_drop_tables_staged.py)."""
import os
import time

import pytest

from dbfleet_testing.runs import YAML_RESULTS, flat, playbook_proc
from dbfleet_testing.windows import window_around_now

SCHEMA = 'dbfleet_test_drop_fleet_it'
STAGING = '/var/lib/dbfleet-staged-drop'   # the default: beside the packaged datadir /var/lib/mysql


def _wait_on_replica(cur_r, sql, args, want, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cur_r.execute(sql, args)
        if cur_r.fetchone()[0] == want:
            return True
        time.sleep(0.5)
    return False


def _host_reports(stdout):
    """The text of the playbook's `Report per host` task for each host (flat: folded lines joined)."""
    part = stdout.split('TASK [Report per host]', 1)[1].split('TASK [', 1)[0]
    out = {}
    for chunk in part.split('ok: [')[1:]:
        host, _sep, rest = chunk.partition(']')
        out[host] = flat(rest)
    return out


# ------------------------------------------------------------------ the SSH fleet (the `fleet` fixture brings it up)
@pytest.fixture(scope='module')
def replicated_drop(fleet):
    """One staged, AHI-toggled drop of SCHEMA.t1 (a 3 MiB table) on db1 replicated to db2: what the tests read."""
    assert all(row['state'] == 'up' for row in fleet.refresh().values()), fleet.hosts
    machines = dict((h, fleet.machine(h)) for h in ('db1', 'db2'))
    assert all(machines.values()), 'db1 and db2 must be booted hosts (lab.py --mode ssh up): %s' % machines
    primary, replica = fleet.connect('db1', via='socket'), fleet.connect('db2', via='socket')
    cur_p, cur_r = primary.cursor(), replica.cursor()
    cur_r.execute('SELECT @@GLOBAL.innodb_adaptive_hash_index')
    ahi_before = cur_r.fetchone()[0]
    cur_p.execute('DROP DATABASE IF EXISTS %s' % SCHEMA)
    cur_p.execute('CREATE DATABASE %s' % SCHEMA)
    cur_p.execute('CREATE TABLE %s.t1 (id INT PRIMARY KEY, b LONGBLOB) ENGINE=InnoDB' % SCHEMA)
    cur_p.execute("INSERT INTO %s.t1 VALUES (1, REPEAT('f', 3000000))" % SCHEMA)
    cur_p.execute('CREATE TABLE %s.canary (id INT PRIMARY KEY) ENGINE=InnoDB' % SCHEMA)
    assert _wait_on_replica(cur_r, 'SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s',
                            (SCHEMA,), 2)
    # each host's own copy of the table's file, as that host's root sees it: the server's user's
    files = {}
    for host, machine in machines.items():
        path = os.path.join(machine.root, 'var', 'lib', 'mysql', SCHEMA, 't1.ibd')
        files[host] = os.stat(path)
    started = time.monotonic()
    proc = playbook_proc(fleet.inventory, 'drop_tables.yml', dict(
        drop_tables_tables=['%s.t1' % SCHEMA], drop_tables_window=window_around_now(True), drop_tables_confirm=True,
        drop_tables_hosts='db1:db2', drop_tables_ahi_strategy='toggle', drop_tables_file_removal='staged',
        drop_tables_shrink_step_mb=1, drop_tables_shrink_pause=0.05, drop_tables_free_space_margin_mb=1),
        env_extra=YAML_RESULTS)
    seconds = time.monotonic() - started
    try:
        yield dict(proc=proc, seconds=seconds, machines=machines, files=files, ahi_before=ahi_before,
                   cur_p=cur_p, cur_r=cur_r)
    finally:
        cur_p.execute('DROP DATABASE IF EXISTS %s' % SCHEMA)


def test_fleet_replicated_drop_reaches_the_replica_and_restores_ahi(replicated_drop):
    proc, cur_r = replicated_drop['proc'], replicated_drop['cur_r']
    assert proc.returncode == 0, proc.stdout[-3000:]
    cur_r.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = 't1'",
                  (SCHEMA,))
    assert cur_r.fetchone()[0] == 0
    cur_r.execute('SELECT @@GLOBAL.innodb_adaptive_hash_index')
    assert cur_r.fetchone()[0] == replicated_drop['ahi_before']
    assert 'outcome: applied' in proc.stdout or "outcome: 'applied'" in proc.stdout


def test_fleet_staged_drop_each_host_links_and_frees_its_own_copy(replicated_drop):
    """db1 links its file before its DROP, db2's follower links its own copy before the DROP arrives there (after
    it, the file would be gone and nothing could be linked); each shrinks and removes its link once the table's
    own name is gone; the staging directory is the server's user's, closed to others, and empty."""
    proc = replicated_drop['proc']
    assert proc.returncode == 0, proc.stdout[-3000:]
    reports = _host_reports(proc.stdout)
    assert set(reports) == {'db1', 'db2'}, reports
    for host, machine in replicated_drop['machines'].items():
        text = reports[host]
        assert 'mode: staged' in text and 'staging_dir: %s' % STAGING in text, text
        removed = [w.strip("',[]") for w in text.split() if w.strip("',[]-").startswith(STAGING + '/')]
        assert len(removed) == 1 and removed[0].endswith('-t1.ibd'), (host, text)   # its own link, removed
        assert 'released: []' in text, (host, text)
        staging = os.path.join(machine.root, STAGING.lstrip('/'))
        st, datadir = os.stat(staging), os.stat(os.path.join(machine.root, 'var', 'lib', 'mysql'))
        assert st.st_uid == datadir.st_uid != 0 and st.st_mode & 0o077 == 0, (host, oct(st.st_mode), st.st_uid)
        assert os.listdir(staging) == [], (host, os.listdir(staging))      # no link, no manifest left behind
        # the file the link held is gone here: no name in the datadir either
        assert not os.path.exists(os.path.join(machine.root, 'var', 'lib', 'mysql', SCHEMA, 't1.ibd'))
    assert replicated_drop['files']['db1'].st_uid == replicated_drop['files']['db2'].st_uid != 0
    assert 'replica:' in reports['db2'] and 'applied' in reports['db2'], reports['db2']


def test_fleet_staged_drop_leaves_replication_healthy(replicated_drop):
    cur_p, cur_r = replicated_drop['cur_p'], replicated_drop['cur_r']
    assert replicated_drop['proc'].returncode == 0, replicated_drop['proc'].stdout[-3000:]
    cur_r.execute('SHOW REPLICA STATUS')
    cols = [d[0] for d in cur_r.description]
    row = dict(zip(cols, cur_r.fetchone()))
    assert row['Replica_IO_Running'] == 'Yes' and row['Replica_SQL_Running'] == 'Yes', row
    assert row['Last_Errno'] == 0 and row['Last_IO_Errno'] == 0, row
    cur_p.execute('INSERT INTO %s.canary VALUES (1)' % SCHEMA)
    assert _wait_on_replica(cur_r, 'SELECT COUNT(*) FROM %s.canary' % SCHEMA, (), 1), row
