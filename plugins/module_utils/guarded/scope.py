# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a guarded change's global settings reach: one server (ServerScope), or a member of a cluster whose
DDL reaches every member by itself (ClusterScope: Galera total order isolation, Group Replication). scope_for()
is the one place a cluster rule is added."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters as cluster_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import onoff


class ServerScope(object):
    """A change on one server: global settings are switched on this server only, and the statements
    (DROP, ALTER) reach the others by replication, which the playbooks orchestrate."""

    name = 'server'
    # Whether a DDL statement run here reaches the other members of its cluster by itself.
    ddl_reaches_members = False
    # The result of a table the member sees gone while it follows (the replica side).
    followed_result = 'dropped_by_replication'
    session_sql = ()
    # What a lock holder nobody can list does to a DROP or ALTER here (find_blockers' warning).
    unlisted_lock_effect = 'a DROP or ALTER that meets one waits at most lock_wait_timeout per attempt'

    def members(self, engine, conn=None):
        """The connections a global setting is applied on (this server's: each member of a cluster runs
        its own part, switching AHI off before the statement and back after)."""
        return [conn or engine.conn]


class ClusterScope(ServerScope):
    """A member of a cluster where DDL reaches every member by itself: Galera (the statement runs in total
    order isolation on every node at once, session wsrep_OSU_method=TOI; RSU, one node at a time out of the
    cluster, is never used) and Group Replication (the statement runs on the primary and reaches every
    secondary through the group). The playbooks run the statement once per cluster, on one member
    (cluster_parts), and every other member follows it: AHI off there before the statement (where the flavor
    needs it, decided per member as on any server), the window and the metadata-lock check there too, AHI back
    on all after; their tables are 'dropped_by_cluster'."""

    ddl_reaches_members = True
    followed_result = 'dropped_by_cluster'

    def __init__(self, kind):
        self.name = kind
        # Galera: this session's DDL in total order isolation, whatever the global method is.
        self.session_sql = ("SET SESSION wsrep_OSU_method = 'TOI'",) if kind == GALERA_SCOPE else ()
        if kind == GALERA_SCOPE:
            # Measured on the lab's MariaDB 10.11 Galera cluster (docs/drop_tables.md "Clusters"): a transaction holding
            # the table is aborted by the TOI statement (error 1213 for it), but a session holding FLUSH TABLES <t>
            # WITH READ LOCK made the DROP wait for over 10 minutes, lock_wait_timeout=3 notwithstanding, KILL refused
            # (error 1095), and every other DDL of the cluster waited behind it.
            self.unlisted_lock_effect = (
                'on a Galera node the DROP or ALTER runs in total order isolation: it aborts a transaction that holds '
                'the table, but a table lock (FLUSH TABLES ... WITH READ LOCK) makes it wait without bound, '
                'lock_wait_timeout does not apply, KILL refuses it (error 1095), and every other DDL of the cluster '
                'waits behind it; enable performance_schema or the METADATA_LOCK_INFO plugin so that holders are '
                'listed and the run refuses')


GALERA_SCOPE = 'galera'
GROUP_REPLICATION_SCOPE = 'group_replication'


def scope_for(identity, variables):
    """The scope of a guarded change on this server (the one place a cluster rule is added): a Galera node
    (wsrep_on with a provider) or a Group Replication member (a group name with the plugin running) is a
    ClusterScope; any other server a ServerScope."""
    lower = dict((str(k).lower(), v) for k, v in (variables or {}).items())
    if cluster_utils.galera_enabled(lower):
        return ClusterScope(GALERA_SCOPE)
    if cluster_utils.group_replication_enabled(lower) and onoff(lower.get('group_replication_single_primary_mode')) is not None:
        return ClusterScope(GROUP_REPLICATION_SCOPE)
    return ServerScope()


# Variables open() reads for scope_for.
SCOPE_VARIABLES = ('wsrep_on', 'wsrep_provider', 'group_replication_group_name', 'group_replication_single_primary_mode')
