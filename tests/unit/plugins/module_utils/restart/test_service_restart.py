# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""service_restart: systemd's outcome of a restart, a stop that outlives the server, and the module's run (the refusals
of real log lines in test_refused_start.py)."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import service_restart as sr
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import refused_start
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.restart import restart_fakes
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.restart.test_refused_start import (
    MARIADB_1011_UNKNOWN, MARIADB_118_BAD_VALUE)


@pytest.mark.parametrize('name, unit', [('mariadb', 'mariadb.service'), ('mysqld.service', 'mysqld.service'),
                                        ('mysql@replica', 'mysql@replica.service')])
def test_unit_names(name, unit):
    assert sr.unit_name(name) == unit


@pytest.mark.parametrize('name', [None, '', 'maria db', '--all', 'mariadb.socket', 'a;b'])
def test_bad_unit_names_name_the_variable(name):
    with pytest.raises(ValueError, match='dbfleet_service_name'):
        sr.unit_name(name)


BEFORE = sr.parse_show('ActiveState=active\nSubState=running\nResult=success\nMainPID=100\nInvocationID=aaa\n'
                       'LoadState=loaded\nExecMainStatus=0\n')


@pytest.mark.parametrize('text, verdict', [
    ('ActiveState=active\nSubState=running\nMainPID=100\nInvocationID=aaa\nLoadState=loaded', 'waiting'),
    ('ActiveState=deactivating\nSubState=stop-sigterm\nMainPID=100\nInvocationID=aaa\nLoadState=loaded', 'waiting'),
    ('ActiveState=inactive\nSubState=dead\nMainPID=0\nInvocationID=aaa\nLoadState=loaded', 'waiting'),
    ('ActiveState=activating\nSubState=start\nMainPID=200\nInvocationID=bbb\nLoadState=loaded', 'waiting'),
    ('ActiveState=active\nSubState=running\nMainPID=200\nInvocationID=bbb\nLoadState=loaded', 'started'),
    ('ActiveState=failed\nSubState=failed\nResult=exit-code\nExecMainCode=1\nExecMainStatus=7\nMainPID=0\n'
     'InvocationID=bbb\nLoadState=loaded', 'failed'),
    ('ActiveState=activating\nSubState=auto-restart\nResult=signal\nExecMainCode=3\nExecMainStatus=6\nMainPID=0\n'
     'InvocationID=bbb\nLoadState=loaded', 'failed'),
    ('ActiveState=inactive\nSubState=dead\nResult=exit-code\nMainPID=0\nInvocationID=bbb\nLoadState=loaded', 'failed'),
    ('ActiveState=inactive\nSubState=dead\nLoadState=not-found', 'failed'),
])
def test_the_outcome_comes_from_systemd(text, verdict):
    assert sr.outcome(BEFORE, sr.parse_show(text))[0] == verdict


def test_a_failed_start_says_how_it_ended():
    now = sr.parse_show('ActiveState=failed\nSubState=failed\nResult=core-dump\nExecMainCode=3\nExecMainStatus=6\n'
                        'MainPID=0\nInvocationID=bbb\nLoadState=loaded')
    assert sr.outcome(BEFORE, now) == ('failed', 'result core-dump, signal 6')


# ---------------------------------------------------------------- the module's run, systemctl faked
class FakeModule(restart_fakes.FakeModule):
    def __init__(self, params, shows, journal, check_mode=False):
        super(FakeModule, self).__init__(dict(dict(name='mariadb', leftover_timeout=30), **params), check_mode)
        self.shows = list(shows)
        self.journal = journal

    def run_command(self, argv):
        self.commands.append(argv)
        if argv[:2] == ['systemctl', 'show']:
            text = self.shows.pop(0) if len(self.shows) > 1 else self.shows[0]
            return 0, text, ''
        if argv[0] == 'journalctl':
            return 0, '\n'.join(self.journal.get(argv[-1].split('=')[1], [])), ''
        return 0, '', ''


def show(active, sub, pid, inv, result='success'):
    return 'LoadState=loaded\nActiveState=%s\nSubState=%s\nMainPID=%s\nInvocationID=%s\nResult=%s\n' % (
        active, sub, pid, inv, result)


def run(module):
    return restart_fakes.run(sr.run_module, module)


def test_a_good_restart_reads_the_new_invocation_and_drops_the_backups(tmp_path, monkeypatch):
    monkeypatch.setattr(refused_start, 'server_before', lambda m: dict(option_files=[], groups=['mysqld'], log_error=None,
                                                                       datadir=None, uid=None, gids=[], note=''))
    dropin = tmp_path / '60-dbfleet-adaptive_hash.cnf'
    dropin.write_text('[mysqld]\ninnodb_adaptive_hash_index_parts=16\n')
    backup = tmp_path / '60-dbfleet-adaptive_hash.cnf.1.2026-11-24@09:00:00~'
    backup.write_text('[mysqld]\n')
    module = FakeModule(dict(dropins=[str(dropin)]), [
        show('active', 'running', 100, 'aaa'), show('active', 'running', 100, 'aaa'),
        show('deactivating', 'stop', 100, 'aaa'), show('active', 'running', 200, 'bbb')], {})
    result = run(module)
    assert not result['failed'] and result['changed']
    assert result['after']['MainPID'] == 200 and result['after']['InvocationID'] == 'bbb'
    assert ['systemctl', 'restart', '--no-block', 'mariadb.service'] in module.commands
    assert not backup.exists() and dropin.exists()


def test_a_refused_dropin_is_put_back_the_server_started_again_and_the_line_named(tmp_path, monkeypatch):
    monkeypatch.setattr(refused_start, 'server_before', lambda m: dict(option_files=[], groups=['mysqld'], log_error=None,
                                                                       datadir=None, uid=None, gids=[], note=''))
    dropin = tmp_path / '60-dbfleet-flush_neighbors.cnf'
    dropin.write_text('# managed\n[mysqld]\ninnodb_flush_method=bogus\n')
    backup = tmp_path / '60-dbfleet-flush_neighbors.cnf.1.2026-11-24@09:00:00~'
    backup.write_text('# managed\n[mysqld]\ninnodb_flush_method=O_DIRECT\n')
    module = FakeModule(dict(dropins=[str(dropin)]), [
        show('active', 'running', 100, 'aaa'), show('active', 'running', 100, 'aaa'),
        show('failed', 'failed', 0, 'bbb', 'exit-code'),
        show('failed', 'failed', 0, 'bbb', 'exit-code'), show('active', 'running', 300, 'ccc')],
        {'bbb': MARIADB_118_BAD_VALUE})
    result = run(module)
    assert result['failed'] and result['started_again'] is True
    assert dropin.read_text().endswith('innodb_flush_method=O_DIRECT\n') and not backup.exists()
    assert result['put_back'] == [dict(path=str(dropin), action='restore', backup=str(backup))]
    assert '%s:3 (innodb_flush_method=bogus)' % dropin in result['msg']
    assert "Error while setting value 'bogus' to 'innodb-flush-method'" in result['msg']
    assert 'Started again: yes, main PID 300' in result['msg']


def test_check_mode_restarts_nothing():
    module = FakeModule({}, [show('active', 'running', 100, 'aaa')], {}, check_mode=True)
    result = run(module)
    assert result['changed'] and not result['failed']
    assert not [c for c in module.commands if 'restart' in c]


def test_the_last_start_comes_from_systemds_monotonic_clock():
    props = sr.parse_show('ExecMainStartTimestampMonotonic=1000000000\nMainPID=5\n')
    assert sr.start_time(props, now=50000.0, monotonic=1500.0) == 50000.0 - 500.0
    assert sr.start_time(sr.parse_show('ExecMainStartTimestampMonotonic=0\n')) is None


# ---------------------------------------------------------------- a stop that outlives the server (final-sigterm)
@pytest.mark.parametrize('text, seconds', [
    ('infinity', None), ('', None), ('1min 30s', 90.0), ('5s', 5.0), ('0', 0.0), ('100ms', 0.1), ('1h', 3600.0),
    ('2min', 120.0), ('soon', None), ('5 parsecs', None),
])
def test_systemd_time_spans(text, seconds):
    assert sr.timespan_seconds(text) == seconds


def test_the_bound_is_the_modules_or_the_units_own_stop_timeout_when_shorter():
    # Debian's mysql.service: TimeoutSec=infinity, systemd alone would wait for ever.
    assert sr.leftover_bound({'TimeoutStopUSec': 'infinity'}) == sr.LEFTOVER_TIMEOUT == 30
    assert sr.leftover_bound({'TimeoutStopUSec': '5s'}, 30) == 5
    assert sr.leftover_bound({'TimeoutStopUSec': '1min 30s'}, 30) == 30


@pytest.mark.parametrize('text, lingers', [
    ('ActiveState=deactivating\nSubState=final-sigterm\nMainPID=0\nControlPID=0', True),
    # The server still ending (its main process), an ExecStopPost running: systemd is not waiting on leftovers only.
    ('ActiveState=deactivating\nSubState=final-sigterm\nMainPID=0\nControlPID=77', False),
    # KillMode=control-group: a stop waits for the whole cgroup in stop-sigterm too (seen on Debian sid's mysql.service).
    ('ActiveState=deactivating\nSubState=stop-sigterm\nMainPID=0\nControlPID=0', True),
    ('ActiveState=deactivating\nSubState=stop-sigterm\nMainPID=100\nControlPID=0', False),
    ('ActiveState=deactivating\nSubState=final-sigkill\nMainPID=0\nControlPID=0', False),
    ('ActiveState=active\nSubState=running\nMainPID=100\nControlPID=0', False),
])
def test_lingering_means_final_sigterm_without_main_and_control_process(text, lingers):
    assert sr.lingering(sr.parse_show(text)) is lingers


def test_the_processes_of_a_units_cgroup_from_the_first_hierarchy_that_has_it():
    files = {'/sys/fs/cgroup/unified/system.slice/mysql.service/cgroup.procs': '812\n813\n',
             '/proc/812/cmdline': 'sleep\x00600\x00', '/proc/813/cmdline': ''}
    found = sr.cgroup_processes('/system.slice/mysql.service', read=files.get)
    assert found == [(812, 'sleep 600'), (813, 'exited')]
    assert sr.describe_processes(found) == 'PID 812 (sleep 600), PID 813 (exited)'
    assert sr.cgroup_processes('/system.slice/nothing.service', read=files.get) == []
    # A cgroup shared with another container: its processes are PID 0 here (seen on the lab's booted hosts before each
    # got a cgroup of its own, lab/dbfleet_lab/machines.py).
    files['/sys/fs/cgroup/system.slice/mysql.service/cgroup.procs'] = '0\n0\n812\n'
    found = sr.cgroup_processes('/system.slice/mysql.service', read=files.get)
    assert sr.describe_processes(found) == ('PID 812 (sleep 600), 2 processes of another PID namespace (PID 0 in '
                                            'cgroup.procs: the cgroup is shared with another container, whose '
                                            'processes systemd here cannot end)')


Clock = restart_fakes.Clock


def lingering_show(inv, timeout='infinity'):
    return ('LoadState=loaded\nActiveState=deactivating\nSubState=final-sigterm\nMainPID=0\nControlPID=0\n'
            'InvocationID=%s\nControlGroup=/system.slice/mysql.service\nTimeoutStopUSec=%s\n' % (inv, timeout))


class Systemd(object):
    """systemctl faked: show() answers from a list (the last one repeats), or from after_kill once the kill ran."""

    def __init__(self, shows, after_kill=None, kill_rc=0):
        self.shows = list(shows)
        self.after_kill = list(after_kill or [])
        self.kill_rc = kill_rc
        self.commands = []
        self.killed = False

    def __call__(self, argv):
        self.commands.append(argv)
        if argv[:2] == ['systemctl', 'show']:
            shows = self.after_kill if self.killed and self.after_kill else self.shows
            return 0, shows.pop(0) if len(shows) > 1 else shows[0], ''
        if argv[:2] == ['systemctl', 'kill']:
            self.killed = True
            return self.kill_rc, '', 'Failed to kill unit mysql.service: No such process' if self.kill_rc else ''
        return 0, '', ''


LEFT = [(812, 'sleep 600')]


def test_a_stop_lingering_on_leftovers_is_finished_after_the_bound_and_the_server_starts():
    clock = Clock()
    systemd = Systemd([show('active', 'running', 100, 'aaa')] + [lingering_show('aaa')] * 100,
                      after_kill=[show('activating', 'start', 200, 'bbb'), show('active', 'running', 200, 'bbb')])
    restart = sr.Restart('mysql.service', systemd, timeout=300, sleep=clock.sleep, clock=clock,
                         processes=lambda group: LEFT)
    verdict, why, dummy, after, seconds = restart.restart()
    assert verdict == 'started' and after['MainPID'] == 200, why
    assert ['systemctl', 'kill', '--signal=SIGKILL', 'mysql.service'] in systemd.commands
    # Killed once the bound passed (30 s: the unit's own stop timeout is infinity), not at the 300 s timeout.
    assert 30 <= seconds <= 33
    assert restart.events == ['killed the processes left in mysql.service after 30 s in deactivating (final-sigterm), '
                              'the server having ended (TimeoutStopUSec infinity; bound 30 s): PID 812 (sleep 600) '
                              '(systemctl kill --signal=SIGKILL mysql.service)']


def test_a_unit_still_lingering_after_the_kill_stops_the_wait_naming_state_processes_and_commands():
    clock = Clock()
    systemd = Systemd([show('active', 'running', 100, 'aaa')] + [lingering_show('aaa', '1min 30s')])
    restart = sr.Restart('mysql.service', systemd, timeout=300, sleep=clock.sleep, clock=clock, leftover_timeout=20,
                         processes=lambda group: LEFT)
    verdict, why, dummy, dummy, seconds = restart.restart()
    assert verdict == 'failed'
    assert why == ('still deactivating (final-sigterm) 10 s after `systemctl kill --signal=SIGKILL mysql.service`: '
                   'PID 812 (sleep 600) left in /system.slice/mysql.service; finish it with '
                   '`systemctl kill --signal=SIGKILL mysql.service` and `systemctl start mysql.service`')
    assert seconds <= 20 + sr.KILL_GRACE + 2


def test_a_failed_kill_stops_the_wait_at_once():
    clock = Clock()
    systemd = Systemd([show('active', 'running', 100, 'aaa')] + [lingering_show('aaa', '5s')], kill_rc=1)
    restart = sr.Restart('mysql.service', systemd, timeout=300, sleep=clock.sleep, clock=clock,
                         processes=lambda group: [])
    verdict, why, dummy, dummy, seconds = restart.restart()
    assert verdict == 'failed' and seconds <= 7
    assert why.startswith('deactivating (final-sigterm) for 5 s: the server has ended, none listed in the cgroup left in '
                          '/system.slice/mysql.service; `systemctl kill --signal=SIGKILL mysql.service` failed: '), why


def test_a_start_that_systemd_restarts_at_once_is_a_failed_start():
    # Restart=on-failure with RestartSec=100ms (Debian's mysql.service): the auto-restart state is rarely seen; a second
    # new invocation without a running server says the first one's start failed.
    clock = Clock()
    systemd = Systemd([show('active', 'running', 100, 'aaa'), show('activating', 'start', 200, 'bbb'),
                       show('activating', 'start', 200, 'bbb'), show('activating', 'start', 300, 'ccc')])
    restart = sr.Restart('mysql.service', systemd, sleep=clock.sleep, clock=clock)
    verdict, why, dummy, after, seconds = restart.restart()
    assert verdict == 'failed' and seconds <= 3
    assert after['FailedInvocationID'] == 'bbb'
    assert 'invocation bbb ended without the server running, systemd restarting it (auto-restart' in why


def test_the_journal_of_the_invocation_that_failed_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(refused_start, 'server_before', lambda m: dict(option_files=[], groups=['mysqld'], log_error=None,
                                                                       datadir=None, uid=None, gids=[], note=''))
    dropin = tmp_path / '60-dbfleet-fault.cnf'
    dropin.write_text('[mysqld]\nlog_error_verbosity=3\n')
    module = FakeModule(dict(dropins=[str(dropin)]), [
        show('active', 'running', 100, 'aaa'), show('active', 'running', 100, 'aaa'),
        show('activating', 'start', 200, 'bbb'), show('activating', 'start', 300, 'ccc'),
        show('activating', 'start', 300, 'ccc'), show('active', 'running', 400, 'ddd')],
        {'bbb': MARIADB_1011_UNKNOWN})
    result = run(module)
    assert result['failed'] and result['started_again'] is True
    assert "unknown variable 'log_error_verbosity=3'" in result['msg']
