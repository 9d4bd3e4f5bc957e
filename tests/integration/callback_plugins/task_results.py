# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writes the results of chosen actions, with the time each ended, as JSON lines: what the tests assert on.

Enable it with
    ANSIBLE_CALLBACK_PLUGINS=tests/integration/callback_plugins ANSIBLE_CALLBACKS_ENABLED=task_results
    DBFLEET_TASK_RESULTS_FILE=/path/to/results.jsonl
    DBFLEET_TASK_RESULTS_ACTIONS=restart_gate,cluster_switchover,command_restart   (short action names; default: all)
Each line: {"time": <epoch seconds when the result came>, "task": name, "host": inventory host,
"delegated": the host it ran on, "action": short name, "status": ok|failed|skipped|unreachable,
"item": loop item, "result": the result without "invocation"}.
Not shipped with the collection (tests/integration is in galaxy.yml build_ignore).
"""

from __future__ import annotations

DOCUMENTATION = r'''
name: task_results
type: aggregate
short_description: Task results with their time, as JSON lines
description:
  - Appends one JSON line per result of the actions named in E(DBFLEET_TASK_RESULTS_ACTIONS) (all when unset) to
    E(DBFLEET_TASK_RESULTS_FILE).
requirements:
  - enable in configuration
'''

import json
import os
import time

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'task_results'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.path = os.environ.get('DBFLEET_TASK_RESULTS_FILE')
        wanted = os.environ.get('DBFLEET_TASK_RESULTS_ACTIONS', '')
        self.actions = set(a.strip() for a in wanted.split(',') if a.strip())

    def _record(self, result, status):
        if not self.path:
            return
        action = str(result._task.action or '').rsplit('.', 1)[-1]
        if self.actions and action not in self.actions:
            return
        data = dict((k, v) for k, v in (result._result or {}).items() if k not in ('invocation', 'results'))
        delegated = result._task.delegate_to or (result._result.get('_ansible_delegated_vars') or {}).get('ansible_delegated_host')
        loop_var = result._result.get('ansible_loop_var') or 'item'
        line = dict(time=time.time(), task=result._task.get_name(), host=result._host.get_name(),
                    delegated=delegated or result._host.get_name(), action=action, status=status,
                    item=result._result.get(loop_var), result=data)
        with open(self.path, 'a', encoding='utf-8') as handle:
            handle.write(json.dumps(line, default=str) + '\n')

    def v2_runner_on_ok(self, result):
        self._record(result, 'ok')

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, 'failed')

    def v2_runner_on_unreachable(self, result):
        self._record(result, 'unreachable')

    def v2_runner_item_on_ok(self, result):
        self._record(result, 'ok')

    def v2_runner_item_on_failed(self, result):
        self._record(result, 'failed')
