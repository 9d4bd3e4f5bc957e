# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a role reports once it has run (roles/outcome.py; filters dbfleet.innodb.role_issues and issue_lines)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import outcome
from ansible_collections.dbfleet.innodb.plugins.filter.role_issues import FilterModule

ISSUES = [dict(name='innodb_buffer_pool_instances', status='pending_restart', reason='read-only: waits for a restart'),
          dict(name='innodb_adaptive_hash_index_parts', status='unsupported', reason='not on MariaDB 11.8')]


def test_a_restart_settles_the_issues_that_waited_for_it():
    assert outcome.role_issues(ISSUES, True) == ISSUES[1:]
    assert outcome.role_issues(ISSUES, False) == ISSUES
    assert outcome.role_issues(None, True) == []


def test_one_line_per_issue():
    assert outcome.issue_lines(ISSUES) == [
        'innodb_buffer_pool_instances: pending_restart: read-only: waits for a restart',
        'innodb_adaptive_hash_index_parts: unsupported: not on MariaDB 11.8']
    assert outcome.issue_lines([]) == []


def test_the_filters_are_the_functions():
    filters = FilterModule().filters()
    assert filters['role_issues'](ISSUES, True) == outcome.role_issues(ISSUES, True)
    assert filters['issue_lines'](ISSUES) == outcome.issue_lines(ISSUES)
