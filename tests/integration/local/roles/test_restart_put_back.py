# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A restart by command (the lab's dbfleet_restart_method) that the server refuses leaves no server down on the
configuration the run wrote (module command_restart, from the restart role).

On MySQL 8.0.33 and MariaDB 10.11, one run each of the settings role with settings_restart: allowed and a value the
role's checks accept and the server refuses at start (innodb_temp_data_file_path = ibtmp1:12M:bogus: InnoDB cannot
parse it) over a drop-in the server runs with: the role writes its drop-in (keeping the old one beside it), the restart
fails, the run stops naming the setting, its file:line and the server's words, says the drop-in was put back and the
server is up again; afterwards the server runs in a new process with its old value and the drop-in directory is as it
was, byte for byte, with no backup left. One failing restart per flavor."""

from __future__ import annotations

import os
import re

import pytest

from dbfleet_testing.settings_role import DROPIN, play
from dbfleet_testing.servers import global_value, host_vars, sql

BAD = 'ibtmp1:12M:bogus'
# The drop-in the server starts with before the run: the value every lab server runs (its default).
BEFORE = '# written by tests/integration/local/roles/test_restart_put_back.py\n[mysqld]\n' \
         'innodb_temp_data_file_path = ibtmp1:12M:autoextend\n'


def server_pid(host):
    path = sql(host, 'SELECT @@GLOBAL.pid_file AS f')[0]['f']
    if not os.path.isabs(path):
        path = os.path.join(sql(host, 'SELECT @@GLOBAL.datadir AS d')[0]['d'], path)
    with open(path, encoding='utf-8') as handle:
        return int(handle.read().split()[0])


def directory(path):
    """name -> content of every file in a drop-in directory."""
    found = {}
    for name in sorted(os.listdir(path)):
        with open(os.path.join(path, name), encoding='utf-8') as handle:
            found[name] = handle.read()
    return found


@pytest.mark.parametrize('host', ['mysql80', 'mariadb1011'])
def test_a_setting_the_server_refuses_at_start_is_put_back_and_the_server_runs_again(tmp_path, host):
    dropin_dir = host_vars(host)['dbfleet_option_dropin_dir']
    path = os.path.join(dropin_dir, DROPIN)
    found = directory(dropin_dir)
    assert global_value(host, 'innodb_temp_data_file_path') == 'ibtmp1:12M:autoextend', host
    with open(path, 'w', encoding='utf-8') as handle:
        handle.write(BEFORE)
    before = directory(dropin_dir)
    pid = server_pid(host)
    try:
        rc, out, dummy = play(tmp_path, dict(settings_values=dict(innodb_temp_data_file_path=BAD),
                                             settings_restart='allowed'), hosts=[host])
        text = ' '.join(out.split())
        assert rc != 0, out
        # (MariaDB says "InnoDB: Unable to parse ...")
        refused = re.search(r'%s: the server did not start \(the restart command exited 1: .*?\): %s:(\d+) '
                            r'\(innodb_temp_data_file_path = %s\): (InnoDB: )?Unable to parse '
                            r'innodb_temp_data_file_path=%s\. ' % (host, re.escape(path), re.escape(BAD), re.escape(BAD)),
                            text)
        assert refused and int(refused.group(1)) > 2, out
        assert ('Put back: restored %s. Started again: yes, the server answers again, up ' % path) in text, out
        assert 'The run stopped at %s; not restarted: none.' % host in text, out
        # The server runs again, in a new process, on the drop-in it ran with: as it was, no backup left beside it.
        assert server_pid(host) != pid, host
        assert global_value(host, 'innodb_temp_data_file_path') == 'ibtmp1:12M:autoextend', host
        assert directory(dropin_dir) == before, host
    finally:
        if DROPIN in found:
            with open(path, 'w', encoding='utf-8') as handle:
                handle.write(found[DROPIN])
        elif os.path.exists(path):
            os.remove(path)
