# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The topology component with clusters: one topology per cluster, fail closed, the cluster gate."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology

UUID = '24b97d40-e8cf-11f1-b24a-c7da101eb7b5'
VARIABLES = dict(wsrep_on='ON', wsrep_provider='/usr/lib/galera/libgalera_smm.so', wsrep_cluster_name='dbfleet_galera')
# Recorded on the lab's cluster (MariaDB 10.11.19, galera-4 26.4.23), galera2's view.
STATUS = dict(wsrep_cluster_state_uuid=UUID, wsrep_cluster_size='3', wsrep_cluster_status='Primary',
              wsrep_local_state_comment='Synced', wsrep_ready='ON', wsrep_connected='ON', wsrep_local_recv_queue='0',
              wsrep_incoming_addresses='127.0.0.1:36301,127.0.0.1:36302,127.0.0.1:36303', wsrep_cluster_conf_id='3')
MEMBERS = [dict(node_uuid='24b93024-e8cf-11f1-9777-9b18a7c8be22', cluster_uuid=UUID, node_name='galera1',
                node_incoming_address='127.0.0.1:36301'),
           dict(node_uuid='24e7f0db-e8cf-11f1-a56b-86ad0b9b76f6', cluster_uuid=UUID, node_name='galera2',
                node_incoming_address='127.0.0.1:36302'),
           dict(node_uuid='279256b4-e8cf-11f1-9940-03cd1f297781', cluster_uuid=UUID, node_name='galera3',
                node_incoming_address='127.0.0.1:36303')]


def node_facts(index, channels=(), **status):
    member = MEMBERS[index]
    cluster = clusters.galera_from(dict(VARIABLES, wsrep_node_name=member['node_name']),
                                   dict(STATUS, wsrep_gcomm_uuid=member['node_uuid'], **status), MEMBERS)
    return dict(role='replica' if channels else 'primary', error=None, server_uuid=None, server_id=index + 1,
                read_only=False, gtid=dict(model='mariadb', binlog_pos='0-1-5'), channels=list(channels),
                cluster=cluster)


def entries(**status_of):
    out = {}
    for i in range(3):
        name = 'galera%d' % (i + 1)
        out[name] = dict(facts=node_facts(i, **status_of.get(name, {})), addresses=['127.0.0.1'], port=36301 + i)
    return out


def test_one_topology_for_the_cluster_members_in_play_order():
    plan = topology.build_plan(entries(), order=['galera1', 'galera2', 'galera3'])
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
    plan = topology.build_plan(entries(galera2=dict(wsrep_local_state_comment='Donor/Desynced')))
    assert not plan['ok']
    assert plan['unhealthy'] == [dict(host='galera2', reason='state Donor/Desynced, not Synced (wsrep_local_state_comment)')]
    assert plan['message'].startswith('stopped before any change:') and 'galera2: state Donor/Desynced' in plan['message']


def test_a_member_without_quorum_stops_the_plan():
    plan = topology.build_plan(entries(galera3=dict(wsrep_cluster_status='non-Primary', wsrep_ready='OFF',
                                                    wsrep_cluster_size='1')))
    assert not plan['ok']
    assert 'galera3: not in the Primary component (wsrep_cluster_status=non-Primary)' in plan['message']


def test_a_member_missing_from_the_play_is_named():
    e = entries()
    del e['galera3']
    plan = topology.build_plan(e)
    assert not plan['ok']
    assert plan['unhealthy'] == [dict(host='galera dbfleet_galera', reason=(
        'the cluster counts 3 members, the play has 2 (galera1, galera2); missing: galera3 at 127.0.0.1:36303 '
        '(not in the inventory)'))]


def test_a_member_in_the_inventory_but_outside_the_play_is_named_so():
    e = entries()
    e['galera3'] = dict(outside=True, addresses=['127.0.0.1', 'galera3'], port=36303)
    plan = topology.build_plan(e)
    assert not plan['ok']
    assert 'missing: galera3 (in the inventory, not in the play)' in plan['message']


def test_a_two_member_cluster_cannot_restart_one():
    e = entries(galera1=dict(wsrep_cluster_size='2'), galera2=dict(wsrep_cluster_size='2'))
    del e['galera3']
    e['galera1']['facts']['cluster']['members'] = e['galera1']['facts']['cluster']['members'][:2]
    e['galera2']['facts']['cluster']['members'] = e['galera2']['facts']['cluster']['members'][:2]
    plan = topology.build_plan(e)
    assert not plan['ok']
    assert 'with 2 member(s), stopping one leaves no majority' in plan['message']


def test_only_pending_topologies_are_checked():
    e = entries(galera2=dict(wsrep_local_state_comment='Joined'))
    e['db1'] = dict(facts=dict(role='primary', error=None, server_uuid='u1', server_id=9, read_only=False,
                               gtid=None, channels=[]), addresses=['10.0.0.11'], port=3306)
    plan = topology.build_plan(e, pending=['db1'])
    assert plan['ok'], plan['message']
    assert sorted(t['name'] for t in plan['topologies']) == ['db1', 'galera dbfleet_galera']


def test_an_async_replica_of_a_member_joins_the_cluster_topology_and_goes_first():
    e = entries()
    ch = dict(name='', source_host='127.0.0.1', source_port=36301, source_uuid=None, source_server_id=1,
              io_running=True, io_state='Yes', sql_running=True, sql_state='Yes', seconds_behind=0,
              last_io_errno=0, last_io_error='', last_sql_errno=0, last_sql_error='')
    e['replica'] = dict(facts=dict(role='replica', error=None, server_uuid=None, server_id=7, read_only=True,
                                   gtid=None, channels=[ch]), addresses=['127.0.0.1'], port=36304)
    plan = topology.build_plan(e, order=['galera1', 'galera2', 'galera3', 'replica'])
    assert plan['ok'], plan['message']
    assert len(plan['topologies']) == 1
    assert plan['order'] == ['replica', 'galera1', 'galera2', 'galera3']


def test_gate_waits_for_synced_ready_and_an_empty_queue():
    joined = node_facts(1, wsrep_local_state_comment='Joined')
    assert topology.gate_problems(joined, False, 60, expect_cluster=UUID) == [
        'state Joined, not Synced (wsrep_local_state_comment)']
    joining = node_facts(1, wsrep_local_state_comment='Joining: receiving State Transfer', wsrep_ready='OFF')
    assert 'wsrep_ready=OFF: refuses queries (error 1047)' in topology.gate_problems(joining, False, 60, expect_cluster=UUID)
    queued = node_facts(1, wsrep_local_recv_queue='4')
    assert topology.gate_problems(queued, False, 60, expect_cluster=UUID) == [
        '4 transaction(s) received and not yet applied (limit 0)']
    assert topology.gate_problems(queued, False, 60, expect_cluster=UUID, max_queue=10) == []
    small = node_facts(1, wsrep_cluster_size='2')
    assert topology.gate_problems(small, False, 60, expect_cluster=UUID, expect_cluster_size=3) == [
        'the cluster counts 2 members, not 3']
    assert topology.gate_problems(node_facts(1), False, 60, expect_cluster=UUID, expect_cluster_size=3) == []
    # Without expect_cluster the gate is what it was: answering is enough for a primary.
    assert topology.gate_problems(joined, False, 60) == []


def test_gate_on_a_server_that_left_the_cluster():
    facts = node_facts(1)
    facts['cluster'] = None
    assert topology.gate_problems(facts, False, 60, expect_cluster=UUID) == ['not a member of cluster %s' % UUID]
    other = node_facts(1, wsrep_cluster_state_uuid='other')
    assert topology.gate_problems(other, False, 60, expect_cluster=UUID)[0] == (
        'member of Galera cluster dbfleet_galera (other), not of %s' % UUID)


def test_read_server_reads_the_cluster_with_global_status():
    def query(conn, sql):
        return MEMBERS if 'wsrep_cluster_members' in sql else []

    variables = dict(VARIABLES, version='10.11.19-MariaDB-0+deb12u1-log', version_comment='Debian 12', server_id='2',
                     wsrep_node_name='galera2')

    def gv(conn, names):
        return dict((k, v) for k, v in variables.items() if k in names)

    def gs(conn, names):
        return dict((k, v) for k, v in dict(STATUS, wsrep_gcomm_uuid=MEMBERS[1]['node_uuid']).items() if k in names)

    facts = topology.read_server(None, query, gv, gs)
    assert facts['role'] == 'primary' and facts['cluster']['ready'] and facts['cluster']['member']['name'] == 'galera2'
    assert topology.read_server(None, query, gv)['cluster'] is None


def test_a_member_in_the_play_whose_state_was_not_read_is_named_so():
    e = entries()
    e['galera3'] = dict(facts=None, error='unreachable: the host did not answer', addresses=['127.0.0.1'], port=36303)
    plan = topology.build_plan(e)
    assert not plan['ok']
    assert 'missing: galera3 (in the play, its cluster state was not read)' in plan['message']
    assert plan['unknown'] == [dict(host='galera3', reason='unreachable: the host did not answer')]


def test_the_node_taking_the_writes_restarts_last():
    e = entries(galera1=dict(threads_connected='6'), galera2=dict(threads_connected='1'),
                galera3=dict(threads_connected='2'))
    plan = topology.build_plan(e, order=['galera1', 'galera2', 'galera3'])
    assert plan['ok'], plan['message']
    assert plan['order'] == ['galera2', 'galera3', 'galera1']
    assert [plan['hosts'][h]['cluster']['clients'] for h in plan['order']] == [0, 1, 5]
