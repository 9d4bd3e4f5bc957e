# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switchover of an asynchronous GTID replication primary on its servers (module
dbfleet.innodb.replication_switchover, docs/topology.md "Switchover"); its plan and checks are
replication/switchover_plan.py's (filter dbfleet.innodb.switchover_plan, on the controller).

- demote / restore / promote / repoint run on one server each (delegated to it): the old primary made read-only
  with its write sessions handled, the candidate waiting for the old primary's whole GTID set within a timeout and
  promoted, each other server pointed at the new primary with GTID auto-positioning. Statement spellings are
  capability_facts.py's (capability replica_statements).
- switch runs the demotion, the promotion and the writer endpoint's move back to back in one run, both
  connections open (step switch).

What is undone when: a failure before the promotion puts the old primary back as it was (restore) and the
endpoint back; after it, the run stops with the topology consistent (the new primary writable) and names what
remains. The restart role's roles/restart/tasks/switchover.yml runs the steps in that order.
"""

from __future__ import annotations

import time

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import gtid_sets
from ansible_collections.dbfleet.innodb.plugins.module_utils.values import onoff

SESSION_MODES = ('kill', 'wait')


# ---------------------------------------------------------------- on one server (module replication_switchover)
class SwitchoverError(Exception):
    """A step that could not be made; the message says what was done and what was not. before: the demoted server's
    read_only values to put back (None: nothing of it was read)."""

    def __init__(self, message, before=None):
        super().__init__(message)
        self.before = before


def _identity(conn, global_variables):
    return server_identity.identity_from_variables(global_variables(conn, server_identity.DETECT_VARIABLES))


def position(conn, global_variables, identity):
    """The server's whole GTID set (MySQL gtid_executed) / what it wrote to its binary log (MariaDB gtid_binlog_pos)."""
    model = capability_facts.capability('gtid_model', identity.flavor, identity.version)
    name = 'gtid_executed' if model == 'mysql' else 'gtid_binlog_pos'
    return ''.join(str(global_variables(conn, [name]).get(name) or '').split())


def _client_sessions(conn, query):
    """The sessions that could still write: every connection but this one, the replication threads (Binlog Dump,
    the replica's own) and the server's daemons."""
    rows = query(conn, 'SELECT ID, USER, HOST, COMMAND, TIME FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()')
    return [r for r in rows
            if str(r.get('USER') or '') not in ('system user', 'event_scheduler', 'DELAYED', '')
            and not str(r.get('COMMAND') or '').startswith(('Binlog Dump', 'Daemon', 'Slave_', 'Connect'))]


def _open_transactions(conn, query):
    rows = query(conn, 'SELECT trx_mysql_thread_id AS id FROM information_schema.INNODB_TRX '
                       'WHERE trx_mysql_thread_id <> CONNECTION_ID()')
    return [r['id'] for r in rows]


def demote(conn, query, execute, global_variables, sessions='kill', sessions_timeout=10, check_mode=False,
           clock=time.monotonic, sleep=time.sleep):
    """Make the primary read-only for everyone (MySQL super_read_only; MariaDB read_only, and its sessions ended or
    waited for, since read_only lets privileged users write) and read its whole GTID set after.

    Returns dict(changed, before={variable: value} to restore, position, killed, msg)."""
    identity = _identity(conn, global_variables)
    variable = capability_facts.capability('demote_variable', identity.flavor, identity.version)
    names = ['read_only'] + (['super_read_only'] if variable == 'super_read_only' else [])
    before = dict((n, str(v)) for n, v in global_variables(conn, names).items())
    result = dict(changed=False, before=before, variable=variable, position=None, killed=[])
    if check_mode:
        result.update(changed=True, position=position(conn, global_variables, identity),
                      msg='would set %s = ON and %s its write sessions, then read its GTID set' % (variable, sessions))
        return result
    # SET GLOBAL read_only waits for every explicit table lock and open transaction to end, and new writes queue
    # behind it meanwhile: bounded by lock_wait_timeout, the sessions' limit.
    execute(conn, 'SET SESSION lock_wait_timeout = %d' % max(1, int(sessions_timeout)))
    try:
        execute(conn, 'SET GLOBAL %s = ON' % variable)
    except Exception as err:  # pylint: disable=broad-except
        raise SwitchoverError('%s = ON was refused within %d s, nothing was changed: %s'
                              % (variable, sessions_timeout, _error(err)), before) from err
    result['changed'] = True
    try:
        _handle_sessions(conn, query, execute, sessions, sessions_timeout, result, clock, sleep)
        result['position'] = position(conn, global_variables, identity)
    except Exception as err:  # pylint: disable=broad-except
        # A module that changed something to do its job puts it back: the old primary writable again.
        try:
            back = restore(conn, execute, global_variables, before)['msg']
        except Exception as again:  # pylint: disable=broad-except
            back = 'could NOT put %s back (%s)' % (variable, _error(again))
        raise SwitchoverError('%s; %s' % (_error(err), back), before) from err
    result['msg'] = '%s = ON; %s; GTID set %s' % (
        variable, ('%d session(s) killed' % len(result['killed'])) if sessions == 'kill' else 'no open transaction',
        result['position'])
    return result


def _error(err):
    """One line for an error: a server error's (code) text, else the error's own text."""
    args = getattr(err, 'args', ())
    if not isinstance(err, SwitchoverError) and len(args) >= 2:
        return '(%s) %s' % (args[0], args[1])
    return str(err)


def _handle_sessions(conn, query, execute, sessions, sessions_timeout, result, clock, sleep):
    """The old primary's other client sessions, once it is read-only: killed, or their open transactions waited for
    at most sessions_timeout seconds (SwitchoverError after)."""
    deadline = clock() + sessions_timeout
    if sessions == 'kill':
        for row in _client_sessions(conn, query):
            try:
                execute(conn, 'KILL %d' % int(row['ID']))
                result['killed'].append(dict(id=int(row['ID']), user=row.get('USER'), host=row.get('HOST')))
            except Exception:  # pylint: disable=broad-except
                pass            # ended on its own meanwhile
        # KILL only flags a session: one that was committing may still commit (MariaDB's read_only lets a privileged
        # user write). The GTID set is read once they are all gone.
        killed = set(k['id'] for k in result['killed'])
        while killed:
            killed &= set(int(r['ID']) for r in _client_sessions(conn, query))
            if not killed:
                break
            if clock() >= deadline:
                raise SwitchoverError('%d killed session(s) still there after %d s (ids %s)'
                                      % (len(killed), sessions_timeout, ', '.join(str(i) for i in sorted(killed))))
            sleep(0.01)
    else:
        while True:
            open_trx = _open_transactions(conn, query)
            if not open_trx:
                break
            if clock() >= deadline:
                raise SwitchoverError('%d session(s) still hold open transactions after %d s (ids %s)'
                                      % (len(open_trx), sessions_timeout, ', '.join(str(i) for i in open_trx)))
            sleep(0.2)


def restore(conn, execute, global_variables, before, check_mode=False):
    """Put read_only / super_read_only back to the values demote() read (the old primary writable again)."""
    now = dict((n, str(v)) for n, v in global_variables(conn, list(before)).items())
    changes = [(n, v) for n, v in sorted(before.items(), key=lambda kv: kv[0] != 'super_read_only')
               if now.get(n) != v]
    if not check_mode:
        for name, value in changes:
            execute(conn, 'SET GLOBAL %s = %s' % (name, 'ON' if onoff(value) else 'OFF'))
    return dict(changed=bool(changes), msg=('%s %s' % ('would set' if check_mode else 'set', ', '.join(
        '%s = %s' % kv for kv in changes))) if changes else 'read_only already as it was')


def promote(conn, query, execute, global_variables, wait_for, timeout, expect_source_server_id=None, check_mode=False):
    """On the candidate: wait for the old primary's whole GTID set (WAIT_FOR_EXECUTED_GTID_SET / MASTER_GTID_WAIT,
    timeout seconds), then stop replication, forget the source and become writable."""
    identity = _identity(conn, global_variables)
    facts = topology.read_server(conn, query, global_variables)
    stmts = capability_facts.capability('replica_statements', identity.flavor, identity.version)
    model = capability_facts.capability('gtid_model', identity.flavor, identity.version)
    if facts.get('error'):
        raise SwitchoverError(facts['error'])
    if facts['role'] != topology.REPLICA:
        raise SwitchoverError('not a replica: nothing to promote')
    if not ''.join(str(wait_for or '').split()):
        raise SwitchoverError('no GTID set to wait for: the old primary\'s position is needed (nothing was changed)')
    if expect_source_server_id is not None and not any(
            c.get('source_server_id') == int(expect_source_server_id) for c in facts['channels']):
        raise SwitchoverError('does not replicate from server_id %s' % expect_source_server_id)
    sql, ok = gtid_sets.gtid_wait_sql(model)
    writable = ['super_read_only', 'read_only'] if facts.get('super_read_only') is not None else ['read_only']
    planned = ['%s(%s, %d)' % (sql.split('(', maxsplit=1)[0].replace('SELECT ', ''), wait_for, timeout), stmts['stop'],
               stmts['reset_all']] + ['SET GLOBAL %s = OFF' % n for n in writable]
    if check_mode:
        return dict(changed=True, msg='would run: ' + '; '.join(planned), statements=planned)
    started = time.monotonic()
    rows = query(conn, sql, (wait_for, int(timeout)))
    value = list(rows[0].values())[0] if rows else None
    if value is None or int(value) != ok:
        raise SwitchoverError('did not reach the old primary\'s GTID set %s within %d s (%s returned %s)'
                              % (wait_for, timeout, sql.split('(', maxsplit=1)[0].replace('SELECT ', ''), value))
    waited = time.monotonic() - started
    execute(conn, stmts['stop'])
    execute(conn, stmts['reset_all'])
    for name in writable:
        execute(conn, 'SET GLOBAL %s = OFF' % name)
    return dict(changed=True, statements=planned, waited=round(waited, 3),
                msg='reached %s in %.2f s; %s; %s; writable' % (wait_for, waited, stmts['stop'], stmts['reset_all']))


def repoint_statements(identity, source_host, source_port, user=None, password=None, ssl=None, was_primary=False):
    """[(statement, args)] that point a server at a new source with GTID auto-positioning (password as an argument,
    never in the text)."""
    stmts = capability_facts.capability('replica_statements', identity.flavor, identity.version)
    model = capability_facts.capability('gtid_model', identity.flavor, identity.version)
    out = []
    if not was_primary:
        out.append((stmts['stop'], None))
    elif model == 'mariadb':
        # The demoted primary's own writes are in its binary log, not in gtid_slave_pos: replicate from there on.
        out.append(('SET GLOBAL gtid_slave_pos = @@GLOBAL.gtid_binlog_pos', None))
    options = ['%s = %%s' % stmts['host'], '%s = %%s' % stmts['port']]
    args = [source_host, int(source_port)]
    if user:
        options.append('%s = %%s' % stmts['user'])
        args.append(user)
    if password is not None:
        options.append('%s = %%s' % stmts['password'])
        args.append(password)
    if ssl is not None:
        options.append('%s = %d' % (stmts['ssl'], 1 if ssl else 0))
    options.append(stmts['gtid'])
    out.append(('%s %s' % (stmts['change'], ', '.join(options)), tuple(args)))
    out.append((stmts['start'], None))
    return out


def repoint(conn, query, execute, global_variables, source_host, source_port, user=None, password=None, ssl=None,
            check_mode=False):
    """Point this server (a replica of the old primary, or the old primary itself) at the new primary."""
    identity = _identity(conn, global_variables)
    facts = topology.read_server(conn, query, global_variables)
    if facts.get('error'):
        raise SwitchoverError(facts['error'])
    was_primary = facts['role'] == topology.PRIMARY
    if was_primary and not user:
        raise SwitchoverError('was a primary: replication_user (and replication_password) are needed to repoint it')
    planned = repoint_statements(identity, source_host, source_port, user, password, ssl, was_primary)
    shown = [statement for statement, _args in planned]
    if check_mode:
        return dict(changed=True, statements=shown, msg='would run: ' + '; '.join(shown))
    for statement, args in planned:
        execute(conn, statement, args)
    return dict(changed=True, statements=shown, msg='replicates from %s:%s: %s' % (source_host, source_port, '; '.join(shown)))


# ---------------------------------------------------------------- the whole switch in one run (step switch)
SWITCH_STEPS = ('prepare', 'drain', 'demote', 'promote', 'promoted', 'done')


def switch(primary, candidate, query, execute, global_variables, sessions='kill', sessions_timeout=10, timeout=30,
           expect_source_server_id=None, endpoint=None, check_mode=False, clock=time.monotonic):
    """The switch of the primary role from the server behind the connection primary to the one behind candidate, in
    one run with both connections open (module replication_switchover, step switch), so the writers' outage is the
    demotion, the candidate's last wait, its promotion and the endpoint move back to back.

    Before any change (prepare): both servers read, the candidate replicating from the primary and caught up with
    everything the primary had committed so far (the same GTID wait, timeout seconds), the endpoint's state read.
    Then drain (endpoint(state, check_mode), when given: writer_endpoint.move), demote, promote, endpoint moved.
    A failure before the promotion puts the primary's read_only back and the endpoint back on it, then raises
    SwitchFailed naming the step; after the promotion it raises SwitchFailed with stage promoted (the new primary
    writable; what remains is the caller's). Returns dict(changed, stage, before, position, killed, statements,
    commands, timings={step: seconds since the start}, window (seconds from the drain to the endpoint on the
    candidate), msg)."""
    started = clock()
    timings = {}
    result = dict(changed=False, stage='prepare', before=None, position=None, killed=[], statements=[], commands=[],
                  timings=timings, window=None)

    def mark(step):
        timings[step] = round(clock() - started, 3)

    # prepare: nothing is changed before everything that can be checked was.
    try:
        source_id = _prepare(primary, candidate, query, global_variables, timeout, expect_source_server_id, endpoint,
                             result)
    except SwitchoverError as err:
        raise SwitchFailed('prepare', result, str(err), 'nothing had been changed')
    except Exception as err:  # pylint: disable=broad-except  # the server, the socket: nothing changed yet either
        raise SwitchFailed('prepare', result, _error_text(err), 'nothing had been changed')
    mark('prepare')
    planned = []
    try:
        result['stage'] = 'drain'
        if endpoint:
            drained = endpoint('drained', check_mode)
            result['commands'] += drained['commands']
            result['changed'] = result['changed'] or drained['changed']
            planned.append(drained['msg'])
        mark('drain')
        result['stage'] = 'demote'
        demoted = demote(primary, query, execute, global_variables, sessions, sessions_timeout, check_mode)
        result.update(before=demoted['before'], position=demoted['position'], killed=demoted['killed'])
        result['changed'] = result['changed'] or demoted['changed']
        planned.append(demoted['msg'])
        mark('demote')
        result['stage'] = 'promote'
        if not check_mode:
            result['position'] = _settled(primary, candidate, query, global_variables, demoted['position'], timeout,
                                          clock)
        promoted = promote(candidate, query, execute, global_variables, result['position'], timeout, source_id,
                           check_mode)
        result.update(statements=promoted['statements'], waited=promoted.get('waited'), changed=True)
        planned.append(promoted['msg'])
        mark('promote')
    except Exception as err:  # pylint: disable=broad-except  # every failure before the promotion puts things back
        raise SwitchFailed(result['stage'], result, _error_text(err),
                           _put_back(primary, execute, global_variables, result, endpoint, check_mode))
    result['stage'] = 'promoted'
    if endpoint:
        try:
            moved = endpoint('moved', check_mode)
        except Exception as err:  # pylint: disable=broad-except
            raise SwitchFailed('promoted', result, 'the writer endpoint could not be put on the new primary: %s'
                               % _error_text(err))
        result['commands'] += moved['commands']
        planned.append(moved['msg'])
    mark('endpoint')
    result['stage'] = 'done'
    window = round(timings['endpoint'] - timings['prepare'], 3)
    result['window'] = window
    if check_mode:
        result['msg'] = '; '.join(planned)         # each step's own 'would ...'
    else:
        result['msg'] = ('%s; writes stopped for %.2f s (%s)' % (
            '; '.join(planned), window,
            ', '.join('%s %.3f' % (s, timings[s]) for s in ('prepare', 'drain', 'demote', 'promote', 'endpoint'))))
    return result


def _settled(primary, candidate, query, global_variables, wanted, timeout, clock=time.monotonic):
    """The old primary's GTID set once the candidate has applied it and it did not grow meanwhile (a late commit of
    a session that was ending): waits for wanted, reads the set again, and again while it grew, within timeout."""
    identity = _identity(candidate, global_variables)
    sql, ok = gtid_sets.gtid_wait_sql(capability_facts.capability('gtid_model', identity.flavor, identity.version))
    primary_identity = _identity(primary, global_variables)
    deadline = clock() + timeout
    while True:
        left = max(1, int(deadline - clock()))
        rows = query(candidate, sql, (wanted, left))
        value = list(rows[0].values())[0] if rows else None
        if value is None or int(value) != ok:
            raise SwitchoverError('the candidate did not reach the old primary\'s GTID set %s within %d s' % (wanted, timeout))
        now = position(primary, global_variables, primary_identity)
        if now == wanted:
            return wanted
        if clock() >= deadline:
            raise SwitchoverError('the old primary\'s GTID set still grows after it was made read-only (%s, then %s)'
                                  % (wanted, now))
        wanted = now


def _prepare(primary, candidate, query, global_variables, timeout, expect_source_server_id, endpoint, result):
    """The checks of switch() before any change; fills result['before'] (the primary's read_only values). Returns
    the server_id the candidate must replicate from."""
    primary_facts = topology.read_server(primary, query, global_variables)
    if primary_facts.get('error') or primary_facts.get('role') != topology.PRIMARY:
        raise SwitchoverError('the old primary: %s' % (primary_facts.get('error') or
                                                       'not a primary (it replicates from another server)'))
    source_id = expect_source_server_id if expect_source_server_id is not None else primary_facts.get('server_id')
    identity = _identity(primary, global_variables)
    variable = capability_facts.capability('demote_variable', identity.flavor, identity.version)
    names = ['read_only'] + (['super_read_only'] if variable == 'super_read_only' else [])
    result['before'] = dict((n, str(v)) for n, v in global_variables(primary, names).items())
    facts = topology.read_server(candidate, query, global_variables)
    if facts.get('error') or facts.get('role') != topology.REPLICA:
        raise SwitchoverError('the candidate: %s' % (facts.get('error') or 'not a replica'))
    if source_id is not None and not any(c.get('source_server_id') == int(source_id) for c in facts['channels']):
        raise SwitchoverError('the candidate does not replicate from server_id %s' % source_id)
    now = position(primary, global_variables, identity)
    cand = _identity(candidate, global_variables)
    sql, ok = gtid_sets.gtid_wait_sql(capability_facts.capability('gtid_model', cand.flavor, cand.version))
    rows = query(candidate, sql, (now, int(timeout))) if now else [dict(r=ok)]
    value = list(rows[0].values())[0] if rows else None
    if value is None or int(value) != ok:
        raise SwitchoverError('the candidate did not reach the primary\'s GTID set %s within %d s: it is not caught up'
                              % (now, timeout))
    if endpoint:
        endpoint('moved', True)     # reads the backend: refused when it lacks one of the servers
    return source_id


class SwitchFailed(Exception):
    """The switch stopped at stage (SWITCH_STEPS); result is what was done; put_back what the failure undid."""

    def __init__(self, stage, result, why, put_back=None):
        super().__init__(why)
        self.stage, self.result, self.why, self.put_back = stage, result, why, put_back


def _error_text(err):
    args = getattr(err, 'args', None)
    if args and len(args) == 2 and isinstance(args[0], int):
        return '(%d) %s' % (args[0], args[1])
    return str(err)


def _put_back(primary, execute, global_variables, result, endpoint, check_mode):
    """What a failure before the promotion puts back: the old primary's read_only, the endpoint on it; the text."""
    done = []
    if result['stage'] in ('demote', 'promote'):
        try:
            done.append('the old primary as it was (%s)' % restore(
                primary, execute, global_variables, result['before'], check_mode)['msg'])
        except Exception as err:  # pylint: disable=broad-except
            done.append('the old primary could NOT be made writable again (%s): set read_only (and super_read_only) '
                        'OFF on it' % _error_text(err))
    if endpoint:
        try:
            done.append('the writer endpoint on the old primary (%s)' % endpoint('restored', check_mode)['msg'])
        except Exception as err:  # pylint: disable=broad-except
            done.append('the writer endpoint could NOT be put back on the old primary (%s)' % _error_text(err))
    return '; '.join(done) or 'nothing had been changed'
