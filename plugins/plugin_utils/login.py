# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one login path of the collection.

Every module of the action group ``group/dbfleet.innodb.innodb`` runs through this action
plugin (``plugins/action/<module>.py`` is one line that imports it). Before the module runs,
it adds each login option the task did not pass (neither in its arguments nor through
``module_defaults``) from the host variables ``dbfleet_login_*`` and ``dbfleet_config_file``,
templated. With ``delegate_to``, the delegated host's variables are used: the module runs
there and logs in to that host's server. Which option comes from which variable:
``connection.LOGIN_HOST_VARIABLES``.

Explicit options win as a set (``connection.login_args_from_host()``): a task that names a server
(``login_host`` or ``login_unix_socket``) gets none of the host's socket, host and port variables,
only the credentials and TLS options it does not give itself; a task that names only ``login_port``
gets no socket. So a task meant for another server never reaches the host's own.

The values go to the module as arguments; the module's argument spec marks the password
``no_log``, so it never appears in the result or the output, also at ``-vvv``.
"""

from __future__ import annotations

from ansible.plugins.action.normal import ActionModule as _NormalActionModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.connection import login_args_from_host


def login_variables(task, task_vars, templar):
    """(variables, templar) of the host whose server the task logs in to."""
    delegate_to = getattr(task, 'delegate_to', None)
    if delegate_to:
        delegated = (task_vars.get('ansible_delegated_vars') or {}).get(delegate_to)
        if delegated is not None:
            return delegated, templar.copy_with_new_env(available_variables=delegated)
    return task_vars, templar


class LoginActionModule(_NormalActionModule):
    """Runs the module like the normal action, with the login filled in from the host variables."""

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars if task_vars is not None else {}
        host_vars, templar = login_variables(self._task, task_vars, self._templar)
        added = login_args_from_host(self._task.args, host_vars, templar.template)
        if added:
            args = dict(self._task.args)
            args.update(added)
            self._task.args = args
        return super().run(tmp, task_vars)
