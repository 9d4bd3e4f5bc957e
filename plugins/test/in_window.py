# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test dbfleet.innodb.in_window (documentation: in_window.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.dbfleet.innodb.plugins.module_utils.offpeak import WindowError, status


def in_window(window, timezone='UTC', now=None):
    """True when now lies inside the off-peak window; see in_window.yml."""
    try:
        return status(window, timezone, now)['inside']
    except WindowError as e:
        raise AnsibleFilterError(str(e))


class TestModule(object):

    def tests(self):
        return {'in_window': in_window}
