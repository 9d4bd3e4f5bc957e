# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A guarded change over several hosts (guarded/hosts.py; filters replica_problems, cluster_parts): the replicas that
stop the run, and which cluster member runs the statement."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import hosts as g


# ---------------------------------------------------------------- a run over a topology (the playbooks' checks)
PLAN = {
    'db1': dict(role='primary', sources=[], external_sources=[], server_id=1),
    'db2': dict(role='replica', sources=['db1'], external_sources=[], server_id=2),
    'db3': dict(role='replica', sources=[], external_sources=[dict(channel='', reason='10.0.0.9:3306 (not in the inventory)')],
                server_id=3),
}


def test_replicas_whose_source_is_not_in_the_run():
    assert g.replica_problems(PLAN, ['db1', 'db2'], 'sources') == []
    assert g.replica_problems(PLAN, ['db2', 'db3'], 'sources') == [
        'db2 replicates from db1', 'db3 replicates from 10.0.0.9:3306 (not in the inventory)']


def test_replicas_of_the_run():
    assert g.replica_problems(PLAN, ['db1', 'db2'], 'replicas') == ['db2 is a replica of db1']
    assert g.replica_problems(PLAN, ['db1'], 'replicas') == []


def test_registered_replicas_outside_the_run():
    results = dict(db1=dict(replica_hosts=[dict(server_id=2, host='10.0.0.2', port=3306),
                                           dict(server_id=7, host=None, port=None)]),
                   db2=dict(replica_hosts=None), db4=dict(skipped=True))
    assert g.replica_problems(PLAN, ['db1', 'db2'], 'registered', results) == [
        'db1 has replica server_id 7 (it reports no host)']
    assert g.replica_problems(PLAN, ['db1', 'db2'], 'registered', results, whole_topology=False) == [
        'db1 has replica server_id 2 (10.0.0.2:3306), and the whole topology is not converted',
        'db1 has replica server_id 7 (it reports no host), and the whole topology is not converted']
    with pytest.raises(ValueError):
        g.replica_problems(PLAN, ['db1'], 'nonsense')


def test_the_filter_is_the_same_function():
    from ansible_collections.dbfleet.innodb.plugins.filter.replica_problems import FilterModule
    from ansible.errors import AnsibleFilterError
    f = FilterModule().filters()['replica_problems']
    assert f(PLAN, ['db2'], 'sources') == ['db2 replicates from db1']
    with pytest.raises(AnsibleFilterError):
        f(PLAN, ['db2'], 'nonsense')


# ---------------------------------------------------------------- cluster_parts
def _host(kind=None, name=None, role=None):
    return dict(role='primary', cluster=dict(kind=kind, name=name, role=role) if name else None)


def test_galera_drops_once_on_the_first_member_of_the_run_and_the_others_follow():
    hosts = dict(galera1=_host('galera', 'lab'), galera2=_host('galera', 'lab'), galera3=_host('galera', 'lab'),
                 galera_replica=dict(role='replica', cluster=None))
    parts = g.cluster_parts(hosts, ['galera2', 'galera1', 'galera3', 'galera_replica'])
    assert parts['galera2'] == dict(part='drop', cluster='lab', kind='galera', by='galera2')
    assert parts['galera1']['part'] == parts['galera3']['part'] == 'follow'
    assert parts['galera1']['by'] == parts['galera3']['by'] == 'galera2'
    assert 'galera_replica' not in parts  # not a member: the replica rules apply


def test_group_replication_drops_on_the_primary_wherever_it_is_in_the_run():
    hosts = dict(gr1=_host('group_replication', 'g', 'SECONDARY'), gr2=_host('group_replication', 'g', 'PRIMARY'),
                 gr3=_host('group_replication', 'g', 'SECONDARY'))
    parts = g.cluster_parts(hosts, ['gr1', 'gr2', 'gr3'])
    assert [parts[h]['part'] for h in ('gr1', 'gr2', 'gr3')] == ['follow', 'drop', 'follow']
    assert set(p['by'] for p in parts.values()) == {'gr2'}


def test_group_without_its_primary_in_the_run_has_no_runner():
    hosts = dict(gr1=_host('group_replication', 'g', 'SECONDARY'), gr3=_host('group_replication', 'g', 'SECONDARY'))
    parts = g.cluster_parts(hosts, ['gr1', 'gr3'])
    assert all(p['part'] == 'follow' and p['by'] is None for p in parts.values())


def test_two_clusters_each_drop_once():
    hosts = dict(a1=_host('galera', 'a'), a2=_host('galera', 'a'), b1=_host('galera', 'b'), b2=_host('galera', 'b'),
                 solo=_host())
    parts = g.cluster_parts(hosts, ['a1', 'b1', 'a2', 'b2', 'solo'])
    assert sorted(h for h, p in parts.items() if p['part'] == 'drop') == ['a1', 'b1']
    assert 'solo' not in parts
    assert g.cluster_parts(None, ['a1']) == {} and g.cluster_parts(hosts, []) == {}


# ---------------------------------------------------------------- cluster_problems
def test_cluster_problems_a_group_without_its_primary_and_a_change_per_host():
    hosts = dict(gr1=_host('group_replication', 'g', 'SECONDARY'), gr3=_host('group_replication', 'g', 'SECONDARY'),
                 galera1=_host('galera', 'lab'), db1=dict(role='primary', cluster=None))
    run = ['db1', 'galera1', 'gr1', 'gr3']
    assert g.cluster_problems(hosts, run) == [
        'gr1: no primary of Group Replication group g is in this run (a secondary refuses writes)',
        'gr3: no primary of Group Replication group g is in this run (a secondary refuses writes)']
    assert g.cluster_problems(hosts, ['db1', 'galera1']) == []
    assert g.cluster_problems(hosts, ['db1', 'galera1'], one_per_host=True) == [
        'galera1 is a member of cluster lab: a change per host does not apply to a cluster, where one statement '
        'reaches every member']
    assert len(g.cluster_problems(hosts, run, one_per_host=True)) == 3
    assert g.cluster_problems(None, None) == []


def test_the_cluster_problems_filter_is_the_function():
    from ansible_collections.dbfleet.innodb.plugins.filter.cluster_problems import FilterModule
    f = FilterModule().filters()['cluster_problems']
    hosts = dict(gr1=_host('group_replication', 'g', 'SECONDARY'))
    assert f(hosts, ['gr1']) == g.cluster_problems(hosts, ['gr1']) and len(f(hosts, ['gr1'])) == 1


# ---------------------------------------------------------------- where a conversion is gated and verified
def test_topology_replicas_are_the_runs_replicas_of_that_topology_in_play_order():
    hosts = dict(p1=dict(role='primary', topology='t1'), r1=dict(role='replica', topology='t1'),
                 r2=dict(role='replica', topology='t2'), r3=dict(role='replica', topology='t1'),
                 p2=dict(role='primary', topology='t2'))
    assert g.topology_replicas(hosts, ['r3', 'p1', 'r2', 'r1', 'gone'], 't1') == ['r3', 'r1']
    assert g.topology_replicas(hosts, ['p1', 'p2'], 't1') == []
    assert g.topology_replicas(None, ['r1'], 't1') == [] and g.topology_replicas(hosts, None, 't1') == []


def test_cluster_followers_are_the_members_the_runners_statement_reaches():
    hosts = dict(a1=_host('galera', 'a'), a2=_host('galera', 'a'), a3=_host('galera', 'a'), b1=_host('galera', 'b'),
                 b2=_host('galera', 'b'), solo=_host())
    run = ['a2', 'b1', 'a1', 'b2', 'a3', 'solo']
    assert g.cluster_followers(hosts, run, 'a2') == ['a1', 'a3']
    assert g.cluster_followers(hosts, run, 'b1') == ['b2']
    assert g.cluster_followers(hosts, run, 'a1') == [] and g.cluster_followers(hosts, run, 'solo') == []
    group = dict(gr1=_host('group_replication', 'g', 'SECONDARY'), gr2=_host('group_replication', 'g', 'PRIMARY'))
    assert g.cluster_followers(group, ['gr1', 'gr2'], 'gr2') == ['gr1']


def test_the_conversion_filters_are_the_functions():
    from ansible_collections.dbfleet.innodb.plugins.filter.cluster_parts import FilterModule
    filters = FilterModule().filters()
    hosts = dict(a1=_host('galera', 'a'), a2=_host('galera', 'a'), r1=dict(role='replica', topology='t'))
    assert filters['cluster_followers'](hosts, ['a1', 'a2', 'r1'], 'a1') == ['a2']
    assert filters['topology_replicas'](hosts, ['a1', 'a2', 'r1'], 't') == ['r1']
