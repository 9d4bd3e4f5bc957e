# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The next run against what an interrupted run left (guarded/recovery.py, issue 23): undone when it is still the
run's, left when it is not, said in check mode, refused while another run works, a conversion's table handed on."""

from __future__ import annotations

import os

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import engine as g
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import marker as guarded_marker
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import recovery
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.convert_tables import Conversion
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.drop_tables import Drop
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.marker import MARKER_VERSION


SERVER = dict(uuid='u-1', started=1700000000)
SESSION = dict(id=77, user='dbfleet', host='10.0.0.5:50312', started=1700003600)
MARKER = dict(version=MARKER_VERSION, server=SERVER, session=SESSION, ahi_before='ON', ahi_toggled=True,
              ahi_set='OFF', ahi_set_info=None, super_read_only_lifted=True)
ROW = dict(ID=77, USER='dbfleet', HOST='10.0.0.5:50312', TIME=30)
NOW = 1700003700  # 100 s after the session started


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

    for module in (g, recovery):   # the engine switches AHI back and kills; the next run's side reads and undoes
        monkeypatch.setattr(module, 'global_variables', global_variables)
        monkeypatch.setattr(module, 'execute', execute)
    monkeypatch.setattr(recovery, 'query_one', lambda conn, sql, args=None: srv.row if 'PROCESSLIST' in sql else None)
    monkeypatch.setattr(recovery, 'read_identity', lambda conn: srv.identity)
    monkeypatch.setattr(recovery.topology, 'read_server', lambda conn, q, gv: dict(role=srv.role))
    return srv


DEAD = dict(MARKER, state='running', mode='drop', module='drop_tables', run_id='old', pid=2 ** 22 + 4321,
            pid_start=1, tables=['a.b', 'a.c'], done=['a.c'])


def _next_run(tmp_path, srv, data, check_mode=False, cls=Drop):
    run = cls(dict(tables=['a.b'], run_id='new', restore_timeout=1), check_mode=check_mode, sleep=lambda s: None)
    run.marker = guarded_marker.Marker(str(tmp_path / 'state'), 'k')
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
    run = _next_run(tmp_path, server, dict(DEAD, pid=me, pid_start=guarded_marker.process_start(me)))
    with pytest.raises(g.GuardedError) as e:
        run.previous_run()
    assert 'another drop_tables run is under way' in str(e.value) and server.sql == []


def test_own_follower_is_not_an_interrupted_run(tmp_path, server):
    me = os.getpid()
    run = _next_run(tmp_path, server, dict(DEAD, mode='follow', run_id='new', pid=me, pid_start=guarded_marker.process_start(me)))
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
