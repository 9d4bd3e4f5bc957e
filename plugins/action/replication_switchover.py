# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of dbfleet.innodb.replication_switchover: the one login action (plugins/plugin_utils/login.py), and
for step switch the logins of the two servers the run reaches over the network, primary_login and candidate_login,
from primary_host's and candidate_host's own host variables through the same path (login/spec.py login_args_from_host),
their address where the host running the module reaches them (verify_fleet.controller_login: ansible_host for a login
without an address or with a loopback one; no file of the server's host). The passwords go to the module as
arguments of its no_log login options: never in the output."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail

from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify_fleet
from ansible_collections.dbfleet.innodb.plugins.module_utils.login import spec as login_spec
from ansible_collections.dbfleet.innodb.plugins.plugin_utils.login import LoginActionModule


def network_login(name, raw, templar):
    """The login options of host name's server (raw: its variables) for another host to reach it over the network."""
    templar = templar.copy_with_new_env(available_variables=raw)
    params = login_spec.login_args_from_host({}, raw, templar.template)
    target = dict((k, templar.template(raw[k])) for k in verify_fleet.TARGET_VARIABLES if k in raw)
    params, _notes = verify_fleet.controller_login(params, target, name)
    return params


class ActionModule(LoginActionModule):
    """The login action; step switch also gets both servers' network logins."""

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars if task_vars is not None else {}
        if self._task.args.get('step') == 'switch':
            hostvars = task_vars.get('hostvars') or {}
            args = dict(self._task.args)
            for role in ('primary', 'candidate'):
                name = args.get('%s_host' % role)
                if args.get('%s_login' % role) is not None:
                    continue
                if not name or name not in hostvars:
                    raise AnsibleActionFail('replication_switchover: switch needs %s_host, an inventory host (got %s)'
                                            % (role, name))
                try:
                    args['%s_login' % role] = network_login(name, hostvars.raw_get(name), self._templar)
                except ValueError as e:
                    raise AnsibleActionFail('replication_switchover: switch: %s' % e)
            self._task.args = args
        return super().run(tmp, task_vars)
