# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A server's place in replication, as a report shows it: its role (primary / replica) and the channels it
replicates from (replication_info(), through the one channel reader), and the cluster it is a member of
(cluster_info())."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication.channels import channel_from_row
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import NamedGlobalVariables, error_text, global_status, global_variables, query
from ansible_collections.dbfleet.innodb.plugins.module_utils.values import onoff
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import cluster_facts

try:
    import pymysql
    _DB_ERRORS = (pymysql.err.MySQLError,)
except ImportError:  # pragma: no cover
    _DB_ERRORS = ()


def replication_info(conn, identity, variables):
    """Role (primary / replica), read_only / super_read_only, the channels replicated from, and the
    cluster the server is a member of (replication/clusters.py; None when it is none)."""
    info = dict(
        role=None,
        read_only=onoff(variables.get('read_only')),
        super_read_only=onoff(variables.get('super_read_only')),
        channels=[],
        statement=None,
        error=None,
        cluster=None,
    )
    if identity.flavor == flavors.AURORA:
        info['role'] = 'replica' if identity.aurora_reader else 'primary'
        info['statement'] = '@@innodb_read_only (Aurora reader instances run read-only)'
        return info
    statement = capability_facts.capability('replica_status_statement', identity.flavor, identity.version)
    info['statement'] = statement
    try:
        rows = query(conn, statement)
    except _DB_ERRORS as e:
        info['error'] = '%s failed: %s' % (statement, error_text(e))
        return info
    # The one channel reader (replication/channels.py); this report shows the threads' states as the server
    # writes them ("Yes", "No", "Connecting").
    for channel in map(channel_from_row, rows):
        info['channels'].append(dict(
            name=channel['name'], source_host=channel['source_host'], source_port=channel['source_port'],
            io_running=channel['io_state'], sql_running=channel['sql_state'], seconds_behind=channel['seconds_behind']))
    info['role'] = 'replica' if info['channels'] else 'primary'
    info['cluster'] = cluster_info(conn, identity, variables)
    return info


# The global variables cluster_info() reads: what tells each kind of cluster, and the settings its members share.
CLUSTER_VARIABLES = tuple(sorted(set(cluster_facts.GALERA_VARIABLES + cluster_facts.GR_VARIABLES
                                     + tuple(n for names in cluster_facts.CLUSTER_MUST_MATCH.values() for n in names))))

CLUSTER_KEYS = ('kind', 'name', 'label', 'size', 'state', 'status', 'ready', 'quorum', 'role', 'queue')


def cluster_info(conn, identity, variables=None):
    """What a report shows of the server's cluster membership: kind, name, label, size, this member's state,
    ready, quorum, role, queue (replication/clusters.py), and settings: the running values of the settings every member must
    share (cluster_facts.CLUSTER_MUST_MATCH); None for a server that is no cluster member. variables: NamedGlobalVariables
    the cluster's variables are read from (CLUSTER_VARIABLES among its names: no statement of their own).

    The cluster code (replication/clusters.py) is loaded only for a server whose cluster_facts.CLUSTER_MARKERS variable is set (a
    module's payload runs from a zip, compiled on every run: a standalone server's audit does not compile it)."""
    read_variables = variables.read if isinstance(variables, NamedGlobalVariables) else global_variables
    marker = cluster_facts.CLUSTER_MARKERS.get(identity.flavor)
    if marker is None:
        return None
    try:
        if str(read_variables(conn, [marker]).get(marker) or '').strip().upper() in ('', 'OFF', '0'):
            return None
        from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters
        cluster = clusters.read_cluster(conn, identity.flavor, query, read_variables, global_status)
    except _DB_ERRORS as e:
        return dict(error='reading the cluster state failed: %s' % error_text(e))
    if cluster is None:
        return None
    info = dict((k, cluster.get(k)) for k in CLUSTER_KEYS)
    # The settings every member of this kind of cluster must share (cluster_facts.CLUSTER_MUST_MATCH), for the fleet
    # report's check that the members agree (clusters.member_disagreements).
    names = cluster_facts.CLUSTER_MUST_MATCH.get(cluster.get('kind'), ())
    try:
        running = read_variables(conn, names) if names else {}
    except _DB_ERRORS as e:
        info['settings_error'] = 'reading the settings every member must share failed: %s' % error_text(e)
        running = {}
    info['settings'] = dict((n, running[n]) for n in names if n in running)
    return info
