# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""optionfiles: the server's way of reading option files, with real files in tmp dirs."""

from __future__ import annotations

import hashlib
import os

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles as of

MYSQL_GROUPS = ('mysqld', 'server', 'mysqld-8.0')
MARIADB_GROUPS = ('mysqld', 'server', 'mariadb', 'mariadbd', 'client-server', 'galera',
                  'mysqld-10.11', 'mariadb-10.11', 'mariadbd-10.11')


def write(path, text):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), 'w') as handle:
        handle.write(text)
    return str(path)


def value_of(result, name):
    return of.lookup(result.entries, name)[0]


@pytest.mark.parametrize('line, expected', [
    ('', None),
    ('   # comment', None),
    ('; comment', None),
    ('[mysqld]', ('group', 'mysqld')),
    ('[ MySQLd-8.0 ]', ('group', 'mysqld-8.0')),
    ('!include /etc/x.cnf', ('include', '/etc/x.cnf')),
    ('!includedir   /etc/mysql/conf.d/', ('includedir', '/etc/mysql/conf.d/')),
    ('key=value', ('option', ('key', 'value'))),
    ('key = value  # trailing comment', ('option', ('key', 'value'))),
    ('key = "va#lue"', ('option', ('key', 'va#lue'))),
    ("key = 'quoted value'", ('option', ('key', 'quoted value'))),
    ('key = a\\sb\\tc', ('option', ('key', 'a b\tc'))),
    ('key = C:\\\\dir', ('option', ('key', 'C:\\dir'))),
    ('key = keep\\xunknown', ('option', ('key', 'keep\\xunknown'))),
    ('skip-name-resolve', ('option', ('skip-name-resolve', None))),
    ('key=', ('option', ('key', ''))),
])
def test_parse_line(line, expected):
    assert of.parse_line(line) == expected


@pytest.mark.parametrize('line', ['[mysqld', '!include', '!bogus /x'])
def test_parse_line_refuses(line):
    with pytest.raises(ValueError):
        of.parse_line(line)


def test_groups_order_and_last_wins(tmp_path):
    main = write(tmp_path / 'my.cnf', '\n'.join([
        '[client]',
        'innodb_flush_neighbors = 9',          # not a server group
        '[mysqld]',
        'innodb_flush_neighbors = 1',
        '[mysqld-8.0]',
        'innodb_flush_neighbors = 2',
        '[mysqld-5.7]',
        'innodb_flush_neighbors = 7',          # other version: ignored
        '[server]',
        'innodb-flush-neighbors = 0',          # '-' and '_' are the same
        '[mariadbd]',
        'innodb_flush_neighbors = 5',          # MariaDB only
    ]))
    mysql = of.read_option_files([main], MYSQL_GROUPS)
    value, entry = of.lookup(mysql.entries, 'innodb_flush_neighbors')
    assert value == '0'
    assert (entry.file, entry.line, entry.group) == (main, 10, 'server')
    maria = of.read_option_files([main], MARIADB_GROUPS)
    assert value_of(maria, 'innodb_flush_neighbors') == '5'


def test_include_and_includedir(tmp_path):
    confd = tmp_path / 'conf.d'
    write(confd / '60-b.cnf', '[mysqld]\ninnodb_io_capacity=400\n')
    write(confd / '50-a.cnf', '[mysqld]\ninnodb_io_capacity=300\ninnodb_lru_scan_depth=256\n')
    write(confd / '99-ignored.conf', '[mysqld]\ninnodb_io_capacity=999\n')   # only *.cnf
    write(confd / 'README', 'not read\n')
    extra = write(tmp_path / 'extra.cnf', '[mysqld]\ninnodb_lru_scan_depth=512\n')
    main = write(tmp_path / 'my.cnf', '[mysqld]\ninnodb_io_capacity=200\n!includedir %s\n'
                 'innodb_io_capacity_max=2000\n!include %s\n' % (confd, extra))
    result = of.read_option_files([main], MYSQL_GROUPS)
    value, entry = of.lookup(result.entries, 'innodb_io_capacity')
    assert value == '400' and entry.file.endswith('60-b.cnf') and entry.line == 2
    assert value_of(result, 'innodb_lru_scan_depth') == '512'
    # the include directives did not end the [mysqld] group of the including file
    assert value_of(result, 'innodb_io_capacity_max') == '2000'
    read = [os.path.basename(f) for f in result.files_read]
    assert read == ['my.cnf', '50-a.cnf', '60-b.cnf', 'extra.cnf']


def test_later_file_wins_and_missing_top_level_file_is_skipped(tmp_path):
    first = write(tmp_path / 'etc-my.cnf', '[mysqld]\ninnodb_adaptive_hash_index=ON\n')
    second = write(tmp_path / 'etc-mysql-my.cnf', '[mysqld]\nskip-innodb-adaptive-hash-index\n')
    result = of.read_option_files([first, str(tmp_path / 'absent.cnf'), second], MYSQL_GROUPS)
    value, entry = of.lookup(result.entries, 'innodb_adaptive_hash_index')
    assert value == 'OFF' and entry.file == second
    assert result.missing == [str(tmp_path / 'absent.cnf')]
    assert result.errors == []


@pytest.mark.parametrize('text, expected', [
    ('innodb_adaptive_hash_index', 'ON'),
    ('innodb_adaptive_hash_index = off', 'off'),
    ('skip-innodb_adaptive_hash_index', 'OFF'),
    ('disable-innodb-adaptive-hash-index', 'OFF'),
    ('enable-innodb-adaptive-hash-index', 'ON'),
    ('loose-innodb-adaptive-hash-index = 0', '0'),
    ('loose-skip-innodb-adaptive-hash-index', 'OFF'),
    ('maximum-innodb-adaptive-hash-index = 1', None),
    ('innodb_adaptive_hash_index_parts = 4', None),
])
def test_prefixes(tmp_path, text, expected):
    path = write(tmp_path / 'my.cnf', '[mysqld]\n%s\n' % text)
    assert value_of(of.read_option_files([path], MYSQL_GROUPS), 'innodb_adaptive_hash_index') == expected


def test_variable_whose_name_starts_with_skip(tmp_path):
    path = write(tmp_path / 'my.cnf', '[mysqld]\nskip_name_resolve = OFF\nskip-networking\n')
    result = of.read_option_files([path], MYSQL_GROUPS)
    assert value_of(result, 'skip_name_resolve') == 'OFF'
    assert value_of(result, 'skip_networking') == 'ON'


def test_unreadable_file_is_an_error_not_an_exception(tmp_path, monkeypatch):
    path = write(tmp_path / 'secret.cnf', '[mysqld]\nx=1\n')
    real_open = open

    def deny(name, *args, **kwargs):
        if name == path:
            raise PermissionError(13, 'Permission denied', name)
        return real_open(name, *args, **kwargs)

    # As root every file is readable: refuse this one the way the kernel would for another user.
    monkeypatch.setattr(of, 'open', deny, raising=False)
    result = of.read_option_files([path], MYSQL_GROUPS)
    assert result.errors == [dict(file=path, reason='Permission denied')]
    assert result.files_read == []


def test_directory_given_as_file_is_an_error(tmp_path):
    result = of.read_option_files([str(tmp_path)], MYSQL_GROUPS)
    assert result.errors == [dict(file=str(tmp_path), reason='is a directory, not an option file')]


def test_include_loop_and_missing_include(tmp_path):
    a = tmp_path / 'a.cnf'
    b = tmp_path / 'b.cnf'
    write(a, '[mysqld]\ninnodb_io_capacity=100\n!include %s\n!include %s\n' % (b, tmp_path / 'nope.cnf'))
    write(b, '[mysqld]\ninnodb_io_capacity=300\n!include %s\n' % a)
    result = of.read_option_files([str(a)], MYSQL_GROUPS)
    assert value_of(result, 'innodb_io_capacity') == '300'
    reasons = sorted(w['reason'] for w in result.warnings)
    assert reasons == ['include loop: not read again', 'included file does not exist']


def test_bad_line_is_reported_with_its_number(tmp_path):
    path = write(tmp_path / 'my.cnf', '[mysqld]\ninnodb_io_capacity=100\n[broken\n')
    result = of.read_option_files([path], MYSQL_GROUPS)
    assert result.errors == [dict(file=path, line=3, reason='group header without "]"')]
    assert value_of(result, 'innodb_io_capacity') == '100'


def test_group_suffix():
    expected = ('mysqld', 'server', 'mysqld_replica', 'server_replica')
    assert of.group_names(('mysqld', 'server'), '_replica') == expected


def test_parse_command_line():
    argv = ['/opt/mysql/bin/mysqld', '--defaults-file=/srv/db1/my.cnf', '--defaults-group-suffix=_a',
            '--innodb-buffer-pool-size=256M', '--skip-innodb-adaptive-hash-index', '-u', 'root']
    cmd = of.parse_command_line(argv)
    assert cmd.defaults_file == '/srv/db1/my.cnf'
    assert cmd.group_suffix == '_a'
    assert not cmd.no_defaults
    assert of.lookup(cmd.options, 'innodb_buffer_pool_size')[0] == '256M'
    assert of.lookup(cmd.options, 'innodb_adaptive_hash_index')[0] == 'OFF'
    assert of.lookup(cmd.options, 'innodb_buffer_pool_size')[1].file == 'command line'


def test_relative_defaults_file_uses_the_process_cwd():
    cmd = of.parse_command_line(['mysqld', '--defaults-extra-file=extra.cnf'], cwd='/var/lib/mysql')
    assert cmd.defaults_extra_file == '/var/lib/mysql/extra.cnf'


DEFAULTS = ('/etc/my.cnf', '/etc/mysql/my.cnf', '~/.my.cnf')


@pytest.mark.parametrize('argv, files, source', [
    (['mysqld'], ['/etc/my.cnf', '/etc/mysql/my.cnf', '/home/mysql/.my.cnf'], 'default search order'),
    (['mysqld', '--no-defaults'], [], 'none (--no-defaults on the command line)'),
    (['mysqld', '--defaults-file=/srv/my.cnf', '--defaults-extra-file=/srv/x.cnf'], ['/srv/my.cnf'],
     '--defaults-file on the command line'),
    (['mysqld', '--defaults-extra-file=/srv/x.cnf'],
     ['/etc/my.cnf', '/etc/mysql/my.cnf', '/srv/x.cnf', '/home/mysql/.my.cnf'],
     'default search order with --defaults-extra-file'),
])
def test_server_option_files(argv, files, source):
    cmd = of.parse_command_line(argv)
    assert of.server_option_files(cmd, DEFAULTS, home='/home/mysql') == (files, source)


# ---------------------------------------------------------------- lines end at \n only, as mysqld reads them
def test_lines_end_at_a_newline_only_as_the_server_reads_them(tmp_path):
    path = tmp_path / 'my.cnf'
    path.write_bytes('[mysqld]\ninit_file=/a\u2028init_file=/evil\nsql_mode=A\x85[client]\r\n'
                     'port=1\rinit_file=/evil2\n  max_connections = 10 \x0b\nlog_error=/e\x00init_file=/evil3\n'
                     'ft_stopword_file=/s\x1cinit_file=/evil4\n'.encode('utf-8'))
    result = of.read_option_files([str(path)], ['mysqld'])
    assert [(e.name, e.value, e.line) for e in result.entries] == [
        ('init_file', '/a\u2028init_file=/evil', 2), ('sql_mode', 'A\x85[client]', 3),
        ('port', '1\rinit_file=/evil2', 4), ('max_connections', '10', 5),
        ('ft_stopword_file', '/s\x1cinit_file=/evil4', 7)]
    assert result.errors == [dict(file=str(path), line=6, reason=of.NUL_REASON)]


def test_white_space_is_the_servers_not_unicodes():
    # mysqld strips only space, \t, \n, \v, \f and \r; a U+2028 or \x85 at the end of a value stays.
    assert of.parse_line('a = b\u2028') == ('option', ('a', 'b\u2028'))
    assert of.parse_line('\x85a = b') == ('option', ('\x85a', 'b'))
    assert of.parse_line(' \t\v\fa = b \r') == ('option', ('a', 'b'))
    assert of.split_lines('a\r\nb\n\nc') == ['a\r', 'b', '', 'c']


def test_an_escaped_quote_does_not_end_quoted_text():
    # As mysqld's remove_end_comment() and its escapes (side by side with my_print_defaults in
    # tests/integration/local/modules/test_option_file_lines.py).
    assert of.parse_line('password = "a\\"b#c" # note') == ('option', ('password', 'a"b#c'))
    assert of.parse_line("password = 'x\\'y # z'") == ('option', ('password', "x'y # z"))
    assert of.parse_line('password = "p\\\\"#c') == ('option', ('password', 'p\\'))
    assert of.parse_line('password = a\\"b # c') == ('option', ('password', 'a"b # c'))


# ---------------------------------------------------------------- file_now: what a drop-in holds now
def test_file_now_regular_file_checksum_and_mode(tmp_path):
    path = write(tmp_path / 'conf.d' / '60-x.cnf', '[mysqld]\ninnodb_adaptive_hash_index = ON\n')
    os.chmod(path, 0o640)
    # The SHA-1 that Ansible's stat/copy (and the hash('sha1') filter of the text) give for the same bytes.
    assert of.file_now(path) == {'exists': True, 'mode': '0640',
                                 'checksum': hashlib.sha1(b'[mysqld]\ninnodb_adaptive_hash_index = ON\n').hexdigest()}


def test_file_now_absent_file(tmp_path):
    assert of.file_now(str(tmp_path / 'none.cnf')) == {'exists': False}


def test_file_now_cannot_tell_a_link_or_a_directory(tmp_path):
    target = write(tmp_path / 'real.cnf', '[mysqld]\n')
    link = str(tmp_path / 'link.cnf')
    os.symlink(target, link)
    assert of.file_now(link) is None             # the scaffold writes it then, as it always did
    assert of.file_now(str(tmp_path)) is None
