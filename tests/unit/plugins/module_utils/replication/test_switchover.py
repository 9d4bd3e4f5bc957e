# -*- coding: utf-8 -*-
"""switchover.py: the checks and steps of an asynchronous GTID switchover (filter switchover_plan), and each step on
one server against a fake connection (module replication_switchover)."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.filter import switchover_plan as filters
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import switchover

U1 = '3e11fa47-71ca-11e1-9e33-c80aa9429562'
U2 = '4e11fa47-71ca-11e1-9e33-c80aa9429562'


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


# ---------------------------------------------------------------- GTID sets
def test_mysql_gtid_subtract_as_the_server_does():
    assert switchover.mysql_gtid_subtract(U1 + ':1-100', U1 + ':1-100') == ''
    assert switchover.mysql_gtid_subtract(U1 + ':1-100,\n' + U2 + ':1-3', U1 + ':1-50:60-100') == \
        U1 + ':51-59,' + U2 + ':1-3'
    assert switchover.mysql_gtid_subtract(U1 + ':1-5:tag:1-2', U1 + ':1-5') == U1 + ':tag:1-2'


def test_mariadb_errant_is_a_sequence_beyond_the_primarys_or_a_domain_it_never_wrote():
    assert switchover.mariadb_errant('0-3-100', '0-3-100') == ''
    assert switchover.mariadb_errant('0-3-90', '0-3-100') == ''
    assert switchover.mariadb_errant('0-4-101,1-4-1', '0-3-100') == '0-4-101,1-4-1'


# ---------------------------------------------------------------- the plan
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
    plan = switchover.plan('db1', pair(
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
    assert switchover.plan('db1', members, endpoint='none')['problems'] == [
        'db1: no replica may take the primary role: db2: errant transactions the primary does not have: ' + U2 + ':1']
    db3, db4 = mariadb(3, '0-3-50', '0-3-50'), mariadb(4, '0-3-60', '0-3-60', [channel(3, 'Slave_Pos')])
    assert switchover.plan('db3', dict(db3=db3, db4=db4), endpoint='none')['ok']


def test_the_haproxy_endpoint_needs_the_socket_and_backend_of_the_primary():
    assert switchover.plan('db1', pair(), endpoint='haproxy', haproxy=dict(socket='/s', backend='b'))['ok']
    plan = switchover.plan('db1', pair(), endpoint='haproxy', haproxy=None)
    assert plan['problems'] == ['db1: restart_primary_endpoint is haproxy but its restart_primary_haproxy does not name '
                                'the admin socket and the backend (got None)']


def test_a_lagging_candidate_is_refused():
    plan = switchover.plan('db1', pair(channels=[channel(1, seconds_behind=120)]), endpoint='none', max_lag=60)
    assert not plan['ok'] and 'db2: replication: 120 s behind its source (limit 60 s)' in plan['message']


def test_the_first_replica_that_passes_is_chosen_in_the_given_order_and_the_others_are_repointed():
    members = pair()
    members['db5'] = mysql(5, U1 + ':1-100', [channel(1, seconds_behind=999)])
    members['db6'] = mysql(6, U1 + ':1-100', [channel(1)])
    plan = switchover.plan('db1', members, endpoint='tasks', order=['db5', 'db6', 'db2'], max_lag=60)
    assert plan['ok'] and plan['candidate'] == 'db6' and plan['others'] == ['db5', 'db2']
    assert plan['steps'][0] == 'writer endpoint (tasks): db1 drained'


def test_an_unreached_replica_and_an_older_one_stop_the_switch():
    members = pair(version=(8, 0, 33))
    members['db5'] = dict(error='unreachable')
    members['db6'] = mysql(6, U1 + ':1-100', [channel(1)], version=(8, 0, 31))
    plan = switchover.plan('db1', members, candidate='db2', endpoint='none')
    assert "db5: not reached (unreachable): it could not be repointed" in plan['problems']
    assert "db6: runs 8.0.31, older than db2's 8.0.33: it may not replicate from it" in plan['problems']


def test_a_replica_of_another_primary_or_none_at_all_is_no_candidate():
    plan = switchover.plan('db1', dict(db1=mysql(1, U1 + ':1-5')), endpoint='none')
    assert plan['problems'] == ['db1: no replica may take the primary role (it has none)']
    members = pair(channels=[channel(9)])
    assert 'db2: does not replicate from the primary (server_id 1)' in switchover.plan('db1', members, 'db2', 'none')['problems']


def test_mariadb_checks_read_the_binlog_position_and_the_gtid_mode():
    members = dict(db3=mariadb(3, '0-3-50', '0-3-50'), db4=mariadb(4, '0-3-50', '0-3-50', [channel(3, 'Slave_Pos')]))
    plan = switchover.plan('db3', members, endpoint='none')
    assert plan['ok'], plan['problems']
    assert plan['steps'][0] == 'db3: read_only = ON, its write sessions handled'
    assert plan['steps'][-1] == 'db3: CHANGE MASTER TO db4 with MASTER_USE_GTID = slave_pos, START SLAVE'
    members['db4'] = mariadb(4, '0-4-51', '0-4-51', [channel(3, 'No')])
    text = '; '.join(switchover.plan('db3', members, endpoint='none')['problems'])
    assert 'not on GTID auto-positioning (No)' in text and 'errant transactions the primary does not have: 0-4-51' in text


def test_registered_topology_facts_are_read_and_restricted_to_the_topology():
    members = pair()
    registered = dict(results=[dict(__restart_item=h, topology=f) for h, f in members.items()]
                      + [dict(__restart_item='db3', unreachable=True, msg='ssh: no route')])
    assert switchover.plan('db1', registered, endpoint='none', hosts=['db1', 'db2'])['ok']
    assert 'db3: not reached (ssh: no route): it could not be repointed' in \
        switchover.plan('db1', registered, endpoint='none')['problems']


def test_the_stop_message_says_what_was_put_back_or_what_remains():
    plan = switchover.plan('db1', pair(), endpoint='none')
    before = filters.switchover_stopped(plan, 'promote db2', dict(msg='promote: did not reach X within 5 s'),
                                        dict(changed=True, msg='set super_read_only = OFF, read_only = OFF'))
    assert before == ('the switchover of db1 to db2 failed at step promote db2: promote: did not reach X within 5 s. '
                      'Put back: db1 is writable again (set super_read_only = OFF, read_only = OFF), the writer '
                      'endpoint on db1; db2 was not promoted, its replication left as it was.')
    after = switchover.stopped(plan, 'promoted', dict(msg='x', results=[dict(__restart_item='db1', failed=True, msg='no')]))
    assert after.startswith('the switchover of db1 stopped after db2 became the primary') and 'db1: no' in after
    assert 'db1 could NOT be made writable again' in switchover.stopped(plan, 'demote db1', {}, dict(failed=True, msg='gone'))
    assert 'the writer endpoint could NOT be put back on db1 (no socket)' in switchover.stopped(
        plan, 'demote db1', {}, None, 'no socket')


# ---------------------------------------------------------------- the steps, on one server
class FakeServer:
    def __init__(self, variables, status_rows=(), processlist=(), trx=(), wait_result=0):
        self.variables = dict(variables)
        self.status_rows = list(status_rows)
        self.processlist = list(processlist)
        self.trx = list(trx)
        self.wait_result = wait_result
        self.ran = []

    def global_variables(self, _conn, names):
        return dict((n, self.variables[n]) for n in names if n in self.variables)

    def query(self, _conn, sql, args=None):
        self.ran.append((sql, args))
        if 'PROCESSLIST' in sql:
            return self.processlist
        if 'INNODB_TRX' in sql:
            return [dict(id=i) for i in self.trx.pop(0)] if self.trx else []
        if sql.startswith('SELECT WAIT_FOR') or sql.startswith('SELECT MASTER_GTID_WAIT'):
            return [dict(r=self.wait_result)]
        if sql.startswith('SHOW'):
            return self.status_rows
        raise AssertionError(sql)

    def execute(self, _conn, sql, args=None):
        self.ran.append((sql, args))
        if sql.startswith('KILL'):               # the session is gone once killed (a lingering one: see below)
            self.processlist = [r for r in self.processlist if r['ID'] != int(sql.split()[1])]
        if sql.startswith('SET GLOBAL'):
            name, value = sql[len('SET GLOBAL '):].split(' = ')
            if not value.startswith('@@'):
                self.variables[name] = value


MYSQL_VARS = dict(version='8.0.33', version_comment='MySQL Community Server - GPL', read_only='OFF',
                  super_read_only='OFF', gtid_mode='ON', gtid_executed=U1 + ':1-100', server_id='1', log_bin='ON',
                  server_uuid=U1)
MARIADB_VARS = dict(version='10.11.18-MariaDB', version_comment='Debian', read_only='OFF', gtid_binlog_pos='0-3-50',
                    gtid_slave_pos='', gtid_current_pos='0-3-50', server_id='3', log_bin='ON')


def test_demote_sets_super_read_only_kills_the_writers_only_and_reads_the_set_after():
    server = FakeServer(MYSQL_VARS, processlist=[
        dict(ID=11, USER='app', HOST='10.0.0.9:5000', COMMAND='Query'),
        dict(ID=12, USER='repl', HOST='10.0.0.12:4000', COMMAND='Binlog Dump GTID'),
        dict(ID=13, USER='event_scheduler', HOST='localhost', COMMAND='Daemon')])
    out = switchover.demote(None, server.query, server.execute, server.global_variables)
    assert out['before'] == dict(read_only='OFF', super_read_only='OFF')
    assert out['position'] == U1 + ':1-100' and out['changed']
    assert [s for s, _args in server.ran if not s.startswith('SELECT')] == [
        'SET SESSION lock_wait_timeout = 10', 'SET GLOBAL super_read_only = ON', 'KILL 11']
    assert out['killed'] == [dict(id=11, user='app', host='10.0.0.9:5000')]


def test_demote_in_check_mode_changes_nothing_and_wait_fails_after_its_limit():
    server = FakeServer(MARIADB_VARS)
    out = switchover.demote(None, server.query, server.execute, server.global_variables, check_mode=True)
    assert out['msg'] == 'would set read_only = ON and kill its write sessions, then read its GTID set'
    assert server.ran == [] and out['position'] == '0-3-50'
    server = FakeServer(MARIADB_VARS, trx=[[7], [7], [7]])
    ticks = iter([0, 0.5, 1.5, 2.5])
    still_open = r'1 session\(s\) still hold open transactions after 1 s \(ids 7\); set read_only = OFF'
    with pytest.raises(switchover.SwitchoverError, match=still_open) as failed:
        switchover.demote(None, server.query, server.execute, server.global_variables, 'wait', 1,
                          clock=lambda: next(ticks), sleep=lambda s: None)
    assert server.variables['read_only'] == 'OFF'     # put back by the step itself
    assert failed.value.before == dict(read_only='OFF')   # and handed to the caller's restore, which finds it done
    assert not switchover.restore(None, server.execute, server.global_variables, failed.value.before)['changed']


def test_demote_bounds_the_read_only_setting_by_its_limit_and_changes_nothing_when_refused():
    class Locked(FakeServer):
        def execute(self, conn, sql, args=None):
            super().execute(conn, sql, args)
            if sql == 'SET GLOBAL super_read_only = ON':
                self.variables['super_read_only'] = 'OFF'
                raise OSError(1205, 'Lock wait timeout exceeded; try restarting transaction')

    server = Locked(MYSQL_VARS)
    refused = r'^super_read_only = ON was refused within 4 s, nothing was changed: \(1205\) Lock wait timeout exceeded'
    with pytest.raises(switchover.SwitchoverError, match=refused) as failed:
        switchover.demote(None, server.query, server.execute, server.global_variables, 'kill', 4)
    assert [s for s, _args in server.ran if s.startswith('SET')] == [
        'SET SESSION lock_wait_timeout = 4', 'SET GLOBAL super_read_only = ON']
    assert failed.value.before == dict(read_only='OFF', super_read_only='OFF')


STATUS = [dict(Replica_IO_Running='Yes', Replica_SQL_Running='Yes', Source_Server_Id=1, Source_Host='10.0.0.11',
               Auto_Position='1', Channel_Name='')]


def test_promote_waits_then_stops_resets_and_opens_writes_or_changes_nothing_on_a_timeout():
    server = FakeServer(dict(MYSQL_VARS, read_only='ON', super_read_only='ON', server_id='2'), STATUS)
    out = switchover.promote(None, server.query, server.execute, server.global_variables, U1 + ':1-100', 5, 1)
    assert [s for s, _args in server.ran if not s.startswith(('SELECT', 'SHOW'))] == [
        'STOP REPLICA', 'RESET REPLICA ALL', 'SET GLOBAL super_read_only = OFF', 'SET GLOBAL read_only = OFF']
    assert ('SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s) AS r', (U1 + ':1-100', 5)) in server.ran
    assert out['changed']
    server = FakeServer(dict(MYSQL_VARS, server_id='2'), STATUS, wait_result=1)
    with pytest.raises(switchover.SwitchoverError, match='did not reach the old primary'):
        switchover.promote(None, server.query, server.execute, server.global_variables, U1 + ':1-100', 5, 1)
    assert not [s for s, _args in server.ran if s.startswith(('STOP', 'RESET', 'SET'))]
    with pytest.raises(switchover.SwitchoverError, match='no GTID set to wait for'):
        switchover.promote(None, server.query, server.execute, server.global_variables, ' ', 5, 1)
    with pytest.raises(switchover.SwitchoverError, match='does not replicate from server_id 9'):
        switchover.promote(None, server.query, server.execute, server.global_variables, U1 + ':1-100', 5, 9)


def test_repoint_spells_each_flavor_and_passes_the_password_as_an_argument():
    server = FakeServer(MYSQL_VARS)               # the old primary: no channel
    out = switchover.repoint(None, server.query, server.execute, server.global_variables, '10.0.0.12', 3306,
                             'repl', 's3cret', True)
    assert out['statements'] == ['CHANGE REPLICATION SOURCE TO SOURCE_HOST = %s, SOURCE_PORT = %s, SOURCE_USER = %s, '
                                 'SOURCE_PASSWORD = %s, SOURCE_SSL = 1, SOURCE_AUTO_POSITION = 1', 'START REPLICA']
    assert 's3cret' not in out['msg'] and ('10.0.0.12', 3306, 'repl', 's3cret') in [a for _sql, a in server.ran]
    server = FakeServer(MARIADB_VARS)
    out = switchover.repoint(None, server.query, server.execute, server.global_variables, '10.0.0.14', 3306, 'repl', 'x')
    assert out['statements'] == ['SET GLOBAL gtid_slave_pos = @@GLOBAL.gtid_binlog_pos',
                                 'CHANGE MASTER TO MASTER_HOST = %s, MASTER_PORT = %s, MASTER_USER = %s, '
                                 'MASTER_PASSWORD = %s, MASTER_USE_GTID = slave_pos', 'START SLAVE']
    with pytest.raises(switchover.SwitchoverError, match='replication_user'):
        switchover.repoint(None, server.query, server.execute, server.global_variables, '10.0.0.14', 3306)
    replica = FakeServer(dict(MYSQL_VARS, server_id='5'), STATUS)
    out = switchover.repoint(None, replica.query, replica.execute, replica.global_variables, '10.0.0.12', 3306,
                             check_mode=True)
    assert out['msg'] == ('would run: STOP REPLICA; CHANGE REPLICATION SOURCE TO SOURCE_HOST = %s, SOURCE_PORT = %s, '
                          'SOURCE_AUTO_POSITION = 1; START REPLICA')
    assert not [s for s, _args in replica.ran if not s.startswith('SHOW')]


# ---------------------------------------------------------------- the whole switch in one run (step switch)
class Logged(FakeServer):
    """A FakeServer whose statements go to a log shared with the other server and the endpoint; the GTID waits
    answer in turn from waits (the last one repeats)."""

    def __init__(self, name, log, variables, status_rows=(), waits=(0,), **more):
        super().__init__(variables, status_rows, **more)
        self.name, self.log, self.waits = name, log, list(waits)

    def query(self, conn, sql, args=None):
        if sql.startswith(('SELECT WAIT_FOR', 'SELECT MASTER_GTID_WAIT')):
            self.wait_result = self.waits.pop(0) if len(self.waits) > 1 else self.waits[0]
            self.log.append((self.name, 'wait'))
        return super().query(conn, sql, args)

    def execute(self, conn, sql, args=None):
        self.log.append((self.name, sql))
        super().execute(conn, sql, args)


def servers(log, primary_vars=None, candidate_vars=None, waits=(0,)):
    """{conn: server} for the old primary (conn 'p') and the candidate (conn 'c'), and query / execute /
    global_variables that send each connection to its server."""
    by = dict(p=Logged('db1', log, primary_vars or MYSQL_VARS, processlist=[dict(ID=11, USER='app', HOST='lb:1',
                                                                                 COMMAND='Query')]),
              c=Logged('db2', log, candidate_vars or dict(MYSQL_VARS, read_only='ON', super_read_only='ON',
                                                          server_id='2', server_uuid=U2), STATUS, waits=waits))
    return (by, lambda conn, sql, args=None: by[conn].query(conn, sql, args),
            lambda conn, sql, args=None: by[conn].execute(conn, sql, args),
            lambda conn, names: by[conn].global_variables(conn, names))


def endpoint_of(log, fail_on=None):
    def move(state, check_mode):
        log.append(('lb', state, check_mode))
        if state == fail_on and not check_mode:
            raise OSError('socket gone')
        return dict(changed=True, commands=['set server w/%s' % state], msg='ran %s' % state)
    return move


def test_switch_takes_every_step_back_to_back_after_the_checks_and_times_them():
    log = []
    by, query, execute, variables = servers(log)
    ticks = iter(range(100))
    out = switchover.switch('p', 'c', query, execute, variables, timeout=5, expect_source_server_id=1,
                            endpoint=endpoint_of(log), clock=lambda: next(ticks) / 10.0)
    assert log == [('db2', 'wait'), ('lb', 'moved', True),                       # prepare: caught up, backend read
                   ('lb', 'drained', False), ('db1', 'SET SESSION lock_wait_timeout = 10'),
                   ('db1', 'SET GLOBAL super_read_only = ON'), ('db1', 'KILL 11'),
                   ('db2', 'wait'), ('db2', 'wait'), ('db2', 'STOP REPLICA'), ('db2', 'RESET REPLICA ALL'),
                   ('db2', 'SET GLOBAL super_read_only = OFF'), ('db2', 'SET GLOBAL read_only = OFF'),
                   ('lb', 'moved', False)]
    assert out['stage'] == 'done' and out['changed'] and out['position'] == U1 + ':1-100'
    assert out['before'] == dict(read_only='OFF', super_read_only='OFF')
    assert list(out['timings']) == ['prepare', 'drain', 'demote', 'promote', 'endpoint']
    assert out['window'] == round(out['timings']['endpoint'] - out['timings']['prepare'], 3)
    assert out['commands'] == ['set server w/drained', 'set server w/moved']
    assert 'writes stopped for %.2f s (prepare' % out['window'] in out['msg']
    assert by['p'].variables['super_read_only'] == 'ON' and by['c'].variables['read_only'] == 'OFF'


def test_switch_in_check_mode_names_every_step_and_changes_nothing():
    log = []
    by, query, execute, variables = servers(log)
    out = switchover.switch('p', 'c', query, execute, variables, endpoint=endpoint_of(log), check_mode=True)
    assert [e for e in log if e[0] != 'db2' or e[1] != 'wait'] == [
        ('lb', 'moved', True), ('lb', 'drained', True), ('lb', 'moved', True)]
    assert out['msg'].startswith('ran drained; would set super_read_only = ON and kill its write sessions')
    assert 'STOP REPLICA; RESET REPLICA ALL; SET GLOBAL super_read_only = OFF' in out['msg']
    assert out['msg'].endswith('ran moved')
    assert by['p'].variables['super_read_only'] == 'OFF' and by['c'].variables['super_read_only'] == 'ON'


def test_a_candidate_not_caught_up_is_refused_before_any_change():
    log = []
    by, query, execute, variables = servers(log, waits=(1,))
    with pytest.raises(switchover.SwitchFailed) as failed:
        switchover.switch('p', 'c', query, execute, variables, timeout=2, endpoint=endpoint_of(log))
    assert failed.value.stage == 'prepare' and failed.value.put_back == 'nothing had been changed'
    assert 'the candidate did not reach the primary\'s GTID set %s:1-100 within 2 s' % U1 in failed.value.why
    assert log == [('db2', 'wait')]
    assert 'super_read_only' not in str(by['p'].ran)


def test_a_failure_before_the_promotion_puts_the_primary_and_the_endpoint_back():
    log = []
    by, query, execute, variables = servers(log, waits=(0, 1))      # caught up at first, then not within the timeout
    with pytest.raises(switchover.SwitchFailed) as failed:
        switchover.switch('p', 'c', query, execute, variables, timeout=2, endpoint=endpoint_of(log))
    assert failed.value.stage == 'promote'
    assert 'did not reach the old primary\'s GTID set' in failed.value.why
    assert log[-2:] == [('db1', 'SET GLOBAL super_read_only = OFF'), ('lb', 'restored', False)]
    assert by['p'].variables['super_read_only'] == 'OFF' and by['c'].variables['super_read_only'] == 'ON'
    assert failed.value.put_back.startswith('the old primary as it was (set super_read_only = OFF)')
    assert failed.value.result['before'] == dict(read_only='OFF', super_read_only='OFF')


def test_after_the_promotion_a_failure_leaves_the_new_primary_writable_and_says_so():
    log = []
    by, query, execute, variables = servers(log)
    with pytest.raises(switchover.SwitchFailed) as failed:
        switchover.switch('p', 'c', query, execute, variables, endpoint=endpoint_of(log, fail_on='moved'))
    assert failed.value.stage == 'promoted' and 'socket gone' in failed.value.why
    assert by['c'].variables['read_only'] == 'OFF' and ('lb', 'restored', False) not in log


def test_a_candidate_of_another_source_or_a_replica_as_primary_is_refused_at_prepare():
    log = []
    _by, query, execute, variables = servers(log)
    with pytest.raises(switchover.SwitchFailed, match='does not replicate from server_id 7'):
        switchover.switch('p', 'c', query, execute, variables, expect_source_server_id=7)
    with pytest.raises(switchover.SwitchFailed, match='the old primary: not a primary'):
        switchover.switch('c', 'p', query, execute, variables)
    assert not [e for e in log if e[1] != 'wait']


def test_a_late_commit_on_the_old_primary_is_waited_for_before_the_promotion():
    """A killed session that was committing may still commit after the set was read: the candidate waits again."""
    log = []
    by, query, execute, variables = servers(log)

    def late(conn, sql, args=None):
        rows = query(conn, sql, args)
        if conn == 'c' and sql.startswith('SELECT WAIT_FOR') and log.count(('db2', 'wait')) == 2:
            by['p'].variables['gtid_executed'] = U1 + ':1-101'
        return rows
    out = switchover.switch('p', 'c', late, execute, variables)
    waits = [args for sql, args in by['c'].ran if sql.startswith('SELECT WAIT_FOR')]
    assert [w[0] for w in waits] == [U1 + ':1-100', U1 + ':1-100', U1 + ':1-101', U1 + ':1-101']
    assert out['position'] == U1 + ':1-101' and out['stage'] == 'done'


def test_demote_reads_the_set_only_once_the_killed_sessions_are_gone():
    server = FakeServer(MARIADB_VARS, processlist=[dict(ID=11, USER='app', HOST='lb:1', COMMAND='Query')])
    server.execute = lambda _conn, sql, args=None: server.ran.append((sql, args))      # KILL that does not end it
    ticks = iter([0, 0.5, 1.5])
    with pytest.raises(switchover.SwitchoverError, match=r'1 killed session\(s\) still there after 1 s \(ids 11\)'):
        switchover.demote(None, server.query, server.execute, server.global_variables, 'kill', 1,
                          clock=lambda: next(ticks), sleep=lambda s: None)
