# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of dbfleet.innodb.desired_settings: the one login path (plugin_utils/login.py), the
role's variables (of every role in `roles`) taken from the play when the task does not pass them, and
the host's drop-in directory and restart method (dbfleet_option_dropin_dir, dbfleet_restart_method,
dbfleet_restart_command)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.plugin_utils.login import LoginActionModule
from ansible_collections.dbfleet.innodb.plugins.plugin_utils.role_variables import role_variables, roles_variables

__all__ = ['ActionModule', 'role_variables']

# Module option <- host variable, when the task does not pass the option.
HOST_VARIABLES = (('option_dropin_dir', 'dbfleet_option_dropin_dir'), ('restart_method', 'dbfleet_restart_method'),
                  ('restart_command', 'dbfleet_restart_command'))


class ActionModule(LoginActionModule):
    """Fills `variables` from the play when the task does not pass them (for `role` or every role of `roles`)."""

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars if task_vars is not None else {}
        role = self._templar.template(self._task.args.get('role'))
        roles = self._templar.template(self._task.args.get('roles'))
        if 'variables' not in self._task.args and (role in desired.ROLES or isinstance(roles, list)):
            args = dict(self._task.args)
            args['variables'] = (roles_variables(roles, task_vars, self._templar.template) if isinstance(roles, list)
                                 else role_variables(role, task_vars, self._templar.template))
            self._task.args = args
        host_args = dict((arg, self._templar.template(task_vars[var])) for arg, var in HOST_VARIABLES
                         if arg not in self._task.args and var in task_vars)
        if host_args:
            self._task.args = dict(self._task.args, **host_args)
        return super().run(tmp, task_vars)
