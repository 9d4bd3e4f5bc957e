# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guarded DROP TABLE of dbfleet.innodb.drop_tables: a client of the guarded-change engine (guarded/engine.py).

Order of work, so that bad input never changes anything:
  1. pure checks: names, window, confirmation (no connection yet);
  2. read-only checks on the server: each table exists, is a base table outside the
     system schemas, is not mapped by the memcached plugin, is not referenced by a
     foreign key from a table that stays, nobody holds a metadata lock on it; sizes;
  3. the guarded part (GuardedChange.guarded): AHI off (only where the flavor/version needs it and it
     was on), each DROP (or RENAME to a holding schema) with a short lock_wait_timeout and bounded
     retries, then AHI back to what it was, also when a drop fails, times out or the process gets
     SIGTERM/SIGINT/SIGHUP; the off-peak window is checked again before each table and each retry.
  4. the engine's marker per server says that a guarded part is under way; the next run checks what an
     interrupted run left before it acts on it (guarded/engine.py), counts the tables the old run already
     dropped as done, and cancels a follower whose controller went away. After a complete run the marker
     records what was dropped, so a rerun of the same drop has nothing left to do instead of failing.

What is the drop's own: the AHI decision per flavor and version, the holding schema names (both with its options in
guarded/drop_rules.py, pure), the memcached-mapping and foreign-key refusals, and the replica side (follow).
"""

from __future__ import annotations

import os

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import execute, is_plain_identifier, query, query_one
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.drop_rules import (
    LIFT_NEEDS_NO_BINLOG, STAGED_NOT_WITH_RENAME, DropError, decide_ahi, holding_name, parse_table_names)
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.engine import AHI, GuardedChange
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import (
    PROTECTED_SCHEMAS, GuardedError, now_stamp, onoff, plan_size, qualified_name, quote_name)
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.staged_removal import StagedRemoval

try:
    import pymysql
except ImportError:  # pragma: no cover - reported by the module
    pymysql = None

# Where the drop keeps its per-server markers unless the task gives state_dir.
DEFAULT_STATE_DIR = '~/.dbfleet/drop_tables'


# ---------------------------------------------------------------- the drop
class Drop(GuardedChange):
    """One run of drop_tables on one server (the drop, the rename, or the replica side)."""

    module = 'drop_tables'
    marker_prefix = 'server'
    default_state_dir = DEFAULT_STATE_DIR

    def __init__(self, params, **kwargs):
        GuardedChange.__init__(self, params, **kwargs)
        self.binlog_disabled = False
        self.follow = None
        self._previous_dropped = set()
        self.staged = None  # the StagedRemoval of a run with file_removal=staged

    def report(self):
        result = GuardedChange.report(self)
        result.update(
            dropped=['%s.%s' % (t['schema'], t['table']) for t in self.tables if t['result'] in ('dropped', 'renamed')],
            renamed=dict(('%s.%s' % (t['schema'], t['table']), t['renamed_to'])
                         for t in self.tables if t.get('renamed_to') and t['result'] == 'renamed'),
            sizes=dict((t['name'], t.get('size')) for t in self.tables),
            ahi=self.ahi, binlog_disabled=self.binlog_disabled, super_read_only=self.super_read_only,
            follow=self.follow, file_removal=self.staged.report() if self.staged else dict(mode='immediate'))
        return result

    # ------------------------------------------------------------ the staged file removal (staged_removal.py)
    def prepare_staged(self, tables):
        """With file_removal=staged: finish what an interrupted run left in the staging directory, then read the
        files of tables from the catalog and check the staging directory, the free space and the schedule;
        DropError before anything is linked or dropped. The plan says which files are linked and how long the
        shrinking takes."""
        if self.p.get('file_removal') != 'staged':
            return
        started = self.clock()
        self.staged = StagedRemoval(self.p, self.server_vars.get('datadir') or '', check_mode=self.check_mode,
                                    sleep=self.sleep, clock=self.clock, run_id=self.p.get('run_id'))
        leftovers = self.staged.finish_leftovers()
        self.plan.extend(leftovers['actions'])
        catalog = capability_facts.capability('tablespace_files_catalog', self.identity.flavor, self.identity.version)
        problems = self.staged.plan_tables(lambda sql, args: query(self.conn, sql, args), catalog, tables)
        if not problems:
            problems = self.staged.check_staging()
        self.changed = self.changed or self.staged.changed
        self.step('plan the staged file removal', started, ok=not problems,
                  detail=self.staged.schedule['text'] if self.staged.schedule else None)
        if problems:
            raise DropError('refusing to drop anything (file_removal=staged): ' + '; '.join(problems))

    def finish_staged(self):
        """After the guarded part: links of tables that still exist go at once, the rest are shrunk and removed."""
        if self.staged is None or self.check_mode:
            return
        started = self.clock()
        for t in self.tables:
            if t['result'] in ('dropped', 'dropped_by_replication', 'dropped_by_cluster'):
                self.staged.dropped_table(t['name'])
            else:
                self.staged.release_table(t['name'])
        self.staged.shrink_all()
        self.changed = self.changed or self.staged.changed
        self.step('shrink and remove the staged files', started,
                  detail='%d removed, %d released' % (len(self.staged.removed), len(self.staged.released)))

    def previous_run(self):
        """What an earlier run on this server left: its dropped tables count as done (an interrupted run's
        whole list: its session may have dropped them after the process died)."""
        data = self.check_interrupted()
        if not data:
            return
        done = set(data.get('done') or data.get('dropped') or [])
        if data.get('state') == 'done':
            self._previous_dropped = done
        else:
            self._previous_dropped = set(data.get('tables') or []) | done

    # ------------------------------------------------------------ read-only checks
    def inspect_tables(self, pairs, must_exist=True):
        """Fill self.tables from information_schema; raises DropError on any refusal."""
        problems = []
        for db, table in pairs:
            row = self.table_row(db, table)
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
            stats = sum(int(row[k] or 0) for k in ('DATA_LENGTH', 'INDEX_LENGTH'))
            entry = dict(name=name, schema=row['TABLE_SCHEMA'], table=row['TABLE_NAME'], exists=True,
                         engine=row['ENGINE'], rows_estimate=int(row['TABLE_ROWS'] or 0), stats_bytes=stats,
                         free_bytes=int(row['DATA_FREE'] or 0), result='pending', attempts=0)
            entry.update(self.file_size(row['TABLE_SCHEMA'], row['TABLE_NAME']))
            entry.update(plan_size(stats, entry.get('file_bytes')))
            self.tables.append(entry)
        present = [(t['schema'], t['table']) for t in self.tables if t['exists']]
        problems.extend(self._memcached_mapped(present))
        problems.extend(self._foreign_keys(present))
        if problems:
            raise DropError('refusing to drop anything: ' + '; '.join(problems))

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

    # ------------------------------------------------------------ the drop
    def run(self):
        """Everything after the pure checks. Raises GuardedError for refusals and failures."""
        p = self.p
        if p.get('finish_staged_only'):
            return self.run_finish_staged()
        pairs = parse_table_names(p['tables'])
        if p.get('lift_super_read_only') and not p.get('disable_binlog') and not p.get('follow'):
            raise DropError(LIFT_NEEDS_NO_BINLOG)
        if p.get('file_removal') == 'staged' and p.get('rename_first'):
            raise DropError(STAGED_NOT_WITH_RENAME)
        self.connect_and_identify()
        self.previous_run()
        self.read_replica_hosts()
        if p.get('follow'):
            return self.run_follow(pairs)
        started = self.clock()
        self.inspect_tables(pairs)
        present = [(t['schema'], t['table']) for t in self.tables if t['exists']]
        self.find_blockers(present)
        self.step('check tables, foreign keys and metadata locks', started)
        if self.blockers:
            raise DropError('refusing to drop anything: open transactions or locks on the tables: '
                            + self.blocker_text())
        innodb = sum(1 for t in self.tables if (t.get('engine') or '').lower() == 'innodb')
        ahi_now = onoff(self.server_vars.get(AHI))
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
            stamp = now_stamp()
            for t in self.tables:
                t['renamed_to'] = '%s.%s' % (holding, holding_name(t['schema'], t['table'], stamp))
                if t['schema'].lower() == holding.lower():
                    raise DropError('%s is already in the holding schema %s; drop it without rename_first'
                                    % (t['name'], holding))
        self.prepare_staged([t for t in self.tables if t['exists']])
        self._plan(rename, holding, sro, toggle)
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
        failed, interrupted = self.guarded('rename' if rename else 'drop', [t['name'] for t in self.tables],
                                           lambda: self._drop_all(rename, holding, sro, toggle))
        if interrupted is None:
            self.finish_staged()
        if interrupted is not None:
            for t in self.tables:
                if t['result'] == 'pending':
                    t['result'] = 'interrupted'
            raise DropError('%s; AHI is %s (was %s before)' % (interrupted, self.ahi['after'], self.ahi['before']))
        if failed:
            raise DropError('drop failed: %s; AHI is %s (was %s before)' % (failed, self.ahi['after'], self.ahi['before']))

    # ------------------------------------------------------------ the drop's own changes around the statements
    def switch_ahi_off(self):
        """AHI OFF for the guarded part, recorded in the marker first (a signal during the SET must still
        restore), then the value and the SET time the next run compares with."""
        s = self.clock()
        self.ahi['toggled'] = True
        self.save_marker(ahi_toggled=True, ahi_set='OFF')
        self.set_ahi('OFF')
        self.changed = True
        now = self.read_ahi()
        self.save_marker(ahi_set_info=self.read_set_info(AHI))
        self.step('switch AHI OFF', s, ok=(now == 'OFF'), detail='reads %s' % now)
        self._ahi_off_at = self.clock()
        return now

    def lift_super_read_only(self):
        s = self.clock()
        self.save_marker(super_read_only_lifted=True)
        execute(self.conn, 'SET GLOBAL super_read_only = OFF')
        self.super_read_only['lifted'] = True
        self.changed = True
        self.step('lift super_read_only', s)

    def _plan(self, rename, holding, sro, toggle):
        """The plan, said the same way in check mode and in a real run."""
        p = self.p
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
        if self.staged is not None:
            self.plan.extend(self.staged.plan_lines())
        if rename:
            self.plan.insert(0, 'CREATE DATABASE IF NOT EXISTS %s' % holding)

    def _drop_all(self, rename, holding, sro, toggle):
        """The guarded part's body: None, or the message that stops the run."""
        p = self.p
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
            execute(self.conn, 'CREATE DATABASE IF NOT EXISTS %s' % quote_name(holding))
            self.step('create holding schema', s, target=holding)
        if sro == 'ON':
            self.lift_super_read_only()
        if toggle:
            now = self.switch_ahi_off()
            if now != 'OFF':
                raise DropError('SET GLOBAL innodb_adaptive_hash_index = OFF did not take effect (reads %s)' % now)
        failed = None
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
            ident = qualified_name(t['schema'], t['table'])
            if rename:
                hdb, htbl = t['renamed_to'].split('.')
                ok = self.run_statement(t, 'RENAME TABLE %s TO %s' % (ident, qualified_name(hdb, htbl)), 'rename')
                t['result'] = 'renamed' if ok else 'failed'
            else:
                if self.staged is not None:
                    try:
                        self.staged.link_table(t['name'])
                    except (OSError, GuardedError) as e:
                        self.staged.release_table(t['name'])
                        t['result'] = 'not_attempted'
                        failed = 'stopped before %s: its files could not be linked (%s)' % (t['name'], e)
                        continue
                ok = self.run_statement(t, 'DROP TABLE %s' % ident, 'drop')
                t['result'] = 'dropped' if ok else 'failed'
                if self.staged is not None:
                    (self.staged.dropped_table if ok else self.staged.release_table)(t['name'])
            if ok:
                self.changed = True
                self.marker_data['done'].append(t['name'])
                self.marker.write(self.marker_data)
            else:
                failed = '%s: %s' % (t['name'], t.get('error'))
        return failed

    def run_finish_staged(self):
        """The clean-up mode: finish what interrupted runs left in the staging directory; drops nothing."""
        self.connect_and_identify()
        started = self.clock()
        self.staged = StagedRemoval(self.p, self.server_vars.get('datadir') or '', check_mode=self.check_mode,
                                    sleep=self.sleep, clock=self.clock, run_id=self.p.get('run_id'))
        leftovers = self.staged.finish_leftovers()
        self.plan.extend(leftovers['actions'] or ['nothing left in %s' % self.staged.staging])
        self.changed = self.changed or self.staged.changed
        self.step('finish the staged files of earlier runs', started,
                  detail='%d removed, %d released' % (len(self.staged.removed), len(self.staged.released)))

    # ------------------------------------------------------------ replica side
    def run_follow(self, pairs):
        """Replica side of a replicated drop: AHI off (where needed) until replication has applied
        the drop (the tables are gone here), then AHI back; never drops anything itself."""
        p = self.p
        started = self.clock()
        self.inspect_tables(pairs, must_exist=False)
        present = [t for t in self.tables if t['exists']]
        if self.scope.ddl_reaches_members and present and not self.own_run_alive:
            # A cluster member: the statement run on another member reaches this one by itself (Galera: in total
            # order isolation, aborting what holds a lock here), so the metadata-lock check applies here too (not in
            # the readiness probe, which would see this run's own follower looking at the table).
            self.find_blockers([(t['schema'], t['table']) for t in present])
            self.step('check tables and metadata locks (the %s cluster\'s drop reaches this member)' % self.scope.name,
                      started)
            if self.blockers:
                raise DropError('refusing to drop anything: the drop reaches this %s member with the cluster, and open '
                                'transactions or locks hold the tables here: %s' % (self.scope.name, self.blocker_text()))
        else:
            self.step('check tables', started)
        ahi_now = onoff(self.server_vars.get(AHI))
        self.ahi['before'] = self.ahi['after'] = ahi_now
        innodb = sum(1 for t in present if (t.get('engine') or '').lower() == 'innodb')
        strategy, toggle, reason = decide_ahi(self.ahi['requested'], self.identity.flavor, self.identity.version,
                                              ahi_now, innodb)
        self.ahi.update(strategy=strategy, reason=reason)
        timeout = float(p.get('follow_timeout') or 600)
        cancel_file = p.get('cancel_file')
        self.follow = dict(outcome=None, waited_seconds=0.0, timeout=timeout, cancel_file=cancel_file)
        self.prepare_staged(present)
        if not present:
            self.follow['outcome'] = 'already_absent'
            self.plan.append('nothing to wait for: the tables are not here')
            return
        if toggle:
            self.plan.append('SET GLOBAL innodb_adaptive_hash_index = OFF (it is ON)')
        self.plan.append('wait until %s has dropped %s (at most %ss)' % (
            'the cluster' if self.scope.ddl_reaches_members else 'replication', ', '.join(t['name'] for t in present),
            int(timeout)))
        if toggle:
            self.plan.append('SET GLOBAL innodb_adaptive_hash_index = ON (always)')
        if self.staged is not None:
            self.plan.extend(self.staged.plan_lines())
        if self.check_mode:
            self.follow['outcome'] = 'check_mode'
            self.changed = self.changed or bool(toggle)
            return
        self._wait_start = None
        _failed, interrupted = self.guarded('follow', [t['name'] for t in present],
                                            lambda: self._wait_for_replication(present, toggle, timeout, cancel_file))
        if interrupted is not None:
            self.follow['outcome'] = 'interrupted'
        for t in present:
            if t['result'] == 'pending':
                t['result'] = 'still_present'
        if interrupted is None:
            self.finish_staged()
        if interrupted is not None:
            raise DropError('%s; AHI is %s (was %s before)' % (interrupted, self.ahi['after'], self.ahi['before']))
        if _failed:
            raise DropError('%s; AHI is %s (was %s before)' % (_failed, self.ahi['after'], self.ahi['before']))
        if self.follow['outcome'] == 'timeout':
            raise DropError('replication did not apply the drop of %s within %ss; AHI is %s (was %s before)' % (
                ', '.join(t['name'] for t in present if t['result'] == 'still_present'), int(timeout),
                self.ahi['after'], self.ahi['before']))

    def _wait_for_replication(self, present, toggle, timeout, cancel_file):
        if self.staged is not None:
            for t in present:
                try:
                    self.staged.link_table(t['name'])
                except (OSError, GuardedError) as e:
                    for other in present:
                        self.staged.release_table(other['name'])
                    self.staged = None
                    return 'the files of %s could not be linked (%s): nothing waited for' % (t['name'], e)
        if toggle:
            self.switch_ahi_off()
        self._wait_start = self.clock()
        remaining = list(present)
        while True:
            remaining = [t for t in remaining if query_one(
                self.conn, 'SELECT 1 AS x FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND '
                           'TABLE_NAME = %s', (t['schema'], t['table'])) is not None]
            for t in present:
                if t not in remaining:
                    t['result'] = self.scope.followed_result
            if not remaining:
                self.follow['outcome'] = 'applied'
                return None
            if cancel_file and os.path.exists(cancel_file):
                self.follow['outcome'] = 'cancelled'
                return None
            if self.clock() - self._wait_start >= timeout:
                self.follow['outcome'] = 'timeout'
                return None
            self.sleep(float(self.p.get('poll_interval') or 0.2))

    def after_body(self, interrupted):
        if self.follow is not None and getattr(self, '_wait_start', None) is not None:
            if interrupted is not None:
                self.follow['outcome'] = 'interrupted'
            self.follow['waited_seconds'] = round(self.clock() - self._wait_start, 3)
            self.step('wait for replication to apply the drop', self._wait_start,
                      ok=self.follow['outcome'] == 'applied', detail=self.follow['outcome'])
        GuardedChange.after_body(self, interrupted)
