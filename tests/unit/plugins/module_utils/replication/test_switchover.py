# -*- coding: utf-8 -*-
"""switchover.py: each step of an asynchronous GTID switchover on one server against a fake connection, and the whole
switch in one run (module replication_switchover); the plan is test_switchover_plan.py's."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import switchover
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.replication.test_gtid_sets import U1, U2


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
