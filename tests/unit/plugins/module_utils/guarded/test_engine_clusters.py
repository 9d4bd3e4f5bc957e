# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guarded-change engine on a cluster member (guarded.py, drop_tables.py): the scope read when it connects, the
followers' part, the tablespace file's size, the members that disagree (verify). The scope rule itself:
test_guarded_scope.py; which member runs the statement: test_guarded_hosts.py."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import drop_tables as d
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import engine as g
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import GuardedError
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.scope import ClusterScope, ServerScope

GALERA_VARS = dict(wsrep_on='ON', wsrep_provider='/usr/lib/galera/libgalera_smm.so', version='10.11.6-MariaDB')
GR_VARS = dict(group_replication_group_name='aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee',
               group_replication_single_primary_mode='ON', version='8.0.33')


def test_open_reads_the_scope_variables_and_sets_toi(monkeypatch):
    sql = []
    asked = []

    def global_variables(conn, names):
        asked.extend(names)
        return dict(GALERA_VARS, innodb_adaptive_hash_index='ON', server_id='1', hostname='g1', port='3306', datadir='/d')

    monkeypatch.setattr(g, 'global_variables', global_variables)
    monkeypatch.setattr(g, 'execute', lambda conn, text, args=None: sql.append(text))
    monkeypatch.setattr(g, 'read_identity', lambda conn: dict(server={}, session={}, now=0))
    run = g.GuardedChange(dict(state_dir='/nonexistent'), connect=lambda p: object())
    run.open()
    assert set(g.SCOPE_VARIABLES) <= set(asked)
    assert run.scope.name == 'galera' and "SET SESSION wsrep_OSU_method = 'TOI'" in sql


@pytest.mark.parametrize('flavor, version, table', [
    (flavors.MYSQL, (8, 0, 33), 'information_schema.INNODB_TABLESPACES'),
    (flavors.MYSQL, (9, 7, 0), 'information_schema.INNODB_TABLESPACES'),
    (flavors.MYSQL, (5, 7, 44), 'information_schema.INNODB_SYS_TABLESPACES'),
    (flavors.MARIADB, (10, 11, 6), 'information_schema.INNODB_SYS_TABLESPACES'),
    (flavors.MARIADB, (11, 8, 2), 'information_schema.INNODB_SYS_TABLESPACES'),
    (flavors.MYSQL, (5, 6, 51), None),
])
def test_tablespace_size_table_per_flavor(flavor, version, table):
    assert capability_facts.capability('tablespace_size_table', flavor, version) == table


def test_file_size_reads_the_flavors_table(monkeypatch):
    seen = []

    def query_one(conn, sql, args=None):
        seen.append((sql, args))
        return dict(FILE_SIZE=50331648, ALLOCATED_SIZE=50335744)

    monkeypatch.setattr(g, 'query_one', query_one)
    run = g.GuardedChange({})
    run.identity = type('I', (), dict(flavor=flavors.MARIADB, version=(10, 11, 6)))()
    assert run.file_size('shop', 'big') == dict(file_bytes=50331648, file_size='48.0 MiB', allocated_bytes=50335744)
    assert 'INNODB_SYS_TABLESPACES' in seen[0][0] and seen[0][1] == ('shop/big',)
    run.identity = type('I', (), dict(flavor=flavors.MYSQL, version=(5, 6, 51)))()
    assert run.file_size('shop', 'big') == {} and len(seen) == 1


# ---------------------------------------------------------------- the followers on a cluster member
ROW = dict(TABLE_SCHEMA='shop', TABLE_NAME='big', TABLE_TYPE='BASE TABLE', ENGINE='InnoDB', TABLE_ROWS=200000,
           DATA_LENGTH=16384, INDEX_LENGTH=16384, DATA_FREE=0)


def _follower(monkeypatch, scope, blockers=(), gone=True):
    run = d.Drop(dict(tables=['shop.big'], follow=True, ahi_strategy='toggle', follow_timeout=5), sleep=lambda s: None)
    run.identity = type('I', (), dict(flavor=flavors.MARIADB, version=(10, 11, 6)))()
    run.scope = scope
    run.server_vars = {g.AHI: 'ON'}
    run.table_row = lambda db, table: dict(ROW)
    run.file_size = lambda db, table: dict(file_bytes=48 * 1024 * 1024)
    run._memcached_mapped = lambda present: []
    run._foreign_keys = lambda present: []
    calls = []

    def find_blockers(present):
        calls.append(present)
        run.blockers.extend(blockers)
        return 'performance_schema'

    run.find_blockers = find_blockers
    run.switch_ahi_off = lambda: calls.append('ahi off')
    run.guarded = lambda mode, tables, body: (body(), None)
    monkeypatch.setattr(d, 'query_one', lambda conn, sql, args=None: None if gone else dict(x=1))
    return run, calls


def test_cluster_member_follows_with_the_lock_check_and_reports_dropped_by_the_cluster(monkeypatch):
    run, calls = _follower(monkeypatch, ClusterScope('galera'))
    run.run_follow([('shop', 'big')])
    assert calls[0] == [('shop', 'big')] and 'ahi off' in calls
    assert run.follow['outcome'] == 'applied' and run.tables[0]['result'] == 'dropped_by_cluster'
    assert run.tables[0]['size'] == '48.0 MiB' and run.tables[0]['size_source'] == 'tablespace file'
    assert any('the cluster has dropped shop.big' in step for step in run.plan)


def test_cluster_member_with_a_lock_holder_refuses_naming_it(monkeypatch):
    blocker = dict(table='shop.big', connection_id=42, user='app', host='10.0.0.9', command='Sleep', seconds=30,
                   lock='SHARED_READ', status='GRANTED')
    run, calls = _follower(monkeypatch, ClusterScope('galera'), blockers=[blocker])
    with pytest.raises(GuardedError) as e:
        run.run_follow([('shop', 'big')])
    assert 'galera member' in str(e.value) and 'connection 42 (app@10.0.0.9' in str(e.value)
    assert 'ahi off' not in calls


def test_async_replica_follows_as_before(monkeypatch):
    run, calls = _follower(monkeypatch, ServerScope())
    run.run_follow([('shop', 'big')])
    assert calls == ['ahi off'] and run.tables[0]['result'] == 'dropped_by_replication'


# ---------------------------------------------------------------- members that disagree (verify)
def test_members_that_disagree_on_a_cluster_wide_setting_are_flagged_and_per_member_ones_shown():
    from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters  # pylint: disable=import-outside-toplevel
    lab = dict(kind=clusters.GALERA, name='uuid-1', label='lab')
    members = dict(
        galera1=dict(cluster=lab, values=dict(WSREP_OSU_METHOD='TOI', binlog_format='ROW', innodb_adaptive_hash_index='ON')),
        galera2=dict(cluster=lab, values=dict(wsrep_osu_method='RSU', binlog_format='ROW', innodb_adaptive_hash_index='OFF')),
        galera3=dict(cluster=lab, values=dict(wsrep_osu_method='toi', binlog_format='ROW')),
        solo=dict(cluster=None, values=dict(wsrep_osu_method='RSU')),
        other=dict(cluster=dict(kind=clusters.GALERA, name='uuid-2', label='alone'), values=dict(binlog_format='MIXED')))
    found = clusters.member_disagreements(members)
    assert [(f['setting'], f['must_match']) for f in found] == [('wsrep_osu_method', True), ('innodb_adaptive_hash_index', False)]
    assert found[0]['values'] == dict(galera1='TOI', galera2='RSU', galera3='toi')
    assert found[0]['text'] == ('Galera cluster lab: wsrep_osu_method differs between members: '
                                'galera1=TOI, galera2=RSU, galera3=toi')
    assert found[1]['text'].endswith('per member: galera1=ON, galera2=OFF')


def test_group_members_agreeing_give_nothing():
    from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters  # pylint: disable=import-outside-toplevel
    grp = dict(kind=clusters.GROUP_REPLICATION, name='g', label='g')
    same = dict(gtid_mode='ON', group_replication_single_primary_mode='ON')
    assert clusters.member_disagreements(dict(gr1=dict(cluster=grp, values=same), gr2=dict(cluster=grp, values=same))) == []
    found = clusters.member_disagreements(dict(gr1=dict(cluster=grp, values=same),
                                               gr2=dict(cluster=grp, values=dict(same, gtid_mode='OFF_PERMISSIVE'))))
    assert [f['setting'] for f in found] == ['gtid_mode'] and found[0]['must_match'] is True


def test_verify_report_summary_lists_cluster_disagreements():
    from ansible_collections.dbfleet.innodb.plugins.module_utils.report import build as verify_report  # pylint: disable=import-outside-toplevel

    def outcome(method, ahi):
        return dict(variables=dict(
            wsrep_osu_method=dict(status='ok', desired=None, runtime=method),
            innodb_adaptive_hash_index=dict(status='ok', desired=None, runtime=ahi)),
            server=dict(flavor='mariadb', replication=dict(role='primary', cluster=dict(kind='galera', name='u', label='lab'))))

    report = verify_report.verify_report(dict(galera1=outcome('TOI', 'ON'), galera2=outcome('RSU', 'ON')), generated='x')
    assert [d['setting'] for d in report['summary']['cluster_disagreements']] == ['wsrep_osu_method']
    assert report['summary']['per_member_settings'] == []
    report = verify_report.verify_report(dict(galera1=outcome('TOI', 'ON'), galera2=outcome('TOI', 'OFF')), generated='x')
    assert report['summary']['cluster_disagreements'] == []
    assert report['summary']['per_member_settings'][0]['values'] == dict(galera1='ON', galera2='OFF')


def test_readiness_probe_beside_its_own_follower_skips_the_lock_check(monkeypatch):
    # the probe would see this run's follower (polling the table) as a lock holder
    blocker = dict(table='shop.big', connection_id=7, user='dbfleet', host='localhost', command='Query', seconds=0,
                   lock='SHARED_HIGH_PRIO', status='GRANTED')
    run, calls = _follower(monkeypatch, ClusterScope('galera'), blockers=[blocker])
    run.check_mode = True
    run.own_run_alive = True
    run.run_follow([('shop', 'big')])
    assert calls == [] and run.follow['outcome'] == 'check_mode'


@pytest.mark.parametrize('scope, words', [
    (ServerScope(), 'waits at most lock_wait_timeout per attempt'),
    (ClusterScope('group_replication'), 'waits at most lock_wait_timeout per attempt'),
    (ClusterScope('galera'), 'makes it wait without bound, lock_wait_timeout does not apply, KILL refuses it (error 1095)'),
])
def test_no_lock_listing_warns_what_a_holder_does_here(monkeypatch, scope, words):
    warned = []
    run = d.Drop(dict(tables=['shop.big']), warn=warned.append)
    run.identity = type('I', (), dict(flavor=flavors.MARIADB, version=(10, 11, 6)))()
    run.scope = scope
    monkeypatch.setattr(g, 'lock_holders', lambda conn, source, present: None)  # no source enabled
    monkeypatch.setattr(g, 'query_one', lambda conn, sql, args=None: dict(n=2, oldest=7))
    assert run.find_blockers([('shop', 'big')]) is None
    assert len(warned) == 1 and 'cannot list metadata locks on this server' in warned[0] and words in warned[0], warned
    assert '2 open InnoDB transaction(s), oldest 7 s' in warned[0]
