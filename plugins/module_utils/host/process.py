# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The running server's process on this host: found from its pid file, proven a server program by its command line,
with its working directory, user and home (local_process())."""

from __future__ import annotations

import os
import pwd
import socket

# The programs a server runs as (login/loopback.py names the same for a server unit's main process).
SERVER_PROGRAMS = ('mysqld', 'mariadbd', 'mysqld-debug', 'mariadbd-debug')


def is_local_address(host):
    """True when host names an address of this machine (or its network namespace)."""
    if not host or host == 'localhost':
        return True
    try:
        infos = socket.getaddrinfo(host, None, 0, socket.SOCK_STREAM)
    except (socket.error, UnicodeError):
        return False
    for family, _stype, _proto, _canon, sockaddr in infos:
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except socket.error:
            continue
        try:
            sock.bind((sockaddr[0], 0))
            return True
        except socket.error:
            continue
        finally:
            sock.close()
    return False


def _read_text(path):
    with open(path, 'rb') as handle:
        return handle.read().decode('utf-8', 'replace')


def local_process(variables, login_params=None, proc_root='/proc'):
    """The running server's process on this host: dict(pid, argv, cwd, uid, user, home) or
    (None, reason) when it cannot be found here. Returns (process or None, reason).

    proc_root None: the server is audited from elsewhere over SQL (the controller): nothing on this
    machine's filesystem is read as the server's."""
    if proc_root is None:
        return None, 'audited over SQL from the controller, which reads no file of the host'
    params = login_params or {}
    if not params.get('login_unix_socket') and not is_local_address(params.get('login_host')):
        return None, 'the server (%s) is not on this host' % params.get('login_host')
    pid_file = variables.get('pid_file')
    if not pid_file:
        return None, 'the server reports no pid_file'
    if not os.path.isabs(pid_file) and variables.get('datadir'):
        pid_file = os.path.join(variables['datadir'], pid_file)
    try:
        pid = int(_read_text(pid_file).strip().split()[0])
    except (IOError, OSError) as e:
        return None, 'cannot read pid file %s: %s' % (pid_file, e.strerror or e)
    except (ValueError, IndexError):
        return None, 'pid file %s holds no process id' % pid_file
    base = os.path.join(proc_root, str(pid))
    try:
        argv = _read_text(os.path.join(base, 'cmdline')).split('\0')
    except (IOError, OSError) as e:
        return None, 'cannot read %s/cmdline: %s' % (base, e.strerror or e)
    while argv and argv[-1] == '':
        argv.pop()
    if not argv or os.path.basename(argv[0]) not in SERVER_PROGRAMS:
        return None, ('process %d from pid file %s is not a server (%s)'
                      % (pid, pid_file, argv[0] if argv else 'no command line'))
    process = dict(pid=pid, pid_file=pid_file, argv=argv, cwd=None, uid=None, user=None, home=None)
    try:
        process['cwd'] = os.readlink(os.path.join(base, 'cwd'))
    except (IOError, OSError):
        process['cwd'] = variables.get('datadir')
    try:
        for line in _read_text(os.path.join(base, 'status')).splitlines():
            if line.startswith('Uid:'):
                process['uid'] = int(line.split()[2])  # effective uid
                break
    except (IOError, OSError, ValueError, IndexError):
        pass
    if process['uid'] is not None:
        try:
            entry = pwd.getpwuid(process['uid'])
            process['user'] = entry.pw_name
            process['home'] = entry.pw_dir
        except KeyError:
            pass
    try:
        for item in _read_text(os.path.join(base, 'environ')).split('\0'):
            if item.startswith('HOME='):
                process['home'] = item[5:]
                break
    except (IOError, OSError):
        pass
    return process, ''
