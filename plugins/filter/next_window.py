# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter dbfleet.innodb.next_window (documentation: next_window.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.dbfleet.innodb.plugins.module_utils.offpeak import WindowError, status


def next_window(window, timezone='UTC', now=None):
    """Where now stands relative to an off-peak window; see next_window.yml."""
    try:
        return status(window, timezone, now)
    except WindowError as e:
        raise AnsibleFilterError(str(e))


class FilterModule(object):

    def filters(self):
        return {'next_window': next_window}
