# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one check of how a host's server is restarted (dbfleet_restart_method, dbfleet_restart_command,
dbfleet_service_name), before anything changes: by dbfleet.innodb.desired_settings for the roles that may
restart, and by the restart role on every play host (filter dbfleet.innodb.restart_method_errors)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import option_writer
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import service_restart

RESTART_METHODS = ('service', 'command')


def restart_method_errors(method, command, service_name=None):
    """Messages about dbfleet_restart_method / dbfleet_restart_command / dbfleet_service_name (empty when
    fine): the one check of the restart method, run whenever a role that may restart runs
    (desired_settings) and by the restart role on every play host (filter restart_method_errors),
    whether or not a restart is pending."""
    method = 'service' if method is None else method
    if not isinstance(method, str) or method not in RESTART_METHODS:
        return ['dbfleet_restart_method must be one of %s; got %s' % (', '.join(RESTART_METHODS), desired.shown(method))]
    if method == 'service' and service_name is not None:
        try:
            service_restart.unit_name(service_name)
        except ValueError as e:
            return [str(e)]
    if method == 'command':
        good = (isinstance(command, (list, tuple)) and len(command) > 0
                and all(isinstance(a, str) and a and not option_writer.CONTROL_RE.search(a) for a in command))
        if not good:
            return ['dbfleet_restart_method command needs dbfleet_restart_command, a non-empty list of arguments; '
                    'got %s' % desired.shown(command)]
    return []
