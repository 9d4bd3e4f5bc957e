# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Counts module runs per host: what a playbook costs on each host, beside Ansible's fixed cost per run.

A module run is a task result (each loop item counts) whose action executes a module on the host
(or on the host it is delegated to); the actions that only work on the controller (set_fact, debug,
assert, include_role, ...) are not counted, nor are skipped tasks. An action plugin that runs
several modules for one task (template: stat, then copy when it changes) counts once.

Enable it with
    ANSIBLE_CALLBACK_PLUGINS=tests/integration/callback_plugins ANSIBLE_CALLBACKS_ENABLED=module_runs
    DBFLEET_MODULE_RUNS_FILE=/path/to/counts.json   (optional: the counts as JSON)
It prints the counts at the end of the run:
    MODULE RUNS host=mysql80 runs=1 (dbfleet.innodb.verify=1)
and writes {"hosts": {host: runs}, "actions": {host: {action: runs}}} to DBFLEET_MODULE_RUNS_FILE.
Not shipped with the collection (tests/integration is in galaxy.yml build_ignore).
"""

from __future__ import annotations

DOCUMENTATION = r'''
name: module_runs
type: aggregate
short_description: Count module runs per host
description:
  - Counts the task results per host whose action runs a module (loop items each count; skipped tasks
    and controller-only actions do not) and prints them at the end; writes them as JSON to
    E(DBFLEET_MODULE_RUNS_FILE) when set.
requirements:
  - enable in configuration
'''

import json
import os

from ansible.plugins.callback import CallbackBase

# Actions that never run a module on a host.
CONTROLLER_ONLY = frozenset((
    'set_fact', 'debug', 'assert', 'fail', 'meta', 'include_role', 'import_role', 'include_tasks',
    'import_tasks', 'include_vars', 'validate_argument_spec', 'add_host', 'group_by', 'set_stats',
    'pause', 'include', 'import_playbook', 'noop',
))


def short_action(action):
    return str(action or '').rsplit('.', 1)[-1]


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'module_runs'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.actions = {}

    def _count(self, result):
        action = result._task.action
        if short_action(action) in CONTROLLER_ONLY:
            return
        items = result._result.get('results')
        if isinstance(items, list) and result._task.loop is not None:
            runs = sum(1 for item in items if isinstance(item, dict) and not item.get('skipped'))
        else:
            runs = 1
        if not runs:
            return
        host = result._host.get_name()
        per_host = self.actions.setdefault(host, {})
        per_host[action] = per_host.get(action, 0) + runs

    def v2_runner_on_ok(self, result):
        self._count(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._count(result)

    def v2_playbook_on_stats(self, stats):
        hosts = dict((host, sum(counts.values())) for host, counts in sorted(self.actions.items()))
        for host, runs in hosts.items():
            detail = ', '.join('%s=%d' % (a, n) for a, n in sorted(self.actions[host].items()))
            self._display.display('MODULE RUNS host=%s runs=%d (%s)' % (host, runs, detail))
        path = os.environ.get('DBFLEET_MODULE_RUNS_FILE')
        if path:
            with open(path, 'w') as handle:
                json.dump(dict(hosts=hosts, actions=self.actions), handle, indent=2, sort_keys=True)
