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

The server's main option file is filled in the same way, in one place for every playbook and role: a module that
takes ``fallback_option_files`` (``OPTION_FILE_MODULES``) gets ``[dbfleet_option_file]`` when the task does not
pass the option and names no server of its own (``option_file_args()``). An empty ``dbfleet_option_file``, null or
none at all is unset: the module gets nothing (its default, no fallback file).
"""

from __future__ import annotations

from ansible.plugins.action.normal import ActionModule as _NormalActionModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_args_from_host, names_a_server


def login_variables(task, task_vars, templar):
    """(variables, templar) of the host whose server the task logs in to."""
    delegate_to = getattr(task, 'delegate_to', None)
    if delegate_to:
        delegated = (task_vars.get('ansible_delegated_vars') or {}).get(delegate_to)
        if delegated is not None:
            return delegated, templar.copy_with_new_env(available_variables=delegated)
    return task_vars, templar


# The host variable naming the server's main option file, and the modules that read it as fallback_option_files
# (tests/unit/plugins/action/test_login_action.py checks the list against the modules' argument specs).
OPTION_FILE_VARIABLE = 'dbfleet_option_file'
OPTION_FILE_MODULES = ('desired_settings', 'memcached_plugin', 'server_facts', 'verify')


def option_file_args(module, task_args, host_vars, template=None):
    """{'fallback_option_files': [path]} to add to task_args for module, from the host's dbfleet_option_file.

    Nothing when the module takes no such option, when the task passes it (also through module_defaults, an
    empty list included), when the task names the server to log in to (the host's option file is its own server's,
    as its socket is: connection.names_a_server()), or when the variable is unset: not defined, null or '' (after
    templating). A value that is not a string is refused (ValueError naming the variable)."""
    if (module not in OPTION_FILE_MODULES or 'fallback_option_files' in task_args or OPTION_FILE_VARIABLE not in host_vars
            or names_a_server(task_args)):
        return {}
    value = host_vars[OPTION_FILE_VARIABLE]
    if template is not None:
        value = template(value)
    if value is None or value == '':
        return {}
    if not isinstance(value, str):
        raise ValueError('%s must be the path of one option file (a string), got %r' % (OPTION_FILE_VARIABLE, value))
    return dict(fallback_option_files=[value])


def module_name(task):
    """The short name of the module a task runs (dbfleet.innodb.verify, verify -> verify)."""
    return str(getattr(task, 'resolved_action', None) or getattr(task, 'action', '') or '').rsplit('.', maxsplit=1)[-1]


class LoginActionModule(_NormalActionModule):
    """Runs the module like the normal action, with the login filled in from the host variables."""

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars if task_vars is not None else {}
        host_vars, templar = login_variables(self._task, task_vars, self._templar)
        added = login_args_from_host(self._task.args, host_vars, templar.template)
        try:
            added.update(option_file_args(module_name(self._task), self._task.args, host_vars, templar.template))
        except ValueError as e:
            return dict(failed=True, msg=str(e))
        if added:
            args = dict(self._task.args)
            args.update(added)
            self._task.args = args
        return super().run(tmp, task_vars)
