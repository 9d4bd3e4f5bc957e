# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guarded DROP TABLE sequence of dbfleet.innodb.drop_tables.

Order of work, so that bad input never changes anything:
  1. pure checks: names, window, confirmation (no connection yet);
  2. read-only checks on the server: each table exists, is a base table outside the
     system schemas, is not mapped by the memcached plugin, is not referenced by a
     foreign key from a table that stays, nobody holds a metadata lock on it; sizes;
  3. the guarded part, in one try/finally: AHI off (only where the flavor/version
     needs it and it was on), each DROP (or RENAME to a holding schema) with a short
     lock_wait_timeout and bounded retries, then AHI back to what it was, also when a
     drop fails, times out or the process gets SIGTERM/SIGINT/SIGHUP; the off-peak
     window is checked again before each table and each retry.
  4. a marker file per server (in a private state directory on the host the module runs
     on) says that a guarded part is under way: what AHI and super_read_only were, which
     tables are done, which process and session own it. A run that was killed outright
     (SIGKILL, the host rebooted) leaves it behind; the next run on that server finds it
     and undoes what is left (kills the old session, puts AHI and super_read_only back),
     counts the tables the old run already dropped as done, and cancels a follower whose
     controller went away. After a complete run the marker records what was dropped, so a
     rerun of the same drop has nothing left to do instead of failing.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import signal
import stat
import time
import traceback

from ansible_collections.dbfleet.innodb.plugins.module_utils import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.connection import (
    ConnectError, error_text, execute, global_variables, is_plain_identifier, open_connection, query,
    query_one, quote_identifier)
from ansible_collections.dbfleet.innodb.plugins.module_utils.offpeak import status as window_status

try:
    import pymysql
except ImportError:  # pragma: no cover - reported by the module
    pymysql = None

AHI = 'innodb_adaptive_hash_index'
# Schemas nothing here ever drops from: the server's own and the memcached plugin's config.
PROTECTED_SCHEMAS = frozenset(('mysql', 'sys', 'information_schema', 'performance_schema', 'innodb_memcache'))
MEMCACHED_SCHEMA = 'innodb_memcache'
# Errors worth another attempt: the lock wait ran out (MDL or row lock) or a deadlock.
RETRYABLE_ERRORS = frozenset((1205, 1213))
ER_BAD_TABLE = 1051
SIGNALS = ('SIGTERM', 'SIGINT', 'SIGHUP')
DEFAULT_STATE_DIR = '~/.dbfleet/drop_tables'
LIFT_NEEDS_NO_BINLOG = (
    'lift_super_read_only needs disable_binlog=true: with the binary log on, a drop on a server whose '
    'super_read_only is ON (a replica) is a transaction of its own there (an errant GTID), and replication '
    'stops with error 1051 when the source\'s drop arrives; drop on the source and let it replicate, or drop '
    'host by host with the binary log off for the session')


class DropError(Exception):
    """An expected failure; the message is for the user."""


class Interrupted(BaseException):
    """The module process got a signal; raised from the handler so finally blocks run."""

    def __init__(self, signum):
        BaseException.__init__(self, signum)
        self.signum = signum

    def __str__(self):
        try:
            return 'interrupted by %s' % signal.Signals(self.signum).name
        except ValueError:  # pragma: no cover
            return 'interrupted by signal %s' % self.signum


# ---------------------------------------------------------------- pure helpers
def parse_table_name(text):
    """('db', 'table') from 'db.table'; raises DropError naming the input.

    Only plain identifiers ([A-Za-z0-9_$], not all digits, at most 64 characters): no
    wildcards, quotes, backticks, spaces or comments can reach the SQL text.
    """
    if not isinstance(text, str):
        raise DropError('table %r: give a string "db.table"' % (text,))
    parts = text.split('.')
    if len(parts) != 2:
        raise DropError('table %r: give exactly "db.table" (one dot, no quoting)' % (text,))
    db, table = parts
    for what, name in (('schema', db), ('table', table)):
        if not is_plain_identifier(name):
            raise DropError('table %r: %s name %r is not a plain identifier (letters, digits, _ and $ '
                            'only, at most 64 characters; no wildcards, quotes or spaces)' % (text, what, name))
    if db.lower() in PROTECTED_SCHEMAS:
        raise DropError('table %r: schema %r is a system schema; nothing is dropped from it' % (text, db))
    return db, table


def parse_table_names(names):
    """Validated, de-duplicated [(db, table)] in the order given; raises DropError."""
    if not names:
        raise DropError('tables: give at least one "db.table"')
    seen = []
    for text in names:
        pair = parse_table_name(text)
        if pair not in seen:
            seen.append(pair)
    return seen


def holding_name(db, table, stamp):
    """Name of the table in the holding schema: <db>__<table>__<stamp>, at most 64 characters."""
    name = '%s__%s__%s' % (db, table, stamp)
    if len(name) <= 64:
        return name
    digest = hashlib.sha1(('%s.%s' % (db, table)).encode('utf-8')).hexdigest()[:8]
    keep = 64 - len(stamp) - len(digest) - 4
    return '%s_%s__%s' % (('%s__%s' % (db, table))[:keep], digest, stamp)


def human_size(n):
    if n is None:
        return None
    n = float(n)
    for unit in ('B', 'KiB', 'MiB', 'GiB', 'TiB'):
        if n < 1024 or unit == 'TiB':
            return ('%d %s' % (n, unit)) if unit == 'B' else ('%.1f %s' % (n, unit))
        n /= 1024.0


def decide_ahi(requested, flavor, version, ahi_value, innodb_tables):
    """(strategy, toggle, reason): what to do with AHI around the drops.

    requested: auto | toggle | keep. ahi_value: 'ON'/'OFF' or None (no such variable).
    innodb_tables: how many tables to drop are InnoDB.
    """
    if requested == 'auto':
        strategy = flavors.capability('drop_table_ahi_strategy', flavor, version)
        source = 'flavors.py drop_table_ahi_strategy for %s %s' % (flavor, flavors.format_version(version))
    else:
        strategy = requested
        source = 'ahi_strategy=%s' % requested
    if ahi_value is None:
        return strategy, False, 'this server has no %s' % AHI
    if ahi_value != 'ON':
        return strategy, False, 'AHI is OFF: nothing to switch (%s: %s)' % (source, strategy)
    if not innodb_tables:
        return strategy, False, 'no InnoDB table to drop: AHI does not matter'
    if strategy == 'toggle':
        return strategy, True, 'AHI is ON and %s is toggle: switch it off before, back on after' % source
    return strategy, False, 'AHI is ON and %s is keep: leave it on' % source


def _now_stamp(now=None):
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return now.strftime('%Y%m%d%H%M%S')


# ---------------------------------------------------------------- private paths and the marker
def private_dir_problem(path, euid=None):
    """Why path is not a private directory (None when it is): it must exist, be a directory
    owned by this user (or root) and be writable by nobody else."""
    euid = os.geteuid() if euid is None else euid
    try:
        st = os.stat(path)
    except OSError as e:
        return 'directory %s cannot be read (%s)' % (path, e.strerror or e)
    if not stat.S_ISDIR(st.st_mode):
        return '%s is not a directory' % path
    if st.st_uid not in (euid, 0):
        return 'directory %s belongs to uid %d, not to this user (uid %d)' % (path, st.st_uid, euid)
    if st.st_mode & 0o022:
        return ('directory %s is writable by others (mode %s): anyone could create or remove the file there'
                % (path, oct(stat.S_IMODE(st.st_mode))))
    return None


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


class Marker(object):
    """The per-server marker file: JSON, written atomically, in a private directory (0700)."""

    def __init__(self, state_dir, key):
        self.dir = os.path.expanduser(state_dir or DEFAULT_STATE_DIR)
        self.path = os.path.join(self.dir, 'server-%s.json' % key)

    @staticmethod
    def key(variables):
        text = '%s|%s|%s' % (variables.get('hostname'), variables.get('port'), variables.get('datadir'))
        return hashlib.sha1(text.encode('utf-8')).hexdigest()[:16]

    def read(self):
        try:
            with open(self.path) as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def ensure_dir(self):
        if not os.path.isdir(self.dir):
            os.makedirs(self.dir, 0o700)
        problem = private_dir_problem(self.dir)
        if problem:
            raise DropError('state_dir: %s' % problem)

    def write(self, data):
        self.ensure_dir()
        tmp = '%s.%d.tmp' % (self.path, os.getpid())
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, 'w') as handle:
            json.dump(data, handle, sort_keys=True)
        os.rename(tmp, self.path)

    def remove(self):
        try:
            os.unlink(self.path)
        except OSError:
            pass


# ---------------------------------------------------------------- the sequence
class Sequence(object):
    """One run of the module on one server. Collects a report as it goes."""

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
        self.changed = False
        self.steps = []
        self.plan = []
        self.tables = []
        self.blockers = []
        self.ahi = dict(requested=params.get('ahi_strategy') or 'auto', strategy=None, before=None,
                        after=None, toggled=False, reason=None, off_seconds=None)
        self.super_read_only = None
        self.binlog_disabled = False
        self.follow = None
        self.window = None
        self.interrupted_run = None
        self.marker = None
        self.now = None  # the window check's clock (ISO text or datetime); None: the real time
        self._previous_dropped = set()
        self.replica_hosts = None
        self._old_handlers = {}

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
        try:
            self.conn = self._connect(self.p)
        except ConnectError as e:
            raise DropError(str(e))
        rows = global_variables(self.conn, list(flavors.DETECT_VARIABLES) + [
            AHI, 'super_read_only', 'log_bin', 'hostname', 'port', 'datadir'])
        self.identity = flavors.identity_from_variables(rows)
        self.server_vars = rows
        if self.marker is None:
            self.marker = Marker(self.p.get('state_dir'), Marker.key(rows))
        if flavors.variable_facts('information_schema_stats_expiry', self.identity.flavor, self.identity.version):
            # sizes from information_schema.TABLES are cached for a day otherwise
            execute(self.conn, 'SET SESSION information_schema_stats_expiry = 0')
        return self.conn

    def report(self):
        return dict(
            changed=self.changed,
            dropped=['%s.%s' % (t['schema'], t['table']) for t in self.tables if t['result'] in ('dropped', 'renamed')],
            renamed=dict(('%s.%s' % (t['schema'], t['table']), t['renamed_to'])
                         for t in self.tables if t.get('renamed_to') and t['result'] == 'renamed'),
            tables=self.tables,
            ahi=self.ahi,
            steps=self.steps,
            plan=self.plan,
            blockers=self.blockers,
            binlog_disabled=self.binlog_disabled,
            super_read_only=self.super_read_only,
            follow=self.follow,
            window=self.window,
            interrupted_run=self.interrupted_run,
            replica_hosts=self.replica_hosts,
            server=self.identity.to_dict() if self.identity else None,
        )

    # ------------------------------------------------------------ the window, again before each table and retry
    def window_closed(self):
        """None while the window is open (or none was given, or it is forced); else the message."""
        window = self.p.get('window')
        if not window or self.p.get('force_window'):
            return None
        st = window_status(window, self.p.get('timezone') or 'UTC', self.now)
        self.window = st
        return None if st['inside'] else st['message']

    # ------------------------------------------------------------ an interrupted earlier run
    def _marker_data(self, mode, tables):
        return dict(version=1, state='running', mode=mode, run_id=self.p.get('run_id'), pid=os.getpid(),
                    pid_start=process_start(os.getpid()), connection_id=self.conn.thread_id(),
                    started=_now_stamp(), ahi_before=self.ahi['before'], ahi_toggled=False,
                    super_read_only_before=(self.super_read_only or {}).get('before'), super_read_only_lifted=False,
                    tables=tables, dropped=[], cancel_file=self.p.get('cancel_file'))

    def check_interrupted(self):
        """Find what an earlier run on this server left behind and undo it (or, in check mode, say so).

        A marker in state 'done' only records what that run dropped. A 'running' marker whose process
        is gone is an interrupted run: its session is killed, AHI and super_read_only go back to what
        it found, its dropped tables count as done. A running follower of another run is cancelled
        through its cancel file (its own finally puts AHI back); a running drop of another run stops
        this one."""
        data = self.marker.read()
        if not data:
            return
        dropped = set(data.get('dropped') or [])
        if data.get('state') == 'done':
            self._previous_dropped = dropped
            return
        alive = process_alive(data.get('pid'), data.get('pid_start'))
        info = dict(found=data.get('mode'), run_id=data.get('run_id'), pid=data.get('pid'),
                    started=data.get('started'), tables=data.get('tables'), dropped=sorted(dropped),
                    ahi_before=data.get('ahi_before'), process_alive=alive, outcome=None, actions=[])
        if alive and self.p.get('run_id') and data.get('run_id') == self.p.get('run_id'):
            return  # this run's own follower (the readiness probe sees it)
        self.interrupted_run = info
        if alive:
            cancel = data.get('cancel_file')
            if data.get('mode') != 'follow' or not cancel:
                raise DropError('another drop_tables run is under way on this server (pid %s, started %s UTC, '
                                '%s of %s); wait for it to end' % (
                                    data.get('pid'), data.get('started'), data.get('mode'),
                                    ', '.join(data.get('tables') or [])))
            info['actions'].append('cancel the follower of run %s (pid %s) through %s' % (
                data.get('run_id'), data.get('pid'), cancel))
            if self.check_mode:
                info['outcome'] = 'would_cancel'
                self.changed = True
                return
            with open(cancel, 'a'):
                pass
            deadline = self.clock() + float(self.p.get('restore_timeout') or 60)
            while process_alive(data.get('pid'), data.get('pid_start')) and self.clock() < deadline:
                self.sleep(0.2)
            if process_alive(data.get('pid'), data.get('pid_start')):
                raise DropError('the follower of an earlier run (pid %s) did not stop within %ss of its cancel '
                                'file %s' % (data.get('pid'), self.p.get('restore_timeout'), cancel))
            info['outcome'] = 'cancelled'
            self.changed = True
            data = self.marker.read()
            if not data or data.get('state') == 'done':
                self._refresh_vars()
                return
        # The process is gone and left its changes: undo them. Its tables that are gone now were dropped by
        # it (maybe by its session after the process died, when the lock it waited for went away).
        self._previous_dropped = set(data.get('tables') or []) | dropped
        want_ahi = data.get('ahi_before') if data.get('ahi_toggled') else None
        now_ahi = self.read_ahi()
        want_sro = data.get('super_read_only_lifted')
        if want_ahi and now_ahi != want_ahi:
            info['actions'].append('SET GLOBAL innodb_adaptive_hash_index = %s (the interrupted run found it %s, '
                                   'it is %s)' % (want_ahi, want_ahi, now_ahi))
        if want_sro:
            info['actions'].append('SET GLOBAL super_read_only = ON (the interrupted run lifted it)')
        if self.check_mode:
            info['outcome'] = info['outcome'] or 'would_undo'
            if len(info['actions']) > (1 if info['outcome'] == 'would_cancel' else 0):
                self.changed = True
            self.plan.extend(info['actions'])
            return
        thread = data.get('connection_id')
        if thread:
            row = query_one(self.conn, 'SELECT ID FROM information_schema.PROCESSLIST WHERE ID = %s', (thread,))
            if row:
                self._kill_old_session(self.conn, thread)
                info['actions'].append('KILL %s (the interrupted run\'s session)' % thread)
        if want_ahi and now_ahi != want_ahi:
            self.set_ahi(want_ahi)
            self.changed = True
        if want_sro:
            execute(self.conn, 'SET GLOBAL super_read_only = ON')
            self.changed = True
        info['outcome'] = 'undone'
        self.marker.write(dict(data, state='done', undone_by=self.p.get('run_id'), undone_pid=os.getpid()))
        self._refresh_vars()

    def read_replica_hosts(self):
        """The replicas registered with this server (server_id, host, port), for the playbook to compare
        with its hosts: a replica of a host that drops must be in the run. None when it cannot be read."""
        statement = flavors.capability('replica_hosts_statement', self.identity.flavor, self.identity.version)
        try:
            rows = query(self.conn, statement)
        except pymysql.err.MySQLError as e:
            self.warn('%s failed (%s): the replicas of this server cannot be listed' % (statement, error_text(e)))
            return None
        self.replica_hosts = [dict(server_id=int(r.get('Server_id') or r.get('Server_Id') or 0),
                                   host=r.get('Host') or None, port=int(r.get('Port') or 0) or None,
                                   uuid=r.get('Replica_UUID') or r.get('Slave_UUID') or None) for r in rows]
        return self.replica_hosts

    def _refresh_vars(self):
        self.server_vars.update(global_variables(self.conn, [AHI, 'super_read_only']))

    # ------------------------------------------------------------ read-only checks
    def inspect_tables(self, pairs, must_exist=True):
        """Fill self.tables from information_schema; raises DropError on any refusal."""
        problems = []
        for db, table in pairs:
            row = query_one(self.conn,
                            'SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_ROWS, DATA_LENGTH, '
                            'INDEX_LENGTH, DATA_FREE FROM information_schema.TABLES '
                            'WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s', (db, table))
            name = '%s.%s' % (db, table)
            if row is None:
                entry = dict(name=name, schema=db, table=table, exists=False, result='absent')
                if must_exist and name in self._previous_dropped:
                    entry['result'] = 'already_dropped'  # by an earlier (maybe interrupted) run on this server
                elif must_exist:
                    problems.append('%s does not exist' % name)
                self.tables.append(entry)
                continue
            if row['TABLE_TYPE'] != 'BASE TABLE':
                problems.append('%s is a %s, not a base table; this module drops base tables only'
                                % (name, row['TABLE_TYPE']))
            size = sum(int(row[k] or 0) for k in ('DATA_LENGTH', 'INDEX_LENGTH'))
            entry = dict(name=name, schema=row['TABLE_SCHEMA'], table=row['TABLE_NAME'], exists=True,
                         engine=row['ENGINE'], rows_estimate=int(row['TABLE_ROWS'] or 0),
                         size_bytes=size, size=human_size(size),
                         free_bytes=int(row['DATA_FREE'] or 0), result='pending', attempts=0)
            entry.update(self._file_size(row['TABLE_SCHEMA'], row['TABLE_NAME']))
            self.tables.append(entry)
        present = [(t['schema'], t['table']) for t in self.tables if t['exists']]
        problems.extend(self._memcached_mapped(present))
        problems.extend(self._foreign_keys(present))
        if problems:
            raise DropError('refusing to drop anything: ' + '; '.join(problems))

    def _file_size(self, db, table):
        """Tablespace file size where the server tells (file-per-table tablespaces)."""
        like = '%s/%s' % (db, table)
        for sql in ('SELECT FILE_SIZE, ALLOCATED_SIZE FROM information_schema.INNODB_TABLESPACES WHERE NAME = %s',
                    'SELECT FILE_SIZE, ALLOCATED_SIZE FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME = %s'):
            try:
                row = query_one(self.conn, sql, (like,))
            except pymysql.err.MySQLError:
                continue
            if row:
                return dict(file_bytes=int(row['FILE_SIZE'] or 0), file_size=human_size(row['FILE_SIZE']))
            return {}
        return {}

    def _memcached_mapped(self, present):
        if not present:
            return []
        try:
            rows = query(self.conn, 'SELECT name, db_schema, db_table FROM innodb_memcache.containers')
        except pymysql.err.MySQLError:
            return []  # no memcached config schema here
        out = []
        for r in rows:
            for db, table in present:
                if (r['db_schema'] or '').lower() == db.lower() and (r['db_table'] or '').lower() == table.lower():
                    out.append('%s.%s is mapped by the InnoDB memcached plugin (innodb_memcache.containers '
                               'name %r)' % (db, table, r['name']))
        return out

    def _foreign_keys(self, present):
        out = []
        dropping = set((db.lower(), t.lower()) for db, t in present)
        for db, table in present:
            rows = query(self.conn,
                         'SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME FROM '
                         'information_schema.REFERENTIAL_CONSTRAINTS WHERE UNIQUE_CONSTRAINT_SCHEMA = %s '
                         'AND REFERENCED_TABLE_NAME = %s', (db, table))
            for r in rows:
                if (r['CONSTRAINT_SCHEMA'].lower(), r['TABLE_NAME'].lower()) in dropping:
                    continue
                out.append('%s.%s is referenced by foreign key %s of %s.%s, which stays'
                           % (db, table, r['CONSTRAINT_NAME'], r['CONSTRAINT_SCHEMA'], r['TABLE_NAME']))
        return out

    def find_blockers(self, present):
        """Sessions holding metadata locks on the tables; also notes when nobody can tell."""
        sources = flavors.capability('metadata_lock_sources', self.identity.flavor, self.identity.version)
        used = None
        for source in sources:
            rows = self._mdl_rows(source, present)
            if rows is None:
                continue
            used = source
            self.blockers.extend(rows)
            break
        if used is None:
            old = query_one(self.conn,
                            'SELECT COUNT(*) AS n, MAX(TIMESTAMPDIFF(SECOND, trx_started, NOW())) AS oldest '
                            'FROM information_schema.INNODB_TRX')
            self.warn('cannot list metadata locks on this server (%s); %s open InnoDB transaction(s), oldest %s s; '
                      'a DROP or ALTER that meets one waits at most lock_wait_timeout per attempt'
                      % (' / '.join(sources) + ' not enabled' if sources else 'no source known',
                         old['n'] if old else '?', old['oldest'] if old and old['oldest'] is not None else '-'))
        return used

    def _mdl_rows(self, source, present):
        if source == 'performance_schema':
            try:
                on = query_one(self.conn, "SELECT ENABLED FROM performance_schema.setup_instruments "
                                          "WHERE NAME = 'wait/lock/metadata/sql/mdl'")
            except pymysql.err.MySQLError:
                return None
            if not on or on['ENABLED'] != 'YES':
                return None
            sql = ('SELECT ml.OBJECT_SCHEMA AS db, ml.OBJECT_NAME AS tbl, ml.LOCK_TYPE AS lock_type, '
                   'ml.LOCK_STATUS AS lock_status, t.PROCESSLIST_ID AS id, t.PROCESSLIST_USER AS user, '
                   't.PROCESSLIST_HOST AS host, t.PROCESSLIST_COMMAND AS command, t.PROCESSLIST_TIME AS time '
                   'FROM performance_schema.metadata_locks ml JOIN performance_schema.threads t '
                   'ON t.THREAD_ID = ml.OWNER_THREAD_ID WHERE ml.OBJECT_TYPE = %s AND ml.OBJECT_SCHEMA = %s '
                   'AND ml.OBJECT_NAME = %s AND (t.PROCESSLIST_ID IS NULL OR t.PROCESSLIST_ID <> CONNECTION_ID())')
            prefix = ('TABLE',)
        elif source == 'metadata_lock_info':
            try:
                on = query_one(self.conn, "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS "
                                          "WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO'")
            except pymysql.err.MySQLError:
                return None
            if not on or on['PLUGIN_STATUS'] != 'ACTIVE':
                return None
            sql = ('SELECT m.TABLE_SCHEMA AS db, m.TABLE_NAME AS tbl, m.LOCK_TYPE AS lock_type, '
                   'm.LOCK_MODE AS lock_status, p.ID AS id, p.USER AS user, p.HOST AS host, '
                   'p.COMMAND AS command, p.TIME AS time FROM information_schema.METADATA_LOCK_INFO m '
                   'LEFT JOIN information_schema.PROCESSLIST p ON p.ID = m.THREAD_ID '
                   'WHERE m.LOCK_TYPE LIKE %s AND m.TABLE_SCHEMA = %s AND m.TABLE_NAME = %s '
                   'AND m.THREAD_ID <> CONNECTION_ID()')
            prefix = ('Table%',)
        else:  # pragma: no cover - data error
            return None
        rows = []
        for db, table in present:
            for r in query(self.conn, sql, prefix + (db, table)):
                rows.append(dict(table='%s.%s' % (r['db'], r['tbl']), connection_id=r['id'], user=r['user'],
                                 host=r['host'], command=r['command'], seconds=r['time'],
                                 lock=r['lock_type'], status=r['lock_status'], source=source))
        return rows

    # ------------------------------------------------------------ signals
    def _on_signal(self, signum, frame):
        raise Interrupted(signum)

    def install_signal_handlers(self):
        for name in SIGNALS:
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            try:
                self._old_handlers[sig] = signal.signal(sig, self._on_signal)
            except (ValueError, OSError):  # pragma: no cover - not the main thread
                pass

    def restore_signal_handlers(self):
        for sig, old in self._old_handlers.items():
            try:
                signal.signal(sig, old)
            except (ValueError, OSError, TypeError):  # pragma: no cover
                pass
        self._old_handlers = {}

    def _block_signals(self):
        """While restoring: a second signal must not abort the restore itself."""
        for sig in self._old_handlers:
            try:
                signal.signal(sig, signal.SIG_IGN)
            except (ValueError, OSError):  # pragma: no cover
                pass

    # ------------------------------------------------------------ AHI
    def read_ahi(self, conn=None):
        rows = global_variables(conn or self.conn, [AHI])
        val = rows.get(AHI)
        if val is None:
            return None
        return 'ON' if str(val).upper() in ('ON', '1') else 'OFF'

    def set_ahi(self, value, conn=None):
        execute(conn or self.conn, 'SET GLOBAL innodb_adaptive_hash_index = %s' % ('ON' if value == 'ON' else 'OFF'))

    def _fresh_connection(self, deadline):
        """A new connection for the restore, retrying until deadline (the server may be restarting)."""
        last = None
        while True:
            try:
                return self._connect(self.p)
            except ConnectError as e:
                last = e
            if self.clock() >= deadline:
                raise DropError('could not reconnect to restore settings: %s' % last)
            self.sleep(1)

    def _kill_old_session(self, new_conn, thread_id):
        """Abort a statement the interrupted session may still be running (a DROP waiting on a lock)."""
        if thread_id is None:
            return
        try:
            execute(new_conn, 'KILL %d' % int(thread_id))
        except pymysql.err.MySQLError:
            pass  # already gone

    def restore(self, interrupted):
        """Put AHI and super_read_only back. Never raises for a lost connection: reconnects."""
        self._block_signals()
        need_ahi = self.ahi['toggled'] and self.ahi['before'] is not None
        need_sro = self.super_read_only and self.super_read_only.get('lifted')
        if not need_ahi and not need_sro:
            if interrupted and self.conn is not None:
                self._abort_old_connection()
            return
        started = self.clock()
        deadline = started + float(self.p.get('restore_timeout') or 60)
        conn = self.conn
        old_thread = None
        try:
            old_thread = conn.thread_id() if conn is not None else None
        except Exception:  # pragma: no cover
            old_thread = None
        if interrupted or not self._alive(conn):
            conn = self._fresh_connection(deadline)
            self._kill_old_session(conn, old_thread)
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
                    if not self._alive(conn):
                        conn = self._fresh_connection(deadline)
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
                val = global_variables(conn, ['super_read_only']).get('super_read_only')
                self.super_read_only['after'] = val
                self.step('restore super_read_only ON', s2, ok=(val == 'ON'))
            except pymysql.err.MySQLError as e:
                errors.append('super_read_only: %s' % error_text(e))
                self.step('restore super_read_only ON', s2, ok=False, detail=error_text(e))
        if conn is not self.conn:
            self.conn = conn
        if errors and (need_ahi and self.ahi['after'] != self.ahi['before']):
            raise DropError('could not put %s back to %s: %s' % (AHI, self.ahi['before'], '; '.join(errors)))

    def _abort_old_connection(self):
        try:
            thread = self.conn.thread_id()
            fresh = self._connect(self.p)
        except Exception:
            return
        try:
            self._kill_old_session(fresh, thread)
        finally:
            self.conn = fresh

    @staticmethod
    def _alive(conn):
        if conn is None:
            return False
        try:
            conn.ping(reconnect=False)
            return True
        except Exception:
            return False

    # ------------------------------------------------------------ the drops
    def run_statement(self, entry, sql, verb):
        """Run one DROP/RENAME with bounded retries on lock wait timeouts. Returns True when done."""
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

    def run(self):
        """Everything after the pure checks. Raises DropError for refusals and failures."""
        p = self.p
        pairs = parse_table_names(p['tables'])
        if p.get('lift_super_read_only') and not p.get('disable_binlog') and not p.get('follow'):
            raise DropError(LIFT_NEEDS_NO_BINLOG)
        started = self.clock()
        self.open()
        self.step('connect and identify', started, detail='%s %s' % (
            self.identity.flavor, flavors.format_version(self.identity.version)))
        self.check_interrupted()
        self.read_replica_hosts()
        if p.get('follow'):
            return self.run_follow(pairs)
        started = self.clock()
        self.inspect_tables(pairs)
        present = [(t['schema'], t['table']) for t in self.tables if t['exists']]
        self.find_blockers(present)
        self.step('check tables, foreign keys and metadata locks', started)
        if self.blockers:
            raise DropError('refusing to drop anything: open transactions or locks on the tables: ' + '; '.join(
                '%s held by connection %s (%s@%s, %s, %ss, %s %s)' % (
                    b['table'], b['connection_id'], b['user'], b['host'], b['command'], b['seconds'],
                    b['lock'], b['status']) for b in self.blockers))
        innodb = sum(1 for t in self.tables if (t.get('engine') or '').lower() == 'innodb')
        ahi_now = None
        raw = self.server_vars.get(AHI)
        if raw is not None:
            ahi_now = 'ON' if str(raw).upper() in ('ON', '1') else 'OFF'
        self.ahi['before'] = ahi_now
        self.ahi['after'] = ahi_now
        rename = bool(p.get('rename_first'))
        if rename:
            strategy, toggle, reason = (self.ahi['requested'], False,
                                        'rename_first: RENAME TABLE leaves AHI entries alone; the later '
                                        'purge of the holding schema is the drop that matters')
        else:
            strategy, toggle, reason = decide_ahi(self.ahi['requested'], self.identity.flavor,
                                                  self.identity.version, ahi_now, innodb)
        self.ahi.update(strategy=strategy, reason=reason)
        sro = self.server_vars.get('super_read_only')
        if sro is not None:
            self.super_read_only = dict(before=sro, after=sro, lifted=False)
        if sro == 'ON' and not p.get('lift_super_read_only'):
            raise DropError('refusing: super_read_only is ON on this server, so the %s would fail; set '
                            'lift_super_read_only to switch it off for the drop and back on after'
                            % ('rename' if rename else 'drop'))
        holding = p.get('holding_schema') or 'dbfleet_holding'
        if rename:
            if not is_plain_identifier(holding) or holding.lower() in PROTECTED_SCHEMAS:
                raise DropError('holding_schema %r is not a plain identifier outside the system schemas' % holding)
            stamp = _now_stamp()
            for t in self.tables:
                t['renamed_to'] = '%s.%s' % (holding, holding_name(t['schema'], t['table'], stamp))
                if t['schema'].lower() == holding.lower():
                    raise DropError('%s is already in the holding schema %s; drop it without rename_first'
                                    % (t['name'], holding))
        # ---- the plan, said the same way in check mode and in a real run
        if p.get('disable_binlog'):
            self.plan.append('SET SESSION sql_log_bin = 0 (this session only: the drops are not binlogged '
                             'and do not replicate)')
        if sro == 'ON':
            self.plan.append('SET GLOBAL super_read_only = OFF, back ON after')
        self.plan.append('SET SESSION lock_wait_timeout = %s' % p['lock_wait_timeout'])
        if toggle:
            self.plan.append('SET GLOBAL innodb_adaptive_hash_index = OFF (it is ON)')
        for t in self.tables:
            if not t['exists']:
                self.plan.append('%s: already dropped by an earlier run on this server' % t['name'])
            elif rename:
                self.plan.append('RENAME TABLE %s TO %s (%s), up to %d attempts' % (
                    t['name'], t['renamed_to'], t['size'], int(p['retries']) + 1))
            else:
                self.plan.append('DROP TABLE %s (%s, %s), up to %d attempts' % (
                    t['name'], t['size'], t['engine'], int(p['retries']) + 1))
        if toggle:
            self.plan.append('SET GLOBAL innodb_adaptive_hash_index = ON (always, also on failure)')
        if rename:
            self.plan.insert(0, 'CREATE DATABASE IF NOT EXISTS %s' % holding)
        todo = [t for t in self.tables if t['exists']]
        if self.check_mode:
            for t in todo:
                t['result'] = 'would_rename' if rename else 'would_drop'
            self.ahi['toggled'] = False
            if not p.get('confirm'):
                self.plan.append('(a real run refuses: confirm is not set)')
            else:
                self.changed = self.changed or bool(todo)
            return
        if not todo:
            self.plan.append('nothing left to do')
            return
        if not p.get('confirm'):  # checked again in case a caller skipped the pure checks
            raise DropError('confirm is not set: nothing dropped')
        # ---- the guarded part
        failed = None
        interrupted = None
        self.install_signal_handlers()
        marker = self._marker_data('rename' if rename else 'drop', [t['name'] for t in self.tables])
        try:
            self.marker.write(marker)
            if p.get('disable_binlog'):
                s = self.clock()
                execute(self.conn, 'SET SESSION sql_log_bin = 0')
                val = query_one(self.conn, 'SELECT @@SESSION.sql_log_bin AS v')['v']
                if str(val) not in ('0', 'OFF'):
                    raise DropError('SET SESSION sql_log_bin = 0 did not take effect (it reads %s)' % val)
                self.binlog_disabled = True
                self.step('disable binary logging for this session', s)
            s = self.clock()
            execute(self.conn, 'SET SESSION lock_wait_timeout = %d' % int(p['lock_wait_timeout']))
            self.step('set session lock_wait_timeout', s, detail='%ss' % int(p['lock_wait_timeout']))
            if rename:
                s = self.clock()
                execute(self.conn, 'CREATE DATABASE IF NOT EXISTS %s' % quote_identifier(holding))
                self.step('create holding schema', s, target=holding)
            if sro == 'ON':
                s = self.clock()
                marker['super_read_only_lifted'] = True
                self.marker.write(marker)
                execute(self.conn, 'SET GLOBAL super_read_only = OFF')
                self.super_read_only['lifted'] = True
                self.changed = True
                self.step('lift super_read_only', s)
            if toggle:
                s = self.clock()
                self.ahi['toggled'] = True  # before the SET: a signal during it must still restore
                marker['ahi_toggled'] = True
                self.marker.write(marker)
                self.set_ahi('OFF')
                self.changed = True
                now = self.read_ahi()
                self.step('switch AHI OFF', s, ok=(now == 'OFF'), detail='reads %s' % now)
                self._ahi_off_at = self.clock()
                if now != 'OFF':
                    raise DropError('SET GLOBAL innodb_adaptive_hash_index = OFF did not take effect (reads %s)' % now)
            for t in self.tables:
                if not t['exists']:
                    continue
                if failed:
                    t['result'] = 'not_attempted'
                    continue
                closed = self.window_closed()
                if closed:
                    t['result'] = 'not_attempted'
                    failed = 'stopped before %s: %s' % (t['name'], closed)
                    continue
                ident = '%s.%s' % (quote_identifier(t['schema']), quote_identifier(t['table']))
                if rename:
                    hdb, htbl = t['renamed_to'].split('.')
                    ok = self.run_statement(t, 'RENAME TABLE %s TO %s.%s' % (
                        ident, quote_identifier(hdb), quote_identifier(htbl)), 'rename')
                    t['result'] = 'renamed' if ok else 'failed'
                else:
                    ok = self.run_statement(t, 'DROP TABLE %s' % ident, 'drop')
                    t['result'] = 'dropped' if ok else 'failed'
                if ok:
                    self.changed = True
                    marker['dropped'].append(t['name'])
                    self.marker.write(marker)
                else:
                    failed = '%s: %s' % (t['name'], t.get('error'))
        except Interrupted as e:
            interrupted = e
            for t in self.tables:
                if t['result'] in ('pending',):
                    t['result'] = 'interrupted'
        except pymysql.err.MySQLError as e:
            failed = error_text(e)
        finally:
            off_at = getattr(self, '_ahi_off_at', None)
            if off_at is not None:
                self.ahi['off_seconds'] = round(self.clock() - off_at, 4)
            try:
                self.restore(interrupted is not None)
                self._finish_marker(marker)
            finally:
                self.restore_signal_handlers()
        if interrupted is not None:
            raise DropError('%s; AHI is %s (was %s before)' % (interrupted, self.ahi['after'], self.ahi['before']))
        if failed:
            raise DropError('drop failed: %s; AHI is %s (was %s before)' % (failed, self.ahi['after'], self.ahi['before']))

    def _finish_marker(self, marker):
        """After the restore: the marker records what was dropped (state done), unless AHI could not be put
        back, in which case it stays 'running' for the next run to finish the restore."""
        if self.ahi['toggled'] and self.ahi['after'] != self.ahi['before']:
            return
        marker.update(state='done', finished=_now_stamp())
        self.marker.write(marker)

    # ------------------------------------------------------------ replica side
    def run_follow(self, pairs):
        """Replica side of a replicated drop: AHI off (where needed) until replication has applied
        the drop (the tables are gone here), then AHI back; never drops anything itself."""
        p = self.p
        started = self.clock()
        self.inspect_tables(pairs, must_exist=False)
        present = [t for t in self.tables if t['exists']]
        self.step('check tables', started)
        raw = self.server_vars.get(AHI)
        ahi_now = None if raw is None else ('ON' if str(raw).upper() in ('ON', '1') else 'OFF')
        self.ahi['before'] = self.ahi['after'] = ahi_now
        innodb = sum(1 for t in present if (t.get('engine') or '').lower() == 'innodb')
        strategy, toggle, reason = decide_ahi(self.ahi['requested'], self.identity.flavor, self.identity.version,
                                              ahi_now, innodb)
        self.ahi.update(strategy=strategy, reason=reason)
        timeout = float(p.get('follow_timeout') or 600)
        cancel_file = p.get('cancel_file')
        self.follow = dict(outcome=None, waited_seconds=0.0, timeout=timeout, cancel_file=cancel_file)
        if not present:
            self.follow['outcome'] = 'already_absent'
            self.plan.append('nothing to wait for: the tables are not here')
            return
        if toggle:
            self.plan.append('SET GLOBAL innodb_adaptive_hash_index = OFF (it is ON)')
        self.plan.append('wait until replication has dropped %s (at most %ss)' % (
            ', '.join(t['name'] for t in present), int(timeout)))
        if toggle:
            self.plan.append('SET GLOBAL innodb_adaptive_hash_index = ON (always)')
        if self.check_mode:
            self.follow['outcome'] = 'check_mode'
            self.changed = self.changed or bool(toggle)
            return
        interrupted = None
        wait_start = None
        self.install_signal_handlers()
        marker = self._marker_data('follow', [t['name'] for t in present])
        try:
            self.marker.write(marker)
            if toggle:
                s = self.clock()
                self.ahi['toggled'] = True
                marker['ahi_toggled'] = True
                self.marker.write(marker)
                self.set_ahi('OFF')
                self.changed = True
                now = self.read_ahi()
                self.step('switch AHI OFF', s, ok=(now == 'OFF'), detail='reads %s' % now)
                self._ahi_off_at = self.clock()
            wait_start = self.clock()
            remaining = list(present)
            while True:
                remaining = [t for t in remaining if query_one(
                    self.conn, 'SELECT 1 AS x FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND '
                               'TABLE_NAME = %s', (t['schema'], t['table'])) is not None]
                for t in present:
                    if t not in remaining:
                        t['result'] = 'dropped_by_replication'
                if not remaining:
                    self.follow['outcome'] = 'applied'
                    break
                if cancel_file and os.path.exists(cancel_file):
                    self.follow['outcome'] = 'cancelled'
                    break
                if self.clock() - wait_start >= timeout:
                    self.follow['outcome'] = 'timeout'
                    break
                self.sleep(float(p.get('poll_interval') or 0.2))
        except Interrupted as e:
            interrupted = e
            self.follow['outcome'] = 'interrupted'
        finally:
            if wait_start is not None:
                self.follow['waited_seconds'] = round(self.clock() - wait_start, 3)
                self.step('wait for replication to apply the drop', wait_start,
                          ok=self.follow['outcome'] == 'applied', detail=self.follow['outcome'])
            off_at = getattr(self, '_ahi_off_at', None)
            if off_at is not None:
                self.ahi['off_seconds'] = round(self.clock() - off_at, 4)
            try:
                self.restore(interrupted is not None)
                self._finish_marker(marker)
            finally:
                self.restore_signal_handlers()
        for t in present:
            if t['result'] == 'pending':
                t['result'] = 'still_present'
        if interrupted is not None:
            raise DropError('%s; AHI is %s (was %s before)' % (interrupted, self.ahi['after'], self.ahi['before']))
        if self.follow['outcome'] == 'timeout':
            raise DropError('replication did not apply the drop of %s within %ss; AHI is %s (was %s before)' % (
                ', '.join(t['name'] for t in present if t['result'] == 'still_present'), int(timeout),
                self.ahi['after'], self.ahi['before']))


def run_for_module(module, sequence):
    """Run a Sequence (the drop or a conversion) for its module: every failure fails the module with the
    sequence's report (what was done so far), and the connection is closed in all cases. Returns the report."""
    try:
        sequence.run()
    except DropError as e:  # the guard rails' refusals, and the subclasses' own errors
        module.fail_json(msg=str(e), **sequence.report())
    except pymysql.err.MySQLError as e:
        module.fail_json(msg='server error: %s' % error_text(e), **sequence.report())
    except Exception as e:  # pylint: disable=broad-except  # pragma: no cover - keep the report, show the trace
        module.fail_json(msg='unexpected error: %s' % e, exception=traceback.format_exc(), **sequence.report())
    finally:
        if sequence.conn is not None:
            try:
                sequence.conn.close()
            except Exception:  # pylint: disable=broad-except
                pass
    return sequence.report()
