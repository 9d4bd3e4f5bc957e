# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One line rule for option files, side by side with the real servers.

The same file, holding every character some reader takes for a line break inside its lines, is read by the
collection's reader (plugins/module_utils/host/optionfiles.py) and by each lab server's own my_print_defaults
(MySQL 8.0, MySQL 9.7, MariaDB 10.11, MariaDB 11.8: the binary next to the server's, inside its chroot where
it runs in one). Both must see the same options with the same values, in the same order.
"""
from __future__ import annotations

import os
import re
import subprocess

import pytest
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import option_writer
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles

HOSTS = ('mysql80', 'mysql97', 'mariadb1011', 'mariadb118')

# Every line but the header and the last carries a character str.splitlines() would break at, followed by
# what would be a line of its own for such a reader: an option, a group header, a directive.
LINES = [
    '[mysqld]',
    'init_file=/tmp/a\u2028init_file=/tmp/evil1',
    'sql_mode=ANSI\x85[client]',
    'ft_stopword_file=/tmp/s\rinit_file=/tmp/evil2',
    'log_error=/tmp/e\x0binit_file=/tmp/evil3',
    'general_log_file=/tmp/g\x0c!include /tmp/evil.cnf',
    'slow_query_log_file=/tmp/q\x1cinit_file=/tmp/evil4',
    'tmpdir=/tmp/t\x1dinit_file=/tmp/evil5',
    'secure_file_priv=/tmp/p\x1einit_file=/tmp/evil6',
    'plugin_dir=/tmp/d\u2029init_file=/tmp/evil7',
    'max_connections = 10 \r',
    'port=3399',
]


def print_defaults_command(row, directory):
    """my_print_defaults of the host's server: beside its mysqld, or the chroot's /usr/bin/my_print_defaults
    with directory mounted at its own path inside the chroot (lab/dbfleet_lab/chroots.py wrap())."""
    from dbfleet_lab import chroots  # pylint: disable=import-outside-toplevel
    command = list(row['server_command'])
    if len(command) > 1:                      # unshare ... exec chroot '<root>' "$@" <binary>
        root = re.search(r"exec chroot '([^']+)'", ' '.join(command)).group(1)
        return chroots.wrap(root, [directory], ['/usr/bin/my_print_defaults'])
    beside = os.path.join(os.path.dirname(command[0]), 'my_print_defaults')
    return [beside if os.path.exists(beside) else '/usr/bin/my_print_defaults']   # Debian: mariadbd in /usr/sbin


def server_view(lab, host, path):
    row = lab.hosts.get(host)
    assert row and row['state'] == 'up', '%s is not up: start the lab with `python lab/lab.py up`' % host
    proc = subprocess.run(print_defaults_command(row, os.path.dirname(path)) + ['--defaults-file=%s' % path, 'mysqld'], capture_output=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, (host, proc.stderr.decode('utf-8', 'replace'))
    options = []
    for line in proc.stdout.decode('utf-8').split('\n'):
        if line:
            assert line.startswith('--'), (host, line)
            name, _sep, value = line[2:].partition('=')
            options.append((optionfiles.normalize_name(name), value))
    return options


def side_by_side(lab, host, name, lines):
    """The [mysqld] options of a file of lines as the host's my_print_defaults prints them, asserted equal to what
    the collection's reader gives. The file is written in the host's own directory: the one its server (and its
    chroot) sees at the same path."""
    path = os.path.join(os.path.dirname(lab.hosts[host]['option_file']), name)
    with open(path, 'wb') as handle:
        handle.write('\n'.join(lines).encode('utf-8') + b'\n')
    try:
        server = server_view(lab, host, path)
        ours = [(e.name, e.value) for e in optionfiles.read_option_files([path], ['mysqld']).entries]
    finally:
        os.unlink(path)
    assert ours == server, '%s:\nserver: %r\nours:   %r' % (host, server, ours)
    return server


@pytest.mark.parametrize('host', HOSTS)
def test_the_reader_splits_lines_as_the_server_does(lab, host):
    server = side_by_side(lab, host, 'option-file-lines.cnf', LINES)
    # Twelve options, none of the would-be lines among them: no evil file, no [client] group, no include.
    assert len(server) == 11 and not any(name == 'init_file' and 'evil' not in value for name, value in server[1:])
    assert ('port', '3399') in server and ('max_connections', '10') in server


def test_the_writer_refuses_what_the_reader_would_take_for_one_line_and_a_splitlines_reader_for_two():
    for line in LINES[1:-3]:
        name, _sep, value = line.partition('=')
        with pytest.raises(desired.InputError):
            option_writer.option_file([(name, value)])


def test_a_nul_in_a_line_is_read_differently_by_mysql_and_mariadb_and_is_an_error_for_the_reader(lab):
    views = {}
    for host in ('mysql80', 'mariadb1011'):
        path = os.path.join(os.path.dirname(lab.hosts[host]['option_file']), 'option-file-nul.cnf')
        with open(path, 'wb') as handle:
            handle.write(b'[mysqld]\nlog_error=/tmp/n\0init_file=/tmp/evil\nport=3399\n')
        try:
            views[host] = server_view(lab, host, path)
            result = optionfiles.read_option_files([path], ['mysqld'])
        finally:
            os.unlink(path)
        assert result.errors == [dict(file=path, line=2, reason=optionfiles.NUL_REASON)]
        assert [(e.name, e.value) for e in result.entries] == [('port', '3399')]
    assert views == {'mysql80': [('log_error', '/tmp/nport=3399')],
                     'mariadb1011': [('log_error', '/tmp/n'), ('port', '3399')]}


# Quotes and escapes where a comment may start: inside quotes an escaped quote does not end the value, an escaped
# backslash does; outside quotes a backslash escapes nothing of the kind.
QUOTE_LINES = [
    '[mysqld]',
    'init_connect = "a\\"b#c" # a comment',
    "sql_mode = 'x\\'y # z'",
    'ft_stopword_file = "p\\\\"#comment',
    'log_error = a\\"b # c',
    'general_log_file = "q\'r" # s',
    'port=3399',
]


@pytest.mark.parametrize('host', HOSTS)
def test_the_reader_ends_quoted_values_as_the_server_does(lab, host):
    server = side_by_side(lab, host, 'option-file-quotes.cnf', QUOTE_LINES)
    assert ('init_connect', 'a"b#c') in server, server         # the escaped quote did not end the value
