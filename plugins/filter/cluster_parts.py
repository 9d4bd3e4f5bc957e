# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter dbfleet.innodb.cluster_parts (documentation: cluster_parts.yml)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.hosts import cluster_parts as _parts


def cluster_parts(plan_hosts, run_hosts):
    """Which cluster member of a run runs a DDL statement, which follow it; see cluster_parts.yml."""
    return _parts(plan_hosts, run_hosts)


class FilterModule(object):

    def filters(self):
        return {'cluster_parts': cluster_parts}
