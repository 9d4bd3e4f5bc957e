# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter dbfleet.innodb.host_values (documentation: host_values.yml)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.play_hosts import values as _values


def host_values(hostvars, hosts, name, default=None):
    """One variable of each host, by host; see host_values.yml."""
    return _values(hostvars, hosts, name, default)


class FilterModule(object):

    def filters(self):
        return {'host_values': host_values}
