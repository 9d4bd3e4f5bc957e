# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""restart_gate.py: what stops the next host after one restarted, replication and clusters."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import restart_gate
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.replication.test_topology_clusters import UUID, node_facts
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.replication.test_topology_plan import channel, mysql_facts


def test_gate_problems():
    facts = mysql_facts('u2', 2, [channel('db1', lag=90)], True)
    assert restart_gate.gate_problems(facts, True, 60) == ['replication: 90 s behind its source (limit 60 s)']
    assert restart_gate.gate_problems(facts, True, 120) == []
    assert restart_gate.gate_problems(mysql_facts('u2', 2), True, 60) == [
        'no replication channel after the restart (it was a replica)']
    assert restart_gate.gate_problems(mysql_facts('u1', 1), False, 60,
                                      [('innodb_adaptive_hash_index_parts', 16, '8', False)]) == [
        'innodb_adaptive_hash_index_parts is 8, not 16, after the restart']


def test_gate_waits_for_synced_ready_and_an_empty_queue():
    joined = node_facts(1, wsrep_local_state_comment='Joined')
    assert restart_gate.gate_problems(joined, False, 60, expect_cluster=UUID) == [
        'state Joined, not Synced (wsrep_local_state_comment)']
    joining = node_facts(1, wsrep_local_state_comment='Joining: receiving State Transfer', wsrep_ready='OFF')
    assert 'wsrep_ready=OFF: refuses queries (error 1047)' in restart_gate.gate_problems(joining, False, 60, expect_cluster=UUID)
    queued = node_facts(1, wsrep_local_recv_queue='4')
    assert restart_gate.gate_problems(queued, False, 60, expect_cluster=UUID) == [
        '4 transaction(s) received and not yet applied (limit 0)']
    assert restart_gate.gate_problems(queued, False, 60, expect_cluster=UUID, max_queue=10) == []
    small = node_facts(1, wsrep_cluster_size='2')
    assert restart_gate.gate_problems(small, False, 60, expect_cluster=UUID, expect_cluster_size=3) == [
        'the cluster counts 2 members, not 3']
    assert restart_gate.gate_problems(node_facts(1), False, 60, expect_cluster=UUID, expect_cluster_size=3) == []
    # Without expect_cluster the gate is what it was: answering is enough for a primary.
    assert restart_gate.gate_problems(joined, False, 60) == []


def test_gate_on_a_server_that_left_the_cluster():
    facts = node_facts(1)
    facts['cluster'] = None
    assert restart_gate.gate_problems(facts, False, 60, expect_cluster=UUID) == ['not a member of cluster %s' % UUID]
    other = node_facts(1, wsrep_cluster_state_uuid='other')
    assert restart_gate.gate_problems(other, False, 60, expect_cluster=UUID)[0] == (
        'member of Galera cluster dbfleet_galera (other), not of %s' % UUID)
