# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""topology_plan.py with clusters: one topology per cluster, fail closed."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology_plan
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.replication.test_topology_clusters import UUID, entries


def test_one_topology_for_the_cluster_members_in_play_order():
    plan = topology_plan.build_plan(entries(), order=['galera1', 'galera2', 'galera3'])
    assert plan['ok'], plan['message']
    assert len(plan['topologies']) == 1
    topo = plan['topologies'][0]
    assert topo['name'] == 'galera dbfleet_galera'
    assert topo['members'] == ['galera1', 'galera2', 'galera3'] and plan['order'] == topo['members']
    assert topo['cluster'] == dict(kind='galera', name=UUID, label='galera dbfleet_galera', size=3,
                                   members=['galera1', 'galera2', 'galera3'], missing=[])
    assert plan['hosts']['galera2']['cluster']['state'] == 'Synced'
    assert plan['hosts']['galera2']['topology'] == 'galera dbfleet_galera'


def test_a_member_not_synced_stops_the_plan_naming_it():
    plan = topology_plan.build_plan(entries(galera2=dict(wsrep_local_state_comment='Donor/Desynced')))
    assert not plan['ok']
    assert plan['unhealthy'] == [dict(host='galera2', reason='state Donor/Desynced, not Synced (wsrep_local_state_comment)')]
    assert plan['message'].startswith('stopped before any change:') and 'galera2: state Donor/Desynced' in plan['message']


def test_a_member_without_quorum_stops_the_plan():
    plan = topology_plan.build_plan(entries(galera3=dict(wsrep_cluster_status='non-Primary', wsrep_ready='OFF',
                                                         wsrep_cluster_size='1')))
    assert not plan['ok']
    assert 'galera3: not in the Primary component (wsrep_cluster_status=non-Primary)' in plan['message']


def test_a_member_missing_from_the_play_is_named():
    e = entries()
    del e['galera3']
    plan = topology_plan.build_plan(e)
    assert not plan['ok']
    assert plan['unhealthy'] == [dict(host='galera dbfleet_galera', reason=(
        'the cluster counts 3 members, the play has 2 (galera1, galera2); missing: galera3 at 127.0.0.1:36303 '
        '(not in the inventory)'))]


def test_a_member_in_the_inventory_but_outside_the_play_is_named_so():
    e = entries()
    e['galera3'] = dict(outside=True, addresses=['127.0.0.1', 'galera3'], port=36303)
    plan = topology_plan.build_plan(e)
    assert not plan['ok']
    assert 'missing: galera3 (in the inventory, not in the play)' in plan['message']


def test_a_two_member_cluster_cannot_restart_one():
    e = entries(galera1=dict(wsrep_cluster_size='2'), galera2=dict(wsrep_cluster_size='2'))
    del e['galera3']
    e['galera1']['facts']['cluster']['members'] = e['galera1']['facts']['cluster']['members'][:2]
    e['galera2']['facts']['cluster']['members'] = e['galera2']['facts']['cluster']['members'][:2]
    plan = topology_plan.build_plan(e)
    assert not plan['ok']
    assert 'with 2 member(s), stopping one leaves no majority' in plan['message']


def test_only_pending_topologies_are_checked():
    e = entries(galera2=dict(wsrep_local_state_comment='Joined'))
    e['db1'] = dict(facts=dict(role='primary', error=None, server_uuid='u1', server_id=9, read_only=False,
                               gtid=None, channels=[]), addresses=['10.0.0.11'], port=3306)
    plan = topology_plan.build_plan(e, pending=['db1'])
    assert plan['ok'], plan['message']
    assert sorted(t['name'] for t in plan['topologies']) == ['db1', 'galera dbfleet_galera']


def test_an_async_replica_of_a_member_joins_the_cluster_topology_and_goes_first():
    e = entries()
    ch = dict(name='', source_host='127.0.0.1', source_port=36301, source_uuid=None, source_server_id=1,
              io_running=True, io_state='Yes', sql_running=True, sql_state='Yes', seconds_behind=0,
              last_io_errno=0, last_io_error='', last_sql_errno=0, last_sql_error='')
    e['replica'] = dict(facts=dict(role='replica', error=None, server_uuid=None, server_id=7, read_only=True,
                                   gtid=None, channels=[ch]), addresses=['127.0.0.1'], port=36304)
    plan = topology_plan.build_plan(e, order=['galera1', 'galera2', 'galera3', 'replica'])
    assert plan['ok'], plan['message']
    assert len(plan['topologies']) == 1
    assert plan['order'] == ['replica', 'galera1', 'galera2', 'galera3']


def test_a_member_in_the_play_whose_state_was_not_read_is_named_so():
    e = entries()
    e['galera3'] = dict(facts=None, error='unreachable: the host did not answer', addresses=['127.0.0.1'], port=36303)
    plan = topology_plan.build_plan(e)
    assert not plan['ok']
    assert 'missing: galera3 (in the play, its cluster state was not read)' in plan['message']
    assert plan['unknown'] == [dict(host='galera3', reason='unreachable: the host did not answer')]


def test_the_node_taking_the_writes_restarts_last():
    e = entries(galera1=dict(threads_connected='6'), galera2=dict(threads_connected='1'),
                galera3=dict(threads_connected='2'))
    plan = topology_plan.build_plan(e, order=['galera1', 'galera2', 'galera3'])
    assert plan['ok'], plan['message']
    assert plan['order'] == ['galera2', 'galera3', 'galera1']
    assert [plan['hosts'][h]['cluster']['clients'] for h in plan['order']] == [0, 1, 5]
