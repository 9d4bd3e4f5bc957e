# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/process.py: finding the server process, with a fake /proc tree."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.host.process import is_local_address, local_process
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.host.proc_trees import SOCKET, fake_proc


def test_local_process_from_pid_file(tmp_path):
    proc, variables = fake_proc(tmp_path, 4242, ['/usr/sbin/mysqld', '--defaults-file=/srv/db/my.cnf'], uid=0)
    process, reason = local_process(variables, SOCKET, proc)
    assert reason == ''
    assert process['pid'] == 4242 and process['uid'] == 0 and process['home'] == '/root'
    assert process['argv'] == ['/usr/sbin/mysqld', '--defaults-file=/srv/db/my.cnf']


def test_a_pid_file_pointing_at_another_program_is_refused(tmp_path):
    proc, variables = fake_proc(tmp_path, 4243, ['/usr/bin/python3', 'x.py'])
    process, reason = local_process(variables, SOCKET, proc)
    assert process is None and 'is not a server' in reason


def test_unreadable_pid_file(tmp_path):
    process, reason = local_process({'pid_file': str(tmp_path / 'nope.pid')}, SOCKET, str(tmp_path))
    assert process is None and 'cannot read pid file' in reason


def test_remote_server_is_not_looked_for_locally(tmp_path):
    proc, variables = fake_proc(tmp_path, 4244, ['/usr/sbin/mysqld'])
    process, reason = local_process(variables, {'login_host': '192.0.2.10'}, proc)
    assert process is None and 'not on this host' in reason


@pytest.mark.parametrize('host, local', [('localhost', True), ('127.0.0.1', True), (None, True),
                                         ('192.0.2.10', False), ('no-such-host.invalid', False)])
def test_is_local_address(host, local):
    assert is_local_address(host) is local
