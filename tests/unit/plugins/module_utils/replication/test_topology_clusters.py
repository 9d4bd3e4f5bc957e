# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""topology.py with clusters: a cluster member's state read with its replication, and the cluster facts the plan's and
the gate's tests share (test_topology_plan_clusters.py, test_restart_gate.py)."""

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
