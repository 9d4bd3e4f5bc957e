# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""service_restart: systemd's outcome of a restart and what a server refused at start, with real log lines."""

from __future__ import annotations

import os

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import service_restart as sr

# Lines written by the servers themselves (the lab's binaries started on an option file with the line named in
# each test; recorded 2026-11-25).
MARIADB_1011_UNKNOWN = [
    "2026-11-25 16:02:10 0 [Note] InnoDB: log sequence number 0; transaction id 3",
    "2026-11-25 16:02:10 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'log_error_verbosity=3'",
    "2026-11-25 16:02:10 0 [ERROR] Aborting",
]
MARIADB_118_BAD_VALUE = [
    "2026-11-25 16:02:12 0 [ERROR] /usr/sbin/mariadbd: Error while setting value 'bogus' to 'innodb-flush-method'",
    "2026-11-25 16:02:12 0 [ERROR] Parsing options for plugin 'InnoDB' failed. Disabling plugin",
    "2026-11-25 16:02:12 0 [ERROR] Aborting",
]
MARIADB_118_TOO_SMALL = [
    "2026-11-25 16:02:13 0 [ERROR] InnoDB: innodb_page_size=16384 requires innodb_buffer_pool_size >= 6 MiB current 2 MiB",
    "2026-11-25 16:02:13 0 [ERROR] Plugin 'InnoDB' registration as a STORAGE ENGINE failed.",
    "2026-11-25 16:02:13 0 [ERROR] Aborting",
]
MYSQL_80_UNKNOWN = [
    "2026-11-25T16:00:23.002504Z 0 [System] [MY-010116] [Server] /usr/sbin/mysqld (mysqld 8.0.33) starting as process 30479",
    "2026-11-25T16:00:35.780567Z 0 [ERROR] [MY-000067] [Server] unknown variable 'innodb_no_such_thing=1'.",
    "2026-11-25T16:00:35.780629Z 0 [ERROR] [MY-010119] [Server] Aborting",
]
MYSQL_80_BAD_VALUE = [
    "2026-11-25T16:00:37.679050Z 0 [ERROR] [MY-000077] [Server] /opt/mysql-8.0.33/bin/mysqld: Error while setting "
    "value 'bogus' to 'innodb-flush-method'.",
    "2026-11-25T16:00:37.679067Z 0 [ERROR] [MY-010746] [Server] Parsing options for plugin 'InnoDB' failed.",
    "2026-11-25T16:00:37.679080Z 0 [ERROR] [MY-010168] [Server] Failed to initialize builtin plugins.",
    "2026-11-25T16:00:37.679087Z 0 [ERROR] [MY-010119] [Server] Aborting",
]
MYSQL_97_UNKNOWN = [
    "2026-11-25T16:04:10.042986Z 0 [ERROR] [MY-011292] [Server] Plugin mysqlx reported: 'Preparation of I/O interfaces "
    "failed, X Protocol won't be accessible'",
    "2026-11-25T16:04:10.286436Z 0 [ERROR] [MY-000067] [Server] unknown variable 'innodb_no_such_thing=1'.",
    "2026-11-25T16:04:10.286960Z 0 [ERROR] [MY-010119] [Server] Aborting",
]
MYSQL_97_BAD_VALUE = [
    "2026-11-25T16:04:12.703170Z 0 [ERROR] [MY-000077] [Server] /usr/sbin/mysqld: Error while setting value 'bogus' "
    "to 'innodb-flush-method'.",
    "2026-11-25T16:04:12.703207Z 0 [ERROR] [MY-010746] [Server] Parsing options for plugin 'InnoDB' failed.",
    "2026-11-25T16:04:12.703239Z 0 [ERROR] [MY-010119] [Server] Aborting",
]
# my_default.c before any log is open (stderr, so the journal).
OPTION_FILE_SYNTAX = [
    "error: Found option without preceding group in config file: /etc/mysql/conf.d/60-dbfleet-x.cnf at line: 1",
    "Fatal error in defaults handling. Program aborted",
]


@pytest.mark.parametrize('lines, kind, option, value', [
    (MARIADB_1011_UNKNOWN, 'unknown variable', 'log_error_verbosity', '3'),
    (MARIADB_118_BAD_VALUE, 'value refused', 'innodb_flush_method', 'bogus'),
    (MARIADB_118_TOO_SMALL, 'value refused', 'innodb_buffer_pool_size', None),
    (MYSQL_80_UNKNOWN, 'unknown variable', 'innodb_no_such_thing', '1'),
    (MYSQL_80_BAD_VALUE, 'value refused', 'innodb_flush_method', 'bogus'),
    (MYSQL_97_UNKNOWN, 'unknown variable', 'innodb_no_such_thing', '1'),
    (MYSQL_97_BAD_VALUE, 'value refused', 'innodb_flush_method', 'bogus'),
])
def test_the_refusal_is_read_from_each_flavors_wording(lines, kind, option, value):
    found = sr.refusals(lines, 'journal')
    assert [(r['kind'], r['option'], r['value']) for r in found] == [(kind, option, value)]
    assert not found[0]['message'].startswith(('2026', '[MY-', '/'))


def test_an_option_file_that_cannot_be_parsed_names_its_file_and_line():
    found = sr.refusals(OPTION_FILE_SYNTAX, 'journal')
    assert [(r['kind'], r['file'], r['line']) for r in found] == [
        ('option file syntax', '/etc/mysql/conf.d/60-dbfleet-x.cnf', 1)]
    assert sr.locate(found[0], []) == ('/etc/mysql/conf.d/60-dbfleet-x.cnf', 1, None)


def test_without_a_refusal_the_first_errors_are_reported_not_the_abort_lines():
    lines = ["2026-11-25T16:00:23.026652Z 1 [ERROR] [MY-011011] [Server] Failed to find valid data directory.",
             "2026-11-25T16:00:23.026850Z 0 [ERROR] [MY-010119] [Server] Aborting"]
    found = sr.refusals(lines, 'error log')
    assert [(r['kind'], r['message']) for r in found] == [('error', 'Failed to find valid data directory.')]
    assert sr.refusals(["2026-11-25 16:02:10 0 [Note] ready"], 'journal') == []


def test_the_refused_line_is_found_in_the_option_files(tmp_path):
    conf_d = tmp_path / 'conf.d'
    conf_d.mkdir()
    (tmp_path / 'my.cnf').write_text('[mysqld]\ninnodb_flush_method = O_DIRECT\n!includedir %s\n' % conf_d)
    (conf_d / '60-dbfleet-flush_neighbors.cnf').write_text('# managed\n[mysqld]\ninnodb-flush-method=bogus\n')
    entries = optionfiles.read_option_files([str(tmp_path / 'my.cnf')], ('mysqld',)).entries
    refusal = sr.refusals(MARIADB_118_BAD_VALUE, 'journal')[0]
    where = sr.locate(refusal, entries)
    assert where == (str(conf_d / '60-dbfleet-flush_neighbors.cnf'), 3, 'innodb-flush-method=bogus')
    assert sr.describe(refusal, where) == (
        "%s:3 (innodb-flush-method=bogus): Error while setting value 'bogus' to 'innodb-flush-method'"
        % (conf_d / '60-dbfleet-flush_neighbors.cnf'))


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


def test_backups_of_a_dropin_oldest_first():
    names = ['60-dbfleet-adaptive_hash.cnf', '60-dbfleet-adaptive_hash.cnf.222.2026-11-25@16:10:00~',
             '60-dbfleet-adaptive_hash.cnf.111.2026-11-24@09:00:00~', '60-dbfleet-memcached.cnf.1.2026-11-01@00:00:00~',
             '60-dbfleet-adaptive_hash.cnf.orig']
    assert sr.dropin_backups('/etc/mysql/conf.d/60-dbfleet-adaptive_hash.cnf', names) == [
        '60-dbfleet-adaptive_hash.cnf.111.2026-11-24@09:00:00~', '60-dbfleet-adaptive_hash.cnf.222.2026-11-25@16:10:00~']


def test_put_back_restores_the_oldest_backup_or_removes_a_new_dropin(tmp_path):
    old = tmp_path / '60-dbfleet-old.cnf'
    old.write_text('[mysqld]\n')
    changed = tmp_path / '60-dbfleet-adaptive_hash.cnf'
    changed.write_text('[mysqld]\ninnodb_adaptive_hash_index_parts=16\n')
    (tmp_path / '60-dbfleet-adaptive_hash.cnf.1.2026-11-24@09:00:00~').write_text('a')
    (tmp_path / '60-dbfleet-adaptive_hash.cnf.2.2026-11-25@09:00:00~').write_text('b')
    new = tmp_path / '60-dbfleet-memcached.cnf'
    new.write_text('[mysqld]\n')

    class Times(object):
        def __init__(self, path):
            self.st_mtime = self.st_ctime = 1000 if path == str(old) else 9000

    plan = sr.put_back_plan([str(old), str(changed), str(new)], last_start=5000, stat_fn=Times)
    assert [(os.path.basename(i['path']), i['action'], i['backup'] and os.path.basename(i['backup'])) for i in plan] == [
        ('60-dbfleet-adaptive_hash.cnf', 'restore', '60-dbfleet-adaptive_hash.cnf.1.2026-11-24@09:00:00~'),
        ('60-dbfleet-memcached.cnf', 'remove', None)]
    assert [os.path.basename(p) for p in plan[0]['discard']] == ['60-dbfleet-adaptive_hash.cnf.2.2026-11-25@09:00:00~']


class FakeStat(object):
    def __init__(self, mode, uid, gid):
        self.st_mode, self.st_uid, self.st_gid = mode, uid, gid


@pytest.mark.parametrize('mode, uid, gid, readable', [
    (0o100644, 0, 0, True), (0o100600, 0, 0, False), (0o100640, 0, 27, True), (0o100000, 27, 27, False),
    (0o100400, 27, 0, True)])
def test_unreadable_option_files_for_the_servers_user(mode, uid, gid, readable):
    found = sr.unreadable_files(['/f'], 27, [27], stat_fn=lambda p: FakeStat(mode, uid, gid))
    assert (found == []) is readable
    assert sr.unreadable_files(['/f'], 0, [0], stat_fn=lambda p: FakeStat(0o100000, 5, 5)) == []


def test_error_log_path():
    assert sr.error_log_path('/var/log/mysql/error.log', '/var/lib/mysql/') == '/var/log/mysql/error.log'
    assert sr.error_log_path('./db1.err', '/var/lib/mysql/') == '/var/lib/mysql/db1.err'
    assert sr.error_log_path('', '/var/lib/mysql/') is None
    assert sr.error_log_path('stderr', '/var/lib/mysql/') is None


def test_read_from_an_offset_and_after_rotation(tmp_path):
    log = tmp_path / 'error.log'
    log.write_text('old\nnew 1\nnew 2\n')
    assert sr.read_from(str(log), 4) == ['new 1', 'new 2']
    assert sr.read_from(str(log), 10 ** 6) == ['old', 'new 1', 'new 2']
    assert sr.read_from(str(tmp_path / 'none'), 0) == []


# ---------------------------------------------------------------- the module's run, systemctl faked
class Stop(Exception):
    pass


class FakeModule(object):
    def __init__(self, params, shows, journal, check_mode=False):
        self.params = dict(name='mariadb', timeout=30, leftover_timeout=30, error_log=None, dropins=None, login_user=None,
                           login_password=None, login_host='127.0.0.1', login_port=1, login_unix_socket=None,
                           config_file='/nonexistent', connect_timeout=1)
        self.params.update(params)
        self.shows = list(shows)
        self.journal = journal
        self.check_mode = check_mode
        self.commands = []
        self.result = None

    def run_command(self, argv):
        self.commands.append(argv)
        if argv[:2] == ['systemctl', 'show']:
            text = self.shows.pop(0) if len(self.shows) > 1 else self.shows[0]
            return 0, text, ''
        if argv[0] == 'journalctl':
            return 0, '\n'.join(self.journal.get(argv[-1].split('=')[1], [])), ''
        return 0, '', ''

    def exit_json(self, **kw):
        self.result = dict(kw, failed=False)
        raise Stop()

    def fail_json(self, **kw):
        self.result = dict(kw, failed=True)
        raise Stop()


def show(active, sub, pid, inv, result='success'):
    return 'LoadState=loaded\nActiveState=%s\nSubState=%s\nMainPID=%s\nInvocationID=%s\nResult=%s\n' % (
        active, sub, pid, inv, result)


def run(module):
    with pytest.raises(Stop):
        sr.run_module(module)
    return module.result


def test_a_good_restart_reads_the_new_invocation_and_drops_the_backups(tmp_path, monkeypatch):
    monkeypatch.setattr(sr, 'server_before', lambda m: dict(option_files=[], groups=['mysqld'], log_error=None,
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
    monkeypatch.setattr(sr, 'server_before', lambda m: dict(option_files=[], groups=['mysqld'], log_error=None,
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


def test_without_the_last_start_a_dropin_without_backup_is_left_alone(tmp_path):
    new = tmp_path / '60-dbfleet-memcached.cnf'
    new.write_text('[mysqld]\n')
    assert sr.put_back_plan([str(new)], last_start=None) == []
    assert [i['action'] for i in sr.put_back_plan([str(new)], last_start=0)] == ['remove']


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


class Clock(object):
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


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
    monkeypatch.setattr(sr, 'server_before', lambda m: dict(option_files=[], groups=['mysqld'], log_error=None,
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
