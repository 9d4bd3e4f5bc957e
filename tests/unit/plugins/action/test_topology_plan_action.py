# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""topology_plan's action: the plan lists every host of the inventory, those outside the play marked outside_play,
which is what the restart role's switchover refusal reads (restart_steps)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.action import topology_plan
from ansible_collections.dbfleet.innodb.plugins.filter import restart_steps


class FakeTask(object):

    def __init__(self, args):
        self.args = args
        self.action = self.resolved_action = 'dbfleet.innodb.topology_plan'


def primary_facts():
    return dict(role='primary', error=None, server_uuid='u1', server_id=1, read_only=False, super_read_only=False,
                gtid=dict(model='mysql', mode='ON', executed='u1:1-5'), channels=[])


def run_plan(monkeypatch, task_vars):
    # ActionBase.run's own checks (async, the connection) are not what this test is about.
    monkeypatch.setattr(topology_plan.ActionBase, 'run', lambda self, tmp=None, task_vars=None: {})
    plugin = object.__new__(topology_plan.ActionModule)
    plugin._task = FakeTask(dict(facts=dict(db1=dict(topology=primary_facts()))))
    return plugin.run(task_vars=task_vars)


def test_the_plan_lists_the_inventorys_hosts_outside_the_play_as_under_limit(monkeypatch):
    # `--limit db1`: the play has db1 alone; groups['all'] still lists the whole inventory (--limit does not shorten it).
    hostvars = dict(db1=dict(ansible_host='10.0.0.11', __restart_primary='switchover'),
                    db2=dict(ansible_host='10.0.0.12', dbfleet_replication_source='db1'),
                    db3=dict(ansible_host='10.0.0.13'))
    task_vars = dict(ansible_play_hosts_all=['db1'], groups=dict(all=['db1', 'db2', 'db3']), hostvars=hostvars)
    plan = run_plan(monkeypatch, task_vars)['plan']
    assert plan['order'] == ['db1']
    assert sorted(plan['hosts']) == ['db1', 'db2', 'db3']
    assert [h for h in plan['hosts'] if plan['hosts'][h].get('outside_play')] == ['db2', 'db3']
    # The refusal reads them from the plan alone: db2 replicates from db1 by the inventory, and it is outside the play.
    problems = restart_steps.restart_steps(dict(plan, now=['db1']), hostvars)['problems']
    assert len(problems) == 1 and 'replicas db2 (their dbfleet_replication_source)' in problems[0]
