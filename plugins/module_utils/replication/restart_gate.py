# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The restart gate (module dbfleet.innodb.restart_gate): what stops the next host after one restarted, from its
topology facts read again (gate_problems(): its replication running and caught up, its cluster membership serving),
and the settings the restart applies checked against the running values (settings_check()).
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters as cluster_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology
from ansible_collections.dbfleet.innodb.plugins.module_utils import values


def gate_problems(facts, expect_replica, max_lag, settings_check=None, expect_cluster=None,
                  expect_cluster_size=None, max_queue=0):
    """What stops the next host after this one restarted (empty list: the gate passes).

    facts: topology facts read after the restart; expect_replica: the plan's role for the host.
    settings_check: list of (name, desired, actual, equal) for the settings the restart applies.
    expect_cluster: the cluster (name) the host was a member of: it must be one again and serve
    (Synced + wsrep_ready + Primary / ONLINE), with at most max_queue transactions waiting to be applied,
    in a cluster that counts at least expect_cluster_size members."""
    problems = []
    if facts.get('error'):
        return [facts['error']]
    if expect_cluster:
        cluster = facts.get('cluster')
        if not cluster:
            problems.append('not a member of cluster %s' % expect_cluster)
        else:
            if cluster.get('name') != expect_cluster:
                problems.append('member of %s, not of %s' % (cluster_utils.describe(cluster), expect_cluster))
            problems += cluster_utils.member_problems(cluster, max_queue)
            if expect_cluster_size and (cluster.get('size') or 0) < expect_cluster_size:
                problems.append('the cluster counts %s members, not %s' % (cluster.get('size'), expect_cluster_size))
    if expect_replica:
        if facts['role'] != topology.REPLICA:
            problems.append('no replication channel after the restart (it was a replica)')
        for channel in facts.get('channels') or []:
            problems += topology.channel_problems(channel, max_lag)
    for name, desired, actual, equal in settings_check or []:
        if not equal:
            problems.append('%s is %s, not %s, after the restart' % (name, actual, desired))
    return problems


def settings_check(identity, variables, settings):
    """[(name, desired, actual, equal)] for settings {name: desired} against the running GLOBAL
    variables {lower-case name: value}; names are resolved for the flavor and version (any spelling)."""
    out = []
    for name in sorted(settings or {}):
        desired = settings[name]
        resolved = values.resolve(name, identity, variables).resolved or str(name).lower()
        actual = variables.get(resolved)
        variable = values.describe(resolved, identity, actual)
        try:
            same = values.equal(desired, actual, variable.kind, variable.choices, limits=variable.limits)
        except values.ValueError_:
            same = False
        out.append((resolved, desired, actual, same))
    return out
