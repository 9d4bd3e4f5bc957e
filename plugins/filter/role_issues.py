# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters dbfleet.innodb.role_issues and issue_lines (documentation: role_issues.yml, issue_lines.yml)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import outcome


def role_issues(issues, restarted):
    """The issues of a role's desired state that still hold after its run; see role_issues.yml."""
    return outcome.role_issues(issues, restarted)


def issue_lines(issues):
    """One line per issue; see issue_lines.yml."""
    return outcome.issue_lines(issues)


class FilterModule(object):

    def filters(self):
        return {'role_issues': role_issues, 'issue_lines': issue_lines}
