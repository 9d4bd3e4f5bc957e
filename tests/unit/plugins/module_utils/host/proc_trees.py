# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fake /proc tree of one server process, for the tests of host/process.py and server_facts.py."""

from __future__ import annotations

import os

# A login through the local socket: the server is on this host.
SOCKET = {'login_unix_socket': '/run/mysqld/mysqld.sock'}


def fake_proc(tmp_path, pid, argv, uid=0, home='/root', program='mysqld'):
    base = tmp_path / 'proc' / str(pid)
    base.mkdir(parents=True)
    (base / 'cmdline').write_bytes(('\0'.join(argv) + '\0').encode())
    (base / 'status').write_text('Name:\t%s\nUid:\t%d\t%d\t%d\t%d\n' % (program, uid, uid, uid, uid))
    (base / 'environ').write_bytes(('PATH=/usr/bin\0HOME=%s\0' % home).encode())
    os.symlink(str(tmp_path), str(base / 'cwd'))
    pid_file = tmp_path / 'mysqld.pid'
    pid_file.write_text('%d\n' % pid)
    return str(tmp_path / 'proc'), dict(pid_file=str(pid_file), datadir=str(tmp_path))
