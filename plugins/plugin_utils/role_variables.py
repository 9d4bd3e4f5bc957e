# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles' variables as the play holds them, for the modules that work out a role's desired state
(dbfleet.innodb.desired_settings, dbfleet.innodb.verify) and for the controller-side audit
(dbfleet.innodb.verify_fleet). Which names a role takes and sets is its record in module_utils/roles/desired.py
(REGISTRY); defaults of variables that are not set come from the role's argument specs (desired.INPUTS)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired


def role_variables(role, task_vars, template):
    """Every play variable named <role>_*, the role's outputs left out; the role's inputs templated,
    unknown names passed as None (only reported, never templated: they may refer to anything)."""
    prefix = role + '_'
    known = desired.INPUTS[role]
    out = {}
    for name in sorted(task_vars):
        if not name.startswith(prefix) or name in desired.RECORDS[role].outputs:
            continue
        out[name] = template(task_vars[name]) if name in known else None
    return out


def roles_variables(roles, task_vars, template):
    """role_variables() of each role in roles (names that are no role with a desired state are left to
    the module to refuse), in one dict."""
    out = {}
    for role in roles or ():
        if role in desired.RECORDS:
            out.update(role_variables(role, task_vars, template))
    return out
