# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters dbfleet.innodb.restart_inputs, restart_pending, restart_steps and restart_stopped: the restart role's
reasoning between its module runs (documentation: <filter>.yml; logic: module_utils/restart/steps.py)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import steps as _steps


def restart_inputs(variables, playbook_dir, method=None, command=None, service_name=None):
    """One host's restart inputs checked, and its drain task files; see restart_inputs.yml."""
    return _steps.inputs(dict(variables), playbook_dir, method, command, service_name)


def restart_pending(hostvars, hosts):
    """The play hosts that wait for a restart; see restart_pending.yml."""
    return _steps.pending(hostvars, hosts)


def restart_steps(plan, hostvars, check_mode=False, checked=None, topology=None):
    """The steps of a topology plan as the restart role runs them; see restart_steps.yml."""
    return _steps.steps(plan, hostvars, check_mode, checked, topology)


def restart_stopped(step, host, failure, undrain=None):
    """The message that stops the restarts at a host; see restart_stopped.yml."""
    return _steps.stopped(host, step, failure, undrain)


class FilterModule(object):

    def filters(self):
        return {'restart_inputs': restart_inputs, 'restart_pending': restart_pending,
                'restart_steps': restart_steps, 'restart_stopped': restart_stopped}
