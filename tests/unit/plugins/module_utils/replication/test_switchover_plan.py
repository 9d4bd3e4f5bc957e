# -*- coding: utf-8 -*-
"""switchover_plan.py: the checks and steps of an asynchronous GTID switchover (filter switchover_plan) and the message
that stops a failed one (filter switchover_stopped)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.filter import switchover_plan as filters
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import switchover_plan
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.replication.test_gtid_sets import U1, U2


def mysql(server_id, executed, channels=(), version=(8, 0, 33), **more):
    facts = dict(role='replica' if channels else 'primary', error=None, server_id=server_id,
                 server=dict(flavor='mysql', version=list(version), version_text='.'.join(map(str, version))),
                 log_bin=True, log_replica_updates=True, read_only=bool(channels), super_read_only=bool(channels),
                 gtid=dict(model='mysql', mode='ON', executed=executed), channels=list(channels))
    facts.update(more)
    return facts


def mariadb(server_id, binlog_pos, current_pos, channels=(), **more):
    facts = dict(role='replica' if channels else 'primary', error=None, server_id=server_id,
                 server=dict(flavor='mariadb', version=[10, 11, 18], version_text='10.11.18'),
                 log_bin=True, log_replica_updates=True, read_only=bool(channels), super_read_only=None,
                 gtid=dict(model='mariadb', binlog_pos=binlog_pos, current_pos=current_pos, slave_pos=current_pos),
                 channels=list(channels))
    facts.update(more)
    return facts


def channel(source_server_id, using='1', **more):
    c = dict(name='', source_server_id=source_server_id, io_running=True, sql_running=True, io_state='Yes',
             sql_state='Yes', seconds_behind=0, sql_delay=0, filters={}, using_gtid=using, source_user='repl',
             source_ssl=True)
    c.update(more)
    return c


def pair(channels=None, **replica):
    return dict(db1=mysql(1, U1 + ':1-100'), db2=mysql(2, U1 + ':1-100', channels or [channel(1)], **replica))


def test_a_healthy_pair_switches_to_the_replica_with_every_step_named():
    plan = filters.switchover_plan(pair(), 'db1', None, 'none')
    assert plan['ok'] and plan['candidate'] == 'db2' and plan['others'] == []
    assert plan['replication_user'] == 'repl' and plan['replication_ssl'] is True
    assert plan['steps'] == [
        'db1: super_read_only = ON, its write sessions handled',
        "db2: WAIT_FOR_EXECUTED_GTID_SET(the old primary's whole GTID set), then STOP REPLICA, RESET REPLICA ALL, "
        'read_only = OFF',
        'db1: CHANGE REPLICATION SOURCE TO db2 with SOURCE_AUTO_POSITION = 1, START REPLICA']
    assert plan['message'].startswith('db1 hands the primary role to db2: ')


def test_every_problem_of_the_candidate_is_named_at_once():
    plan = switchover_plan.plan('db1', pair(
        channels=[channel(1, using='0', sql_delay=3600, seconds_behind=900, sql_running=False, sql_state='No',
                          filters={'Replicate_Ignore_DB': 'audit'})],
        log_bin=False, log_replica_updates=False, gtid=dict(model='mysql', mode='ON', executed=U1 + ':1-100,' + U2 + ':1-7')),
        candidate='db2', endpoint=None, password_set=False)
    assert not plan['ok']
    text = '; '.join(plan['problems'])
    for part in ('restart_primary_endpoint', 'restart_primary_replication_password is not set', 'SQL thread No',
                 'SQL_Delay 3600 s', 'Replicate_Ignore_DB=audit',
                 'not on GTID auto-positioning', 'log_bin is OFF', 'log_replica_updates is OFF',
                 'errant transactions the primary does not have: ' + U2 + ':1-7'):
        assert part in text, part
    assert plan['message'].startswith('no switchover of db1, nothing was changed: ')


def test_the_primarys_own_transactions_read_later_on_the_candidate_are_not_errant():
    members = pair()
    members['db1']['server_uuid'] = U1
    members['db2']['gtid'] = dict(model='mysql', mode='ON', executed=U1 + ':1-150,' + U2 + ':1')
    assert switchover_plan.plan('db1', members, endpoint='none')['problems'] == [
        'db1: no replica may take the primary role: db2: errant transactions the primary does not have: ' + U2 + ':1']
    db3, db4 = mariadb(3, '0-3-50', '0-3-50'), mariadb(4, '0-3-60', '0-3-60', [channel(3, 'Slave_Pos')])
    assert switchover_plan.plan('db3', dict(db3=db3, db4=db4), endpoint='none')['ok']


def test_the_haproxy_endpoint_needs_the_socket_and_backend_of_the_primary():
    assert switchover_plan.plan('db1', pair(), endpoint='haproxy', haproxy=dict(socket='/s', backend='b'))['ok']
    plan = switchover_plan.plan('db1', pair(), endpoint='haproxy', haproxy=None)
    assert plan['problems'] == ['db1: restart_primary_endpoint is haproxy but its restart_primary_haproxy does not name '
                                'the admin socket and the backend (got None)']


def test_a_lagging_candidate_is_refused():
    plan = switchover_plan.plan('db1', pair(channels=[channel(1, seconds_behind=120)]), endpoint='none', max_lag=60)
    assert not plan['ok'] and 'db2: replication: 120 s behind its source (limit 60 s)' in plan['message']


def test_the_first_replica_that_passes_is_chosen_in_the_given_order_and_the_others_are_repointed():
    members = pair()
    members['db5'] = mysql(5, U1 + ':1-100', [channel(1, seconds_behind=999)])
    members['db6'] = mysql(6, U1 + ':1-100', [channel(1)])
    plan = switchover_plan.plan('db1', members, endpoint='tasks', order=['db5', 'db6', 'db2'], max_lag=60)
    assert plan['ok'] and plan['candidate'] == 'db6' and plan['others'] == ['db5', 'db2']
    assert plan['steps'][0] == 'writer endpoint (tasks): db1 drained'


def test_an_unreached_replica_and_an_older_one_stop_the_switch():
    members = pair(version=(8, 0, 33))
    members['db5'] = dict(error='unreachable')
    members['db6'] = mysql(6, U1 + ':1-100', [channel(1)], version=(8, 0, 31))
    plan = switchover_plan.plan('db1', members, candidate='db2', endpoint='none')
    assert "db5: not reached (unreachable): it could not be repointed" in plan['problems']
    assert "db6: runs 8.0.31, older than db2's 8.0.33: it may not replicate from it" in plan['problems']


def test_a_replica_of_another_primary_or_none_at_all_is_no_candidate():
    plan = switchover_plan.plan('db1', dict(db1=mysql(1, U1 + ':1-5')), endpoint='none')
    assert plan['problems'] == ['db1: no replica may take the primary role (it has none)']
    members = pair(channels=[channel(9)])
    assert 'db2: does not replicate from the primary (server_id 1)' in switchover_plan.plan('db1', members, 'db2', 'none')['problems']


def test_mariadb_checks_read_the_binlog_position_and_the_gtid_mode():
    members = dict(db3=mariadb(3, '0-3-50', '0-3-50'), db4=mariadb(4, '0-3-50', '0-3-50', [channel(3, 'Slave_Pos')]))
    plan = switchover_plan.plan('db3', members, endpoint='none')
    assert plan['ok'], plan['problems']
    assert plan['steps'][0] == 'db3: read_only = ON, its write sessions handled'
    assert plan['steps'][-1] == 'db3: CHANGE MASTER TO db4 with MASTER_USE_GTID = slave_pos, START SLAVE'
    members['db4'] = mariadb(4, '0-4-51', '0-4-51', [channel(3, 'No')])
    text = '; '.join(switchover_plan.plan('db3', members, endpoint='none')['problems'])
    assert 'not on GTID auto-positioning (No)' in text and 'errant transactions the primary does not have: 0-4-51' in text


def test_registered_topology_facts_are_read_and_restricted_to_the_topology():
    members = pair()
    registered = dict(results=[dict(__restart_item=h, topology=f) for h, f in members.items()]
                      + [dict(__restart_item='db3', unreachable=True, msg='ssh: no route')])
    assert switchover_plan.plan('db1', registered, endpoint='none', hosts=['db1', 'db2'])['ok']
    assert 'db3: not reached (ssh: no route): it could not be repointed' in \
        switchover_plan.plan('db1', registered, endpoint='none')['problems']


def test_the_stop_message_says_what_was_put_back_or_what_remains():
    plan = switchover_plan.plan('db1', pair(), endpoint='none')
    before = filters.switchover_stopped(plan, 'promote db2', dict(msg='promote: did not reach X within 5 s'),
                                        dict(changed=True, msg='set super_read_only = OFF, read_only = OFF'))
    assert before == ('the switchover of db1 to db2 failed at step promote db2: promote: did not reach X within 5 s. '
                      'Put back: db1 is writable again (set super_read_only = OFF, read_only = OFF), the writer '
                      'endpoint on db1; db2 was not promoted, its replication left as it was.')
    after = switchover_plan.stopped(plan, 'promoted', dict(msg='x', results=[dict(__restart_item='db1', failed=True, msg='no')]))
    assert after.startswith('the switchover of db1 stopped after db2 became the primary') and 'db1: no' in after
    assert 'db1 could NOT be made writable again' in switchover_plan.stopped(plan, 'demote db1', {}, dict(failed=True, msg='gone'))
    assert 'the writer endpoint could NOT be put back on db1 (no socket)' in switchover_plan.stopped(
        plan, 'demote db1', {}, None, 'no socket')
