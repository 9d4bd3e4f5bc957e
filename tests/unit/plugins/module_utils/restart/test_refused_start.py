# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""refused_start: what a server refused at start, read from real log lines, and where in its option files."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import refused_start


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
    found = refused_start.refusals(lines, 'journal')
    assert [(r['kind'], r['option'], r['value']) for r in found] == [(kind, option, value)]
    assert not found[0]['message'].startswith(('2026', '[MY-', '/'))


def test_an_option_file_that_cannot_be_parsed_names_its_file_and_line():
    found = refused_start.refusals(OPTION_FILE_SYNTAX, 'journal')
    assert [(r['kind'], r['file'], r['line']) for r in found] == [
        ('option file syntax', '/etc/mysql/conf.d/60-dbfleet-x.cnf', 1)]
    assert refused_start.locate(found[0], []) == ('/etc/mysql/conf.d/60-dbfleet-x.cnf', 1, None)


def test_without_a_refusal_the_first_errors_are_reported_not_the_abort_lines():
    lines = ["2026-11-25T16:00:23.026652Z 1 [ERROR] [MY-011011] [Server] Failed to find valid data directory.",
             "2026-11-25T16:00:23.026850Z 0 [ERROR] [MY-010119] [Server] Aborting"]
    found = refused_start.refusals(lines, 'error log')
    assert [(r['kind'], r['message']) for r in found] == [('error', 'Failed to find valid data directory.')]
    assert refused_start.refusals(["2026-11-25 16:02:10 0 [Note] ready"], 'journal') == []


def test_the_refused_line_is_found_in_the_option_files(tmp_path):
    conf_d = tmp_path / 'conf.d'
    conf_d.mkdir()
    (tmp_path / 'my.cnf').write_text('[mysqld]\ninnodb_flush_method = O_DIRECT\n!includedir %s\n' % conf_d)
    (conf_d / '60-dbfleet-flush_neighbors.cnf').write_text('# managed\n[mysqld]\ninnodb-flush-method=bogus\n')
    entries = optionfiles.read_option_files([str(tmp_path / 'my.cnf')], ('mysqld',)).entries
    refusal = refused_start.refusals(MARIADB_118_BAD_VALUE, 'journal')[0]
    where = refused_start.locate(refusal, entries)
    assert where == (str(conf_d / '60-dbfleet-flush_neighbors.cnf'), 3, 'innodb-flush-method=bogus')
    assert refused_start.describe(refusal, where) == (
        "%s:3 (innodb-flush-method=bogus): Error while setting value 'bogus' to 'innodb-flush-method'"
        % (conf_d / '60-dbfleet-flush_neighbors.cnf'))


class FakeStat(object):
    def __init__(self, mode, uid, gid):
        self.st_mode, self.st_uid, self.st_gid = mode, uid, gid


@pytest.mark.parametrize('mode, uid, gid, readable', [
    (0o100644, 0, 0, True), (0o100600, 0, 0, False), (0o100640, 0, 27, True), (0o100000, 27, 27, False),
    (0o100400, 27, 0, True)])
def test_unreadable_option_files_for_the_servers_user(mode, uid, gid, readable):
    found = refused_start.unreadable_files(['/f'], 27, [27], stat_fn=lambda p: FakeStat(mode, uid, gid))
    assert (found == []) is readable
    assert refused_start.unreadable_files(['/f'], 0, [0], stat_fn=lambda p: FakeStat(0o100000, 5, 5)) == []


def test_error_log_path():
    assert refused_start.error_log_path('/var/log/mysql/error.log', '/var/lib/mysql/') == '/var/log/mysql/error.log'
    assert refused_start.error_log_path('./db1.err', '/var/lib/mysql/') == '/var/lib/mysql/db1.err'
    assert refused_start.error_log_path('', '/var/lib/mysql/') is None
    assert refused_start.error_log_path('stderr', '/var/lib/mysql/') is None


def test_read_from_an_offset_and_after_rotation(tmp_path):
    log = tmp_path / 'error.log'
    log.write_text('old\nnew 1\nnew 2\n')
    assert refused_start.read_from(str(log), 4) == ['new 1', 'new 2']
    assert refused_start.read_from(str(log), 10 ** 6) == ['old', 'new 1', 'new 2']
    assert refused_start.read_from(str(tmp_path / 'none'), 0) == []
