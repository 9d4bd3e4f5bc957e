# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of the topology component: build the plan from every host's topology_facts.

Runs on the controller only (no connection to any host); see plugins/modules/topology_plan.py for
the documentation and plugins/module_utils/replication/topology_plan.py for the logic."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology_plan

ARGUMENT_SPEC = dict(
    facts=dict(type='raw', required=True),
    hosts=dict(type='list', elements='str'),
    pending=dict(type='list', elements='str'),
    reached=dict(type='list', elements='str'),
    max_lag=dict(type='int', default=topology.DEFAULT_MAX_LAG),
    inventory_group=dict(type='str', default='replicas'),
    fail_closed=dict(type='bool', default=True),
    cluster_switchover=dict(type='bool', default=False),
    restarts=dict(type='bool', default=True),
)


def _host_of(result):
    delegated = result.get('_ansible_delegated_vars') or {}
    host = delegated.get('ansible_delegated_host')
    if host:
        return host
    item = result.get(result.get('ansible_loop_var') or 'item')
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        return item.get('host') or item.get('inventory_hostname')
    return None


def _facts_of(result):
    """(facts, error) from one registered topology_facts result."""
    if not isinstance(result, dict):
        return None, 'no topology_facts result'
    if result.get('unreachable'):
        return None, 'unreachable: %s' % (result.get('msg') or 'the host did not answer')
    if result.get('skipped'):
        return None, 'topology_facts was skipped on this host'
    if result.get('failed'):
        return None, 'topology_facts failed: %s' % (result.get('msg') or 'no message')
    facts = result.get('topology')
    if not isinstance(facts, dict):
        return None, 'the result holds no topology facts'
    return facts, None


def normalize_facts(facts, hosts):
    """{host: (facts, error)} from a loop result (with delegate_to or item = host name) or a
    {host: result} dict."""
    out = {}
    if isinstance(facts, dict) and isinstance(facts.get('results'), list):
        for result in facts['results']:
            host = _host_of(result) if isinstance(result, dict) else None
            if host:
                out[host] = _facts_of(result)
    elif isinstance(facts, dict):
        for host, result in facts.items():
            out[host] = _facts_of(result)
    else:
        raise AnsibleActionFail('facts must be the registered result of dbfleet.innodb.topology_facts (a loop '
                                'over the hosts with delegate_to, or a dict host -> result); got %s'
                                % type(facts).__name__)
    for host in hosts:
        out.setdefault(host, (None, 'no topology_facts result for this host'))
    return out


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        validated = ArgumentSpecValidator(ARGUMENT_SPEC).validate(self._task.args)
        if validated.error_messages:
            raise AnsibleActionFail('dbfleet.innodb.topology_plan: %s' % '; '.join(validated.error_messages))
        args = validated.validated_parameters
        if args['max_lag'] < 0:
            raise AnsibleActionFail('max_lag must be 0 or more seconds, got %s' % args['max_lag'])
        hosts = args['hosts'] or list(task_vars.get('ansible_play_hosts_all') or [])
        if not hosts:
            raise AnsibleActionFail('hosts is empty: nothing to plan')
        hostvars = task_vars.get('hostvars') or {}
        groups = task_vars.get('groups') or {}
        by_host = normalize_facts(args['facts'], hosts)
        entries = {}
        for host in hosts:
            hv = hostvars.get(host) or {}
            facts, error = by_host[host]
            role, role_source = topology_plan.inventory_role(hv, groups, host, args['inventory_group'])
            if role not in (None, topology.PRIMARY, topology.REPLICA):
                raise AnsibleActionFail("%s: dbfleet_replication_role must be 'primary' or 'replica', got %r"
                                        % (host, role))
            entries[host] = dict(
                facts=facts, error=error,
                addresses=[hv.get('ansible_host'), hv.get('dbfleet_login_host'), host],
                port=hv.get('dbfleet_login_port') or 3306,
                inventory_role=role, inventory_role_source=role_source,
                inventory_source=hv.get('dbfleet_replication_source'))
        for host in groups.get('all') or []:
            if host in entries:
                continue
            hv = hostvars.get(host) or {}
            entries[host] = dict(outside=True, addresses=[hv.get('ansible_host'), hv.get('dbfleet_login_host'), host],
                                 port=hv.get('dbfleet_login_port') or 3306)
        plan = topology_plan.build_plan(entries, pending=args['pending'], reached=args['reached'],
                                        max_lag=args['max_lag'], order=hosts + [h for h in entries if h not in hosts],
                                        cluster_switchover=args['cluster_switchover'], restarts=args['restarts'])
        result['changed'] = False
        result['plan'] = plan
        result['msg'] = plan['message']
        if args['fail_closed'] and not plan['ok']:
            result['failed'] = True
        return result
