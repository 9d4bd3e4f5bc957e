# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guarded table conversion of dbfleet.innodb.convert_tables (ALTER TABLE ... ENGINE=...).

A client of the guarded-change engine (guarded/engine.py), like the drop: the same name checks, the same off-peak
window (checked again before each table and each retry), the same short session lock_wait_timeout with
bounded retries, the same metadata-lock listing, signal handling and per-server marker. Order of work:

  1. pure checks: names, target engine, window (no connection yet);
  2. read-only checks on the server: the server is no replica (unless only verifying), the target
     engine is loaded, each table exists, is a base table whose engine converts to the target,
     nobody holds a metadata lock on it; sizes and row estimates. Any refusal names its input
     and nothing is changed;
  3. per table, one at a time, in the engine's guarded part: LOCK TABLES ... WRITE (bounded wait), rows
     and content checksum, the marker records the table and its checksum, ALTER TABLE ... ENGINE=...,
     rows and content checksum again, the GTID position, UNLOCK TABLES (on every path out, in a finally).
     Unequal rows or checksums fail the run at that table.
  4. A run killed outright (SIGKILL) during an ALTER leaves the marker with the table under way and its
     checksum from before: the next run checks that table's rows and checksum against it when the table
     is in the target engine already, instead of skipping it as done.

Column names reach the SQL text only through guarded.quote_name (any legal identifier: spaces, hyphens,
backticks, non-ASCII), and the statements are built before the lock is taken.

The rows and content checksum before and after each ALTER are guarded/content_checksum.py's.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import engine_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import (
    error_text, execute, global_variables, query, query_one)
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.content_checksum import (
    checksum_from_row, compare, content_checksum_sql)
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.engine import GuardedChange
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import (
    GuardedError, human_size, parse_table_names, qualified_name)
from ansible_collections.dbfleet.innodb.plugins.module_utils.signals import Interrupted
from ansible_collections.dbfleet.innodb.plugins.module_utils.storage_engines import LOADED_SUPPORT

try:
    import pymysql
except ImportError:  # pragma: no cover - reported by the module
    pymysql = None

# What converts to what (STORAGE_ENGINES keys): the successors of engines that upgrades drop
# (engine_facts.ENGINE_SUCCESSORS), and InnoDB to MyRocks where MyRocks is loaded.
CONVERSIONS = {
    'INNODB': ('TOKUDB', 'MYISAM', 'ARIA', 'ROCKSDB'),
    'ROCKSDB': ('INNODB', 'TOKUDB'),
}
# The spelling ALTER TABLE ... ENGINE= takes for each target.
ENGINE_CLAUSE = {'INNODB': 'InnoDB', 'ROCKSDB': 'ROCKSDB'}
ENGINE_ALIASES = {'MYROCKS': 'ROCKSDB'}

# ALTER TABLE ... ENGINE=ROCKSDB fails on tables with foreign keys (MyRocks has none).
NO_FOREIGN_KEYS = frozenset(('ROCKSDB',))


DEFAULT_STATE_DIR = '~/.dbfleet/convert_tables'


# The conversion's own options (beside guarded_module.GUARDED_OPTIONS), with their defaults: the one definition the
# module's argument spec and convert_tables.yml's inputs (playbook_inputs.py) read. engine is checked by target_engine.
CONVERT_OPTIONS = dict(
    engine=dict(type='str', default='InnoDB'),
    verify=dict(type='bool', default=False),
    expect=dict(type='dict', default={}),
)


class ConvertError(GuardedError):
    """An expected failure of a conversion; the message is for the user."""


# ---------------------------------------------------------------- pure helpers
def target_engine(name):
    """The STORAGE_ENGINES key of the target engine; ConvertError naming the input otherwise."""
    if not isinstance(name, str) or not name.strip():
        raise ConvertError('engine %r: give an engine name such as InnoDB or ROCKSDB' % (name,))
    key = engine_facts.engine_key(name.strip())
    key = ENGINE_ALIASES.get(key, key)
    if not engine_facts.known_engine(key):
        raise ConvertError('engine %r is not an engine the collection knows (%s)'
                           % (name, ', '.join(sorted(engine_facts.STORAGE_ENGINES))))
    if key not in CONVERSIONS:
        raise ConvertError('engine %r: tables are converted to %s only' % (
            name, ' or '.join(engine_facts.engine_display_name(k) for k in sorted(CONVERSIONS))))
    return key


def parse_tables(names):
    """Validated, de-duplicated [(db, table)] in the order given; ConvertError naming the input."""
    try:
        return parse_table_names(names, 'converted')
    except GuardedError as e:
        raise ConvertError(str(e))


def decide(table, target):
    """(action, reason) for one table found on the server: convert, already (nothing to do) or refuse."""
    engine = engine_facts.engine_key(table.get('engine') or '')
    target_name = engine_facts.engine_display_name(target)
    if not engine:
        return 'refuse', ('%s: the server reports no engine for it (its engine is not loaded here or the table is '
                          'damaged); convert it on a server that still loads its engine' % table['name'])
    if engine == target:
        return 'already', '%s is already %s' % (table['name'], target_name)
    if engine not in CONVERSIONS[target]:
        return 'refuse', ('%s is %s; conversions to %s start from %s' % (
            table['name'], engine_facts.engine_display_name(engine), target_name,
            ', '.join(engine_facts.engine_display_name(e) for e in CONVERSIONS[target])))
    return 'convert', '%s -> %s' % (engine_facts.engine_display_name(engine), target_name)


def loaded_engines(rows):
    """STORAGE_ENGINES keys of the engines information_schema.ENGINES says are usable."""
    return sorted(engine_facts.engine_key(r['ENGINE']) for r in rows
                  if str(r.get('SUPPORT') or '').upper() in LOADED_SUPPORT)


def describe_plan_entry(t):
    """'db.t: MyISAM -> InnoDB (size, file size where the server tells, ~rows)'; sizes and rows are the
    server's estimates (InnoDB's statistics lag behind a bulk load; its tablespace file size does not)."""
    size = t['size'] if not t.get('file_size') else '%s, file %s' % (t['size'], t['file_size'])
    return '%s: %s -> %s (%s, ~%d rows)' % (
        t['name'], engine_facts.engine_display_name(t['engine'] or '?'), engine_facts.engine_display_name(t['to_engine']),
        size, t['rows_estimate'])


# ---------------------------------------------------------------- the sequence
class Conversion(GuardedChange):
    """One run of convert_tables on one server: the conversion, the replica's verification or its follow."""

    module = 'convert_tables'
    marker_prefix = 'convert'
    default_state_dir = DEFAULT_STATE_DIR

    def __init__(self, params, **kwargs):
        GuardedChange.__init__(self, params, **kwargs)
        self.target = None
        self.engines = []
        self.role = None
        self.gtid_position = None
        self.verified = []
        self.previous = {}

    def report(self):
        result = GuardedChange.report(self)
        result.update(
            engine=engine_facts.engine_display_name(self.target) if self.target else None,
            converted=[t['name'] for t in self.tables if t.get('result') == 'converted'],
            engines_loaded=self.engines,
            role=self.role,
            gtid_position=self.gtid_position,
        )
        return result

    # ------------------------------------------------------------ read-only checks
    def read_role(self):
        facts = topology.read_server(self.conn, query, global_variables)
        if facts.get('error'):
            raise ConvertError('refusing: the replication role of this server cannot be read: %s' % facts['error'])
        self.role = facts['role']
        self.gtid_position = facts['gtid'].get('position')
        return facts

    def inspect(self, pairs):
        problems = []
        for db, table in pairs:
            name = '%s.%s' % (db, table)
            row = query_one(self.conn,
                            'SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_ROWS, DATA_LENGTH, '
                            'INDEX_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s',
                            (db, table))
            if row is None:
                problems.append('table %s does not exist' % name)
                self.tables.append(dict(name=name, schema=db, table=table, exists=False, result='absent'))
                continue
            size = sum(int(row[k] or 0) for k in ('DATA_LENGTH', 'INDEX_LENGTH'))
            entry = dict(name=name, schema=row['TABLE_SCHEMA'], table=row['TABLE_NAME'], exists=True,
                         engine=row['ENGINE'], to_engine=ENGINE_CLAUSE[self.target],
                         rows_estimate=int(row['TABLE_ROWS'] or 0), size_bytes=size, size=human_size(size),
                         result='pending', attempts=0)
            entry.update(self.file_size(row['TABLE_SCHEMA'], row['TABLE_NAME']))
            if row['TABLE_TYPE'] != 'BASE TABLE':
                problems.append('%s is a %s, not a base table' % (name, row['TABLE_TYPE']))
            action, reason = decide(entry, self.target)
            entry.update(action=action, reason=reason)
            if action == 'refuse':
                problems.append(reason)
            elif action == 'already':
                entry['result'] = 'already'
                if name in self.previous and self.previous[name].get('before'):
                    entry['interrupted_before'] = self.previous[name]['before']
            elif self.target in NO_FOREIGN_KEYS:
                problems.extend(self._foreign_key_problems(row['TABLE_SCHEMA'], row['TABLE_NAME']))
            self.tables.append(entry)
        return problems

    def _foreign_key_problems(self, db, table):
        rows = query(self.conn,
                     'SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, UNIQUE_CONSTRAINT_SCHEMA, '
                     'REFERENCED_TABLE_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE '
                     '(CONSTRAINT_SCHEMA = %s AND TABLE_NAME = %s) OR '
                     '(UNIQUE_CONSTRAINT_SCHEMA = %s AND REFERENCED_TABLE_NAME = %s)', (db, table, db, table))
        return ['%s.%s has foreign key %s (%s.%s -> %s.%s), which %s does not support' % (
            db, table, r['CONSTRAINT_NAME'], r['CONSTRAINT_SCHEMA'], r['TABLE_NAME'], r['UNIQUE_CONSTRAINT_SCHEMA'],
            r['REFERENCED_TABLE_NAME'], engine_facts.engine_display_name(self.target)) for r in rows]

    def columns(self, db, table):
        rows = query(self.conn, 'SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND '
                                'TABLE_NAME = %s ORDER BY ORDINAL_POSITION', (db, table))
        return [r['COLUMN_NAME'] for r in rows]

    def checksum(self, entry, when):
        started = self.clock()
        row = query_one(self.conn, content_checksum_sql(entry['schema'], entry['table'], entry['columns']))
        result = checksum_from_row(row or {})
        self.step('checksum %s' % when, started, target=entry['name'],
                  detail='%d rows, %s' % (result['rows'], result['checksum']))
        return result

    def current_engine(self, db, table):
        row = query_one(self.conn, 'SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND '
                                   'TABLE_NAME = %s', (db, table))
        return row['ENGINE'] if row else None

    # ------------------------------------------------------------ the run
    def run(self):
        p = self.p
        self.target = target_engine(p['engine'])
        pairs = parse_tables(p['tables'])
        self.connect_and_identify()
        self.read_role()
        self.read_replica_hosts()
        self.engines = loaded_engines(query(self.conn, 'SELECT ENGINE, SUPPORT FROM information_schema.ENGINES'))
        if p.get('verify'):
            return self.run_verify(pairs)
        cluster = self.scope.ddl_reaches_members  # a Galera / Group Replication member: the ALTER reaches it by itself
        if p.get('follow') and self.role != topology.REPLICA and not cluster:
            raise ConvertError('refusing: follow is for replicas and cluster members, and this server is a %s; convert '
                               'here without follow' % self.role)
        if self.role == topology.REPLICA and not p.get('follow'):
            raise ConvertError('refusing: this server is a replica; a conversion here would be a transaction of its '
                               'own (an errant GTID) and the tables would differ from its source. Convert on the '
                               'primary and let the ALTER replicate (the playbook does that for the whole topology '
                               'with convert_tables_whole_topology=true)')
        if not p.get('follow'):
            self.previous_run()
        problems = []
        if self.target not in self.engines:
            problems.append('engine %s is not loaded on this server (information_schema.ENGINES has %s with SUPPORT '
                            'YES or DEFAULT)' % (ENGINE_CLAUSE[self.target], ', '.join(self.engines)))
        started = self.clock()
        problems.extend(self.inspect(pairs))
        if problems:
            raise ConvertError('refusing to convert anything: ' + '; '.join(problems))
        todo = [t for t in self.tables if t['action'] == 'convert']
        if p.get('follow'):
            if cluster and todo:
                # the ALTER of another member reaches this one (Galera: in total order isolation): its locks here count
                self.find_blockers([(t['schema'], t['table']) for t in todo])
                if self.blockers:
                    raise ConvertError('refusing to convert anything: the ALTER reaches this %s member with the cluster, '
                                       'and open transactions or locks hold the tables here: %s'
                                       % (self.scope.name, self.blocker_text()))
            for t in self.tables:
                if t['action'] == 'convert':
                    t['result'] = 'follows_cluster' if cluster else 'follows_source'
                self.plan.append('%s: %s' % (describe_plan_entry(t), 'already %s' % t['to_engine']
                                             if t['action'] == 'already' else 'the ALTER arrives %s' % (
                                                 'with the cluster' if cluster else 'from the source')))
            return
        self.find_blockers([(t['schema'], t['table']) for t in todo])
        self.step('check tables, engines and metadata locks', started)
        if self.blockers:
            raise ConvertError('refusing to convert anything: open transactions or locks on the tables: '
                               + self.blocker_text())
        self.plan.append('SET SESSION lock_wait_timeout = %s' % int(p['lock_wait_timeout']))
        for t in self.tables:
            if t['action'] == 'already' and t.get('interrupted_before'):
                self.plan.append('%s: already %s after an interrupted run; rows and checksum compared with the ones '
                                 'that run recorded before its ALTER' % (t['name'], t['to_engine']))
            elif t['action'] == 'already':
                self.plan.append('%s: already %s, nothing to do' % (t['name'], t['to_engine']))
            else:
                self.plan.append('%s: LOCK TABLES WRITE (up to %d attempts), rows and checksum, ALTER TABLE ENGINE=%s, '
                                 'rows and checksum, UNLOCK TABLES' % (describe_plan_entry(t), int(p['retries']) + 1,
                                                                       t['to_engine']))
        if self.check_mode:
            for t in todo:
                t['result'] = 'would_convert'
            self.changed = self.changed or bool(todo)
            return
        self.check_interrupted_tables()
        if not todo:
            return
        execute(self.conn, 'SET SESSION lock_wait_timeout = %d' % int(p['lock_wait_timeout']))
        session = self.conn
        old = (self.ident or {}).get('session', {}).get('id')
        failed, interrupted = self.guarded('convert', [t['name'] for t in todo], lambda: self._convert_all(todo))
        if interrupted is not None:
            self.report_interrupted(str(interrupted), session, old)
        if failed:
            raise ConvertError(failed)

    def previous_run(self):
        """What an earlier conversion on this server left: a table it was converting when it was killed, with
        the rows and checksum it read before its ALTER (its session killed first, when it is still the same)."""
        data = self.check_interrupted()
        if data and data.get('state') != 'done' and data.get('converting'):
            entry = data['converting']
            self.previous[entry.get('name')] = entry

    def check_interrupted_tables(self):
        """A table an interrupted run was converting and that is in the target engine now: its rows and checksum
        must be the ones that run read before its ALTER (not skipped as already done)."""
        problems = []
        for t in self.tables:
            before = t.get('interrupted_before')
            if not before or t['action'] != 'already':
                continue
            t['columns'] = self.columns(t['schema'], t['table'])
            t['before'] = before
            t['after'] = self.checksum(t, 'after the interrupted run')
            problem = compare(t['name'], before, t['after'])
            if problem:
                t['result'] = 'mismatch'
                problems.append(problem)
            else:
                t['result'] = 'verified'
        if problems:
            raise ConvertError('stopped: rows or checksum differ after the interrupted run\'s conversion of %s'
                               % '; '.join(problems))

    def _convert_all(self, todo):
        failed = None
        for t in todo:
            if failed:
                t['result'] = 'not_attempted'
                continue
            failed = self.convert_one(t)
        return failed

    def convert_one(self, t):
        """Convert one table; returns None or the message that stops the run."""
        closed = self.window_closed()
        if closed:
            t['result'] = 'not_attempted'
            return 'stopped before %s: %s' % (t['name'], closed)
        self.blockers = []
        self.find_blockers([(t['schema'], t['table'])])
        if self.blockers:
            t['result'] = 'not_attempted'
            return 'stopped before %s: open transactions or locks on it: %s' % (t['name'], self.blocker_text())
        # every statement is built before the lock: a name the quoting refuses stops here, with nothing locked
        ident = qualified_name(t['schema'], t['table'])
        t['columns'] = self.columns(t['schema'], t['table'])
        content_checksum_sql(t['schema'], t['table'], t['columns'])
        if not self.run_statement(t, 'LOCK TABLES %s WRITE' % ident, 'lock'):
            t['result'] = 'failed'
            return 'stopped at %s: %s' % (t['name'], t.get('error'))
        locked = True
        try:
            failed = self._convert_locked(t, ident)
        except Interrupted:
            t['result'] = 'interrupted'
            locked = False  # nothing more on this connection: its session is killed from a fresh one
            raise
        finally:
            if locked:
                self._unlock(t)
        if failed:
            return failed
        t['engine_after'] = self.current_engine(t['schema'], t['table'])
        problem = compare(t['name'], t['before'], t['after'])
        if engine_facts.engine_key(t['engine_after'] or '') != self.target:
            problem = problem or '%s is %s after the ALTER, not %s' % (t['name'], t['engine_after'], t['to_engine'])
        if problem:
            t['result'] = 'mismatch'
            return 'stopped: rows or checksum differ after the conversion of %s' % problem
        t['result'] = 'converted'
        self.marker_data['done'].append(t['name'])
        self.save_marker(converting=None)
        return None

    def _unlock(self, t):
        """UNLOCK TABLES; a failure here is reported as a step (the lock goes with the session anyway)."""
        s = self.clock()
        try:
            execute(self.conn, 'UNLOCK TABLES')
        except pymysql.err.MySQLError as e:
            self.step('unlock', s, ok=False, target=t['name'], detail=error_text(e))
            return
        self.step('unlock', s, target=t['name'])

    def _convert_locked(self, t, ident):
        """Under the table's write lock: rows and checksum, the ALTER, rows and checksum; None or the failure."""
        t['before'] = self.checksum(t, 'before')
        self.save_marker(converting=dict(name=t['name'], engine=t['engine'], to_engine=t['to_engine'],
                                         before=t['before']))
        started = self.clock()
        try:
            execute(self.conn, 'ALTER TABLE %s ENGINE=%s' % (ident, ENGINE_CLAUSE[self.target]))
        except pymysql.err.MySQLError as e:
            self.step('alter', started, ok=False, target=t['name'], detail=error_text(e))
            t['result'] = 'failed'
            t['error'] = error_text(e)
            self.save_marker(converting=None)
            return 'ALTER TABLE %s ENGINE=%s failed: %s' % (t['name'], ENGINE_CLAUSE[self.target], error_text(e))
        self.changed = True
        rec = self.step('alter', started, target=t['name'], detail='ENGINE=%s' % ENGINE_CLAUSE[self.target])
        t['seconds'] = rec['seconds']
        t['after'] = self.checksum(t, 'after')
        self.read_role()
        return None

    def report_interrupted(self, signal_text, session, old):
        """After a signal (the engine's finally killed this run's session from a fresh connection, so an ALTER
        under way rolls back and the table lock goes with the session): wait until the session is gone and say
        where each table stands."""
        if self.conn is session:
            raise ConvertError('%s: could not reconnect to kill the session (connection %s) of this run: kill it by '
                               'hand (an ALTER under way then rolls back) and check the engine of %s'
                               % (signal_text, old, ', '.join(t['name'] for t in self.tables)))
        deadline = self.clock() + 30
        while old is not None and self.clock() < deadline and query_one(
                self.conn, 'SELECT ID FROM information_schema.PROCESSLIST WHERE ID = %s', (old,)):
            self.sleep(0.2)
        where = []
        for t in self.tables:
            if t.get('result') == 'interrupted':
                t['engine_after'] = self.current_engine(t['schema'], t['table'])
                if engine_facts.engine_key(t['engine_after'] or '') == self.target:
                    self.changed = True
                where.append('%s is %s' % (t['name'], t['engine_after']))
            elif t.get('result') == 'pending':
                t['result'] = 'not_attempted'
        raise ConvertError('%s: the session was killed, so an ALTER under way was rolled back and the table lock '
                           'released%s; the remaining tables were not attempted'
                           % (signal_text, (' (%s)' % ', '.join(where)) if where else ''))

    # ------------------------------------------------------------ replicas: verify what replication applied
    def run_verify(self, pairs):
        """Read-only: each table must be in the target engine here, with the rows and checksum expected
        (the values the primary reported after its conversion)."""
        expected = self.p.get('expect') or {}
        problems = []
        for db, table in pairs:
            name = '%s.%s' % (db, table)
            engine = self.current_engine(db, table)
            entry = dict(name=name, schema=db, table=table, exists=engine is not None or bool(
                query_one(self.conn, 'SELECT 1 AS x FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND '
                                     'TABLE_NAME = %s', (db, table))), engine=engine,
                         to_engine=ENGINE_CLAUSE[self.target], result='pending')
            self.tables.append(entry)
            if not entry['exists']:
                entry['result'] = 'absent'
                problems.append('%s does not exist here' % name)
                continue
            if engine_facts.engine_key(engine or '') != self.target:
                entry['result'] = 'not_converted'
                problems.append('%s is %s here, not %s' % (name, engine, entry['to_engine']))
                continue
            entry['columns'] = self.columns(db, table)
            entry['after'] = self.checksum(entry, 'here')
            want = expected.get(name)
            problem = compare(name, want, entry['after']) if want else None
            if problem:
                entry['result'] = 'mismatch'
                problems.append('%s (expected from the source, found here)' % problem)
            else:
                entry['result'] = 'verified'
                self.verified.append(name)
        self.plan.append('verify only: %s' % ', '.join('%s.%s' % pair for pair in pairs))
        if problems:
            raise ConvertError('verification failed: ' + '; '.join(problems))
