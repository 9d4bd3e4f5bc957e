# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""End state after molecule/drop_tables_fleet converge (playbooks/drop_tables.yml on the SSH fleet).

Runs only in that scenario: other scenarios share this directory but have no such tables.
"""
import os

import pytest

pytestmark = pytest.mark.skipif(os.environ.get('MOLECULE_SCENARIO_NAME') != 'drop_tables_fleet',
                                reason='only for the drop_tables_fleet scenario')

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


def test_super_read_only_back_on_mysql_replicas(host, db):
    if host.backend.get_hostname() in host.ansible.get_variables().get('groups', {}).get('replicas', []) \
            and _global(db, 'super_read_only') is not None:
        assert _global(db, 'super_read_only') == 'ON'
    else:
        pytest.skip('not a MySQL replica')


def test_rolling_mode_wrote_no_binlog_event(db):
    if _global(db, 'log_bin') != 'ON':
        pytest.skip('binary logging is off')
    assert _binlog_drops(db, 'rolled') == []


def test_replicated_mode_drop_is_in_the_primary_binlog(host, db):
    hostname = host.backend.get_hostname()
    if hostname not in host.ansible.get_variables().get('groups', {}).get('primaries', []):
        pytest.skip('not a primary')
    if _global(db, 'log_bin') != 'ON':
        pytest.skip('binary logging is off')
    assert len(_binlog_drops(db, 'repl1')) == 1
