# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster model: Galera state read into the kind-agnostic shape, and the decisions over it."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters

UUID = '7e1b0a2c-ca6f-11f0-8d2e-1f4c2b6a9d10'
VARIABLES = dict(wsrep_on='ON', wsrep_provider='/usr/lib/galera/libgalera_smm.so', wsrep_cluster_name='dbfleet_galera',
                 wsrep_node_name='galera1', wsrep_desync='OFF')
# As SHOW GLOBAL STATUS gives them on a Synced node of the lab's 3-node MariaDB 10.11 cluster.
SYNCED = dict(wsrep_cluster_state_uuid=UUID, wsrep_cluster_size='3', wsrep_cluster_status='Primary',
              wsrep_cluster_conf_id='3', wsrep_local_state_comment='Synced', wsrep_local_state='4', wsrep_ready='ON',
              wsrep_connected='ON', wsrep_local_recv_queue='0', wsrep_gcomm_uuid='a1',
              wsrep_incoming_addresses='127.0.0.1:36301,127.0.0.1:36302,127.0.0.1:36303', wsrep_desync_count='0')
MEMBERS = [dict(node_uuid='a1', cluster_uuid=UUID, node_name='galera1', node_incoming_address='127.0.0.1:36301'),
           dict(node_uuid='a2', cluster_uuid=UUID, node_name='galera2', node_incoming_address='127.0.0.1:36302'),
           dict(node_uuid='a3', cluster_uuid=UUID, node_name='galera3', node_incoming_address='127.0.0.1:36303')]


def node(**status):
    return clusters.galera_from(VARIABLES, dict(SYNCED, **status), MEMBERS)


def test_a_synced_node_reads_into_the_shape():
    c = node()
    assert c['kind'] == 'galera' and c['name'] == UUID and c['label'] == 'dbfleet_galera'
    assert c['size'] == 3 and c['state'] == 'Synced' and c['status'] == 'Primary'
    assert c['ready'] is True and c['quorum'] is True and c['role'] is None and c['queue'] == 0
    assert c['member'] == dict(id='a1', name='galera1', address='127.0.0.1:36301')
    assert [m['name'] for m in c['members']] == ['galera1', 'galera2', 'galera3']
    assert c['members'][0]['state'] == 'Synced' and c['members'][1]['state'] is None
    assert clusters.member_problems(c) == []


def test_not_a_galera_node():
    assert clusters.galera_from(dict(VARIABLES, wsrep_on='OFF'), SYNCED) is None
    assert clusters.galera_from(dict(VARIABLES, wsrep_provider='none'), SYNCED) is None
    assert clusters.galera_from({}, {}) is None


def test_members_from_incoming_addresses_without_the_table():
    c = clusters.galera_from(VARIABLES, SYNCED, None)
    assert [m['address'] for m in c['members']] == ['127.0.0.1:36301', '127.0.0.1:36302', '127.0.0.1:36303']
    assert c['member']['name'] == 'galera1'


@pytest.mark.parametrize('status, words', [
    (dict(wsrep_local_state_comment='Joining: receiving State Transfer', wsrep_ready='OFF'), ['not Synced', 'wsrep_ready=OFF']),
    (dict(wsrep_local_state_comment='Joined'), ['state Joined, not Synced']),
    (dict(wsrep_local_state_comment='Donor/Desynced'), ['state Donor/Desynced']),
    (dict(wsrep_cluster_status='non-Primary', wsrep_ready='OFF'), ['not in the Primary component']),
    (dict(wsrep_connected='OFF', wsrep_cluster_status='Disconnected'), ['not connected']),
    (dict(wsrep_local_recv_queue='12'), ['12 transaction(s) received and not yet applied']),
])
def test_member_problems_name_the_reason(status, words):
    c = node(**status)
    assert c['ready'] is False or status.get('wsrep_local_recv_queue')
    text = '; '.join(clusters.member_problems(c))
    for word in words:
        assert word in text


def test_queue_limit_can_be_lifted():
    assert clusters.member_problems(node(wsrep_local_recv_queue='12'), max_queue=None) == []


def test_quorum_after_stop():
    assert clusters.quorum_after_stop(3) and clusters.quorum_after_stop(5)
    assert not clusters.quorum_after_stop(2) and not clusters.quorum_after_stop(1)


def three(**galera2):
    return {'galera1': node(), 'galera2': node(wsrep_gcomm_uuid='a2', **galera2), 'galera3': node(wsrep_gcomm_uuid='a3')}


def test_stop_allowed_when_the_others_are_synced():
    assert clusters.stop_problems(three(), 'galera1') == []


def test_stop_refused_while_another_member_is_donor_or_joining():
    problems = clusters.stop_problems(three(wsrep_local_state_comment='Donor/Desynced'), 'galera1')
    assert problems == ['galera2: state Donor/Desynced, not Synced (wsrep_local_state_comment)']
    problems = clusters.stop_problems(three(wsrep_local_state_comment='Joining', wsrep_ready='OFF'), 'galera3')
    assert any(p.startswith('galera2: state Joining') for p in problems)


def test_stop_of_a_member_that_is_itself_not_synced_is_allowed():
    # It serves nobody: stopping it does not take the cluster lower.
    assert clusters.stop_problems(three(wsrep_local_state_comment='Joined'), 'galera2') == []


def test_stop_refused_when_a_member_is_missing_from_the_play():
    c = three()
    del c['galera3']
    problems = clusters.stop_problems(c, 'galera1')
    assert problems == ['the cluster counts 3 members, the play knows 2 (galera1, galera2): the others cannot be checked']


def test_stop_refused_without_a_majority_left():
    two = {'galera1': node(wsrep_cluster_size='2'), 'galera2': node(wsrep_cluster_size='2', wsrep_gcomm_uuid='a2')}
    assert clusters.stop_problems(two, 'galera1') == ['stopping galera1 leaves 1 of 2 members: no majority']


def test_stop_refused_when_a_member_is_unreadable_or_elsewhere():
    c = three()
    c['galera2'] = None
    assert clusters.stop_problems(c, 'galera1') == ['galera2: its cluster state cannot be read']
    c = three(wsrep_cluster_state_uuid='other-uuid')
    assert 'galera2: member of Galera cluster dbfleet_galera (other-uuid)' in clusters.stop_problems(c, 'galera1')[0]
    assert clusters.stop_problems({'galera1': None}, 'galera1') == ['galera1: its cluster state cannot be read']


def test_read_galera_uses_the_callables_and_survives_a_missing_members_table():
    asked = []

    def query(conn, sql):
        asked.append(sql)
        raise RuntimeError("Table 'mysql.wsrep_cluster_members' doesn't exist")

    c = clusters.read_galera(None, query, lambda conn, names: VARIABLES, lambda conn, names: SYNCED)
    assert c['ready'] and len(c['members']) == 3 and asked == [clusters.GALERA_MEMBERS_SQL]
    assert clusters.read_galera(None, query, lambda conn, names: dict(wsrep_on='OFF'), None) is None
    # a MySQL server without a group (no group_replication_group_name) is no cluster member
    assert clusters.read_cluster(None, 'mysql', query, lambda conn, names: {}, None) is None


def test_describe():
    assert clusters.describe(node()) == 'Galera cluster dbfleet_galera (%s)' % UUID
    assert clusters.describe(None) == 'no cluster'
