# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of dbfleet.innodb.desired_settings: the one login path (plugin_utils/login.py), and the
role's variables taken from the play when the task does not pass them."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils import desired
from ansible_collections.dbfleet.innodb.plugins.plugin_utils.login import LoginActionModule


def role_variables(role, task_vars, template):
    """Every play variable named <role>_*, the role's outputs left out; the role's inputs templated,
    unknown names passed as None (only reported, never templated: they may refer to anything)."""
    prefix = role + '_'
    known = desired.INPUTS[role]
    out = {}
    for name in sorted(task_vars):
        if not name.startswith(prefix) or name in desired.OUTPUTS[role]:
            continue
        out[name] = template(task_vars[name]) if name in known else None
    return out


class ActionModule(LoginActionModule):
    """Fills `variables` from the play when the task does not pass them."""

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars if task_vars is not None else {}
        role = self._templar.template(self._task.args.get('role'))
        if 'variables' not in self._task.args and role in desired.ROLES:
            args = dict(self._task.args)
            args['variables'] = role_variables(role, task_vars, self._templar.template)
            self._task.args = args
        return super().run(tmp, task_vars)
