# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of dbfleet.innodb.verify: the collection's one login path (plugin_utils/login.py), and
the variables of the roles in `desired_from` taken from the play when the task does not pass
`role_variables` (so one module run works out and verifies the roles' desired state); with `target_version`, the
version facts of flavor_data as `target_facts` (the package stays on the controller: a module payload carries them
only when a target is asked for)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils import storage_engines
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import facts as version_facts
from ansible_collections.dbfleet.innodb.plugins.plugin_utils.login import LoginActionModule
from ansible_collections.dbfleet.innodb.plugins.plugin_utils.role_variables import roles_variables


class ActionModule(LoginActionModule):
    """Fills `role_variables` from the play for the roles in `desired_from`, and `target_facts` for `target_version`."""

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars if task_vars is not None else {}
        roles = self._templar.template(self._task.args.get('desired_from'))
        if roles and 'role_variables' not in self._task.args and isinstance(roles, list):
            args = dict(self._task.args)
            args['role_variables'] = roles_variables(roles, task_vars, self._templar.template)
            self._task.args = args
        if self._task.args.get('target_version') and 'target_facts' not in self._task.args:
            target_version = self._templar.template(self._task.args['target_version'])
            try:
                target = storage_engines.parse_target_spec(target_version)
            except ValueError:
                target = None       # the module refuses it, with the same message, before the server is read
            if target is not None:
                # Imported here: about 310 KB of data this worker needs only with a target (the module's payload
                # does not carry it: version_facts).
                # pylint: disable-next=import-outside-toplevel
                from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import catalog as flavor_data
                args = dict(self._task.args)
                args['target_facts'] = version_facts.catalog_data(flavor_data)
                self._task.args = args
        return super().run(tmp, task_vars)
