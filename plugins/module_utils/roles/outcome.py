# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a role reports once it has run: the issues of its desired state (scaffold_state.issues: name, status, reason)
that still hold, and their lines for the run's output. Filters dbfleet.innodb.role_issues and issue_lines."""

from __future__ import annotations

PENDING_RESTART = 'pending_restart'


def role_issues(issues, restarted):
    """The issues that still hold after the role's run: all of them, less those that waited for a restart when the
    server restarted (restarted true)."""
    issues = list(issues or [])
    if not restarted:
        return issues
    return [issue for issue in issues if issue.get('status') != PENDING_RESTART]


def issue_lines(issues):
    """One line per issue, "name: status: reason"."""
    return ['%s: %s: %s' % (issue.get('name'), issue.get('status'), issue.get('reason')) for issue in issues or []]
