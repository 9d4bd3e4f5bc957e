# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters dbfleet.innodb.cluster_parts, cluster_followers and topology_replicas (documentation: their .yml files)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import hosts as _hosts


def cluster_parts(plan_hosts, run_hosts):
    """Which cluster member of a run runs a DDL statement, which follow it; see cluster_parts.yml."""
    return _hosts.cluster_parts(plan_hosts, run_hosts)


def cluster_followers(plan_hosts, run_hosts, host):
    """The members of a run that follow host's statement in its cluster; see cluster_followers.yml."""
    return _hosts.cluster_followers(plan_hosts, run_hosts, host)


def topology_replicas(plan_hosts, run_hosts, topology):
    """The hosts of a run that are replicas of one replication topology; see topology_replicas.yml."""
    return _hosts.topology_replicas(plan_hosts, run_hosts, topology)


class FilterModule(object):

    def filters(self):
        return {'cluster_parts': cluster_parts, 'cluster_followers': cluster_followers,
                'topology_replicas': topology_replicas}
