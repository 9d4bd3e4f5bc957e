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
    member    this member: dict(id, name, address)
    members   every member this one knows: [dict(id, name, address, state)], state None when not reported
    error     why the cluster state could not be read completely (None when it could)

and the pure functions over that shape decide: member_problems(cluster) (why a member is not fit to
serve), stop_problems(clusters, host) (why a member may not be stopped now) and quorum_after_stop(size).
"""

from __future__ import annotations

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
GALERA_VARIABLES = ('wsrep_on', 'wsrep_provider', 'wsrep_cluster_name', 'wsrep_node_name', 'wsrep_node_address',
                    'wsrep_node_incoming_address', 'wsrep_desync', 'wsrep_sst_method')
# MariaDB 10.4 and later keep the members of the cluster in a table (absent or empty on older servers).
GALERA_MEMBERS_SQL = ('SELECT node_uuid, cluster_uuid, node_name, node_incoming_address '
                      'FROM mysql.wsrep_cluster_members')


def _onoff(value):
    return str(value if value is not None else '').strip().upper() in ('ON', '1', 'TRUE', 'YES')


def _int(value, default=None):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _lower(row):
    return dict((str(k).lower(), v) for k, v in (row or {}).items())


def galera_enabled(variables):
    """Whether the server runs as a Galera node (wsrep_on and a provider loaded)."""
    provider = str(variables.get('wsrep_provider') or '').strip().lower()
    return _onoff(variables.get('wsrep_on')) and provider not in ('', 'none')


def galera_from(variables, status, member_rows=None, error=None):
    """The cluster dict of a Galera node from its GLOBAL variables, GLOBAL status ({lower-case name: value})
    and the rows of mysql.wsrep_cluster_members (None when they could not be read). None when the server
    is not a Galera node."""
    variables = _lower(variables)
    status = _lower(status)
    if not galera_enabled(variables):
        return None
    state = status.get('wsrep_local_state_comment') or None
    cluster_status = status.get('wsrep_cluster_status') or None
    connected = _onoff(status.get('wsrep_connected'))
    wsrep_ready = _onoff(status.get('wsrep_ready'))
    quorum = connected and cluster_status == GALERA_PRIMARY
    own_id = status.get('wsrep_gcomm_uuid') or None
    members = []
    for row in member_rows or []:
        row = _lower(row)
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
        size=_int(status.get('wsrep_cluster_size'), 0),
        state=state,
        ready=bool(quorum and wsrep_ready and state == GALERA_SYNCED),
        quorum=bool(quorum),
        status=cluster_status,
        connected=connected,
        wsrep_ready=wsrep_ready,
        role=None,
        queue=_int(status.get('wsrep_local_recv_queue'), 0),
        # Client connections besides the one reading this (Threads_connected); None when not read.
        clients=max(_int(status.get('threads_connected'), 1) - 1, 0) if 'threads_connected' in status else None,
        desync=_onoff(variables.get('wsrep_desync')) or _int(status.get('wsrep_desync_count'), 0) > 0,
        conf_id=_int(status.get('wsrep_cluster_conf_id')),
        member=member,
        members=members,
        error=error,
    )


def read_galera(conn, query, global_variables, global_status):
    """The Galera cluster dict of the server behind conn, or None when it is not a Galera node.

    query(conn, sql) -> rows; global_variables / global_status(conn, names) -> {lower-case name: value}."""
    variables = global_variables(conn, GALERA_VARIABLES)
    if not galera_enabled(variables):
        return None
    status = global_status(conn, GALERA_STATUS)
    try:
        rows = query(conn, GALERA_MEMBERS_SQL)
    except Exception:  # pylint: disable=broad-except
        # Older servers have no such table; the members then come from wsrep_incoming_addresses.
        rows = None
    return galera_from(variables, status, rows)


def read_cluster(conn, flavor, query, global_variables, global_status):
    """The cluster dict of the server behind conn (any kind its flavor can run), or None."""
    if flavor == 'mariadb':
        return read_galera(conn, query, global_variables, global_status)
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
            problems.append('not in the Primary component (wsrep_cluster_status=%s): the cluster has no quorum here'
                            % cluster.get('status'))
        if cluster.get('state') != GALERA_SYNCED:
            problems.append('state %s, not Synced (wsrep_local_state_comment)' % cluster.get('state'))
        if not cluster.get('wsrep_ready'):
            problems.append('wsrep_ready=OFF: refuses queries (error 1047)')
    else:
        if not cluster.get('quorum'):
            problems.append('the group has no majority')
        if not cluster.get('ready'):
            problems.append('state %s, not ONLINE' % cluster.get('state'))
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
