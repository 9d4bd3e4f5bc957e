# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/convert_tables.yml (module dbfleet.innodb.convert_tables) against the lab's real servers.

- Local lab, MariaDB 11.8: an Aria and a MyISAM table with rows; bad input refused before anything changes
  (unknown engine; MyRocks not loaded, a missing table and an Aria table for MyRocks in one run; outside the
  window); a transaction holding a metadata lock makes the run give up after its bounded lock waits; check
  mode lists the plan and converts nothing, a real run converts both with equal rows and content checksums, a
  second run changes nothing. The MyISAM table holds DATETIMEs in the pre-5.6 format, so CHECKSUM
  TABLE gives another value after the conversion for the same rows: the reason the module checksums values.
- SSH fleet (db1 -> db2 MySQL 8.0, db3 -> db4 MariaDB 10.11): without convert_tables_whole_topology the run is
  refused naming the replicas, and so is an inventory that calls the replica db2 a primary; with a true
  inventory and the variable, each primary converts, the replicas apply the ALTER, and every host ends
  in InnoDB with the same rows and checksum as its primary and the same GTID position.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest
import yaml

from dbfleet_testing.lab import REPO
sys.path.insert(0, os.path.join(REPO, '.collections'))
from ansible_collections.dbfleet.innodb.plugins.module_utils.convert_tables import (  # noqa: E402
    checksum_from_row, content_checksum_sql)
from dbfleet_testing.windows import window_around_now  # noqa: E402  pylint: disable=wrong-import-position

VENV_BIN = os.path.join(REPO, '.venv', 'bin')
ENV = dict(os.environ, PATH=VENV_BIN + os.pathsep + os.environ.get('PATH', ''),
           ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'),
           ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, '.collections'),
           ANSIBLE_STDOUT_CALLBACK='ansible.builtin.default', ANSIBLE_LOAD_CALLBACK_PLUGINS='0',
           ANSIBLE_CALLBACK_RESULT_FORMAT='yaml', ANSIBLE_DEPRECATION_WARNINGS='0',
           ANSIBLE_LOCALHOST_WARNING='0', ANSIBLE_INVENTORY_UNPARSED_WARNING='0')
SCHEMA = 'dbfleet_test_convert'
HOST = 'mariadb118'


def playbook(inventory, check=False, **extra):
    extra.setdefault('convert_tables_window', window_around_now(True))
    cmd = [os.path.join(VENV_BIN, 'ansible-playbook'), '-i', inventory,
           os.path.join(REPO, 'playbooks', 'convert_tables.yml'), '-e', json.dumps(extra)]
    if check:
        cmd.append('--check')
    proc = subprocess.run(cmd, capture_output=True, text=True, env=ENV, cwd=REPO, timeout=300, check=False)
    return proc.returncode, ' '.join((proc.stdout + proc.stderr).split())  # one line: YAML folds long messages


def recap_changed(out, host):
    m = re.search(r'%s\s*: ok=\d+\s+changed=(\d+)' % re.escape(host), out)
    assert m, out[-2000:]
    return int(m.group(1))


def engine(lab, host, table):
    rows = lab.query(host, 'SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s',
                     (SCHEMA, table), tries=20)
    return rows[0]['ENGINE'] if rows else None


def content(lab, host, table, columns):
    return checksum_from_row(lab.query(host, content_checksum_sql(SCHEMA, table, columns), tries=20)[0])


def checksum_table(lab, host, table):
    return lab.query(host, 'CHECKSUM TABLE %s.%s' % (SCHEMA, table))[0]['Checksum']


# ------------------------------------------------------------------ local lab, MariaDB 11.8
def test_convert_aria_and_myisam_on_mariadb118(lab):
    assert lab.hosts.get(HOST, {}).get('state') == 'up', 'start the lab with `make lab-up` (%s is down)' % HOST
    conn = lab.connect(HOST, via='socket')
    cur = conn.cursor()
    cur.execute('DROP DATABASE IF EXISTS %s' % SCHEMA)
    cur.execute('CREATE DATABASE %s' % SCHEMA)
    cur.execute('USE %s' % SCHEMA)
    cur.execute('CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(40), n INT NULL) ENGINE=Aria')
    cur.execute("INSERT INTO a SELECT seq, CONCAT('row ', seq), IF(seq % 7, seq, NULL) FROM seq_1_to_3000")
    cur.execute('SELECT @@GLOBAL.mysql56_temporal_format')
    temporal = cur.fetchone()[0]
    try:  # DATETIMEs stored in the format from before MySQL 5.6: an ALTER rebuilds them in the current one
        cur.execute('SET GLOBAL mysql56_temporal_format = OFF')
        other = lab.connect(HOST, via='socket', database=SCHEMA)
        other.cursor().execute('CREATE TABLE m (id INT PRIMARY KEY, d DATETIME, t TEXT) ENGINE=MyISAM')
        other.close()
    finally:
        cur.execute('SET GLOBAL mysql56_temporal_format = %s' % ('ON' if temporal in (1, 'ON') else 'OFF'))
    cur.execute("INSERT INTO m SELECT seq, '2024-01-01' + INTERVAL seq MINUTE, REPEAT('x', seq % 30) "
                "FROM seq_1_to_3000")
    cur.execute('CREATE TABLE i (id INT PRIMARY KEY) ENGINE=InnoDB')
    inv = lab.inventory
    tables = ['%s.a' % SCHEMA, '%s.m' % SCHEMA]
    columns = dict(a=['id', 'v', 'n'], m=['id', 'd', 't'])
    want = dict((t, content(lab, HOST, t, columns[t])) for t in ('a', 'm'))
    checksum_m = checksum_table(lab, HOST, 'm')
    try:
        # ---- bad input: each refused before anything changes, naming the input
        rc, out = playbook(inv, convert_tables_hosts=HOST, convert_tables_tables=['%s.a' % SCHEMA, 'mysql.user'],
                           convert_tables_engine='Foo')
        assert rc != 0 and "engine 'Foo' is not an engine the collection knows" in out, out[-3000:]
        assert "schema 'mysql' is a system schema" in out
        rc, out = playbook(inv, convert_tables_hosts=HOST, convert_tables_engine='MyRocks',
                           convert_tables_tables=['%s.a' % SCHEMA, '%s.nope' % SCHEMA, '%s.i' % SCHEMA])
        assert rc != 0, out[-3000:]
        assert 'engine ROCKSDB is not loaded on this server' in out
        assert 'table %s.nope does not exist' % SCHEMA in out
        assert '%s.a is Aria; conversions to ROCKSDB (MyRocks) start from InnoDB' % SCHEMA in out
        rc, out = playbook(inv, convert_tables_hosts=HOST, convert_tables_tables=tables,
                           convert_tables_window=window_around_now(False))
        assert rc != 0 and 'the next window opens at' in out, out[-3000:]
        assert (engine(lab, HOST, 'a'), engine(lab, HOST, 'm')) == ('Aria', 'MyISAM')

        # ---- a transaction that holds a metadata lock on the first table: bounded waits, then a stop
        holder = lab.connect(HOST, via='socket', database=SCHEMA, autocommit=False)
        try:
            holder.cursor().execute('START TRANSACTION')
            holder.cursor().execute('SELECT COUNT(*) FROM a')
            rc, out = playbook(inv, convert_tables_hosts=HOST, convert_tables_tables=tables,
                               convert_tables_lock_wait_timeout=1, convert_tables_retries=1,
                               convert_tables_retry_delay=0)
        finally:
            holder.rollback()
            holder.close()
        assert rc != 0 and 'stopped at %s.a' % SCHEMA in out, out[-3000:]
        assert 'gave up after 2 attempts of lock_wait_timeout=1s each' in out
        assert (engine(lab, HOST, 'a'), engine(lab, HOST, 'm')) == ('Aria', 'MyISAM')

        # ---- check mode: the plan, nothing converted
        rc, out = playbook(inv, check=True, convert_tables_hosts=HOST, convert_tables_tables=tables)
        assert rc == 0, out[-3000:]
        assert '%s.a: Aria -> InnoDB (' % SCHEMA in out and '~3000 rows' in out
        assert '%s.m: MyISAM -> InnoDB (' % SCHEMA in out and 'KiB' in out
        assert (engine(lab, HOST, 'a'), engine(lab, HOST, 'm')) == ('Aria', 'MyISAM')

        # ---- inside the window: converted, rows and checksums equal before and after
        rc, out = playbook(inv, convert_tables_hosts=HOST, convert_tables_tables=tables)
        assert rc == 0, out[-3000:]
        assert (engine(lab, HOST, 'a'), engine(lab, HOST, 'm')) == ('InnoDB', 'InnoDB')
        assert recap_changed(out, HOST) > 0
        for t in ('a', 'm'):
            got = content(lab, HOST, t, columns[t])
            assert got == want[t] and got['rows'] == 3000
            assert 'checksum: %s' % got['checksum'] in out  # the playbook reported the same value
        assert out.count('result: converted') == 2
        assert checksum_table(lab, HOST, 'm') != checksum_m  # same rows, another CHECKSUM TABLE value
        cur.execute("UPDATE a SET v = 'row 2' WHERE id = 1")  # one value changed: the content checksum sees it
        assert content(lab, HOST, 'a', columns['a']) != want['a']
        cur.execute("UPDATE a SET v = 'row 1' WHERE id = 1")

        # ---- again: nothing to do
        rc, out = playbook(inv, convert_tables_hosts=HOST, convert_tables_tables=tables)
        assert rc == 0 and recap_changed(out, HOST) == 0, out[-3000:]
        assert out.count('result: already') == 2
    finally:
        cur.execute('DROP DATABASE IF EXISTS %s' % SCHEMA)
        conn.close()


# ------------------------------------------------------------------ SSH fleet: whole topologies
def _wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, 'gave up waiting for: %s' % what
        time.sleep(0.3)


def _gtid(fleet, host):
    row = fleet.query(host, 'SELECT @@GLOBAL.version AS v', tries=20)[0]
    if 'MariaDB' in row['v']:
        var = 'gtid_slave_pos' if host in ('db2', 'db4') else 'gtid_binlog_pos'
    else:
        var = 'gtid_executed'
    return ''.join(str(fleet.query(host, 'SELECT @@GLOBAL.%s AS g' % var, tries=20)[0]['g']).split())


@pytest.mark.fleet
def test_fleet_whole_topology_converted_on_primaries_replicas_verified(fleet, tmp_path):
    assert all(row['state'] == 'up' for row in fleet.refresh().values()), fleet.hosts
    pairs = (('db1', 'db2'), ('db3', 'db4'))
    for primary, replica in pairs:
        fleet.query(primary, 'DROP DATABASE IF EXISTS %s' % SCHEMA)
        fleet.query(primary, 'CREATE DATABASE %s' % SCHEMA)
        fleet.query(primary, 'CREATE TABLE %s.m (id INT PRIMARY KEY, v VARCHAR(40), n INT NULL) ENGINE=MyISAM' % SCHEMA)
        fleet.query(primary, 'INSERT INTO %s.m VALUES %s' % (SCHEMA, ', '.join(
            "(%d, 'v%d', %s)" % (i, i, 'NULL' if i % 5 == 0 else i) for i in range(1, 801))))
        _wait(lambda r=replica: engine(fleet, r, 'm') == 'MyISAM', 30, 'the table on %s' % replica)
    tables = ['%s.m' % SCHEMA]
    hosts = 'db1:db2:db3:db4'
    try:
        rc, out = playbook(fleet.inventory, convert_tables_hosts=hosts, convert_tables_tables=tables)
        assert rc != 0 and 'db2 is a replica of db1' in out and 'db4 is a replica of db3' in out, out[-3000:]
        assert 'convert_tables_whole_topology=true' in out
        # an inventory that calls the replica db2 a primary: the servers say otherwise, nothing changes
        data = yaml.safe_load(open(fleet.inventory, encoding='utf-8'))
        data['all']['children']['mysql']['hosts']['db2']['dbfleet_replication_role'] = 'primary'
        wrong = tmp_path / 'wrong.yml'
        wrong.write_text(yaml.safe_dump(data, sort_keys=False))
        rc, out = playbook(str(wrong), convert_tables_hosts=hosts, convert_tables_tables=tables,
                           convert_tables_whole_topology=True)
        assert rc != 0 and 'stopped before any change' in out, out[-3000:]
        assert 'db2: the inventory says primary (dbfleet_replication_role), replica: the server replicates from db1' in out
        assert all(engine(fleet, h, 'm') == 'MyISAM' for h in ('db1', 'db2', 'db3', 'db4'))

        rc, out = playbook(fleet.inventory, convert_tables_hosts=hosts, convert_tables_tables=tables,
                           convert_tables_whole_topology=True)
        assert rc == 0, out[-4000:]
        assert out.count('result: converted') == 2
        assert 'verified_here: - %s.m' % SCHEMA in out
        for primary, replica in pairs:
            assert engine(fleet, primary, 'm') == 'InnoDB' and engine(fleet, replica, 'm') == 'InnoDB'
            want = content(fleet, primary, 'm', ['id', 'v', 'n'])
            assert want['rows'] == 800 and content(fleet, replica, 'm', ['id', 'v', 'n']) == want
            _wait(lambda p=primary, r=replica: _gtid(fleet, p) == _gtid(fleet, r), 30,
                  'GTID position of %s equal to %s' % (replica, primary))
            status = fleet.query(replica, 'SHOW ALL SLAVES STATUS' if replica == 'db4' else 'SHOW REPLICA STATUS')[0]
            running = [status.get(k) for k in ('Slave_IO_Running', 'Slave_SQL_Running', 'Replica_IO_Running',
                                               'Replica_SQL_Running') if k in status]
            assert running == ['Yes', 'Yes'], status
        assert re.search(r'db1\s*: ok=\d+\s+changed=[1-9]', out) and re.search(r'db2\s*: ok=\d+\s+changed=0', out)
    finally:
        for primary, _replica in pairs:
            fleet.query(primary, 'DROP DATABASE IF EXISTS %s' % SCHEMA)


# ------------------------------------------------------------------ identifiers as users write them (issue 23)
ODD_COLUMNS = ('first name', 'last-name', 'we`ird', 'prénom', 'select')


def _module(lab, host, state_dir, **args):
    """dbfleet.innodb.convert_tables as a real module process; returns (rc, result)."""
    row = lab.hosts[host]
    args = dict(login_unix_socket=row['socket'], login_user=lab.admin_user, login_password=lab.admin_password,
                config_file='', state_dir=state_dir, **args)
    cmd = [os.path.join(VENV_BIN, 'ansible'), 'localhost', '-i', 'localhost,', '-c', 'local',
           '-e', 'ansible_python_interpreter=%s' % os.path.join(VENV_BIN, 'python'),
           '-m', 'dbfleet.innodb.convert_tables', '-a', json.dumps(args)]
    env = dict(ENV, ANSIBLE_LOAD_CALLBACK_PLUGINS='1', ANSIBLE_STDOUT_CALLBACK='ansible.builtin.minimal',
               ANSIBLE_CALLBACK_RESULT_FORMAT='json')
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=180, check=False)
    out = proc.stdout
    assert '=> {' in out, (out + proc.stderr)[-3000:]
    return proc.returncode, json.loads(out[out.index('=> {') + 3:])


@pytest.mark.parametrize('host', ['mariadb118', 'mysql80'])
def test_odd_column_names_converted_and_unlocked(lab, host, tmp_path):
    """Columns named with a space, a hyphen, a backtick, non-ASCII letters and a reserved word: converted with
    equal rows and checksum, and the table is unlocked after (on main: a traceback after LOCK TABLES)."""
    assert lab.hosts.get(host, {}).get('state') == 'up', 'start the lab with `make lab-up` (%s is down)' % host
    schema = 'dbfleet_test_convert_odd'
    quoted = ', '.join('`%s` VARCHAR(20) NULL' % c.replace('`', '``') for c in ODD_COLUMNS)
    lab.query(host, 'DROP DATABASE IF EXISTS %s' % schema)
    lab.query(host, 'CREATE DATABASE %s CHARACTER SET utf8mb4' % schema)
    try:
        lab.query(host, 'CREATE TABLE %s.odd (id INT PRIMARY KEY, %s) ENGINE=MyISAM' % (schema, quoted))
        lab.query(host, 'INSERT INTO %s.odd VALUES %s' % (schema, ', '.join(
            "(%d, 'a%d', 'b', NULL, 'é%d', 's')" % (i, i, i) for i in range(1, 201))))
        rc, res = _module(lab, host, str(tmp_path / 'state'), tables=['%s.odd' % schema], engine='InnoDB')
        assert rc == 0, res.get('msg')
        assert 'exception' not in res and res['converted'] == ['%s.odd' % schema]
        entry = res['tables'][0]
        assert entry['before'] == entry['after'] and entry['after']['rows'] == 200
        assert [s['step'] for s in res['steps'] if s.get('target') == '%s.odd' % schema][-1] == 'unlock'
        rows = lab.query(host, 'SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s',
                         (schema, 'odd'))
        assert rows[0]['ENGINE'] == 'InnoDB'
        # the table takes writes again at once: no lock left behind
        lab.query(host, "INSERT INTO %s.odd (id) VALUES (1000)" % schema)
    finally:
        lab.query(host, 'DROP DATABASE IF EXISTS %s' % schema)
