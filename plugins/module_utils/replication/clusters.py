# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Clusters: MariaDB Galera and MySQL Group Replication, read into one shape.

Every reader returns None (the server is not a cluster member) or one dict, whatever the kind:

    kind      'galera' | 'group_replication'
    name      the cluster's identity: wsrep_cluster_state_uuid (Galera), group_replication_group_name (GR)
    label     a name for people: wsrep_cluster_name (Galera), the group name (GR)
    size      members the cluster counts now (wsrep_cluster_size; members listed by GR)
    state     this member's state as the server names it ('Synced', 'Donor/Desynced', 'Joining', 'ONLINE',
              'RECOVERING', ...)
    ready     the member serves: Galera Synced + wsrep_ready + connected + Primary; GR ONLINE with a majority
    quorum    the member is in the Primary component (Galera) / a group with a majority of members reachable (GR)
    status    the component's own word: wsrep_cluster_status 'Primary' / 'non-Primary' / 'Disconnected'; GR: None
    role      None (Galera: every node writable) | 'PRIMARY' | 'SECONDARY' (GR)
    queue     transactions received and not yet applied (wsrep_local_recv_queue; GR applier queue)
    clients   Galera: client connections besides the reading one (Threads_connected - 1), None when not read
    reject_queries  Galera: wsrep_reject_queries ('NONE', 'ALL', 'ALL_KILL'; None when not read)
    member    this member: dict(id, name, address)
    members   every member this one knows: [dict(id, name, address, state)], state None when not reported
    error     why the cluster state could not be read completely (None when it could)

and the pure functions over that shape decide: member_problems(cluster) (why a member is not fit to
serve), stop_problems(clusters, host) (why a member may not be stopped now), quorum_after_stop(size) and
member_disagreements(members) (the settings a cluster's members disagree on). The Group Replication switchover is
replication/cluster_switchover.py's, the drain before a stop replication/cluster_drain.py's.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import cluster_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.values import as_int, onoff

GALERA = 'galera'
GROUP_REPLICATION = 'group_replication'
KINDS = (GALERA, GROUP_REPLICATION)

# Galera: the state of a node that serves, and the Primary component.
GALERA_SYNCED = 'Synced'
GALERA_PRIMARY = 'Primary'

GALERA_STATUS = ('wsrep_cluster_state_uuid', 'wsrep_cluster_size', 'wsrep_cluster_status', 'wsrep_cluster_conf_id',
                 'wsrep_local_state_comment', 'wsrep_local_state', 'wsrep_ready', 'wsrep_connected',
                 'wsrep_local_recv_queue', 'wsrep_incoming_addresses', 'wsrep_gcomm_uuid', 'wsrep_local_index',
                 'wsrep_desync_count', 'wsrep_provider_name', 'threads_connected')
# MariaDB 10.4 and later keep the members of the cluster in a table (absent or empty on older servers).
GALERA_MEMBERS_SQL = ('SELECT node_uuid, cluster_uuid, node_name, node_incoming_address '
                      'FROM mysql.wsrep_cluster_members')


def lower_names(row):
    """A row (or variables) with its names in lower case."""
    return dict((str(k).lower(), v) for k, v in (row or {}).items())


def galera_enabled(variables):
    """Whether the server runs as a Galera node (wsrep_on and a provider loaded)."""
    provider = str(variables.get('wsrep_provider') or '').strip().lower()
    return bool(onoff(variables.get('wsrep_on'))) and provider not in ('', 'none')


def galera_from(variables, status, member_rows=None, error=None):
    """The cluster dict of a Galera node from its GLOBAL variables, GLOBAL status ({lower-case name: value})
    and the rows of mysql.wsrep_cluster_members (None when they could not be read). None when the server
    is not a Galera node."""
    variables = lower_names(variables)
    status = lower_names(status)
    if not galera_enabled(variables):
        return None
    state = status.get('wsrep_local_state_comment') or None
    cluster_status = status.get('wsrep_cluster_status') or None
    connected = bool(onoff(status.get('wsrep_connected')))
    wsrep_ready = bool(onoff(status.get('wsrep_ready')))
    quorum = connected and cluster_status == GALERA_PRIMARY
    own_id = status.get('wsrep_gcomm_uuid') or None
    members = []
    for row in member_rows or []:
        row = lower_names(row)
        members.append(dict(id=row.get('node_uuid') or None, name=row.get('node_name') or None,
                            address=row.get('node_incoming_address') or None, state=None))
    if not members:
        for address in str(status.get('wsrep_incoming_addresses') or '').split(','):
            if address.strip():
                members.append(dict(id=None, name=None, address=address.strip(), state=None))
    me = next((m for m in members if own_id and m['id'] == own_id), None)
    member = dict(id=own_id, name=variables.get('wsrep_node_name') or (me or {}).get('name'),
                  address=(me or {}).get('address'))
    if me is not None:
        me['state'] = state
    return dict(
        kind=GALERA,
        name=status.get('wsrep_cluster_state_uuid') or None,
        label=variables.get('wsrep_cluster_name') or None,
        size=as_int(status.get('wsrep_cluster_size'), 0),
        state=state,
        ready=bool(quorum and wsrep_ready and state == GALERA_SYNCED),
        quorum=bool(quorum),
        status=cluster_status,
        connected=connected,
        wsrep_ready=wsrep_ready,
        role=None,
        queue=as_int(status.get('wsrep_local_recv_queue'), 0),
        # Client connections besides the one reading this (Threads_connected); None when not read.
        clients=max(as_int(status.get('threads_connected'), 1) - 1, 0) if 'threads_connected' in status else None,
        desync=bool(onoff(variables.get('wsrep_desync'))) or as_int(status.get('wsrep_desync_count'), 0) > 0,
        # Client queries refused (a drain, restart_cluster_drain reject_queries): 'ALL' / 'ALL_KILL'; None when not read.
        reject_queries=str(variables['wsrep_reject_queries']).upper() if variables.get('wsrep_reject_queries') else None,
        conf_id=as_int(status.get('wsrep_cluster_conf_id')),
        member=member,
        members=members,
        error=error,
    )


def read_galera(conn, query, global_variables, global_status):
    """The Galera cluster dict of the server behind conn, or None when it is not a Galera node.

    query(conn, sql) -> rows; global_variables / global_status(conn, names) -> {lower-case name: value}."""
    variables = global_variables(conn, cluster_facts.GALERA_VARIABLES)
    if not galera_enabled(variables):
        return None
    status = global_status(conn, GALERA_STATUS)
    try:
        rows = query(conn, GALERA_MEMBERS_SQL)
    except Exception:  # pylint: disable=broad-except
        # Older servers have no such table; the members then come from wsrep_incoming_addresses.
        rows = None
    return galera_from(variables, status, rows)


# ---------------------------------------------------------------- MySQL Group Replication
# A member's states (performance_schema.replication_group_members.MEMBER_STATE, MySQL 8.0 manual 20.4.3).
GR_ONLINE = 'ONLINE'
GR_RECOVERING = 'RECOVERING'
GR_OFFLINE = 'OFFLINE'
GR_ERROR = 'ERROR'
GR_UNREACHABLE = 'UNREACHABLE'
# Members that count as reachable for the majority: the group's view of them is current.
GR_REACHABLE = (GR_ONLINE, GR_RECOVERING)
GR_PRIMARY = 'PRIMARY'
GR_SECONDARY = 'SECONDARY'
# The async channels Group Replication runs on every member (SHOW REPLICA STATUS lists them): they
# are the group's own, not replication from a source.
GR_CHANNELS = ('group_replication_applier', 'group_replication_recovery')

GR_MEMBERS_SQL = ('SELECT MEMBER_ID, MEMBER_HOST, MEMBER_PORT, MEMBER_STATE, MEMBER_ROLE, MEMBER_VERSION '
                  'FROM performance_schema.replication_group_members')
GR_STATS_SQL = ('SELECT MEMBER_ID, COUNT_TRANSACTIONS_IN_QUEUE, COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE '
                'FROM performance_schema.replication_group_member_stats')


def is_group_replication_channel(name):
    """Whether a replication channel is one of Group Replication's own (not an async source)."""
    return str(name or '') in GR_CHANNELS


def group_replication_enabled(variables):
    """Whether the server has the Group Replication plugin and a group to be a member of."""
    return bool(str(lower_names(variables).get('group_replication_group_name') or '').strip())


def gr_majority(members):
    """(reachable, size, majority) of a group from the members one member lists: the group keeps a
    majority while more than half of its members are reachable (ONLINE or RECOVERING)."""
    size = len(members)
    reachable = len([m for m in members if m.get('state') in GR_REACHABLE])
    return reachable, size, size > 0 and reachable * 2 > size


def group_replication_from(variables, member_rows, stats_rows=None, error=None):
    """The cluster dict of a Group Replication member from its GLOBAL variables ({lower-case name: value}),
    the rows of performance_schema.replication_group_members and of replication_group_member_stats
    (dicts, any case of the column names). None when the server is not in a group (no plugin, no group name).

    A member that does not run Group Replication (OFFLINE, ERROR) lists only itself: its view is no view of
    the group, so it has no quorum and is not ready. The queue is this member's: transactions waiting for
    certification plus remote transactions waiting in its applier queue."""
    variables = lower_names(variables)
    if not group_replication_enabled(variables):
        return None
    own_id = variables.get('server_uuid') or None
    members = []
    for row in member_rows or []:
        row = lower_names(row)
        if not row.get('member_id'):
            continue
        host, port = row.get('member_host') or None, as_int(row.get('member_port'))
        members.append(dict(id=row['member_id'], name=None,
                            address='%s:%s' % (host, port) if host and port else host,
                            host=host, port=port, state=row.get('member_state') or None,
                            role=row.get('member_role') or None, version=row.get('member_version') or None))
    me = next((m for m in members if own_id and m['id'] == own_id), None)
    state = (me or {}).get('state') or GR_OFFLINE
    if state in GR_REACHABLE:
        reachable, size, majority = gr_majority(members)
    else:
        reachable, size, majority = 0, len(members), False
    stats = {}
    for row in stats_rows or []:
        row = lower_names(row)
        if row.get('member_id'):
            stats[row['member_id']] = row
    mine = stats.get(own_id) or {}
    certification = as_int(mine.get('count_transactions_in_queue'), 0)
    applier = as_int(mine.get('count_transactions_remote_in_applier_queue'), 0)
    primary = next((m for m in members if m['role'] == GR_PRIMARY and m['state'] in GR_REACHABLE), None)
    single_primary = bool(onoff(variables.get('group_replication_single_primary_mode')))
    return dict(
        kind=GROUP_REPLICATION,
        name=variables.get('group_replication_group_name'),
        label=variables.get('group_replication_group_name'),
        size=size,
        state=state,
        ready=bool(state == GR_ONLINE and majority),
        quorum=bool(majority),
        status=None,
        role=(me or {}).get('role') or None,
        queue=certification + applier,
        certification_queue=certification,
        applier_queue=applier,
        reachable=reachable,
        single_primary=single_primary,
        primary=dict(id=primary['id'], address=primary['address']) if primary and single_primary else None,
        member=dict(id=own_id, name=None, address=(me or {}).get('address')),
        members=members,
        error=error,
    )


def read_group_replication(conn, query, global_variables):
    """The Group Replication cluster dict of the server behind conn, or None when it is not in a group.

    query(conn, sql) -> rows (dicts); global_variables(conn, names) -> {lower-case name: value}. A failure to
    read the performance_schema tables is kept in ``error`` (the member then has no quorum and is not ready)."""
    variables = global_variables(conn, cluster_facts.GR_VARIABLES)
    if not group_replication_enabled(variables):
        return None
    try:
        members = query(conn, GR_MEMBERS_SQL)
        stats = query(conn, GR_STATS_SQL)
    except Exception as e:  # pylint: disable=broad-except
        args = getattr(e, 'args', ())
        text = '(%s) %s' % (args[0], args[1]) if len(args) >= 2 else str(e)
        return group_replication_from(variables, [], None, error='the group members cannot be read: %s' % text)
    return group_replication_from(variables, members, stats)


def read_cluster(conn, flavor, query, global_variables, global_status):
    """The cluster dict of the server behind conn (any kind its flavor can run), or None."""
    if flavor == 'mariadb':
        return read_galera(conn, query, global_variables, global_status)
    if flavor in ('mysql', 'percona'):
        return read_group_replication(conn, query, global_variables)
    return None


# ---------------------------------------------------------------- decisions, pure
def describe(cluster):
    """'galera cluster NAME (uuid)' for messages."""
    if not cluster:
        return 'no cluster'
    kind = 'Galera cluster' if cluster.get('kind') == GALERA else 'Group Replication group'
    label = cluster.get('label')
    name = cluster.get('name') or '?'
    return '%s %s' % (kind, '%s (%s)' % (label, name) if label and label != name else name)


def member_problems(cluster, max_queue=0):
    """Why this member does not serve as a healthy cluster member now (empty list: it does).

    max_queue: most transactions it may have received and not yet applied (None: not checked)."""
    if not cluster:
        return ['not a cluster member']
    problems = []
    if cluster.get('error'):
        problems.append(cluster['error'])
    if cluster.get('kind') == GALERA:
        if not cluster.get('connected'):
            problems.append('not connected to the cluster (wsrep_connected=OFF)')
        if cluster.get('status') != GALERA_PRIMARY:
            # One node's view cannot tell a node cut off (or still joining) from a cluster without quorum.
            problems.append('not in the Primary component (wsrep_cluster_status=%s): this node is outside the '
                            "cluster's quorum (cut off, still joining, or the cluster has none)" % cluster.get('status'))
        if cluster.get('state') != GALERA_SYNCED:
            problems.append('state %s, not Synced (wsrep_local_state_comment)' % cluster.get('state'))
        if not cluster.get('wsrep_ready'):
            problems.append('wsrep_ready=OFF: refuses queries (error 1047)')
        if cluster.get('reject_queries') not in (None, 'NONE'):
            problems.append('wsrep_reject_queries=%s: refuses client queries (drained)' % cluster['reject_queries'])
    else:
        state = cluster.get('state')
        if state not in GR_REACHABLE:
            problems.append('state %s, not ONLINE: not in the group (Group Replication does not run here)' % state)
        else:
            if not cluster.get('quorum'):
                problems.append('the group has no majority (%s of %s members reachable)'
                                % (cluster.get('reachable', '?'), cluster.get('size')))
            if state != GR_ONLINE:
                problems.append('state %s, not ONLINE' % state)
    if max_queue is not None and (cluster.get('queue') or 0) > max_queue:
        problems.append('%s transaction(s) received and not yet applied (limit %s)' % (cluster['queue'], max_queue))
    return problems


def quorum_after_stop(size):
    """Whether a cluster of `size` members keeps a majority of them once one member is stopped."""
    return size >= 1 and (size - 1) * 2 > size


def stop_problems(clusters, host, max_queue=None):
    """Why `host` may not be stopped now (empty list: it may).

    clusters: {host: cluster dict (or None when it could not be read)} for every member of the host's
    cluster the play knows, read just now. The other members must all serve (member_problems) and be
    members of the same cluster, the cluster must count all of them (no member gone meanwhile), and the
    members left running must keep a majority of the cluster."""
    mine = clusters.get(host)
    if not mine:
        return ['%s: its cluster state cannot be read' % host]
    problems = []
    others = sorted(h for h in clusters if h != host)
    for other in others:
        theirs = clusters.get(other)
        if not theirs:
            problems.append('%s: its cluster state cannot be read' % other)
            continue
        if theirs.get('name') != mine.get('name') or theirs.get('kind') != mine.get('kind'):
            problems.append('%s: member of %s, not of %s' % (other, describe(theirs), describe(mine)))
            continue
        for why in member_problems(theirs, max_queue):
            problems.append('%s: %s' % (other, why))
    size = max([mine.get('size') or 0] + [(clusters.get(o) or {}).get('size') or 0 for o in others])
    if size > len(others) + 1:
        problems.append('the cluster counts %d members, the play knows %d (%s): the others cannot be checked'
                        % (size, len(others) + 1, ', '.join(sorted([host] + others))))
    if not quorum_after_stop(size):
        problems.append('stopping %s leaves %d of %d members: no majority' % (host, max(size - 1, 0), size))
    return problems


# ---------------------------------------------------------------- members that disagree
# The settings every member of a cluster must share: cluster_facts.CLUSTER_MUST_MATCH (data, with its sources).
# Settings that stay each member's own (AHI, its partitions, flush_neighbors, the memcached plugin): reported per
# member where they differ, never flagged.
PER_MEMBER = ('innodb_adaptive_hash_index', 'innodb_adaptive_hash_index_parts', 'innodb_adaptive_hash_index_partitions',
              'innodb_flush_neighbors', 'daemon_memcached_option', 'innodb_api_enable_binlog')


def member_disagreements(members):
    """The settings the members of one cluster disagree on.

    members: {host: dict(cluster=<the host's cluster dict or summary: kind, name, label>, values={name: value})}
    (values: what the host runs, any case of the names; hosts without a cluster are ignored).
    Returns [dict(cluster, kind, setting, must_match, values={host: value}, text)], sorted: the settings of cluster_facts.CLUSTER_MUST_MATCH
    whose values differ between members that report them (must_match True), then the PER_MEMBER ones that
    differ (must_match False: each member's own)."""
    groups = {}
    for host, info in (members or {}).items():
        cluster = (info or {}).get('cluster') or {}
        if not cluster.get('name'):
            continue
        key = (cluster.get('kind'), cluster['name'])
        groups.setdefault(key, dict(label=cluster.get('label') or cluster['name'], hosts={}))
        groups[key]['hosts'][host] = dict((str(k).lower(), v) for k, v in ((info or {}).get('values') or {}).items())
    out = []
    for (kind, _name), group in sorted(groups.items(), key=lambda kv: (str(kv[0][0]), str(kv[1]['label']))):
        if len(group['hosts']) < 2:
            continue
        for must, names in ((True, cluster_facts.CLUSTER_MUST_MATCH.get(kind, ())), (False, PER_MEMBER)):
            for setting in names:
                values = dict((h, v[setting]) for h, v in group['hosts'].items() if v.get(setting) is not None)
                if len(set(str(v).upper() for v in values.values())) > 1:
                    values = dict(sorted(values.items()))
                    out.append(dict(cluster=group['label'], kind=kind, setting=setting, must_match=must, values=values,
                                    text='%s %s: %s %s: %s' % (
                                        'Galera cluster' if kind == GALERA else 'Group Replication group', group['label'],
                                        setting, 'differs between members' if must else 'per member',
                                        ', '.join('%s=%s' % hv for hv in values.items()))))
    return out
