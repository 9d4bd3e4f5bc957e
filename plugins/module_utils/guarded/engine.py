# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guarded-change engine: what every change that must not hurt a busy server shares.

Its clients are the guarded drop (drop_tables.py) and the guarded conversion (convert_tables.py); each
says what it changes, the engine says how a change is guarded:

- **input rules** (guarded/inputs.py): table names as plain identifiers outside the system schemas,
  quoting, the numeric ranges and the off-peak window gate of the modules' pure checks, all before any
  connection;
- **the window again** before each table and each retry (GuardedChange.window_closed);
- **metadata locks**: who holds one on a table, from the source the flavor offers (find_blockers; the sources and
  their listing are guarded/locks.py);
- **bounded lock waits**: each statement with a short session lock_wait_timeout and a bounded number of
  retries on a lock wait timeout or deadlock (run_statement);
- **signals**: SIGTERM/SIGINT/SIGHUP raise Interrupted (not an Exception), so finally blocks run;
  while restoring, a second signal is ignored;
- **settings put back**: AHI and super_read_only back to what the run found, from a fresh connection
  when the run's own is gone, killing the interrupted session first (restore);
- **the per-server marker** (guarded/marker.py): a file in a private state directory on the host that records
  a guarded part under way, with the server's identity and the session's; the next run on that server checks
  before it acts (session_verdict, super_read_only_verdict, ahi_verdict) and undoes only what is still the
  interrupted run's (check_interrupted: guarded/recovery.py, InterruptedRun, of which GuardedChange is one);
- **followers**: a replica-side run of another controller's change is cancelled through its cancel file;
- **scope** (guarded/scope.py): where global settings are switched (ServerScope, or a cluster's ClusterScope,
  chosen in scope_for()).

The playbooks' checks over several hosts are guarded/hosts.py; what both modules share, guarded/module.py.
What a client brings: its state directory (default_state_dir), its marker prefix, and what it changes (the
drop's AHI toggle and super_read_only lift are drop_tables.py's).
"""

from __future__ import annotations

import os
import time

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.connection import ConnectError, open_connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.tls import unverified_warning
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import (
    error_text, execute, global_variables, query, query_one)
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import GuardedError, human_size, now_stamp, onoff
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.locks import lock_holders
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.marker import (
    AHI, MARKER_VERSION, SUPER_READ_ONLY, Marker, marker_key, process_start, read_identity)
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.recovery import InterruptedRun
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.scope import SCOPE_VARIABLES, ServerScope, scope_for
from ansible_collections.dbfleet.innodb.plugins.module_utils.offpeak import status as window_status
from ansible_collections.dbfleet.innodb.plugins.module_utils.signals import Interrupted, Interruptible

try:
    import pymysql
except ImportError:  # pragma: no cover - reported by the module
    pymysql = None


# Errors worth another attempt: the lock wait ran out (MDL or row lock) or a deadlock.
RETRYABLE_ERRORS = frozenset((1205, 1213))
SIGNALS = ('SIGTERM', 'SIGINT', 'SIGHUP')


# ---------------------------------------------------------------- the engine
class GuardedChange(InterruptedRun):
    """One guarded change on one server. Clients (the drop, the conversion) fill tables, plan and report
    and call the engine for everything guarded. Collects steps as it goes."""

    module = 'dbfleet.innodb'
    marker_prefix = 'server'
    default_state_dir = None  # each client's own (drop_tables.DEFAULT_STATE_DIR, convert_tables.DEFAULT_STATE_DIR)

    def __init__(self, params, check_mode=False, warn=None, connect=None, sleep=time.sleep,
                 clock=time.monotonic):
        self.p = params
        self.check_mode = check_mode
        self.warn = warn or (lambda msg: None)
        self._connect = connect or open_connection
        self.sleep = sleep
        self.clock = clock
        self.conn = None
        self.identity = None
        self.ident = None
        self.server_vars = {}
        self.scope = ServerScope()
        self.changed = False
        self.steps = []
        self.plan = []
        self.tables = []
        self.blockers = []
        self.ahi = dict(requested=params.get('ahi_strategy') or 'auto', strategy=None, before=None,
                        after=None, toggled=False, reason=None, off_seconds=None)
        self.super_read_only = None
        self.window = None
        self.interrupted_run = None
        self.marker = None
        self.marker_data = None
        self.now = None  # the window check's clock (ISO text or datetime); None: the real time
        self.replica_hosts = None
        self._signals = None  # the signals.Interruptible of the guarded part, while it runs
        self._ahi_off_at = None  # when the client switched AHI off (restore reports for how long)
        self.own_run_alive = False  # this run's own follower runs on this server (check_interrupted)

    # ------------------------------------------------------------ helpers
    def step(self, name, started, ok=True, detail=None, target=None):
        rec = dict(step=name, seconds=round(self.clock() - started, 4), ok=ok)
        if target:
            rec['target'] = target
        if detail:
            rec['detail'] = detail
        self.steps.append(rec)
        return rec

    def open(self):
        warning = unverified_warning(self.p)
        if warning:
            self.warn(warning)
        try:
            self.conn = self._connect(self.p)
        except ConnectError as e:
            raise GuardedError(str(e))
        rows = global_variables(self.conn, list(server_identity.DETECT_VARIABLES) + [
            AHI, SUPER_READ_ONLY, 'log_bin', 'hostname', 'port', 'datadir', 'server_uuid', 'server_id'] + list(SCOPE_VARIABLES))
        self.identity = server_identity.identity_from_variables(rows)
        self.server_vars = rows
        self.scope = scope_for(self.identity, rows)
        for sql in self.scope.session_sql:
            execute(self.conn, sql)
        self.ident = read_identity(self.conn)
        if self.marker is None:
            self.marker = Marker(self.p.get('state_dir') or self.default_state_dir, marker_key(rows), self.marker_prefix)
        if flavors.variable_facts('information_schema_stats_expiry', self.identity.flavor, self.identity.version):
            # sizes from information_schema.TABLES are cached for a day otherwise
            execute(self.conn, 'SET SESSION information_schema_stats_expiry = 0')
        return self.conn

    def connect_and_identify(self):
        started = self.clock()
        self.open()
        self.step('connect and identify', started, detail='%s %s' % (
            self.identity.flavor, flavors.format_version(self.identity.version)))

    def report(self):
        """What every client reports; the client adds its own keys."""
        return dict(changed=self.changed, tables=self.tables, steps=self.steps, plan=self.plan,
                    blockers=self.blockers, window=self.window, interrupted_run=self.interrupted_run,
                    replica_hosts=self.replica_hosts,
                    server=self.identity.to_dict() if self.identity else None)

    def refresh_vars(self):
        self.server_vars.update(global_variables(self.conn, [AHI, SUPER_READ_ONLY]))

    # ------------------------------------------------------------ the window, again before each table and retry
    def window_closed(self):
        """None while the window is open (or none was given, or it is forced); else the message."""
        window = self.p.get('window')
        if not window or self.p.get('force_window'):
            return None
        st = window_status(window, self.p.get('timezone') or 'UTC', self.now)
        self.window = st
        return None if st['inside'] else st['message']

    # ------------------------------------------------------------ the marker of this run
    def new_marker(self, mode, tables):
        """The marker of this run's guarded part (not written yet)."""
        self.marker_data = dict(
            version=MARKER_VERSION, state='running', mode=mode, module=self.module, run_id=self.p.get('run_id'),
            pid=os.getpid(), pid_start=process_start(os.getpid()), server=(self.ident or {}).get('server'),
            session=(self.ident or {}).get('session'), connection_id=((self.ident or {}).get('session') or {}).get('id'),
            started=now_stamp(), ahi_before=self.ahi['before'],
            ahi_toggled=False, ahi_set=None, ahi_set_info=None,
            super_read_only_before=(self.super_read_only or {}).get('before'), super_read_only_lifted=False,
            tables=tables, done=[], cancel_file=self.p.get('cancel_file'))
        return self.marker_data

    def save_marker(self, **changes):
        self.marker_data.update(changes)
        self.marker.write(self.marker_data)

    def finish_marker(self):
        """After the restore: the marker records what was done (state done), unless AHI could not be put
        back, in which case it stays 'running' for the next run to finish the restore."""
        if self.marker_data is None:
            return
        if self.ahi['toggled'] and self.ahi['after'] != self.ahi['before']:
            return
        self.save_marker(state='done', finished=now_stamp())

    # ------------------------------------------------------------ read-only facts
    def read_replica_hosts(self):
        """The replicas registered with this server (server_id, host, port), for the playbook to compare
        with its hosts: a replica of a host that changes must be in the run. None when it cannot be read."""
        statement = capability_facts.capability('replica_hosts_statement', self.identity.flavor, self.identity.version)
        try:
            rows = query(self.conn, statement)
        except pymysql.err.MySQLError as e:
            self.warn('%s failed (%s): the replicas of this server cannot be listed' % (statement, error_text(e)))
            return None
        self.replica_hosts = [dict(server_id=int(r.get('Server_id') or r.get('Server_Id') or 0),
                                   host=r.get('Host') or None, port=int(r.get('Port') or 0) or None,
                                   uuid=r.get('Replica_UUID') or r.get('Slave_UUID') or None) for r in rows]
        return self.replica_hosts

    def table_row(self, db, table):
        return query_one(self.conn,
                         'SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_ROWS, DATA_LENGTH, '
                         'INDEX_LENGTH, DATA_FREE FROM information_schema.TABLES '
                         'WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s', (db, table))

    def file_size(self, db, table):
        """The tablespace's real size where the server tells (file-per-table tablespaces; versions/flavors.py
        tablespace_size_table names the table): file_bytes (the .ibd's size), allocated_bytes (on disk).
        {} where it cannot be read (a shared or general tablespace, no such table on this flavor)."""
        source = capability_facts.capability('tablespace_size_table', self.identity.flavor, self.identity.version)
        if not source:
            return {}
        try:
            row = query_one(self.conn, 'SELECT FILE_SIZE, ALLOCATED_SIZE FROM %s WHERE NAME = %%s' % source,
                            ('%s/%s' % (db, table),))
        except pymysql.err.MySQLError:
            return {}
        if not row or row.get('FILE_SIZE') is None:
            return {}
        return dict(file_bytes=int(row['FILE_SIZE'] or 0), file_size=human_size(row['FILE_SIZE']),
                    allocated_bytes=int(row.get('ALLOCATED_SIZE') or 0))

    # ------------------------------------------------------------ metadata locks
    def find_blockers(self, present):
        """Sessions holding metadata locks on the tables; also notes when nobody can tell."""
        sources = capability_facts.capability('metadata_lock_sources', self.identity.flavor, self.identity.version)
        used = None
        for source in sources:
            rows = lock_holders(self.conn, source, present)
            if rows is None:
                continue
            used = source
            self.blockers.extend(rows)
            break
        if used is None:
            old = query_one(self.conn,
                            'SELECT COUNT(*) AS n, MAX(TIMESTAMPDIFF(SECOND, trx_started, NOW())) AS oldest '
                            'FROM information_schema.INNODB_TRX')
            self.warn('cannot list metadata locks on this server (%s); %s open InnoDB transaction(s), oldest %s s; %s'
                      % (' / '.join(sources) + ' not enabled' if sources else 'no source known',
                         old['n'] if old else '?', old['oldest'] if old and old['oldest'] is not None else '-',
                         self.scope.unlisted_lock_effect))
        return used

    def blocker_text(self):
        return '; '.join('%s held by connection %s (%s@%s, %s, %ss, %s %s)' % (
            b['table'], b['connection_id'], b['user'], b['host'], b['command'], b['seconds'], b['lock'], b['status'])
            for b in self.blockers)

    # ------------------------------------------------------------ signals (module_utils/signals.py)
    def install_signal_handlers(self):
        self.restore_signal_handlers()
        self._signals = Interruptible(SIGNALS).install()

    def restore_signal_handlers(self):
        if self._signals is not None:
            self._signals.restore()
        self._signals = None

    def block_signals(self):
        """While restoring: a second signal must not abort the restore itself."""
        if self._signals is not None:
            self._signals.hold()

    # ------------------------------------------------------------ AHI and super_read_only
    def read_ahi(self, conn=None):
        return onoff(global_variables(conn or self.conn, [AHI]).get(AHI))

    def set_ahi(self, value, conn=None):
        for member in self.scope.members(self, conn):
            execute(member, 'SET GLOBAL innodb_adaptive_hash_index = %s' % ('ON' if value == 'ON' else 'OFF'))

    def fresh_connection(self, deadline):
        """A new connection for the restore, retrying until deadline (the server may be restarting)."""
        last = None
        while True:
            try:
                return self._connect(self.p)
            except ConnectError as e:
                last = e
            if self.clock() >= deadline:
                raise GuardedError('could not reconnect to restore settings: %s' % last)
            self.sleep(1)

    def kill_session(self, new_conn, thread_id):
        """Abort a statement the interrupted session may still be running (a DROP waiting on a lock)."""
        if thread_id is None:
            return
        try:
            execute(new_conn, 'KILL %d' % int(thread_id))
        except pymysql.err.MySQLError:
            pass  # already gone

    def abort_connection(self):
        """Kill this run's session from a fresh connection, which becomes the run's connection."""
        try:
            thread = self.conn.thread_id()
            fresh = self._connect(self.p)
        except Exception:  # pylint: disable=broad-except
            return
        try:
            self.kill_session(fresh, thread)
        finally:
            self.conn = fresh

    @staticmethod
    def alive(conn):
        if conn is None:
            return False
        try:
            conn.ping(reconnect=False)
            return True
        except Exception:  # pylint: disable=broad-except
            return False

    def restore(self, interrupted):
        """Put AHI and super_read_only back. Never raises for a lost connection: reconnects."""
        self.block_signals()
        if self._ahi_off_at is not None:
            self.ahi['off_seconds'] = round(self.clock() - self._ahi_off_at, 4)
        need_ahi = self.ahi['toggled'] and self.ahi['before'] is not None
        need_sro = self.super_read_only and self.super_read_only.get('lifted')
        if not need_ahi and not need_sro:
            if interrupted and self.conn is not None:
                self.abort_connection()
            return
        started = self.clock()
        deadline = started + float(self.p.get('restore_timeout') or 60)
        conn = self.conn
        old_thread = None
        try:
            old_thread = conn.thread_id() if conn is not None else None
        except Exception:  # pragma: no cover  # pylint: disable=broad-except
            old_thread = None
        if interrupted or not self.alive(conn):
            conn = self.fresh_connection(deadline)
            self.kill_session(conn, old_thread)
        errors = []
        if need_ahi:
            want = self.ahi['before']
            while True:
                try:
                    self.set_ahi(want, conn)
                    now = self.read_ahi(conn)
                except pymysql.err.MySQLError as e:
                    now = None
                    errors.append(error_text(e))
                    if not self.alive(conn):
                        conn = self.fresh_connection(deadline)
                if now == want:
                    break
                if self.clock() >= deadline:
                    errors.append('AHI is %s, wanted %s (a buffer pool resize in progress makes SET ON do '
                                  'nothing)' % (now, want))
                    break
                self.sleep(0.5)
            self.ahi['after'] = now
            self.step('restore AHI %s' % want, started, ok=(now == want))
        if need_sro:
            s2 = self.clock()
            try:
                execute(conn, 'SET GLOBAL super_read_only = ON')
                val = global_variables(conn, [SUPER_READ_ONLY]).get(SUPER_READ_ONLY)
                self.super_read_only['after'] = val
                self.step('restore super_read_only ON', s2, ok=(val == 'ON'))
            except pymysql.err.MySQLError as e:
                errors.append('super_read_only: %s' % error_text(e))
                self.step('restore super_read_only ON', s2, ok=False, detail=error_text(e))
        if conn is not self.conn:
            self.conn = conn
        if errors and (need_ahi and self.ahi['after'] != self.ahi['before']):
            raise GuardedError('could not put %s back to %s: %s' % (AHI, self.ahi['before'], '; '.join(errors)))

    # ------------------------------------------------------------ the guarded part
    def guarded(self, mode, tables, body):
        """Run body() as the guarded part: the marker written first, signal handlers installed, and in the
        finally the settings put back and the marker finished, whatever happened. Returns (failed,
        interrupted): body's return value (None or the message that stops the run) and the Interrupted
        caught, if any. Server errors outside a statement's own handling become the failure."""
        failed = None
        interrupted = None
        self.install_signal_handlers()
        self.new_marker(mode, tables)
        try:
            self.marker.write(self.marker_data)
            failed = body()
        except Interrupted as e:
            interrupted = e
        except pymysql.err.MySQLError as e:
            failed = error_text(e)
        finally:
            try:
                self.after_body(interrupted)
            finally:
                self.restore_signal_handlers()
        return failed, interrupted

    def after_body(self, interrupted):
        """What the finally of the guarded part does: settings back, then the marker finished."""
        self.restore(interrupted is not None)
        self.finish_marker()

    # ------------------------------------------------------------ one statement, bounded lock waits
    def run_statement(self, entry, sql, verb):
        """Run one statement with bounded retries on lock wait timeouts. Returns True when done."""
        retries = int(self.p.get('retries') or 0)
        delay = float(self.p.get('retry_delay') or 0)
        for attempt in range(1, retries + 2):
            entry['attempts'] = attempt
            started = self.clock()
            try:
                execute(self.conn, sql)
            except pymysql.err.MySQLError as e:
                code = e.args[0] if e.args else None
                rec = self.step('%s attempt %d' % (verb, attempt), started, ok=False, target=entry['name'],
                                detail=error_text(e))
                entry['error'] = rec['detail']
                if code in RETRYABLE_ERRORS and attempt <= retries:
                    self.sleep(delay)
                    closed = self.window_closed()
                    if closed:
                        entry['error'] = ('%s; no retry: %s' % (error_text(e), closed))
                        entry['window_closed'] = True
                        return False
                    continue
                if code in RETRYABLE_ERRORS:
                    entry['error'] = ('%s: gave up after %d attempts of lock_wait_timeout=%ss each'
                                      % (error_text(e), attempt, self.p.get('lock_wait_timeout')))
                return False
            rec = self.step('%s attempt %d' % (verb, attempt), started, target=entry['name'])
            entry['seconds'] = rec['seconds']
            entry.pop('error', None)
            return True
        return False  # pragma: no cover
