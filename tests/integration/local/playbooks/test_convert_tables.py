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

import re

import pytest

from dbfleet_testing.conversions import SCHEMA, content, engine, playbook
from dbfleet_testing.runs import module_process
from dbfleet_testing.windows import window_around_now  # noqa: E402  pylint: disable=wrong-import-position


HOST = 'mariadb118'


def recap_changed(out, host):
    m = re.search(r'%s\s*: ok=\d+\s+changed=(\d+)' % re.escape(host), out)
    assert m, out[-2000:]
    return int(m.group(1))


def checksum_table(lab, host, table):
    return lab.query(host, 'CHECKSUM TABLE %s.%s' % (SCHEMA, table))[0]['Checksum']


# ------------------------------------------------------------------ local lab, MariaDB 11.8
def test_convert_aria_and_myisam_on_mariadb118(lab):
    lab.require_up(HOST)
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


# ------------------------------------------------------------------ identifiers as users write them (issue 23)
ODD_COLUMNS = ('first name', 'last-name', 'we`ird', 'prénom', 'select')


def _module(lab, host, state_dir, **args):
    """dbfleet.innodb.convert_tables as a real module process (runs.module_process); returns (rc, result)."""
    row = lab.hosts[host]
    args = dict(login_unix_socket=row['socket'], login_user=lab.admin_user, login_password=lab.admin_password,
                config_file='', state_dir=state_dir, **args)
    return module_process('dbfleet.innodb.convert_tables', args)


@pytest.mark.parametrize('host', ['mariadb118', 'mysql80'])
def test_odd_column_names_converted_and_unlocked(lab, host, tmp_path):
    """Columns named with a space, a hyphen, a backtick, non-ASCII letters and a reserved word: converted with
    equal rows and checksum, and the table is unlocked after (on main: a traceback after LOCK TABLES)."""
    lab.require_up(host)
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
