# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-server marker (guarded/marker.py): private paths, the process and server identities, and the checks
a next run makes before it acts on what an interrupted run left (issue 23)."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import marker as g


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
