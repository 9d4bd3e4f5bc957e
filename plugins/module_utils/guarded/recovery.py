# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an earlier, interrupted run of a guarded change left on a server, found and undone by the next run: its
marker read (guarded/marker.py), a follower of another run cancelled through its cancel file, a running change of
another run refused, and each change of a run whose process is gone checked before it is undone (its session
killed only while it is still that session, super_read_only back ON only on a server that is still a replica, AHI
back only when nobody SET it since: the marker's verdicts).

InterruptedRun is part of the guarded-change engine (guarded/engine.py: GuardedChange is one), on the engine's state:
its marker, connection, parameters, clock and steps, and its own AHI switch and session kill.
"""

from __future__ import annotations

import os

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import execute, global_variables, query, query_one
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import GuardedError, onoff
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.marker import (
    AHI, MARKER_VERSION, SUPER_READ_ONLY, ahi_verdict, cancel_file_problem, process_alive, read_identity,
    session_verdict, super_read_only_verdict)
from ansible_collections.dbfleet.innodb.plugins.module_utils.host.private_paths import NOFOLLOW

try:
    import pymysql
except ImportError:  # pragma: no cover - reported by the module
    pymysql = None


class InterruptedRun(object):
    """The next run's side of an interrupted guarded change (a mixin of GuardedChange)."""

    def check_interrupted(self):
        """Find what an earlier run on this server left behind; check before acting on it.

        A marker in state 'done' only records what that run did. A 'running' marker whose process is gone
        is an interrupted run: its session is killed when it is still the same session, super_read_only
        goes back ON on a server that is still a replica, AHI back only when nobody changed it since; each
        finding is reported. A running follower of another run is cancelled through its cancel file (its
        own finally puts AHI back); a running change of another run stops this one.
        Returns the marker's data for the client (what the earlier run did), or None."""
        data = self.marker.read()
        if not data:
            return None
        if data.get('state') == 'done':
            return data
        alive = process_alive(data.get('pid'), data.get('pid_start'))
        info = dict(found=data.get('mode'), run_id=data.get('run_id'), pid=data.get('pid'),
                    started=data.get('started'), tables=data.get('tables'), done=sorted(data.get('done') or []),
                    ahi_before=data.get('ahi_before'), process_alive=alive, outcome=None, actions=[], findings=[])
        if alive and self.p.get('run_id') and data.get('run_id') == self.p.get('run_id'):
            self.own_run_alive = True
            return None  # this run's own follower (the readiness probe sees it)
        self.interrupted_run = info
        if alive:
            data = self._cancel_follower(data, info)
            if data is None:
                return None
        return self._undo(data, info)

    def _cancel_follower(self, data, info):
        cancel = data.get('cancel_file')
        if data.get('mode') != 'follow' or not cancel:
            raise GuardedError('another %s run is under way on this server (pid %s, started %s UTC, %s of %s); wait '
                               'for it to end' % (data.get('module') or self.module, data.get('pid'),
                                                  data.get('started'), data.get('mode'),
                                                  ', '.join(data.get('tables') or [])))
        info['actions'].append('cancel the follower of run %s (pid %s) through %s' % (
            data.get('run_id'), data.get('pid'), cancel))
        if self.check_mode:
            info['outcome'] = 'would_cancel'
            self.changed = True
            return None
        problem = cancel_file_problem(cancel)
        if problem:
            raise GuardedError('the marker of an earlier run names a cancel file that is not private: %s' % problem)
        os.close(os.open(cancel, os.O_WRONLY | os.O_CREAT | os.O_APPEND | NOFOLLOW, 0o600))
        deadline = self.clock() + float(self.p.get('restore_timeout') or 60)
        while process_alive(data.get('pid'), data.get('pid_start')) and self.clock() < deadline:
            self.sleep(0.2)
        if process_alive(data.get('pid'), data.get('pid_start')):
            raise GuardedError('the follower of an earlier run (pid %s) did not stop within %ss of its cancel file %s'
                               % (data.get('pid'), self.p.get('restore_timeout'), cancel))
        info['outcome'] = 'cancelled'
        self.changed = True
        data = self.marker.read()
        if not data or data.get('state') == 'done':
            self.refresh_vars()
            return None
        return data

    def read_set_info(self, name, conn=None):
        """When and by whom a global variable was last SET (performance_schema.variables_info), or None."""
        if not capability_facts.capability('variables_info_table', self.identity.flavor, self.identity.version):
            return None
        try:
            row = query_one(conn or self.conn, 'SELECT SET_TIME, SET_USER, SET_HOST FROM '
                                               'performance_schema.variables_info WHERE VARIABLE_NAME = %s', (name,))
        except pymysql.err.MySQLError:
            return None
        if not row:
            return None
        return dict(time=str(row.get('SET_TIME')) if row.get('SET_TIME') is not None else None,
                    user=row.get('SET_USER') or None, host=row.get('SET_HOST') or None)

    def _undo(self, data, info):
        """The process is gone and left its changes: check each one, then undo what is still the run's."""
        ident = read_identity(self.conn)
        server_now = ident['server']
        ahi_now = self.read_ahi()
        sro_now = onoff(global_variables(self.conn, [SUPER_READ_ONLY]).get(SUPER_READ_ONLY))
        role_now = None
        if data.get('super_read_only_lifted'):
            role_now = topology.read_server(self.conn, query, global_variables)['role']
        row = None
        sid = (data.get('session') or {}).get('id')
        if sid is not None:
            row = query_one(self.conn, 'SELECT ID, USER, HOST, TIME FROM information_schema.PROCESSLIST WHERE ID = %s',
                            (sid,))
        kill, kill_finding = session_verdict(data, server_now, row, ident['now'])
        ahi_back, ahi_finding = ahi_verdict(data, server_now, ahi_now, self.read_set_info(AHI))
        sro_back, sro_finding = super_read_only_verdict(data, role_now, sro_now)
        if data.get('version', 1) < MARKER_VERSION:
            info['findings'].append('the marker was written by an older version (no server or session identity): '
                                    'nothing is replayed from it')
            kill = ahi_back = sro_back = False
        for finding in (kill_finding, ahi_finding, sro_finding):
            if finding:
                info['findings'].append(finding)
        if kill:
            info['actions'].append('KILL %s (the interrupted run\'s session)' % sid)
        if ahi_back:
            info['actions'].append('SET GLOBAL innodb_adaptive_hash_index = %s (the interrupted run found it %s, '
                                   'it is %s)' % (data['ahi_before'], data['ahi_before'], ahi_now))
        if sro_back:
            info['actions'].append('SET GLOBAL super_read_only = ON (the interrupted run lifted it)')
        if self.check_mode:
            info['outcome'] = info['outcome'] or 'would_undo'
            if ahi_back or sro_back or kill:
                self.changed = True
            self.plan.extend(info['actions'])
            return data
        if kill:
            self.kill_session(self.conn, sid)
        if ahi_back:
            self.set_ahi(data['ahi_before'])
            self.changed = True
        if sro_back:
            execute(self.conn, 'SET GLOBAL super_read_only = ON')
            self.changed = True
        info['outcome'] = 'undone' if (kill or ahi_back or sro_back or not info['findings']) else 'left'
        self.marker.write(dict(data, state='done', undone_by=self.p.get('run_id'), undone_pid=os.getpid(),
                               findings=info['findings']))
        self.refresh_vars()
        return data
