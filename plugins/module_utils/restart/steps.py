# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the restart role (roles/restart, docs/topology.md) works out between its module runs, in Python rather
than in Jinja: each host's restart inputs checked (inputs()), the hosts that wait for a restart (pending()), each
step of the plan (steps(): the message saying the order, the members whose drain is checked, what each host's step
needs: its replicas, its cluster's other members, the switchover candidates, its drain, its service) and the
message when the run stops at a host (stopped()). Controller-side, through the filters of
plugins/filter/restart_steps.py; the plan itself is topology_plan.build_plan's (module topology_plan).
Unit tests: tests/unit/plugins/module_utils/restart/test_steps.py.
"""

from __future__ import annotations

import json
import os

from ansible_collections.dbfleet.innodb.plugins.module_utils.play_hosts import value as _var
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart.method import restart_method_errors
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles.inputs import RESTART_RANGES, Checker

# The ranges of the role's whole-number inputs (low, high; None for no bound).
RANGES = dict(RESTART_RANGES, restart_leftover_timeout=(1, None), restart_cluster_max_queue=(0, None),
              restart_cluster_drain_seconds=(0, None))

# restart_cluster_drain: null leaves the member alone; the methods cluster_drain runs on the member itself; tasks.
DRAINS = ('reject_queries', 'offline_mode', 'tasks')
MEMBER_DRAINS = ('reject_queries', 'offline_mode')
DRAIN_FILES = ('drain', 'restore')


def inputs(variables, playbook_dir, method=None, command=None, service=None, is_file=os.path.isfile):
    """One host's restart inputs (variables: restart_* by name, the role's defaults applied) checked before anything
    restarts, with the restart method (dbfleet_restart_method, _command, _service_name: restart_method_errors).

    Returns dict(problems=[message naming the variable and the value given], drain_files={drain, restore}: the task
    files of restart_cluster_drain_tasks, relative ones under playbook_dir; empty unless it is a mapping)."""
    check = Checker(variables, {}, {})
    for name in sorted(RANGES):
        low, high = RANGES[name]
        check.integer(name, low, high)
    drain = variables.get('restart_cluster_drain')
    if drain is not None and drain not in DRAINS:
        check.error('restart_cluster_drain must be null, %s or %s (got %s)'
                    % (', '.join(DRAINS[:-1]), DRAINS[-1], json.dumps(drain, default=str)))
    tasks = variables.get('restart_cluster_drain_tasks')
    files = {}
    if isinstance(tasks, dict):
        # os.path.join keeps an absolute path as it is.
        files = dict((str(k), os.path.join(playbook_dir, str(v))) for k, v in tasks.items())
    if drain == 'tasks':
        if not isinstance(tasks, dict) or any(k not in tasks for k in DRAIN_FILES):
            check.error('restart_cluster_drain_tasks must be a mapping with drain and restore task files (got %s)'
                        % json.dumps(tasks, default=str, sort_keys=True))
        else:
            for key in DRAIN_FILES:
                if not is_file(files[key]):
                    check.error('restart_cluster_drain_tasks.%s: no such file %s' % (key, files[key]))
    problems = restart_method_errors(method, command, service) + check.errors
    return dict(problems=problems, drain_files=files)


def pending(hostvars, hosts):
    """The hosts of the play, in play order, whose __restart_pending is true (the role's first task sets it)."""
    return [h for h in hosts if _var(hostvars, h, '__restart_pending')]


def steps(plan, hostvars, check_mode=False, checked=None, topology=None):
    """The steps of topology_plan's plan as the role runs and reports them.

    hostvars: each host's variables (its __restart_reason, __restart_drain_method, __restart_drain_seconds,
    __restart_inputs from the role's first task; dbfleet_service_name); checked: the registered results of the
    drain check (cluster_drain in check mode, one per member with its __restart_item and msg); topology: the
    registered results of topology_facts over the play's hosts (the service each host runs).

    Returns dict(message: the order, drain_check: the members of plan.now whose drain cluster_drain checks,
    drain_message: how each member that restarts is drained ('' for none), hosts: {host of plan.now: its step},
    problems: what stops the run before any change, such as a switchover asked for a primary whose replicas the
    play left out)."""
    hosts = plan.get('hosts') or {}
    now = list(plan.get('now') or [])
    problems = []
    checked_msgs = dict((r.get('__restart_item'), r.get('msg')) for r in (checked or {}).get('results', []) or [])
    services = dict((r.get('__restart_item'), ((r.get('topology') or {}).get('service') or {}).get('name'))
                    for r in (topology or {}).get('results', []) or [])
    out = {}
    for index, host in enumerate(now):
        info = hosts[host]
        cluster = info.get('cluster') or None
        drain = _var(hostvars, host, '__restart_drain_method') if cluster else None
        members = []
        if cluster:
            topo = next((t for t in plan.get('topologies') or [] if t.get('name') == info.get('topology')), {})
            members = list((topo.get('cluster') or {}).get('members') or [])
        out[host] = dict(
            replicas=[h for h in hosts if host in (hosts[h].get('sources') or [])],
            # The servers of its replication topology (a switchover reads and repoints them).
            members=[h for h in hosts if info.get('topology') and hosts[h].get('topology') == info.get('topology')],
            peers=[m for m in members if m != host],
            candidates=[hosts[h]['server_uuid'] for h in now[:index] if hosts[h].get('server_uuid')],
            untouched=now[index + 1:] + [d['host'] for d in plan.get('deferred') or []],
            drain=drain,
            drain_seconds=int(_var(hostvars, host, '__restart_drain_seconds', 0) or 0),
            drain_files=(_var(hostvars, host, '__restart_inputs') or {}).get('drain_files') or {},
            service=_var(hostvars, host, 'dbfleet_service_name') or services.get(host),
        )
        # restart_primary: switchover: a primary of an asynchronous topology with replicas hands its role away first.
        wants_switch = not cluster and info.get('role') == 'primary' and \
            _var(hostvars, host, '__restart_primary') == 'switchover'
        out[host]['switchover'] = bool(wants_switch and out[host]['replicas'])
        if wants_switch and not out[host]['replicas']:
            problems.extend(replicas_left_out(host, hosts, hostvars))
    drains = []
    for host in now:
        step = out[host]
        if not step['drain']:
            continue
        if host in checked_msgs:
            how = '%s, put back after its gate' % checked_msgs[host]
        else:
            files = step['drain_files']
            how = '%s before the stop, %s after the gate' % (files.get('drain'), files.get('restore'))
        drains.append('%s: %s, %s' % (host, step['drain'], how))
    return dict(message=_order(plan, hostvars, check_mode), hosts=out, drain_message='; '.join(drains), problems=problems,
                drain_check=[h for h in now if out[h]['drain'] in MEMBER_DRAINS],
                switchovers=[h for h in now if out[h]['switchover']])


def replicas_left_out(host, hosts, hostvars):
    """For a primary whose switchover was asked for but none of whose replicas is in the play: the problem when the
    inventory names replicas of it (dbfleet_replication_source) outside the play (no replica can take its role, and a
    restart in place would stop its writers for the whole restart), else nothing (a server without replicas restarts
    in place). hosts: the plan's hosts, which list every host of the inventory (topology_plan reads groups['all'],
    which --limit does not shorten), those outside the play with outside_play true."""
    outside = sorted(h for h in hosts if hosts[h].get('outside_play')
                     and _var(hostvars, h, 'dbfleet_replication_source') == host)
    if not outside:
        return []
    return ['restart_primary: switchover: %s is a primary whose replicas %s (their dbfleet_replication_source) are not '
            'in this play, so none can take its role and it would restart in place: add them to the play\'s hosts '
            '(rolling_restart_hosts), or give restart_primary: in_place for it' % (host, ', '.join(outside))]


def _order(plan, hostvars, check_mode):
    hosts = plan.get('hosts') or {}
    now = list(plan.get('now') or [])
    parts = ['%s one server at a time, in this order: %s' % ('would restart' if check_mode else 'restarts',
                                                             ' -> '.join(now) if now else 'nothing')]
    for host in now:
        info = hosts[host]
        cluster = info.get('cluster')
        if cluster:
            what = 'member (%s%s) of %s' % (cluster.get('state'), (' ' + cluster['role']) if cluster.get('role') else '',
                                            info.get('topology'))
        else:
            what = '%s in topology %s' % (info.get('role'), info.get('topology'))
        reason = _var(hostvars, host, '__restart_reason')
        parts.append('%s: %s%s' % (host, what, (', for %s' % reason) if reason else ''))
    deferred = [d['host'] for d in plan.get('deferred') or []]
    if deferred:
        parts.append('waiting for a later batch: %s' % ', '.join(deferred))
    return '; '.join(parts)


def stopped(host, step, failure, undrain=None):
    """The message that stops the run at host: why (the failed task's msg, and each failed item's), whether the
    drain was put back (undrain: the restore's result; None or skipped when nothing was drained), and the hosts left
    untouched (step: the host's step from steps())."""
    failure = failure or {}
    why = '%s: %s' % (host, failure.get('msg') or 'failed')
    if isinstance(failure.get('results'), list):
        why += ': ' + '; '.join(str(r.get('msg')) for r in failure['results'] if isinstance(r, dict) and r.get('failed'))
    why += '' if why.endswith('.') else '.'
    if undrain and not undrain.get('skipped'):
        if undrain.get('failed') or undrain.get('unreachable'):
            why += ' The drain could NOT be put back: %s.' % str(undrain.get('msg') or 'unreachable').strip()
        else:
            why += ' The drain was put back (%s).' % (undrain.get('msg') or 'done')
    return '%s The run stopped at %s; not restarted: %s.' % (why, host, ', '.join(step.get('untouched') or []) or 'none')
