# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster facts by flavor: the variables that tell a server's Galera or Group Replication membership, the one
that marks a possible member, and the settings every member of a cluster must share (with their sources)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavors import MARIADB, MYSQL, PERCONA

# The global variables that tell a server's cluster, by kind (replication/clusters.py reads them; replication/membership.py reads them with the
# audit's other variables and loads the cluster code only for a server whose CLUSTER_MARKERS variable is set).
# Galera (MariaDB Galera Cluster system variables):
GALERA_VARIABLES = ('wsrep_on', 'wsrep_provider', 'wsrep_cluster_name', 'wsrep_node_name', 'wsrep_node_address',
                    'wsrep_node_incoming_address', 'wsrep_desync', 'wsrep_sst_method', 'wsrep_reject_queries')
# Group Replication (MySQL manual, "Group Replication System Variables"):
GR_VARIABLES = ('group_replication_group_name', 'group_replication_single_primary_mode',
                'group_replication_local_address', 'group_replication_start_on_boot', 'server_uuid')
# By flavor, the variable that is set on a server that may be a cluster member, of the one kind clusters.read_cluster()
# reads for the flavor: MariaDB runs Galera (wsrep_on ON), MySQL and Percona Server Group Replication (a
# group_replication_group_name). Unset, empty, OFF or 0: the server is no cluster member, nothing more is read.
CLUSTER_MARKERS = {MARIADB: 'wsrep_on', MYSQL: 'group_replication_group_name', PERCONA: 'group_replication_group_name'}
# Settings every member of a cluster must share, by kind (clusters.KINDS); a member that differs is a cluster
# misconfigured (verify flags it: clusters.member_disagreements()).
# Galera (MariaDB Galera Cluster "Configuring" / "Known limitations"): one cluster name, DDL in one method, ROW
# binary log format and interleaved auto-increment locks on every node, one write-set limit and one table-name rule.
# Group Replication (MySQL manual "Group Replication Requirements" / "Group Replication System Variables": the
# settings a joining member is checked against, or that must be the same on all members).
CLUSTER_MUST_MATCH = {
    'galera': ('wsrep_cluster_name', 'wsrep_osu_method', 'binlog_format', 'innodb_autoinc_lock_mode',
               'wsrep_certify_nonpk', 'wsrep_max_ws_rows', 'wsrep_max_ws_size', 'lower_case_table_names'),
    'group_replication': ('group_replication_group_name', 'group_replication_single_primary_mode',
                          'group_replication_enforce_update_everywhere_checks',
                          'group_replication_gtid_assignment_block_size', 'group_replication_view_change_uuid',
                          'group_replication_paxos_single_leader', 'gtid_mode', 'enforce_gtid_consistency',
                          'binlog_checksum', 'transaction_write_set_extraction', 'lower_case_table_names',
                          'default_table_encryption'),
}
