# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guarded-change engine: input rules, the window gate, quoting, private paths, the marker and the
checks a next run makes before it acts on what an interrupted run left (issue 23)."""

from __future__ import annotations

import datetime
import json
import os
import signal

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils import guarded as g
from ansible_collections.dbfleet.innodb.plugins.module_utils.convert_tables import Conversion
from ansible_collections.dbfleet.innodb.plugins.module_utils.drop_tables import Drop


# ---------------------------------------------------------------- input rules
@pytest.mark.parametrize('name, quoted', [
    ('id', '`id`'),
    ('first name', '`first name`'),
    ('order-items', '`order-items`'),
    ('we`ird', '`we``ird`'),
    ('``', '``````'),
    ('prénom', '`prénom`'),
    ('列名', '`列名`'),
    ('a;DROP TABLE x', '`a;DROP TABLE x`'),
    ('x' * 64, '`%s`' % ('x' * 64)),
])
def test_quote_name_quotes_every_legal_identifier(name, quoted):
    assert g.quote_name(name) == quoted


@pytest.mark.parametrize('name, words', [
    ('', 'non-empty'),
    (None, 'non-empty'),
    ('x' * 65, 'longer than 64'),
    ('a\x00b', 'NUL'),
    ('smile\U0001F600', 'Basic Multilingual Plane'),
])
def test_quote_name_refuses_what_no_server_accepts(name, words):
    with pytest.raises(g.GuardedError) as e:
        g.quote_name(name)
    assert words in str(e.value)


def test_qualified_name():
    assert g.qualified_name('shop', 'my table') == '`shop`.`my table`'


def test_range_problems_name_the_input_and_value():
    ranges = dict(retries=(0, 10), lock_wait_timeout=(1, 3600))
    assert g.range_problems(dict(retries=11, lock_wait_timeout=0), ranges) == [
        'lock_wait_timeout=0 is out of range 1-3600', 'retries=11 is out of range 0-10']
    assert g.range_problems(dict(retries=10, lock_wait_timeout=1), ranges) == []


def test_window_gate_one_function_for_every_module():
    inside, outside = '2024-01-01T03:00:00+00:00', '2024-01-01T12:00:00+00:00'
    assert g.window_gate(None, 'UTC') == (None, None, None)
    st, refusal, warning = g.window_gate('02:00-05:00', 'UTC', now=inside)
    assert st['inside'] and refusal is None and warning is None
    st, refusal, warning = g.window_gate('02:00-05:00', 'UTC', now=outside)
    assert not st['inside'] and refusal.startswith('refusing: outside the window 02:00-05:00')
    assert refusal.endswith('(set force_window to run anyway)') and warning is None
    st, refusal, warning = g.window_gate('02:00-05:00', 'UTC', force=True, now=outside)
    assert refusal is None and warning.startswith('forced outside the window')
    st, refusal, warning = g.window_gate('02:00-05:00', 'UTC', applies=False, now=outside)
    assert (refusal, warning) == (None, None) and not st['inside']
    st, refusal, warning = g.window_gate('25:00-26:00', 'UTC')
    assert st is None and '25:00-26:00' in refusal
    st, refusal, warning = g.window_gate('02:00-05:00', 'Mars/Olympus')
    assert st is None and 'Mars/Olympus' in refusal


# ---------------------------------------------------------------- signals
def test_signal_handler_raises_interrupted_and_handlers_come_back():
    change = g.GuardedChange(dict(tables=['a.b']))
    before = signal.getsignal(signal.SIGTERM)
    change.install_signal_handlers()
    try:
        with pytest.raises(g.Interrupted) as e:
            os.kill(os.getpid(), signal.SIGTERM)
        assert 'SIGTERM' in str(e.value)
    finally:
        change.restore_signal_handlers()
    assert signal.getsignal(signal.SIGTERM) == before


def test_drop_and_conversion_are_clients_of_the_engine_not_of_each_other():
    assert issubclass(Drop, g.GuardedChange) and issubclass(Conversion, g.GuardedChange)
    assert not issubclass(Conversion, Drop)
    assert Drop.marker_prefix != Conversion.marker_prefix


def test_one_scope_for_a_single_server():
    scope = g.scope_for(None, {})
    assert isinstance(scope, g.ServerScope)
    change = g.GuardedChange({})
    change.conn = 'c'
    assert scope.members(change) == ['c'] and scope.members(change, 'other') == ['other']


# ---------------------------------------------------------------- private paths and the marker file
def test_cancel_file_in_a_shared_directory_refused(tmp_path):
    shared = tmp_path / 'shared'
    shared.mkdir()
    os.chmod(str(shared), 0o1777)
    problem = g.cancel_file_problem(str(shared / 'cancel'))
    assert 'writable by others' in problem and 'private directory' in problem
    private = tmp_path / 'private'
    private.mkdir()
    os.chmod(str(private), 0o700)
    assert g.cancel_file_problem(str(private / 'cancel')) is None
    assert g.cancel_file_problem(None) is None
    assert 'cannot be read' in g.cancel_file_problem(str(tmp_path / 'nope' / 'cancel'))


def test_process_alive_checks_pid_and_start_time():
    me = os.getpid()
    start = g.process_start(me)
    assert start is not None
    assert g.process_alive(me, start)
    assert not g.process_alive(me, start + 1)  # same pid, another process (pid reused)
    assert not g.process_alive(None)
    assert not g.process_alive(2 ** 22 + 12345)


def test_marker_key_unique_per_server_uuid():
    # issue 23: two servers seen from one runner with one hostname, port and datadir (containers, chroots)
    same_place = dict(hostname='db', port='3306', datadir='/var/lib/mysql/', server_id='1')
    a = g.marker_key(dict(same_place, server_uuid='de43f84d-e8ce-11f1-9cff-02fc00000001'))
    b = g.marker_key(dict(same_place, server_uuid='de9cf799-e8ce-11f1-8b08-02fc00000001'))
    assert a != b
    # MariaDB has no server_uuid: hostname, port, datadir and server_id
    assert g.marker_key(same_place) != g.marker_key(dict(same_place, server_id='2'))
    assert g.marker_key(same_place) == g.marker_key(dict(same_place))


def test_marker_round_trip_private(tmp_path):
    state = str(tmp_path / 'state')
    marker = g.Marker(state, 'k')
    assert marker.read() is None
    marker.write(dict(state='running', tables=['a.b']))
    assert marker.read() == dict(state='running', tables=['a.b'])
    assert oct(os.stat(state).st_mode & 0o777) == '0o700'
    assert oct(os.stat(marker.path).st_mode & 0o777) == '0o600'
    marker.remove()
    assert marker.read() is None


@pytest.mark.parametrize('how', ['group_writable', 'world_writable', 'someone_elses', 'symlink'])
def test_a_marker_is_read_only_after_its_state_directory_is_checked(tmp_path, how):
    state = tmp_path / 'state'
    real = tmp_path / 'real' if how == 'symlink' else state
    real.mkdir()
    # A forged marker: its cancel file would be opened for append by the next run.
    forged = dict(state='running', mode='follow', pid=os.getpid(), cancel_file=str(tmp_path / 'victim'))
    (real / 'server-k.json').write_text(json.dumps(forged))
    if how == 'symlink':
        os.chmod(real, 0o700)
        os.symlink(str(real), str(state))
    else:
        os.chmod(real, dict(group_writable=0o770, world_writable=0o1777, someone_elses=0o700)[how])
        if how == 'someone_elses':
            os.chown(real, 4242, 4242)
    marker = g.Marker(str(state), 'k')
    with pytest.raises(g.GuardedError, match='state_dir: .*%s' % state):
        marker.read()
    with pytest.raises(g.GuardedError, match='state_dir: .*%s' % state):
        marker.write(dict(state='running'))
    assert not (tmp_path / 'victim').exists()


def test_a_symlinked_marker_file_is_refused(tmp_path):
    state = tmp_path / 'state'
    state.mkdir(mode=0o700)
    elsewhere = tmp_path / 'elsewhere.json'
    elsewhere.write_text(json.dumps(dict(state='done')))
    os.symlink(str(elsewhere), str(state / 'server-k.json'))
    with pytest.raises(g.GuardedError, match='the marker %s cannot be used' % (state / 'server-k.json')):
        g.Marker(str(state), 'k').read()


# ---------------------------------------------------------------- the checks before acting (pure)
SERVER = dict(uuid='u-1', started=1700000000)
SESSION = dict(id=77, user='dbfleet', host='10.0.0.5:50312', started=1700003600)
MARKER = dict(version=g.MARKER_VERSION, server=SERVER, session=SESSION, ahi_before='ON', ahi_toggled=True,
              ahi_set='OFF', ahi_set_info=None, super_read_only_lifted=True)
ROW = dict(ID=77, USER='dbfleet', HOST='10.0.0.5:50312', TIME=30)
NOW = 1700003700  # 100 s after the session started


def test_session_still_the_same_is_killed():
    kill, finding = g.session_verdict(MARKER, dict(SERVER, started=SERVER['started'] + 1), ROW, NOW)
    assert kill and 'killed' in finding


@pytest.mark.parametrize('server_now, row, words', [
    # the server restarted: connection ids start again at 1, id 77 is another session (an application's)
    (dict(SERVER, started=SERVER['started'] + 600), ROW, 'restarted'),
    (dict(SERVER, uuid='u-2'), ROW, 'restarted (or is another one)'),
    (SERVER, dict(ROW, USER='app'), 'id 77 is app@10.0.0.5:50312 now'),
    (SERVER, dict(ROW, HOST='10.0.0.9:40000'), 'the marker\'s session was dbfleet@10.0.0.5:50312'),
    (SERVER, dict(ROW, TIME=5000), 'longer than the marker\'s session existed'),
    (SERVER, None, 'is gone'),
])
def test_a_session_that_is_not_the_same_is_left(server_now, row, words):
    kill, finding = g.session_verdict(MARKER, server_now, row, NOW)
    assert not kill and words in finding


def test_super_read_only_back_only_on_a_server_still_a_replica():
    assert g.super_read_only_verdict(MARKER, 'replica', 'OFF')[0] is True
    restore, finding = g.super_read_only_verdict(MARKER, 'primary', 'OFF')
    assert restore is False and 'promoted since' in finding
    assert g.super_read_only_verdict(MARKER, 'replica', 'ON') == (False, 'super_read_only is ON already')
    assert g.super_read_only_verdict(dict(MARKER, super_read_only_lifted=False), 'replica', 'OFF') == (False, None)


def test_ahi_back_only_when_nobody_changed_it_since():
    info = dict(time='2024-01-01 03:00:00.000000', user='dbfleet', host='localhost')
    marker = dict(MARKER, ahi_set_info=info)
    assert g.ahi_verdict(marker, SERVER, 'OFF', info)[0] is True
    # SET again since (by someone else, or by the same user later): performance_schema.variables_info tells
    restore, finding = g.ahi_verdict(marker, SERVER, 'OFF', dict(info, time='2024-01-01 03:05:00.000000', user='dba'))
    assert restore is False and 'SET again since' in finding and 'dba' in finding
    # a restart reads the configured value: someone's choice, not the run's
    restore, finding = g.ahi_verdict(marker, dict(SERVER, started=SERVER['started'] + 600), 'OFF', info)
    assert restore is False and 'restarted' in finding
    # already back
    assert g.ahi_verdict(marker, SERVER, 'ON', info) == (False, None)
    assert g.ahi_verdict(dict(marker, ahi_toggled=False), SERVER, 'OFF', info) == (False, None)
    # MariaDB: no variables_info; same server run and the value the run set -> back
    assert g.ahi_verdict(dict(MARKER, ahi_set_info=None), SERVER, 'OFF', None)[0] is True


# ---------------------------------------------------------------- the next run against an interrupted marker
class FakeServer(object):
    """What the next run reads: identity, AHI, super_read_only, role, the processlist; records changes."""

    def __init__(self, ahi='OFF', sro='OFF', role='replica', started=SERVER['started'], set_info=None):
        self.ahi, self.sro, self.role, self.row, self.set_info = ahi, sro, role, dict(ROW), set_info
        self.identity = dict(server=dict(SERVER, started=started), session=dict(SESSION, id=90), now=NOW)
        self.sql = []


@pytest.fixture
def server(monkeypatch):
    srv = FakeServer()

    def global_variables(conn, names):
        return {'super_read_only': srv.sro, g.AHI: srv.ahi}

    def execute(conn, sql, args=None):
        srv.sql.append(sql)
        if sql.startswith('SET GLOBAL innodb_adaptive_hash_index'):
            srv.ahi = sql.rsplit(' ', 1)[1]
        if sql.startswith('SET GLOBAL super_read_only'):
            srv.sro = sql.rsplit(' ', 1)[1]

    monkeypatch.setattr(g, 'global_variables', global_variables)
    monkeypatch.setattr(g, 'execute', execute)
    monkeypatch.setattr(g, 'query_one', lambda conn, sql, args=None: srv.row if 'PROCESSLIST' in sql else None)
    monkeypatch.setattr(g, 'read_identity', lambda conn: srv.identity)
    monkeypatch.setattr(g.topology, 'read_server', lambda conn, q, gv: dict(role=srv.role))
    return srv


DEAD = dict(MARKER, state='running', mode='drop', module='drop_tables', run_id='old', pid=2 ** 22 + 4321,
            pid_start=1, tables=['a.b', 'a.c'], done=['a.c'])


def _next_run(tmp_path, srv, data, check_mode=False, cls=Drop):
    run = cls(dict(tables=['a.b'], run_id='new', restore_timeout=1), check_mode=check_mode, sleep=lambda s: None)
    run.marker = g.Marker(str(tmp_path / 'state'), 'k')
    run.marker.write(data)
    run.conn = object()
    run.server_vars = {}
    run.identity = type('I', (), dict(flavor='mysql', version=(8, 0, 33)))()
    run.read_set_info = lambda name, conn=None: srv.set_info
    return run


def test_dead_run_undone_when_everything_is_still_the_runs(tmp_path, server):
    run = _next_run(tmp_path, server, dict(DEAD))
    run.previous_run()
    assert run.interrupted_run['outcome'] == 'undone' and run.changed is True
    assert server.sql == ['KILL 77', 'SET GLOBAL innodb_adaptive_hash_index = ON', 'SET GLOBAL super_read_only = ON']
    assert run._previous_dropped == {'a.b', 'a.c'}
    assert run.marker.read()['state'] == 'done'


def test_stale_marker_with_a_reused_connection_id_kills_nothing(tmp_path, server):
    # the server restarted since the run was killed: id 77 now belongs to an application session
    server.identity['server']['started'] += 3600
    server.row = dict(ROW, USER='app', HOST='10.0.0.20:41000', TIME=2)
    run = _next_run(tmp_path, server, dict(DEAD))
    run.previous_run()
    assert not any(sql.startswith('KILL') for sql in server.sql)
    assert any('session 77 not killed' in f for f in run.interrupted_run['findings'])
    # and AHI is not forced back after the restart either (the configured value is someone's choice)
    assert not any('innodb_adaptive_hash_index' in sql for sql in server.sql)


def test_promoted_server_keeps_super_read_only_off(tmp_path, server):
    server.role = 'primary'
    run = _next_run(tmp_path, server, dict(DEAD))
    run.previous_run()
    assert 'SET GLOBAL super_read_only = ON' not in server.sql and server.sro == 'OFF'
    assert any('promoted since' in f for f in run.interrupted_run['findings'])


def test_ahi_changed_since_is_not_restored(tmp_path, server):
    recorded = dict(time='2024-01-01 03:00:00', user='dbfleet', host='localhost')
    server.set_info = dict(time='2024-01-01 03:10:00', user='dba', host='bastion')
    run = _next_run(tmp_path, server, dict(DEAD, ahi_set_info=recorded))
    run.previous_run()
    assert server.ahi == 'OFF' and not any('innodb_adaptive_hash_index' in sql for sql in server.sql)
    assert any('SET again since' in f for f in run.interrupted_run['findings'])
    assert run.interrupted_run['outcome'] == 'undone'  # the session and super_read_only were still the run's


def test_nothing_of_the_run_left_is_reported_as_left(tmp_path, server):
    server.role, server.row = 'primary', None
    server.identity['server']['started'] += 3600
    run = _next_run(tmp_path, server, dict(DEAD))
    run.previous_run()
    assert run.interrupted_run['outcome'] == 'left' and server.sql == [] and run.changed is False
    assert run.marker.read()['findings'] == run.interrupted_run['findings']


def test_check_mode_says_what_it_would_undo_and_changes_nothing(tmp_path, server):
    run = _next_run(tmp_path, server, dict(DEAD), check_mode=True)
    run.previous_run()
    assert run.interrupted_run['outcome'] == 'would_undo' and run.changed is True
    assert any('innodb_adaptive_hash_index = ON' in line for line in run.plan)
    assert server.sql == [] and run.marker.read()['state'] == 'running'


def test_marker_of_an_older_version_is_not_replayed(tmp_path, server):
    old = dict(state='running', mode='drop', run_id='old', pid=2 ** 22 + 4321, pid_start=1, connection_id=77,
               ahi_before='ON', ahi_toggled=True, super_read_only_lifted=True, tables=['a.b'], dropped=[])
    run = _next_run(tmp_path, server, old)
    run.previous_run()
    assert server.sql == [] and any('older version' in f for f in run.interrupted_run['findings'])


def test_running_change_of_another_run_refuses(tmp_path, server):
    me = os.getpid()
    run = _next_run(tmp_path, server, dict(DEAD, pid=me, pid_start=g.process_start(me)))
    with pytest.raises(g.GuardedError) as e:
        run.previous_run()
    assert 'another drop_tables run is under way' in str(e.value) and server.sql == []


def test_own_follower_is_not_an_interrupted_run(tmp_path, server):
    me = os.getpid()
    run = _next_run(tmp_path, server, dict(DEAD, mode='follow', run_id='new', pid=me, pid_start=g.process_start(me)))
    run.previous_run()
    assert run.interrupted_run is None and server.sql == []


def test_done_marker_makes_a_rerun_idempotent(tmp_path, server):
    run = _next_run(tmp_path, server, dict(DEAD, state='done', done=['a.b']))
    run.previous_run()
    assert run.interrupted_run is None and run._previous_dropped == {'a.b'} and server.sql == []


def test_interrupted_conversion_hands_its_table_and_checksum_to_the_next_run(tmp_path, server):
    data = dict(DEAD, mode='convert', module='convert_tables', ahi_toggled=False, super_read_only_lifted=False,
                converting=dict(name='a.b', engine='MyISAM', to_engine='InnoDB',
                                before=dict(rows=10, checksum='0000000100000002')))
    run = _next_run(tmp_path, server, data, cls=Conversion)
    run.previous_run()
    assert server.sql == ['KILL 77']
    assert run.previous == {'a.b': data['converting']}


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


def test_drop_reports_a_size_for_every_table_even_when_nothing_was_dropped():
    # the playbook's report reads sizes from the module: a table that is not there has none (issue 24's crash)
    drop = Drop(dict(tables=['a.b', 'a.c']))
    drop.tables = [dict(name='a.b', schema='a', table='b', exists=False, result='absent'),
                   dict(name='a.c', schema='a', table='c', exists=True, size='16.0 KiB', result='pending')]
    assert drop.report()['sizes'] == {'a.b': None, 'a.c': '16.0 KiB'}


class _GateModule(object):
    def __init__(self, **params):
        self.params = dict(dict(window=None, timezone='UTC', force_window=False), **params)
        self.warnings = []

    def fail_json(self, **kw):
        raise RuntimeError(kw)

    def warn(self, text):
        self.warnings.append(text)


def test_module_window_gate_fails_with_the_nothing_result_and_warns_when_forced():
    assert g.module_window_gate(_GateModule(), dict(dropped=[], changed=False)) is None
    with pytest.raises(RuntimeError) as e:
        g.module_window_gate(_GateModule(window='25:00-26:00'), dict(dropped=[], changed=False))
    failed = e.value.args[0]
    assert '25:00-26:00' in failed['msg'] and failed['dropped'] == [] and failed['changed'] is False
    later = (datetime.datetime.now(datetime.timezone.utc).hour + 2) % 24
    always_outside = '%02d:00-%02d:01' % (later, later)  # a minute two hours from now
    with pytest.raises(RuntimeError) as e:
        g.module_window_gate(_GateModule(window=always_outside), dict(converted=[], changed=False))
    assert 'set force_window' in e.value.args[0]['msg'] and e.value.args[0]['window']['inside'] is False
    forced = _GateModule(window=always_outside, force_window=True)
    st = g.module_window_gate(forced, {})
    assert st['inside'] is False and forced.warnings and forced.warnings[0].startswith('forced outside the window')
    read_only = _GateModule(window=always_outside)
    assert g.module_window_gate(read_only, {}, applies=False)['inside'] is False and read_only.warnings == []
