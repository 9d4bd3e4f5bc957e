# -*- coding: utf-8 -*-
"""restart_steps.py: the restart role's reasoning between its module runs (filters restart_inputs, restart_pending,
restart_steps, restart_stopped)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.dbfleet.innodb.plugins.filter import restart_steps as filters
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import steps as restart_steps

DEFAULTS = dict(restart_max_lag=60, restart_timeout=300, restart_leftover_timeout=30, restart_cluster_max_queue=0,
                restart_cluster_drain=None, restart_cluster_drain_seconds=10, restart_cluster_drain_tasks={})


def problems(playbook_dir='/pb', is_file=lambda path: True, method=None, command=None, **given):
    return restart_steps.inputs(dict(DEFAULTS, **given), playbook_dir, method, command, is_file=is_file)['problems']


def test_the_defaults_pass():
    assert problems() == []


@pytest.mark.parametrize('name,value,message', [
    ('restart_max_lag', -1, 'restart_max_lag must be 0 or more; got -1'),
    ('restart_timeout', 0, 'restart_timeout must be 1 or more; got 0'),
    ('restart_leftover_timeout', 'soon', "restart_leftover_timeout must be a whole number; got 'soon'"),
    ('restart_cluster_max_queue', -5, 'restart_cluster_max_queue must be 0 or more; got -5'),
    ('restart_cluster_drain_seconds', 1.5, 'restart_cluster_drain_seconds must be a whole number; got 1.5'),
    ('restart_cluster_drain', 'haproxy',
     'restart_cluster_drain must be null, reject_queries, offline_mode or tasks (got "haproxy")'),
])
def test_each_bad_input_is_named_with_its_value(name, value, message):
    assert problems(**{name: value}) == [message]


def test_numbers_given_as_text_pass():
    # ansible-core before 2.19 templates an int variable to text.
    assert problems(restart_max_lag='0', restart_timeout='1', restart_cluster_drain_seconds='0') == []


def test_every_problem_is_named_at_once_with_the_restart_method_first():
    found = problems(method='reboot', restart_timeout=0, restart_cluster_drain='x')
    assert found[0].startswith('dbfleet_restart_method must be one of service, command')
    assert len(found) == 3


def test_drain_tasks_need_both_files_and_the_files_must_exist():
    assert problems(restart_cluster_drain='tasks', restart_cluster_drain_tasks={'drain': 'd.yml'}) == [
        'restart_cluster_drain_tasks must be a mapping with drain and restore task files (got {"drain": "d.yml"})']
    assert problems(restart_cluster_drain='tasks', restart_cluster_drain_tasks='d.yml') == [
        'restart_cluster_drain_tasks must be a mapping with drain and restore task files (got "d.yml")']
    seen = []
    found = problems(restart_cluster_drain='tasks', is_file=lambda path: seen.append(path) or path.endswith('d.yml'),
                     restart_cluster_drain_tasks={'drain': '../d.yml', 'restore': '/abs/r.yml'})
    assert found == ['restart_cluster_drain_tasks.restore: no such file /abs/r.yml']
    assert seen == [os.path.join('/pb', '../d.yml'), '/abs/r.yml']


def test_drain_files_are_resolved_under_the_playbook_directory_and_not_checked_without_the_tasks_drain():
    out = restart_steps.inputs(dict(DEFAULTS, restart_cluster_drain_tasks={'drain': 'd.yml', 'restore': '/r.yml'}),
                               '/pb', is_file=lambda path: False)
    assert out == dict(problems=[], drain_files={'drain': '/pb/d.yml', 'restore': '/r.yml'})


def test_pending_hosts_in_play_order_from_hostvars():
    hostvars = {'a': {'__restart_pending': True}, 'b': {}, 'c': {'__restart_pending': False},
                'd': {'__restart_pending': True}}
    assert filters.restart_pending(hostvars, ['d', 'a', 'b', 'c', 'gone']) == ['d', 'a']


def _plan():
    def host(role, topology, sources=(), cluster=None, uuid=None):
        return dict(role=role, topology=topology, sources=list(sources), cluster=cluster, server_uuid=uuid)
    galera = dict(kind='galera', name='g', state='Synced', role=None, size=3)
    return dict(
        now=['r2', 'p1', 'g2', 'g1'],
        deferred=[dict(host='late', reason='a later batch')],
        hosts=dict(p1=host('primary', 'p1', uuid='u-p1'), r2=host('replica', 'p1', ['p1'], uuid='u-r2'),
                   r3=host('replica', 'p1', ['p1']), g1=host('primary', 'g', cluster=galera, uuid='u-g1'),
                   g2=host('primary', 'g', cluster=dict(galera, role='PRIMARY'), uuid=None),
                   g3=host('primary', 'g', cluster=galera), late=host('replica', 'x')),
        topologies=[dict(name='p1', cluster=None), dict(name='g', cluster=dict(members=['g2', 'g3', 'g1']))])


HOSTVARS = dict(
    p1={'__restart_reason': 'innodb_adaptive_hash_index_parts=16'}, r2={'__restart_reason': ''},
    g1={'__restart_drain_method': 'reject_queries', '__restart_drain_seconds': '5', 'dbfleet_service_name': 'mariadb'},
    g2={'__restart_drain_method': 'tasks', '__restart_drain_seconds': 0,
        '__restart_inputs': {'drain_files': {'drain': '/pb/d.yml', 'restore': '/pb/r.yml'}}},
    r3={}, g3={}, late={})


def test_the_order_message_names_each_host_its_place_and_reason():
    steps = filters.restart_steps(_plan(), HOSTVARS, check_mode=True)
    assert steps['message'] == (
        'would restart one server at a time, in this order: r2 -> p1 -> g2 -> g1; r2: replica in topology p1; '
        'p1: primary in topology p1, for innodb_adaptive_hash_index_parts=16; g2: member (Synced PRIMARY) of g; '
        'g1: member (Synced) of g; waiting for a later batch: late')
    assert filters.restart_steps(dict(now=[], hosts={}, deferred=[]), {})['message'] == \
        'restarts one server at a time, in this order: nothing'


def test_each_step_has_its_replicas_peers_candidates_and_the_hosts_after_it():
    hosts = filters.restart_steps(_plan(), HOSTVARS)['hosts']
    assert hosts['p1']['replicas'] == ['r2', 'r3'] and hosts['r2']['replicas'] == []
    assert hosts['p1']['peers'] == [] and hosts['g1']['peers'] == ['g2', 'g3']
    # The server UUIDs of the hosts restarted before it (a switchover hands the primary role to one of them).
    assert hosts['g1']['candidates'] == ['u-r2', 'u-p1'] and hosts['r2']['candidates'] == []
    assert hosts['r2']['untouched'] == ['p1', 'g2', 'g1', 'late'] and hosts['g1']['untouched'] == ['late']


def test_the_drain_is_a_cluster_members_only_and_the_service_comes_from_the_host_or_the_server():
    topology = dict(results=[dict(__restart_item='p1', topology=dict(service=dict(name='mysql.service'))),
                             dict(__restart_item='g1', topology=dict(service=dict(name='mariadb.service')))])
    hostvars = dict(HOSTVARS, p1=dict(HOSTVARS['p1'], __restart_drain_method='offline_mode'))
    steps = filters.restart_steps(_plan(), hostvars, topology=topology)
    hosts = steps['hosts']
    assert hosts['p1']['drain'] is None, 'a host outside a cluster is never drained'
    assert (hosts['g1']['drain'], hosts['g1']['drain_seconds']) == ('reject_queries', 5)
    assert hosts['g2']['drain_files'] == {'drain': '/pb/d.yml', 'restore': '/pb/r.yml'}
    assert steps['drain_check'] == ['g1']
    assert (hosts['p1']['service'], hosts['g1']['service'], hosts['r2']['service']) == ('mysql.service', 'mariadb', None)


def test_the_drain_message_says_what_the_check_found_or_the_task_files():
    checked = dict(results=[dict(__restart_item='g1', msg='would set wsrep_reject_queries=ALL (was NONE)')])
    assert filters.restart_steps(_plan(), HOSTVARS, checked=checked)['drain_message'] == (
        'g2: tasks, /pb/d.yml before the stop, /pb/r.yml after the gate; '
        'g1: reject_queries, would set wsrep_reject_queries=ALL (was NONE), put back after its gate')
    assert filters.restart_steps(_plan(), dict(HOSTVARS, g1={}, g2={}))['drain_message'] == ''


@pytest.mark.parametrize('failure,undrain,message', [
    (dict(msg='the gate failed'), None, 'db2: the gate failed. The run stopped at db2; not restarted: db1, db3.'),
    (dict(msg='One or more items failed', results=[dict(failed=True, msg='g3 not Synced'), dict(failed=False, msg='ok'),
                                                   dict(msg='no failed key')]),
     dict(skipped=True),
     'db2: One or more items failed: g3 not Synced. The run stopped at db2; not restarted: db1, db3.'),
    (dict(msg='refused'), dict(changed=True, msg='set wsrep_reject_queries=NONE (was ALL)'),
     'db2: refused. The drain was put back (set wsrep_reject_queries=NONE (was ALL)). The run stopped at db2; '
     'not restarted: db1, db3.'),
    (dict(), dict(unreachable=True, msg=' ssh: no route\n'),
     'db2: failed. The drain could NOT be put back: ssh: no route. The run stopped at db2; not restarted: db1, db3.'),
])
def test_the_stop_message_says_why_the_drain_and_what_was_left(failure, undrain, message):
    assert filters.restart_stopped(dict(untouched=['db1', 'db3']), 'db2', failure, undrain) == message
    assert filters.restart_stopped(dict(untouched=[]), 'db2', dict(msg='x')).endswith('not restarted: none.')


def test_a_switchover_asked_for_a_primary_whose_replicas_the_play_left_out_stops_before_any_change():
    def host(role, sources=()):
        return dict(role=role, topology='db1', sources=list(sources), cluster=None, server_uuid=None)
    # topology_plan lists the inventory's other hosts too, outside_play (db2 here; db3 not at all).
    alone = dict(now=['db1'], deferred=[], hosts=dict(db1=host('primary'), db2=dict(host(None), outside_play=True)),
                 topologies=[])
    hostvars = dict(db1={'__restart_primary': 'switchover'}, db2={'dbfleet_replication_source': 'db1'},
                    db3={'dbfleet_replication_source': 'db9'}, solo={'__restart_primary': 'switchover'})
    steps = filters.restart_steps(alone, hostvars)
    assert steps['hosts']['db1']['switchover'] is False
    assert steps['problems'] == [
        "restart_primary: switchover: db1 is a primary whose replicas db2 (their dbfleet_replication_source) are not "
        "in this play, so none can take its role and it would restart in place: add them to the play's hosts "
        "(rolling_restart_hosts), or give restart_primary: in_place for it"]
    # With its replica in the play it switches; a server no inventory host replicates from restarts in place.
    both = dict(alone, now=['db2', 'db1'], hosts=dict(db1=host('primary'), db2=host('replica', ['db1'])))
    steps = filters.restart_steps(both, hostvars)
    assert steps['problems'] == [] and steps['switchovers'] == ['db1']
    solo = dict(now=['solo'], deferred=[], hosts=dict(solo=host('primary')), topologies=[])
    assert filters.restart_steps(solo, hostvars)['problems'] == []
    # in_place asked: nothing to refuse.
    assert filters.restart_steps(alone, dict(hostvars, db1={}))['problems'] == []
