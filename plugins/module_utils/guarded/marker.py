# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-server marker of a guarded change and the checks a next run makes before it acts on one.

A marker (Marker) is a file in a private state directory on the host that records a guarded part under way,
with the server's identity (server_uuid, start time: read_identity) and the session's (connection id, user,
client address, start), and the process that wrote it (process_start, process_alive). The next run on that
server checks before it acts (session_verdict, super_read_only_verdict, ahi_verdict): it KILLs only a session
that is still the same, puts super_read_only back only on a server that is still a replica, and AHI only when
nobody changed it since. A follower's cancel file must be private too (cancel_file_problem). The engine that
writes and reads markers: guarded/engine.py."""

from __future__ import annotations

import hashlib
import json
import os

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import global_variables, query_one
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import GuardedError
from ansible_collections.dbfleet.innodb.plugins.module_utils.host.private_paths import open_private_file, private_dir_problem

try:
    import pymysql
except ImportError:  # pragma: no cover - reported by the module
    pymysql = None


MARKER_VERSION = 2
# The global settings a guarded part may switch: its marker records them, the next run checks them.
AHI = 'innodb_adaptive_hash_index'
SUPER_READ_ONLY = 'super_read_only'
# Seconds two readings of a server's start time (NOW() - Uptime) may differ and still be one start (both are whole
# seconds; a restart moves it by the server's whole previous uptime).
START_TOLERANCE = 10


def cancel_file_problem(path, euid=None):
    """A cancel file must live in a private directory (not a predictable name in /tmp)."""
    if not path:
        return None
    problem = private_dir_problem(os.path.dirname(os.path.abspath(path)) or '/', euid)
    if problem:
        return ('cancel_file %s: %s; give a file in a private directory (the playbook makes one per run '
                'with ansible.builtin.tempfile)' % (path, problem))
    return None


def process_start(pid):
    """Start time of a process in clock ticks since boot (None when it does not exist)."""
    try:
        with open('/proc/%d/stat' % int(pid)) as handle:
            return int(handle.read().rsplit(')', 1)[1].split()[19])
    except (OSError, IndexError, ValueError, TypeError):
        return None


def process_alive(pid, start=None):
    """Whether the process that wrote a marker still runs (same pid and start time)."""
    if not pid:
        return False
    now = process_start(pid)
    if now is None:
        return False
    return start is None or now == start


def marker_key(variables):
    """The marker's key for one server: its server_uuid (MySQL, Percona); MariaDB has none, so there
    hostname, port, datadir and server_id. Two servers seen from one runner never share a key as long
    as their server_uuid (or that quadruple) differs."""
    uuid = variables.get('server_uuid')
    if uuid:
        text = 'uuid|%s' % uuid
    else:
        text = 'host|%s|%s|%s|%s' % (variables.get('hostname'), variables.get('port'), variables.get('datadir'),
                                     variables.get('server_id'))
    return hashlib.sha1(text.encode('utf-8')).hexdigest()[:16]


# Uptime and the server's clock in one statement, so the start time (UNIX_TIMESTAMP() - Uptime) does not move with
# the time between two statements on a loaded server: performance_schema.global_status (MySQL 5.7+),
# information_schema.GLOBAL_STATUS (MariaDB; MySQL 5.6); SHOW GLOBAL STATUS where neither answers.
UPTIME_SOURCES = ('performance_schema.global_status', 'information_schema.GLOBAL_STATUS')


def _clock_and_uptime(conn):
    for source in UPTIME_SOURCES:
        try:
            row = query_one(conn, 'SELECT CONNECTION_ID() AS id, UNIX_TIMESTAMP() AS now, (SELECT VARIABLE_VALUE FROM %s '
                                  "WHERE VARIABLE_NAME = 'Uptime') AS uptime" % source)
        except pymysql.err.MySQLError:
            continue
        if row and row.get('uptime') is not None:
            return row
    row = query_one(conn, 'SELECT CONNECTION_ID() AS id, UNIX_TIMESTAMP() AS now') or {}
    uptime = query_one(conn, "SHOW GLOBAL STATUS LIKE 'Uptime'") or {}
    return dict(row, uptime=uptime.get('Value'))


def read_identity(conn):
    """The server's and this session's identity, as a marker records them.

    server: uuid (None on MariaDB), hostname, port, datadir, server_id, started (UNIX time of NOW() - Uptime);
    session: id (CONNECTION_ID()), user, host (client address as PROCESSLIST shows it), started (UNIX time)."""
    row = _clock_and_uptime(conn) or {}
    variables = global_variables(conn, ['server_uuid', 'hostname', 'port', 'datadir', 'server_id'])
    me = query_one(conn, 'SELECT USER, HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()') or {}
    now = int(float(row.get('now') or 0))
    up = int(float(row.get('uptime') or 0))
    server = dict(uuid=variables.get('server_uuid') or None, hostname=variables.get('hostname'),
                  port=variables.get('port'), datadir=variables.get('datadir'),
                  server_id=variables.get('server_id'), started=now - up if now else None)
    session = dict(id=int(row['id']) if row.get('id') is not None else None, user=me.get('USER'),
                   host=me.get('HOST'), started=now or None)
    return dict(server=server, session=session, now=now)


def same_server_start(recorded, now):
    """Whether two identities are one run of one server: same server_uuid, start time within tolerance."""
    if not recorded or not now:
        return False
    if recorded.get('uuid') != now.get('uuid'):
        return False
    a, b = recorded.get('started'), now.get('started')
    if a is None or b is None:
        return False
    return abs(int(a) - int(b)) <= START_TOLERANCE


def session_verdict(marker, server_now, row, now):
    """(kill, finding) for the session a marker names. KILL only a session that is still the same:
    the same server run (uuid and start time: ids start again at 1 after a restart), the same id, the same
    user and client address, and not in its current state for longer than that session has existed.

    marker: the marker's dict (server, session); server_now: read_identity()['server']; row: the
    PROCESSLIST row (ID, USER, HOST, TIME) of that id now, or None; now: the server's UNIX time now."""
    session = marker.get('session') or {}
    sid = session.get('id')
    if sid is None:
        return False, 'the marker names no session'
    if not same_server_start(marker.get('server'), server_now):
        return False, ('session %s not killed: the server was restarted (or is another one) since the marker was '
                       'written, so id %s names another session now' % (sid, sid))
    if row is None:
        return False, 'session %s is gone' % sid
    found = '%s@%s' % (row.get('USER'), row.get('HOST'))
    if row.get('USER') != session.get('user') or row.get('HOST') != session.get('host'):
        return False, ('session %s not killed: id %s is %s now, the marker\'s session was %s@%s'
                       % (sid, sid, found, session.get('user'), session.get('host')))
    started = session.get('started')
    age = None if started is None or now is None else int(now) - int(started)
    if age is not None and row.get('TIME') is not None and int(row['TIME']) > age + START_TOLERANCE:
        return False, ('session %s not killed: %s has been in its state for %ss, longer than the marker\'s session '
                       'existed (%ss)' % (sid, found, row['TIME'], age))
    return True, 'session %s (%s) is the interrupted run\'s: killed' % (sid, found)


def super_read_only_verdict(marker, role_now, sro_now):
    """(restore, finding): super_read_only goes back ON only on a server that is still a replica."""
    if not marker.get('super_read_only_lifted'):
        return False, None
    if sro_now == 'ON':
        return False, 'super_read_only is ON already'
    if role_now != topology.REPLICA:
        return False, ('super_read_only left OFF: the interrupted run lifted it on a replica, and this server is '
                       'a %s now (promoted since?)' % role_now)
    return True, 'super_read_only back ON (the interrupted run lifted it; the server is still a replica)'


def ahi_verdict(marker, server_now, ahi_now, set_info_now):
    """(restore, finding): AHI goes back to what the interrupted run found only when nobody changed it since:
    the same server run (a restart reads it from the configuration again), its value still what the run
    set, and (where the server records it, performance_schema.variables_info) the same SET time and user."""
    if not marker.get('ahi_toggled'):
        return False, None
    before, set_to = marker.get('ahi_before'), marker.get('ahi_set')
    if before is None or ahi_now == before:
        return False, None if ahi_now == before else 'the interrupted run recorded no AHI value'
    if not same_server_start(marker.get('server'), server_now):
        return False, ('AHI left %s: the server was restarted since the interrupted run switched it %s, so the '
                       'value is the configured one' % (ahi_now, set_to))
    if ahi_now != set_to:
        return False, 'AHI left %s: the interrupted run set %s, someone changed it since' % (ahi_now, set_to)
    recorded = marker.get('ahi_set_info')
    if recorded and set_info_now and recorded != set_info_now:
        return False, ('AHI left %s: it was SET again since the interrupted run (at %s by %s)'
                       % (ahi_now, set_info_now.get('time'), set_info_now.get('user')))
    return True, 'AHI back %s (the interrupted run found it %s and set %s)' % (before, before, set_to)


class Marker(object):
    """The per-server marker file: JSON, written atomically, in a private directory (0700)."""

    def __init__(self, state_dir, key, prefix='server'):
        self.dir = os.path.expanduser(state_dir)
        self.key = key
        self.path = os.path.join(self.dir, '%s-%s.json' % (prefix, key))

    def read(self):
        """The marker's data, or None when there is none. The state directory is checked first (a marker in a
        directory others can write to could be anyone's: GuardedError naming it); the marker is opened without
        following a symbolic link."""
        if not os.path.lexists(self.dir):
            return None
        self.check_dir()
        try:
            fd = open_private_file(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise GuardedError('state_dir: the marker %s cannot be used (%s)' % (self.path, e.strerror or e))
        try:
            with os.fdopen(fd) as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def check_dir(self):
        problem = private_dir_problem(self.dir)
        if problem:
            raise GuardedError('state_dir: %s' % problem)

    def ensure_dir(self):
        if not os.path.lexists(self.dir):
            os.makedirs(self.dir, 0o700)
        self.check_dir()

    def write(self, data):
        self.ensure_dir()
        tmp = '%s.%d.tmp' % (self.path, os.getpid())
        try:
            os.unlink(tmp)          # a leftover of a process that had this pid
        except FileNotFoundError:
            pass
        fd = open_private_file(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        with os.fdopen(fd, 'w') as handle:
            json.dump(data, handle, sort_keys=True)
        os.rename(tmp, self.path)

    def remove(self):
        try:
            os.unlink(self.path)
        except OSError:
            pass
