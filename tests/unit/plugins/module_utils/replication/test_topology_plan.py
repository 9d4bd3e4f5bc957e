# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""topology_plan.py: the replication topologies of a play's hosts and the order to act on them (build_plan() and its
steps), fail closed."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology_plan


def mysql_facts(uuid, sid, channels=(), read_only=False):
    return dict(role='replica' if channels else 'primary', error=None, server_uuid=uuid, server_id=sid,
                read_only=read_only, super_read_only=read_only,
                gtid=dict(model='mysql', mode='ON', executed='%s:1-5' % uuid), channels=list(channels))


def channel(host, port=3306, uuid=None, sid=None, io=True, sql=True, lag=0):
    return dict(name='', source_host=host, source_port=port, source_uuid=uuid, source_server_id=sid,
                io_running=io, io_state='Yes' if io else 'No', sql_running=sql, sql_state='Yes' if sql else 'No',
                seconds_behind=lag if (io and sql) else None, last_io_errno=0, last_io_error='',
                last_sql_errno=0, last_sql_error='')


def fleet(**over):
    entries = dict(
        db1=dict(facts=mysql_facts('u1', 1), addresses=['10.0.0.11'], port=3306),
        db2=dict(facts=mysql_facts('u2', 2, [channel('10.0.0.11', uuid='u1')], read_only=True),
                 addresses=['10.0.0.12'], port=3306),
        db3=dict(facts=mysql_facts(None, 3), addresses=['10.0.0.13'], port=3306),
        db4=dict(facts=mysql_facts(None, 4, [channel('10.0.0.13', sid=3)], read_only=True),
                 addresses=['10.0.0.14'], port=3306),
    )
    for name, change in over.items():
        entries[name] = dict(entries[name], **change)
    return entries


def test_plan_orders_replicas_first_per_topology():
    plan = topology_plan.build_plan(fleet(), order=['db1', 'db2', 'db3', 'db4'])
    assert plan['ok'], plan['message']
    assert plan['order'] == ['db2', 'db1', 'db4', 'db3'] and plan['now'] == plan['order']
    assert [t['members'] for t in plan['topologies']] == [['db2', 'db1'], ['db4', 'db3']]
    assert plan['hosts']['db2']['sources'] == ['db1'] and plan['hosts']['db4']['sources'] == ['db3']
    assert plan['hosts']['db2']['channels'][0]['source_match'] == 'server_uuid u1'
    assert plan['hosts']['db4']['channels'][0]['source_match'] == 'server_id 3'


def test_chain_deepest_first_and_address_matching():
    entries = fleet()
    entries['db5'] = dict(facts=mysql_facts('u5', 5, [channel('db2')], read_only=True), addresses=[], port=3306)
    plan = topology_plan.build_plan(entries, pending=['db1', 'db2', 'db5'], order=['db1', 'db2', 'db3', 'db4', 'db5'])
    assert plan['order'] == ['db5', 'db2', 'db1']
    assert plan['hosts']['db5']['depth'] == 2
    assert plan['hosts']['db5']['channels'][0]['source_match'] == 'address db2:3306'


def test_unknown_role_fails_closed_and_names_host():
    plan = topology_plan.build_plan(fleet(db2=dict(facts=None, error='unreachable: ssh timed out')))
    assert not plan['ok']
    assert plan['unknown'] == [dict(host='db2', reason='unreachable: ssh timed out')]
    assert 'db2: unreachable: ssh timed out' in plan['message']
    assert 'stopped before any change' in plan['message']


def test_inventory_listing_a_replica_as_primary_is_refused():
    plan = topology_plan.build_plan(fleet(db2=dict(inventory_role='primary', inventory_role_source='group replicas')))
    assert not plan['ok']
    assert plan['disagreements'] == [dict(host='db2', inventory='primary (group replicas)',
                                          server='replica: the server replicates from db1')]
    assert 'db2: the inventory says primary (group replicas), replica: the server replicates from db1' \
        in plan['message']


def test_inventory_calling_a_primary_a_replica_or_naming_another_source_is_refused():
    plan = topology_plan.build_plan(fleet(db1=dict(inventory_role='replica', inventory_role_source='x'),
                                          db4=dict(inventory_source='db1')))
    hosts = sorted(d['host'] for d in plan['disagreements'])
    assert hosts == ['db1', 'db4'] and not plan['ok']


def test_unhealthy_replica_blocks_only_its_topology():
    entries = fleet(db2=dict(facts=mysql_facts('u2', 2, [channel('10.0.0.11', uuid='u1', sql=False)], True)))
    plan = topology_plan.build_plan(entries, pending=['db3', 'db4'])
    assert plan['ok'] and plan['order'] == ['db4', 'db3']
    plan = topology_plan.build_plan(entries, pending=['db1'])
    assert not plan['ok'] and plan['unhealthy'][0]['host'] == 'db2'
    assert 'SQL thread No' in plan['message'] and 'Untouched: db1' in plan['message']


def test_lag_over_the_limit_is_unhealthy():
    entries = fleet(db4=dict(facts=mysql_facts(None, 4, [channel('10.0.0.13', sid=3, lag=120)], True)))
    plan = topology_plan.build_plan(entries, pending=['db4'], max_lag=60)
    assert not plan['ok'] and '120 s behind its source (limit 60 s)' in plan['message']
    assert topology_plan.build_plan(entries, pending=['db4'], max_lag=300)['ok']


def test_serial_batches_primary_waits_for_replica_of_a_later_batch():
    # serial: 1 with the primary first in the inventory: the primary waits until its replica's batch.
    plan = topology_plan.build_plan(fleet(), pending=['db1'], reached=['db1'], order=['db1', 'db2', 'db3', 'db4'])
    assert plan['now'] == [] and plan['deferred'][0]['host'] == 'db1'
    assert 'db2' in plan['deferred'][0]['reason']
    plan = topology_plan.build_plan(fleet(), pending=['db1', 'db2'], reached=['db1', 'db2'])
    assert plan['now'] == ['db2', 'db1']


def test_external_source_is_reported_not_guessed():
    entries = fleet(db2=dict(facts=mysql_facts('u2', 2, [channel('10.9.9.9', uuid='zz')], True)))
    plan = topology_plan.build_plan(entries)
    assert plan['hosts']['db2']['sources'] == []
    assert plan['hosts']['db2']['external_sources'][0]['reason'].startswith('no inventory host is 10.9.9.9:3306')
    assert plan['hosts']['db2']['topology'] == 'db2'


def test_inventory_role_from_var_then_group():
    groups = dict(replicas=['db2'])
    assert topology_plan.inventory_role({'dbfleet_replication_role': 'primary'}, groups, 'db2') == (
        'primary', 'dbfleet_replication_role')
    assert topology_plan.inventory_role({}, groups, 'db2') == ('replica', 'group replicas')
    assert topology_plan.inventory_role({}, groups, 'db1') == ('primary', 'group replicas')
    assert topology_plan.inventory_role({}, {}, 'db1') == (None, None)


def test_source_outside_the_play_is_mapped_by_address_not_read():
    entries = fleet()
    entries = dict(db2=entries['db2'], db1=dict(outside=True, addresses=['10.0.0.11'], port=3306),
                   db3=dict(outside=True, addresses=['10.0.0.13'], port=3306))
    entries['db2'] = dict(entries['db2'], inventory_source='db1')
    plan = topology_plan.build_plan(entries, order=['db2', 'db1', 'db3'])
    assert plan['ok'], plan['message']
    assert plan['order'] == ['db2'] and plan['hosts']['db2']['sources'] == ['db1']
    assert plan['hosts']['db1']['outside_play'] is True and plan['topologies'][0]['members'] == ['db2', 'db1']
    assert 'db3' not in plan['hosts'] or plan['hosts']['db3']['topology'] is None


def test_two_hosts_reporting_one_server_are_refused():
    entries = fleet(db2=dict(facts=mysql_facts('u1', 1)))
    plan = topology_plan.build_plan(entries)
    assert not plan['ok']
    assert sorted(set(d['host'] for d in plan['disagreements'])) == ['db1', 'db2']
    assert 'server_uuid u1 is also reported by db1' in plan['message']


def gr_entry(uuid, sid, port):
    rows = [dict(MEMBER_ID=u, MEMBER_HOST='127.0.0.1', MEMBER_PORT=p, MEMBER_STATE='ONLINE',
                 MEMBER_ROLE='PRIMARY' if u == 'g1' else 'SECONDARY') for u, p in (('g1', 37351), ('g2', 37352), ('g3', 37353))]
    cluster = clusters.group_replication_from(dict(group_replication_group_name='grp', server_uuid=uuid,
                                                   group_replication_single_primary_mode='ON'), rows, [])
    facts = dict(mysql_facts(uuid, sid), cluster=cluster)
    return dict(facts=facts, addresses=['127.0.0.1'], port=port)


def test_group_replication_is_one_topology_primary_last_and_refused_without_switchover():
    entries = dict(gr1=gr_entry('g1', 351, 37351), gr2=gr_entry('g2', 352, 37352),
                   gr3=gr_entry('g3', 353, 37353))
    plan = topology_plan.build_plan(entries, order=['gr1', 'gr2', 'gr3'], cluster_switchover=True)
    assert plan['ok'], plan['message']
    assert [t['name'] for t in plan['topologies']] == ['group_replication grp']
    assert plan['order'] == ['gr2', 'gr3', 'gr1'] and plan['refused'] == []
    refused = topology_plan.build_plan(entries, order=['gr1', 'gr2', 'gr3'])
    assert not refused['ok'] and [r['host'] for r in refused['refused']] == ['gr1']
    assert 'gr1: the PRIMARY of group_replication grp restarts only after a switchover' in refused['message']
    # only the secondaries pending: nothing to refuse
    assert topology_plan.build_plan(entries, pending=['gr2', 'gr3'], order=['gr1', 'gr2', 'gr3'])['ok']
    # a change that restarts nothing (the guarded drop and conversion's preflight): no switchover needed
    ddl = topology_plan.build_plan(entries, order=['gr1', 'gr2', 'gr3'], restarts=False)
    assert ddl['ok'] and ddl['refused'] == [], ddl['message']
    # ... and the other checks stay: a member out of the group is still a reason to stop
    out = dict(entries, gr3=gr_entry('g3', 353, 37353))
    out['gr3']['facts']['cluster'] = dict(out['gr3']['facts']['cluster'], state='OFFLINE')
    stopped = topology_plan.build_plan(out, order=['gr1', 'gr2', 'gr3'], restarts=False)
    assert not stopped['ok'] and 'gr3: state OFFLINE, not ONLINE' in stopped['message']
    # nothing stops in a drop or conversion: a group of two keeps its majority, only a restart would not
    pair = dict(gr1=gr_entry('g1', 351, 37351), gr2=gr_entry('g2', 352, 37352))
    for entry in pair.values():
        entry['facts']['cluster'] = dict(entry['facts']['cluster'], size=2)
    restart = topology_plan.build_plan(pair, order=['gr1', 'gr2'], cluster_switchover=True)
    assert not restart['ok'] and 'with 2 member(s), stopping one leaves no majority' in restart['message']
    ddl = topology_plan.build_plan(pair, order=['gr1', 'gr2'], restarts=False)
    assert 'stopping one' not in ddl['message']


def test_group_primary_waits_for_the_secondaries_of_later_batches():
    entries = dict(gr1=gr_entry('g1', 351, 37351), gr2=gr_entry('g2', 352, 37352), gr3=gr_entry('g3', 353, 37353))
    # serial 1: the primary's batch comes first; the others' part of the play (whether they are pending) has not run
    plan = topology_plan.build_plan(entries, pending=['gr1'], reached=['gr1'], order=['gr1', 'gr2', 'gr3'], cluster_switchover=True)
    assert plan['ok'] and plan['now'] == []
    assert plan['deferred'] == [dict(host='gr1', reason='the primary of its group restarts last: waits for gr2, gr3')]
    plan = topology_plan.build_plan(entries, pending=['gr1', 'gr2'], reached=['gr1', 'gr2'], order=['gr1', 'gr2', 'gr3'],
                                    cluster_switchover=True)
    assert plan['now'] == ['gr2'] and plan['deferred'] == [dict(host='gr1', reason='the primary of its group restarts last: waits for gr3')]
    # the last batch: gr3 needs nothing, the primary goes
    plan = topology_plan.build_plan(entries, pending=['gr1', 'gr2'], order=['gr1', 'gr2', 'gr3'], cluster_switchover=True)
    assert plan['now'] == ['gr2', 'gr1'] and plan['deferred'] == []
    plan = topology_plan.build_plan(entries, order=['gr1', 'gr2', 'gr3'], cluster_switchover=True)
    assert plan['now'] == ['gr2', 'gr3', 'gr1'] and plan['deferred'] == []


def entries_of(raw):
    return dict((n, topology_plan._entry(n, e)) for n, e in raw.items())  # pylint: disable=protected-access


def test_step_read_hosts_locates_sources_and_fails_closed():
    raw = fleet(db3=dict(facts=None, error='SHOW REPLICA STATUS failed'))
    names = ['db1', 'db2', 'db3', 'db4']
    hosts, unknown, sources = topology_plan._read_hosts(names, entries_of(raw), ['db2'])  # pylint: disable=protected-access
    assert sources == dict(db1=[], db2=['db1'], db3=[], db4=['db3'])
    assert hosts['db2']['pending'] and not hosts['db1']['pending'] and hosts['db3']['role'] == 'unknown'
    assert unknown == [dict(host='db3', reason='SHOW REPLICA STATUS failed')] and sources['db3'] == []
    # db3 could not be read: db4's source is found by its address, not by the server_id db3 would report
    assert hosts['db4']['channels'][0]['source_match'] == 'address 10.0.0.13:3306'


def test_step_disagreements_same_server_then_inventory():
    raw = fleet(db3=dict(facts=mysql_facts('u1', 3)), db1=dict(inventory_source='db3'),
                db2=dict(inventory_role='primary', inventory_role_source='group primaries'))
    names = ['db1', 'db2', 'db3', 'db4']
    entries = entries_of(raw)
    hosts = topology_plan._read_hosts(names, entries, names)[0]  # pylint: disable=protected-access
    same = topology_plan._same_server_disagreements(names, hosts)  # pylint: disable=protected-access
    assert [d['host'] for d in same] == ['db1', 'db3'] and 'server_uuid u1 is also reported by db3' in same[0]['server']
    found = topology_plan._inventory_disagreements(names, hosts, entries, same)  # pylint: disable=protected-access
    assert found == [dict(host='db2', inventory='primary (group primaries)',
                          server='replica: the server replicates from db1')]
    # with nothing said of db1 before, the source the inventory names for the primary db1 is reported too
    alone = topology_plan._inventory_disagreements(names, hosts, entries)  # pylint: disable=protected-access
    assert alone[0] == dict(host='db1', inventory='replica of db3 (dbfleet_replication_source)',
                            server='primary: the server replicates from no one') and alone[1:] == found


def test_step_outside_hosts_join_only_when_a_host_replicates_from_them():
    raw = fleet(db1=dict(outside=True), db3=dict(outside=True))
    entries = entries_of(raw)
    hosts, _unknown, sources = topology_plan._read_hosts(['db2', 'db4'], entries, [])  # pylint: disable=protected-access
    names = topology_plan._add_outside(['db2'], ['db1', 'db3'], hosts, entries, sources)  # pylint: disable=protected-access
    assert names == ['db2', 'db1'] and hosts['db3']['outside_play'] and sources['db3'] == []


def test_step_topologies_depths_and_health():
    names = ['db1', 'db2', 'db3', 'db4']
    raw = fleet(db4=dict(facts=mysql_facts(None, 4, [channel('10.0.0.13', sid=3, sql=False)], read_only=True)))
    entries = entries_of(raw)
    hosts, _unknown, sources = topology_plan._read_hosts(names, entries, names)  # pylint: disable=protected-access
    topologies, depths = topology_plan._topologies(names, hosts, entries, [], sources)  # pylint: disable=protected-access
    assert [(t['name'], t['members']) for t in topologies] == [('db1', ['db2', 'db1']), ('db3', ['db4', 'db3'])]
    assert depths == dict(db1=0, db2=1, db3=0, db4=1) and hosts['db4']['topology'] == 'db3'
    unhealthy = topology_plan._unhealthy(names, hosts, topologies, ['db1'], 60, True)  # pylint: disable=protected-access
    assert unhealthy == []          # db4's broken channel is in a topology with nothing pending
    unhealthy = topology_plan._unhealthy(names, hosts, topologies, ['db3'], 60, True)  # pylint: disable=protected-access
    assert [u['host'] for u in unhealthy] == ['db4'] and 'SQL thread No' in unhealthy[0]['reason']


def test_step_waiting_for_deeper_hosts_and_the_group_primary():
    names = ['db1', 'db2']
    entries = entries_of(fleet())
    hosts, _unknown, sources = topology_plan._read_hosts(names, entries, names)  # pylint: disable=protected-access
    topologies, depths = topology_plan._topologies(names, hosts, entries, [], sources)  # pylint: disable=protected-access
    now, deferred = topology_plan._wait_for_deeper(['db2', 'db1'], topologies, hosts, depths, {'db1'})  # pylint: disable=protected-access
    assert now == [] and [d['host'] for d in deferred] == ['db2', 'db1']
    assert deferred[1]['reason'] == 'waits for db2, deeper in its topology, whose part of the play has not run yet'
    hosts['db1']['cluster'] = dict(kind=clusters.GROUP_REPLICATION, single_primary=True, role=clusters.GR_PRIMARY, name='g')
    hosts['db2']['cluster'] = dict(kind=clusters.GROUP_REPLICATION, name='g')
    now, deferred = topology_plan._group_primary_last(['db1'], [dict(host='db2', reason='x')], names, hosts,  # pylint: disable=protected-access
                                                      {'db1', 'db2'})
    assert now == [] and deferred[-1] == dict(host='db1', reason='the primary of its group restarts last: waits for db2')


def test_step_verdict_names_every_problem_or_the_order():
    assert topology_plan._plan_verdict(['db2', 'db1'], [], [], [], []) == (True, 'order: db2, db1')  # pylint: disable=protected-access
    ok, message = topology_plan._plan_verdict(  # pylint: disable=protected-access
        ['db2'], [dict(host='db3', reason='no facts')], [], [dict(host='db4', reason='lag 90')],
        [dict(host='db1', reason='no switchover')])
    assert not ok and message == ('stopped before any change: the replication role of db3 cannot be read: db3: no facts'
                                  ' / replication or a cluster is not healthy in a topology with pending hosts: db4: lag'
                                  ' 90 / refused: db1: no switchover. Untouched: db2.')
