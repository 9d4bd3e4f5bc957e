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
serve), stop_problems(clusters, host) (why a member may not be stopped now) and quorum_after_stop(size).
"""

from __future__ import annotations

import time

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
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


def _lower(row):
    return dict((str(k).lower(), v) for k, v in (row or {}).items())


def galera_enabled(variables):
    """Whether the server runs as a Galera node (wsrep_on and a provider loaded)."""
    provider = str(variables.get('wsrep_provider') or '').strip().lower()
    return bool(onoff(variables.get('wsrep_on'))) and provider not in ('', 'none')


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
    connected = bool(onoff(status.get('wsrep_connected')))
    wsrep_ready = bool(onoff(status.get('wsrep_ready')))
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
    return bool(str(_lower(variables).get('group_replication_group_name') or '').strip())


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
    variables = _lower(variables)
    if not group_replication_enabled(variables):
        return None
    own_id = variables.get('server_uuid') or None
    members = []
    for row in member_rows or []:
        row = _lower(row)
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
        row = _lower(row)
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


# The statement that hands the primary role of a single-primary group to another member (MySQL 8.0.13 and
# later; it returns once the new primary is elected, after the old primary's running transactions end).
GR_SET_AS_PRIMARY_SQL = 'SELECT group_replication_set_as_primary(%s) AS result'


def switchover_plan(cluster, candidates=()):
    """What a switchover away from this member needs (pure): dict(needed, target, problems).

    needed: this member is the primary of a single-primary Group Replication group now; target: the member
    (dict of ``members``) to hand the role to: the first of candidates (server_uuids, in order of preference)
    that is an ONLINE SECONDARY, else the first ONLINE SECONDARY in the group's listing; problems: why no
    switchover can be made (the group has no majority, no member is ONLINE to take it, the member is not ONLINE)."""
    out = dict(needed=False, target=None, problems=[])
    if not cluster or cluster.get('kind') != GROUP_REPLICATION:
        return out
    if not cluster.get('single_primary') or cluster.get('role') != GR_PRIMARY:
        return out
    out['needed'] = True
    if cluster.get('state') != GR_ONLINE:
        out['problems'].append('this member is %s, not ONLINE' % cluster.get('state'))
    if not cluster.get('quorum'):
        out['problems'].append('the group has no majority')
    own = (cluster.get('member') or {}).get('id')
    online = [m for m in cluster.get('members') or [] if m.get('state') == GR_ONLINE and m.get('id') != own
              and m.get('role') == GR_SECONDARY]
    by_id = dict((m['id'], m) for m in online)
    preferred = [by_id[c] for c in candidates or () if c in by_id]
    out['target'] = (preferred or online or [None])[0]
    if out['target'] is None:
        out['problems'].append('no other member is ONLINE to take the primary role (members: %s)' % ', '.join(
            '%s %s' % (m.get('address') or m.get('id'), m.get('state')) for m in cluster.get('members') or []))
    return out


def set_as_primary(conn, query, member_id):
    """Run group_replication_set_as_primary(member_id) (returns once the group elected it)."""
    return query(conn, GR_SET_AS_PRIMARY_SQL, (member_id,))


def _brief(member):
    return dict(id=member.get('id'), address=member.get('address')) if member else None


def run_switchover(conn, query, global_variables, allowed=True, candidates=(), expect_cluster=None, check_mode=False):
    """The module cluster_switchover: read the group, refuse or hand the primary role over, read it again.

    Returns the module result with ``failed`` (True: the caller fails the task with ``msg``)."""
    cluster = read_group_replication(conn, query, global_variables)
    result = dict(failed=False, changed=False, needed=False, old_primary=None, new_primary=None, cluster=cluster)
    identity = server_identity.identity_from_variables(global_variables(conn, server_identity.DETECT_VARIABLES))
    if expect_cluster and (not cluster or cluster.get('name') != expect_cluster):
        result.update(failed=True, msg='this server is %s, not a member of group %s: nothing was changed'
                      % ('a member of %s' % describe(cluster) if cluster else 'no Group Replication member', expect_cluster))
        return result
    plan = switchover_plan(cluster, candidates)
    if not plan['needed']:
        result['msg'] = 'not the primary of a single-primary group: no switchover needed'
        return result
    me = cluster['member']
    where = me.get('address') or me.get('id')
    result.update(needed=True, old_primary=_brief(me))
    if not allowed:
        result.update(failed=True, msg='%s is the PRIMARY of %s: it is restarted only after a switchover, which is not '
                      'allowed (restart_cluster_switchover: true allows it); nothing was changed' % (where, describe(cluster)))
        return result
    if not capability_facts.capability('group_replication_set_as_primary', identity.flavor, identity.version):
        plan['problems'].append('group_replication_set_as_primary() needs MySQL 8.0.13 or later on every member, this '
                                'one runs %s %s' % (identity.flavor, flavors.format_version(identity.version)))
    if plan['problems']:
        result.update(failed=True, msg='%s is the PRIMARY of %s and no switchover can be made: %s; nothing was changed'
                      % (where, describe(cluster), '; '.join(plan['problems'])))
        return result
    result.update(changed=True, new_primary=_brief(plan['target']))
    if check_mode:
        result['msg'] = 'would hand the primary role to %s' % plan['target'].get('address')
        return result
    set_as_primary(conn, query, plan['target']['id'])
    after = read_group_replication(conn, query, global_variables)
    result['cluster'] = after
    now = (after or {}).get('primary') or {}
    if (after or {}).get('role') == GR_PRIMARY or now.get('id') != plan['target']['id']:
        result.update(failed=True, msg='group_replication_set_as_primary(%s) returned, but the primary is now %s and '
                      'this member is %s' % (plan['target']['id'], now.get('address') or now.get('id'),
                                             (after or {}).get('role')))
        return result
    result['msg'] = 'handed the primary role to %s' % plan['target'].get('address')
    return result


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


# ---------------------------------------------------------------- drain before a stop
# How a member is taken out of its clients' view before its stop and put back after its gate (role restart,
# restart_cluster_drain; docs/topology.md "Drain"). Each method is one GLOBAL variable (flavors.VARIABLES says
# which flavor/version has it), its value while drained and the value that serves:
# - reject_queries (MariaDB Galera): wsrep_reject_queries=ALL: every client query fails with error 1047 ("WSREP has
#   not yet prepared node for application use"), as clustercheck-style health checks do, so a load balancer
#   moves the node's clients away; the node stays in the cluster and keeps applying write-sets;
# - offline_mode (MySQL, Percona Server): offline_mode=ON: sessions of users without CONNECTION_ADMIN / SUPER are
#   disconnected, new ones refused with error 3032 (ER_SERVER_OFFLINE_MODE); replication threads keep running.
DRAIN_METHODS = {
    'reject_queries': dict(variable='wsrep_reject_queries', drained='ALL', serving='NONE', galera=True),
    'offline_mode': dict(variable='offline_mode', drained='ON', serving='OFF', galera=False),
}
DRAIN_STATES = ('drained', 'restored')
_BOOL_WORDS = {'1': 'ON', 'TRUE': 'ON', 'YES': 'ON', '0': 'OFF', 'FALSE': 'OFF', 'NO': 'OFF'}


def drain_value(value):
    """A drain variable's value as the server names it, upper case (1/0 of a boolean as ON/OFF)."""
    text = str(value if value is not None else '').strip().upper()
    return _BOOL_WORDS.get(text, text)


def drain_problems(method, identity, variables):
    """Why `method` cannot drain this server (empty list: it can). Pure.

    identity: server_identity.ServerIdentity of the server; variables: its GLOBAL variables ({lower-case name: value}), at least
    the method's variable and cluster_facts.GALERA_VARIABLES."""
    spec = DRAIN_METHODS.get(method)
    if spec is None:
        return ['unknown drain method %r (one of: %s)' % (method, ', '.join(sorted(DRAIN_METHODS)))]
    variables = _lower(variables)
    name = spec['variable']
    where = '%s %s' % (flavors.display_name(identity.flavor), flavors.format_version(identity.version))
    if flavors.variable_facts(name, identity.flavor, identity.version) is None:
        spans = flavors.VARIABLES.get(name, [])
        needs = '; '.join('%s %s and later' % ('/'.join(flavors.display_name(f) for f in s.flavors),
                                               flavors.format_version(s.since)) for s in spans)
        return ['drain %s needs %s (%s); this server runs %s' % (method, name, needs or 'no known server', where)]
    if name not in variables:
        return ['drain %s needs %s, which this server (%s) does not list in SHOW GLOBAL VARIABLES' % (method, name, where)]
    if spec['galera'] and not galera_enabled(variables):
        return ['drain %s works on Galera nodes only: this server (%s) runs no Galera provider (wsrep_on=%s, '
                'wsrep_provider=%s)' % (method, where, variables.get('wsrep_on'), variables.get('wsrep_provider'))]
    return []


def run_drain(conn, query, execute, global_variables, global_status, method, state, restore_value=None, seconds=0,
              expect_cluster=None, check_mode=False, sleep=None):
    """The module cluster_drain: take the server out of its clients' view (state drained) and wait `seconds`, or put
    back the value it served with (state restored: restore_value, else the method's serving value).

    Returns the module result with ``failed`` (True: the caller fails the task with ``msg``). Nothing is changed
    when the server cannot be drained by the method or is not a member of expect_cluster."""
    spec = DRAIN_METHODS.get(method) or {}
    result = dict(failed=False, changed=False, method=method, state=state, variable=spec.get('variable'),
                  before=None, after=None, waited=0, clients_before=None, clients_after=None)
    if state not in DRAIN_STATES:
        result.update(failed=True, msg='state must be one of %s, got %r; nothing was changed' % (', '.join(DRAIN_STATES), state))
        return result
    names = tuple(server_identity.DETECT_VARIABLES) + cluster_facts.GALERA_VARIABLES + cluster_facts.GR_VARIABLES + ((spec['variable'],) if spec else ())
    variables = global_variables(conn, names)
    identity = server_identity.identity_from_variables(variables)
    problems = drain_problems(method, identity, variables)
    if not problems and expect_cluster:
        cluster = read_cluster(conn, identity.flavor, query, global_variables, global_status)
        if not cluster or cluster.get('name') != expect_cluster:
            where = describe(cluster) if cluster else 'no cluster member'
            problems.append('this server is %s, not a member of %s' % (where, expect_cluster))
    if problems:
        result.update(failed=True, msg='%s; nothing was changed' % '; '.join(problems))
        return result
    name = spec['variable']
    before = drain_value(variables.get(name))
    if state == 'drained':
        want = spec['drained']
    else:
        # The value read before the drain: a node its owner kept out of view before the run stays out.
        want = drain_value(restore_value) if restore_value not in (None, '') else spec['serving']
    result['before'] = before
    result['clients_before'] = _clients(conn, global_status)
    if before == want:
        result.update(after=before, clients_after=result['clients_before'],
                      msg='%s=%s already: nothing to change' % (name, before))
        return result
    result['changed'] = True
    if check_mode:
        result.update(after=want, msg='would set %s=%s (now %s)%s' % (
            name, want, before, ', then wait %d s for clients to move away' % seconds if state == 'drained' and seconds else ''))
        return result
    # The value is one of the method's own words (never user text): no quoting issue.
    execute(conn, 'SET GLOBAL %s = %%s' % name, (want,))
    after = drain_value(global_variables(conn, (name,)).get(name))
    result['after'] = after
    if after != want:
        result.update(failed=True, msg='SET GLOBAL %s=%s returned, but the server reports %s' % (name, want, after))
        return result
    if state == 'drained' and seconds > 0:
        started = time.monotonic()
        (sleep or time.sleep)(seconds)
        result['waited'] = round(time.monotonic() - started, 1)
    result['clients_after'] = _clients(conn, global_status)
    result['msg'] = 'set %s=%s (was %s)%s' % (name, after, before, ', waited %.1f s: %s client connection(s) left' % (
        result['waited'], result['clients_after']) if state == 'drained' and seconds > 0 else '')
    return result


def _clients(conn, global_status):
    """Client connections besides this one (Threads_connected - 1)."""
    value = as_int(global_status(conn, ('threads_connected',)).get('threads_connected'))
    return None if value is None else max(value - 1, 0)
