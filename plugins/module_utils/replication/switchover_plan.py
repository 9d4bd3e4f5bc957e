# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan of the switchover of an asynchronous GTID replication primary (docs/topology.md "Switchover"), pure, on the
controller (filter dbfleet.innodb.switchover_plan):

- plan(primary, members, ...) over the topology facts of every member of the primary's topology (module
  topology_facts, read just before): every problem that forbids the switch, named at once (the candidate given or
  chosen: replicating from this primary, caught up, not delayed, binary log and replica updates on, no replication
  filters, no errant transactions, a version the others may replicate from; every other replica reached and on
  GTID auto-positioning; the writer endpoint method known), and the steps the switch takes, in order;
- stopped(switch, stage, failure, ...): the message that stops the run when the switch failed (filter
  dbfleet.innodb.switchover_stopped): why, and what was put back or what remains.

The steps themselves run on the servers: replication/switchover.py.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import gtid_sets

ENDPOINT_METHODS = ('haproxy', 'tasks', 'none')


def _version(facts):
    return tuple((facts.get('server') or {}).get('version') or ())


def _flavor(facts):
    return (facts.get('server') or {}).get('flavor')


def _channel_from(facts, source_facts):
    """The channel of facts that replicates from source_facts (by its server_id), or None."""
    for channel in facts.get('channels') or []:
        if source_facts.get('server_id') is not None and channel.get('source_server_id') == source_facts.get('server_id'):
            return channel
    return None


def _auto_positioned(facts, channel):
    value = str(channel.get('using_gtid') or '').lower()
    if (facts.get('gtid') or {}).get('model') == 'mysql':
        return value in ('1', 'yes', 'on')
    return value in ('slave_pos', 'current_pos')


def candidate_problems(name, facts, primary_facts, max_lag):
    """Why the server name (its topology facts) may not become the primary instead of primary_facts' server."""
    if facts.get('error') or not facts.get('role'):
        return ['%s: its state could not be read (%s)' % (name, facts.get('error') or 'no facts')]
    problems = []
    channel = _channel_from(facts, primary_facts)
    if channel is None:
        problems.append('%s: does not replicate from the primary (server_id %s)' % (name, primary_facts.get('server_id')))
    else:
        problems += ['%s: %s' % (name, p) for p in topology.channel_problems(channel, max_lag)]
        if channel.get('sql_delay'):
            problems.append('%s: a delayed replica (SQL_Delay %d s)' % (name, channel['sql_delay']))
        if channel.get('filters'):
            problems.append('%s: replication filters (%s): it may lack what the primary has'
                            % (name, ', '.join('%s=%s' % kv for kv in sorted(channel['filters'].items()))))
        if not _auto_positioned(facts, channel):
            problems.append('%s: not on GTID auto-positioning (%s)' % (name, channel.get('using_gtid')))
    if len(facts.get('channels') or []) > 1:
        problems.append('%s: replicates from %d sources' % (name, len(facts['channels'])))
    if not facts.get('log_bin'):
        problems.append('%s: log_bin is OFF (a primary writes a binary log its replicas read)' % name)
    if facts.get('log_replica_updates') is False:
        problems.append('%s: %s is OFF (the others could not find the primary\'s transactions in its binary log)'
                        % (name, capability_facts.capability('log_replica_updates_variable', _flavor(facts) or 'mysql',
                                                             _version(facts) or (8, 0, 0))))
    gtid = facts.get('gtid') or {}
    if gtid.get('model') == 'mysql' and str(gtid.get('mode') or '').upper() != 'ON':
        problems.append('%s: gtid_mode is %s, not ON' % (name, gtid.get('mode')))
    if gtid.get('model') is None:
        problems.append('%s: no GTID model on %s' % (name, _flavor(facts)))
    extra = gtid_sets.errant(facts, primary_facts)
    if extra:
        problems.append('%s: errant transactions the primary does not have: %s' % (name, extra))
    return problems


def _member_problems(name, facts, primary_facts, candidate, candidate_facts):
    """Why a replica of the primary other than the candidate cannot be repointed at the candidate."""
    if facts.get('error') or not facts.get('role'):
        return ['%s: not reached (%s): it could not be repointed' % (name, facts.get('error') or 'no facts')]
    problems = []
    channel = _channel_from(facts, primary_facts)
    if channel is not None and not _auto_positioned(facts, channel):
        problems.append('%s: not on GTID auto-positioning (%s): it could not be repointed'
                        % (name, channel.get('using_gtid')))
    if candidate_facts and _version(facts) and _version(candidate_facts) and _version(facts) < _version(candidate_facts):
        problems.append('%s: runs %s, older than %s\'s %s: it may not replicate from it'
                        % (name, _text(facts), candidate, _text(candidate_facts)))
    if candidate_facts and _flavor(facts) != _flavor(candidate_facts):
        problems.append('%s: a %s server, %s is %s' % (name, _flavor(facts), candidate, _flavor(candidate_facts)))
    return problems


def _text(facts):
    return (facts.get('server') or {}).get('version_text') or '.'.join(str(v) for v in _version(facts))


def plan(primary, members, candidate=None, endpoint=None, max_lag=topology.DEFAULT_MAX_LAG, order=None, hosts=None,
         password_set=True, haproxy=None):
    """The switchover of primary (an inventory host) to candidate (None: chosen), or why none can be made.

    members: {inventory host: topology facts} of the primary and every server of its topology (facts with
    ``error`` for one not reached; a registered loop of topology_facts is taken too: ``results`` items with
    ``__restart_item`` / ``topology``). endpoint: how writers find the primary (ENDPOINT_METHODS; None: unknown).
    order: the preferred candidates in order (hosts already restarted first). hosts: the servers of the primary's
    topology (None: every host of members). password_set: whether the replication password the old primary needs
    to replicate from the candidate was given (restart_primary_replication_password). haproxy: the primary's
    restart_primary_haproxy (socket, backend) when endpoint is haproxy.

    Returns dict(ok, problems, primary, candidate, others (the replicas repointed at the candidate, primary
    excluded), wait_for (the position the candidate waits for, read again at the demotion), steps (text, in order),
    message)."""
    members = _members(members)
    if hosts is not None:
        members = dict((h, members.get(h) or dict(error='no topology facts were read')) for h in hosts)
    out = dict(ok=False, problems=[], primary=primary, candidate=None, others=[], steps=[], message='',
               replication_user=None, replication_ssl=False)
    primary_facts = members.get(primary)
    if not primary_facts or primary_facts.get('error'):
        out['problems'].append('%s: the primary\'s state could not be read (%s)'
                               % (primary, (primary_facts or {}).get('error') or 'no facts'))
        return _finish(out)
    if primary_facts.get('role') != topology.PRIMARY:
        out['problems'].append('%s: not a primary (it replicates from another server)' % primary)
    if not primary_facts.get('log_bin'):
        out['problems'].append('%s: log_bin is OFF' % primary)
    replicas = [n for n in _ordered(members, order) if n != primary and _channel_from(members[n], primary_facts)]
    unreached = [n for n in _ordered(members, order) if n != primary and members[n].get('error')]
    if endpoint not in ENDPOINT_METHODS:
        out['problems'].append('%s: the writer endpoint method is %s: say how writers find the primary '
                               '(restart_primary_endpoint: %s)' % (primary, endpoint or 'not set', ', '.join(ENDPOINT_METHODS)))
    if endpoint == 'haproxy' and not (isinstance(haproxy, dict) and haproxy.get('socket') and haproxy.get('backend')):
        out['problems'].append('%s: restart_primary_endpoint is haproxy but its restart_primary_haproxy does not name '
                               'the admin socket and the backend (got %s)' % (primary, haproxy))
    if not password_set:
        out['problems'].append('%s: restart_primary_replication_password is not set: the old primary needs it to '
                               'replicate from the new one' % primary)
    if candidate is not None:
        if candidate not in members:
            out['problems'].append('%s: the candidate %s is not a server of its topology in this run' % (primary, candidate))
            return _finish(out)
        found = candidate_problems(candidate, members[candidate], primary_facts, max_lag)
    else:
        refused = []
        for name in replicas:
            found = candidate_problems(name, members[name], primary_facts, max_lag)
            if not found:
                candidate = name
                break
            refused += found
        if candidate is None:
            found = ['%s: no replica may take the primary role%s' % (primary, (': ' + '; '.join(refused)) if refused else
                                                                     ' (it has none)')]
    out['problems'] += found
    candidate_facts = members.get(candidate) if candidate else None
    others = [n for n in replicas + unreached if n != candidate]
    for name in others:
        out['problems'] += _member_problems(name, members[name], primary_facts, candidate, candidate_facts)
    if candidate_facts:
        out['problems'] += _member_problems(primary, primary_facts, primary_facts, candidate, candidate_facts)
    out.update(candidate=candidate, others=others)
    # The old primary replicates from the candidate as the candidate replicated from it (account, TLS).
    channel = _channel_from(candidate_facts, primary_facts) if candidate_facts else None
    out.update(replication_user=(channel or {}).get('source_user'), replication_ssl=bool((channel or {}).get('source_ssl')))
    if candidate:
        out['steps'] = steps(primary, candidate, others, members, endpoint)
    return _finish(out)


def _members(members):
    if isinstance(members, dict) and isinstance(members.get('results'), list):
        out = {}
        for r in members['results']:
            name = r.get('__restart_item') or r.get('item')
            facts = r.get('topology')
            if facts is None:
                facts = dict(error=str(r.get('msg') or 'not reached').strip())
            out[name] = facts
        return out
    return dict(members or {})


def _ordered(members, order):
    names = [n for n in (order or []) if n in members]
    return names + sorted(n for n in members if n not in names)


def _finish(out):
    out['ok'] = not out['problems']
    if out['ok']:
        out['message'] = '%s hands the primary role to %s: %s' % (out['primary'], out['candidate'], '; '.join(out['steps']))
    else:
        out['message'] = ('no switchover of %s, nothing was changed: %s'
                          % (out['primary'], '; '.join(out['problems'])))
    return out


def steps(primary, candidate, others, members, endpoint):
    """The switch's steps as a DBA reads them, in order."""
    pf, cf = members[primary], members[candidate]
    demote = capability_facts.capability('demote_variable', _flavor(pf), _version(pf))
    out = []
    if endpoint not in (None, 'none'):
        out.append('writer endpoint (%s): %s drained' % (endpoint, primary))
    out.append('%s: %s = ON, its write sessions handled' % (primary, demote))
    wait = 'WAIT_FOR_EXECUTED_GTID_SET' if (cf.get('gtid') or {}).get('model') == 'mysql' else 'MASTER_GTID_WAIT'
    stmts = capability_facts.capability('replica_statements', _flavor(cf), _version(cf)) or {}
    out.append('%s: %s(the old primary\'s whole GTID set), then %s, %s, read_only = OFF'
               % (candidate, wait, stmts.get('stop'), stmts.get('reset_all')))
    if endpoint not in (None, 'none'):
        out.append('writer endpoint (%s): on %s' % (endpoint, candidate))
    for name in others + [primary]:
        fs = capability_facts.capability('replica_statements', _flavor(members[name]), _version(members[name])) or {}
        out.append('%s: %s %s with %s, %s' % (name, fs.get('change'), candidate, fs.get('gtid'), fs.get('start')))
    return out


def stopped(switch, stage, failure, restored=None, endpoint_failed=None):
    """The message that stops the run when a switch failed at stage ('checks', 'demote X', 'promote Y', 'promoted'):
    why, and what was put back (before the promotion) or what remains (after it). endpoint_failed: why the writer
    endpoint could not be put back (None: it was)."""
    failure = failure or {}
    why = str(failure.get('msg') or 'failed').strip()
    if isinstance(failure.get('results'), list):
        why += ': ' + '; '.join('%s: %s' % (r.get('__restart_item'), r.get('msg')) for r in failure['results']
                                if isinstance(r, dict) and r.get('failed'))
    primary, candidate = switch.get('primary'), switch.get('candidate')
    if stage == 'promoted':
        servers = ', '.join((switch.get('others') or []) + [primary])
        return ('the switchover of %s stopped after %s became the primary (writable, the writer endpoint on it): %s. '
                'What remains: point the servers that do not replicate from %s yet (of %s) at it with GTID '
                'auto-positioning; %s was not restarted.' % (primary, candidate, why.rstrip('.'), candidate, servers, primary))
    if restored is None or restored.get('skipped'):
        back = '%s was not changed' % primary
    elif restored.get('failed') or restored.get('unreachable'):
        back = '%s could NOT be made writable again (%s): set read_only (and super_read_only) OFF on it' % (
            primary, str(restored.get('msg') or 'unreachable').strip())
    else:
        back = '%s is writable again (%s)' % (primary, restored.get('msg'))
    lb = ('the writer endpoint could NOT be put back on %s (%s)' % (primary, str(endpoint_failed).strip())
          if endpoint_failed else 'the writer endpoint on %s' % primary)
    return ('the switchover of %s to %s failed at step %s: %s. Put back: %s, %s; %s was not promoted, its replication '
            'left as it was.' % (primary, candidate, stage, why.rstrip('.'), back, lb, candidate))
