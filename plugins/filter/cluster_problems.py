# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter dbfleet.innodb.cluster_problems (documentation: cluster_problems.yml)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.hosts import cluster_problems as _problems


def cluster_problems(plan_hosts, run_hosts, one_per_host=False):
    """The cluster members that stop a guarded change over a run; see cluster_problems.yml."""
    return _problems(plan_hosts, run_hosts, one_per_host)


class FilterModule(object):

    def filters(self):
        return {'cluster_problems': cluster_problems}
