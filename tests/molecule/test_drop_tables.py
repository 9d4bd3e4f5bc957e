# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""End state after molecule/drop_tables_fleet converge (playbooks/drop_tables.yml on the SSH fleet).

Only that scenario names this file in its verifier (the others have no such tables). Every host of the fleet keeps a
binary log (the lab writes log-bin into each fleet host's options), which the binlog checks assert before they read it.
"""
import pytest

SCHEMA = 'dbfleet_test_drop_fleet'


def _exists(db, table):
    with db.cursor() as cur:
        cur.execute('SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s',
                    (SCHEMA, table))
        return cur.fetchone() is not None


def _global(db, name):
    with db.cursor() as cur:
        cur.execute('SHOW GLOBAL VARIABLES LIKE %s', (name,))
        row = cur.fetchone()
    return row['Value'] if row else None


def _binlog_drops(db, table):
    with db.cursor() as cur:
        cur.execute('SHOW BINARY LOGS')
        logs = [r['Log_name'] for r in cur.fetchall()]
        found = []
        for log in logs:
            cur.execute('SHOW BINLOG EVENTS IN %s', (log,))
            found += [r['Info'] for r in cur.fetchall()
                      if 'DROP TABLE' in (r['Info'] or '').upper() and '`%s`' % table in (r['Info'] or '')]
    return found


def test_outside_window_left_the_table(db):
    assert _exists(db, 'outside')


def test_check_mode_left_the_table(db):
    assert _exists(db, 'checkonly')


def test_replicated_drop_reached_every_host(db):
    assert not _exists(db, 'repl1')
    assert not _exists(db, 'repl2')


def test_failed_drop_left_the_table(db):
    assert _exists(db, 'failme')


def test_rolling_drop_reached_every_host(db):
    assert not _exists(db, 'rolled')


def test_ahi_ends_as_it_began(db):
    # prepare switched AHI on everywhere; every run (success, failure, follower) must put it back
    assert _global(db, 'innodb_adaptive_hash_index') == 'ON'


def _in_group(name):
    return lambda hostvars: name in hostvars.get('group_names', [])


def _mysql_replica(hostvars):
    """A replica (inventory group replicas) of MySQL or Percona Server, the flavors with super_read_only."""
    return _in_group('replicas')(hostvars) and hostvars['dbfleet_lab_expected_flavor'] != 'mariadb'


@pytest.mark.hosts(applies=_mysql_replica)
def test_super_read_only_back_on_mysql_replicas(db):
    assert _global(db, 'super_read_only') == 'ON'


def test_rolling_mode_wrote_no_binlog_event(db):
    assert _global(db, 'log_bin') == 'ON'
    assert _binlog_drops(db, 'rolled') == []


@pytest.mark.hosts(applies=_in_group('primaries'))
def test_replicated_mode_drop_is_in_the_primary_binlog(db):
    assert _global(db, 'log_bin') == 'ON'
    assert len(_binlog_drops(db, 'repl1')) == 1
