# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""command_restart: the restart command's outcome read from the server, and a server that refuses to start put back
and started again with the same command (the refusal reading and put-back are refused_start's and dropin_backups')."""

from __future__ import annotations

import time

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import command_restart as cr
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import dropin_backups
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import refused_start
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.restart import restart_fakes

# The lab's MySQL 8.0.33 and MariaDB 10.11 on a drop-in with innodb_temp_data_file_path = ibtmp1:12M:bogus, and MySQL
# 8.0.33 with init_file naming a file that does not exist (recorded 2026-11-28).
MYSQL_80_UNPARSABLE = [
    "2026-11-28T06:37:50.440865Z 0 [ERROR] [MY-012261] [InnoDB] File Path Specification: 'ibtmp1:12M:bogus' has "
    "unrecognized characters after 'ibtmp1:12M'",
    "2026-11-28T06:37:50.440884Z 0 [ERROR] [MY-012371] [InnoDB] Unable to parse innodb_temp_data_file_path="
    "ibtmp1:12M:bogus",
    "2026-11-28T06:37:50.440894Z 0 [ERROR] [MY-010202] [Server] Plugin 'InnoDB' init function returned error.",
    "2026-11-28T06:37:50.440909Z 0 [ERROR] [MY-010119] [Server] Aborting",
]
MARIADB_1011_UNPARSABLE = [
    "2026-11-28  6:37:55 0 [ERROR] InnoDB: syntax error in file path or size specified is less than 1 megabyte",
    "2026-11-28  6:37:55 0 [ERROR] InnoDB: Unable to parse innodb_temp_data_file_path=ibtmp1:12M:bogus",
    "2026-11-28  6:37:55 0 [ERROR] Plugin 'InnoDB' registration as a STORAGE ENGINE failed.",
    "2026-11-28  6:37:55 0 [ERROR] Aborting",
]
MYSQL_80_INIT_FILE = [
    "2026-11-28T06:38:06.549053Z 0 [ERROR] [MY-013129] [Server] A message intended for a client cannot be sent there "
    "as no client-session is attached. Therefore, we're sending the information to the error-log instead: MY-000029 - "
    "File '/tmp/putback-none.sql' not found (OS errno 2 - No such file or directory)",
    "2026-11-28T06:38:06.549076Z 0 [ERROR] [MY-010455] [Server] Failed to open the bootstrap file /tmp/putback-none.sql",
    "2026-11-28T06:38:06.549082Z 0 [ERROR] [MY-010119] [Server] Aborting",
]


MARIADB_1011_INIT_FILE = [
    "2026-11-28  6:38:09 0 [ERROR] mariadbd: Can't create/write to file '/tmp/putback-none.sql' (Errcode: 2 \"No such "
    "file or directory\")",
    "2026-11-28  6:38:09 0 [ERROR] Aborting",
]


def test_an_error_that_quotes_a_settings_value_is_traced_to_its_line(tmp_path):
    dropin = tmp_path / '60-dbfleet-settings.cnf'
    dropin.write_text('[mysqld]\ninit_file = /tmp/elsewhere.sql\n[mysqld]\ninit_file = "/tmp/putback-none.sql"\n')
    entries = optionfiles.read_option_files([str(dropin)], ['mysqld']).entries
    found = refused_start.refusals(MARIADB_1011_INIT_FILE, 'error log')
    assert [f['kind'] for f in found] == ['error']
    assert refused_start.locate(found[0], entries) == (str(dropin), 4, 'init_file = "/tmp/putback-none.sql"')
    assert refused_start.locate(dict(found[0], message="Can't open file '/tmp/other.sql'"), entries) is None


@pytest.mark.parametrize('lines, option, value', [
    (MYSQL_80_UNPARSABLE, 'innodb_temp_data_file_path', 'ibtmp1:12M:bogus'),
    (MARIADB_1011_UNPARSABLE, 'innodb_temp_data_file_path', 'ibtmp1:12M:bogus'),
    (MYSQL_80_INIT_FILE, 'init_file', '/tmp/putback-none.sql'),
])
def test_start_checks_that_name_the_option_or_its_value_are_refusals(lines, option, value):
    found = refused_start.refusals(lines, 'error log')
    assert [(f['kind'], f['option'], f['value']) for f in found] == [('value refused', option, value)]


def test_a_backup_made_before_the_last_start_is_never_restored(tmp_path):
    dropin = tmp_path / '60-dbfleet-settings.cnf'
    dropin.write_text('[mysqld]\ninnodb_temp_data_file_path = ibtmp1:12M:bogus\n')
    stale = tmp_path / '60-dbfleet-settings.cnf.1.2026-11-20@09:00:00~'
    fresh = tmp_path / '60-dbfleet-settings.cnf.2.2026-11-28@09:00:00~'
    stale.write_text('a')
    fresh.write_text('b')
    start = time.mktime(time.strptime('2026-11-25@09:00:00', '%Y-%m-%d@%H:%M:%S'))
    plan = dropin_backups.put_back_plan([str(dropin)], last_start=start)
    assert [(p['action'], p['backup'], p['discard']) for p in plan] == [('restore', str(fresh), [str(stale)])]
    # Only stale backups, the drop-in written since the start: it is new since then, removed.
    fresh.unlink()
    plan = dropin_backups.put_back_plan([str(dropin)], last_start=start)
    assert [(p['action'], p['discard']) for p in plan] == [('remove', [str(stale)])]


def test_only_the_dropin_a_refusal_is_traced_to_is_put_back_else_every_one():
    dropins = ['/etc/mysql/conf.d/60-dbfleet-settings.cnf', '/etc/mysql/conf.d/60-dbfleet-memcached.cnf']
    traced = dict(where=(dropins[0], 3, 'innodb_temp_data_file_path = x'), file=None)
    unreadable = dict(where=None, file=dropins[1])
    assert dropin_backups.put_back_targets(dropins, [traced]) == dropins[:1]
    assert dropin_backups.put_back_targets(dropins, [unreadable]) == dropins[1:]
    # Traced to the server's own option file, or to no line: every drop-in written since the last start is suspect.
    assert dropin_backups.put_back_targets(dropins, [dict(where=('/etc/mysql/my.cnf', 9, 'x'), file=None)]) == dropins
    assert dropin_backups.put_back_targets(dropins, [dict(where=None, file=None)]) == dropins
    assert dropin_backups.put_back_targets(dropins, []) == dropins


def test_the_process_start_from_proc(tmp_path):
    (tmp_path / '42').mkdir()
    # starttime (field 22) 5000 ticks after boot; a command name with spaces and parentheses.
    fields = ['S'] + ['0'] * 18 + ['5000', '0', '0']
    (tmp_path / '42' / 'stat').write_text('42 (my (sql) d) %s\n' % ' '.join(fields))
    assert cr.process_start(42, str(tmp_path), now=10000.0, boottime=200.0, ticks=100) == 10000.0 - 150.0
    assert cr.process_start(43, str(tmp_path)) is None
    assert cr.process_start(None, str(tmp_path)) is None


def restart(rcs, answers, timeout=10):
    """A CommandRestart whose command exits with each of rcs in turn and whose server answers each of answers in turn
    (an Uptime, or None: down), on a fake clock (the command takes 3 s)."""
    clock = restart_fakes.Clock()
    rcs, answers = list(rcs), list(answers)

    def run(argv):
        clock.now += 3
        return rcs.pop(0), 'out', 'ERROR: mysql80 did not start\n--- error.log\nlines'

    def answer():
        up = answers.pop(0) if len(answers) > 1 else answers[0]
        return up, '' if up is not None else "Can't connect"
    return cr.CommandRestart(['lab.py', 'restart', 'mysql80'], run, answer, timeout=timeout, sleep=clock.sleep,
                             clock=clock)


@pytest.mark.parametrize('rcs, answers, verdict, why', [
    ([0], [1], 'started', 'the server answers again, up 1 s'),
    ([0], [None, None, 2], 'started', 'the server answers again, up 2 s'),
    ([1], [None], 'failed', 'the restart command exited 1: ERROR: mysql80 did not start'),
    ([0], [None], 'failed', "the restart command exited 0, but the server does not answer after 10 s: Can't connect"),
    # /bin/false, a command that restarts nothing: the server was never down.
    ([1], [3600], 'not restarted', 'the restart command exited 1: ERROR: mysql80 did not start, and the server runs '
                                   'in the process it ran in before (up 3600 s)'),
    ([0], [3600], 'not restarted', 'the restart command exited 0, and the server runs in the process it ran in before'),
])
def test_the_outcome_of_the_command_is_read_from_the_server(rcs, answers, verdict, why):
    got, text, dummy = restart(rcs, answers).restart()
    assert got == verdict and text.startswith(why), text


# ---------------------------------------------------------------- the module's run
class FakeModule(restart_fakes.FakeModule):
    """The restart command exits with each of rcs in turn; a failed one writes the server's refusal to the error log
    (or, without one, passes the server's stderr on)."""

    def __init__(self, params, rcs, check_mode=False):
        super(FakeModule, self).__init__(dict(dict(command=['lab.py', 'restart', 'mysql80'], timeout=5), **params),
                                         check_mode)
        self.rcs = list(rcs)

    def run_command(self, argv):
        self.commands.append(argv)
        rc = self.rcs.pop(0)
        if rc and self.params['error_log']:
            with open(self.params['error_log'], 'a', encoding='utf-8') as handle:
                handle.write('\n'.join(MYSQL_80_UNPARSABLE) + '\n')
        if rc and not self.params['error_log']:
            # A server without an error log file: its stderr, passed on by the command.
            return rc, '\n'.join(MARIADB_1011_UNPARSABLE), 'mariadb1011 did not start'
        return rc, '', 'mysql80 did not start' if rc else ''


def run(module):
    return restart_fakes.run(cr.run_module, module)


@pytest.fixture
def server(monkeypatch):
    """The server before the restart (pid 77, started at 2000 s), up again after each command that exits 0."""
    monkeypatch.setattr(refused_start, 'server_before', lambda m: dict(option_files=[], groups=['mysqld'], log_error=None,
                                                                       datadir=None, pid=77, uid=None, gids=[], note=''))
    monkeypatch.setattr(cr, 'process_start', lambda pid: 2000.0 if pid == 77 else None)
    answers = []
    monkeypatch.setattr(cr, 'uptime', lambda params: answers.pop(0) if answers else (None, "Can't connect"))
    return answers


def test_a_good_restart_answers_in_a_new_process_and_drops_the_backups(tmp_path, server):
    dropin = tmp_path / '60-dbfleet-settings.cnf'
    dropin.write_text('[mysqld]\ninnodb_sort_buffer_size = 2M\n')
    backup = tmp_path / '60-dbfleet-settings.cnf.1.2026-11-24@09:00:00~'
    backup.write_text('[mysqld]\n')
    server.append((0, ''))
    result = run(FakeModule(dict(dropins=[str(dropin)]), [0]))
    assert not result['failed'] and result['changed'], result
    assert result['msg'].startswith('restarted by lab.py restart mysql80: the server answers again, up 0 s'), result
    assert not backup.exists() and dropin.exists()


def test_a_refused_dropin_is_put_back_the_server_started_again_with_the_command_and_the_line_named(tmp_path, server):
    dropin = tmp_path / '60-dbfleet-settings.cnf'
    dropin.write_text('# managed\n[mysqld]\ninnodb_temp_data_file_path = ibtmp1:12M:bogus\n')
    backup = tmp_path / ('60-dbfleet-settings.cnf.1.%s~' % time.strftime('%Y-%m-%d@%H:%M:%S'))
    backup.write_text('# managed\n[mysqld]\n')
    # Written since the last start too, by another run, in effect at runtime (INSTALL PLUGIN read it): not refused.
    other = tmp_path / '60-dbfleet-memcached.cnf'
    other.write_text('[mysqld]\nloose-daemon_memcached_option = "-p11211 -u root"\n')
    log = tmp_path / 'error.log'
    log.write_text('an earlier line [ERROR] [MY-010119] [Server] Aborting\n')
    server.extend([(None, "Can't connect"), (0, '')])       # down after the first command, up after the second
    module = FakeModule(dict(dropins=[str(dropin), str(other)], error_log=str(log)), [1, 0])
    result = run(module)
    assert result['failed'] and result['started_again'] is True, result
    assert module.commands == [['lab.py', 'restart', 'mysql80']] * 2
    assert dropin.read_text() == '# managed\n[mysqld]\n' and not backup.exists() and other.exists()
    assert result['put_back'] == [dict(path=str(dropin), action='restore', backup=str(backup))]
    assert [(r['option'], r['source']) for r in result['refused']] == [('innodb_temp_data_file_path', str(log))]
    assert result['msg'] == (
        'the server did not start (the restart command exited 1: mysql80 did not start): %s:3 '
        '(innodb_temp_data_file_path = ibtmp1:12M:bogus): Unable to parse innodb_temp_data_file_path=ibtmp1:12M:bogus. '
        'Put back: restored %s. Started again: yes, the server answers again, up 0 s' % (dropin, dropin))


def test_without_an_error_log_the_refusal_is_read_from_the_commands_output(tmp_path, server):
    dropin = tmp_path / '60-dbfleet-settings.cnf'
    dropin.write_text('[mysqld]\ninnodb_temp_data_file_path = ibtmp1:12M:bogus\n')
    server.extend([(None, "Can't connect"), (0, '')])
    result = run(FakeModule(dict(dropins=[str(dropin)]), [1, 0]))
    assert [(r['option'], r['source'], r['where'][:2]) for r in result['refused']] == [
        ('innodb_temp_data_file_path', 'output of the restart command', (str(dropin), 2))]
    assert result['put_back'] == [dict(path=str(dropin), action='remove', backup=None)] and not dropin.exists()


def test_a_command_that_restarted_nothing_puts_nothing_back(tmp_path, server):
    dropin = tmp_path / '60-dbfleet-settings.cnf'
    dropin.write_text('[mysqld]\ninnodb_sort_buffer_size = 2M\n')
    server.append((86400, ''))
    module = FakeModule(dict(command=['/bin/false'], dropins=[str(dropin)]), [1])
    result = run(module)
    assert result['failed'] and module.commands == [['/bin/false']]
    assert 'the server runs in the process it ran in before (up 86400 s)' in result['msg']
    assert dropin.exists() and result['put_back'] == []


def test_check_mode_runs_nothing(server):
    module = FakeModule({}, [], check_mode=True)
    result = run(module)
    assert result['changed'] and not result['failed'] and module.commands == []
    assert result['msg'] == 'would restart the server with: lab.py restart mysql80'


def test_a_password_on_the_command_line_is_never_in_the_result(server):
    module = FakeModule(dict(command=['/usr/local/bin/restart-db', '--password=s3cret', '-ps3cret']), [], check_mode=True)
    result = run(module)
    assert 's3cret' not in repr(result), result


@pytest.mark.parametrize('command', [[], None, ['lab.py', 'restart\nmysql80']])
def test_a_bad_command_is_refused_before_anything_runs(command):
    module = FakeModule(dict(command=command), [])
    result = run(module)
    assert result['failed'] and module.commands == []
    assert 'needs dbfleet_restart_command, a non-empty list of arguments' in result['msg']
