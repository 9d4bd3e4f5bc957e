# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The replication topologies of a play's hosts and the order to act on them, on the controller (action
dbfleet.innodb.topology_plan): build_plan(entries, ...) maps each channel's source to an inventory host (the hosts'
facts read by replication/topology.py), builds the replication topologies (a cluster's members one topology),
compares them with what the inventory says (inventory_role()) and orders hosts replicas first (deepest first) within
each topology. It fails closed: unknown roles and disagreements are listed and ``ok`` is False.

Everything here is pure logic over dicts so that it can be unit-tested without a server.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters as cluster_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology
from ansible_collections.dbfleet.innodb.plugins.module_utils.values import as_int


def _entry(name, raw):
    raw = dict(raw or {})
    addresses = [str(a) for a in (raw.get('addresses') or []) if a not in (None, '')]
    if name not in addresses:
        addresses.append(name)
    return dict(name=name, facts=raw.get('facts'), error=raw.get('error'), outside=bool(raw.get('outside')),
                addresses=addresses, port=as_int(raw.get('port')) or 3306,
                inventory_role=raw.get('inventory_role'), inventory_role_source=raw.get('inventory_role_source'),
                inventory_source=raw.get('inventory_source'))


def _locate_source(channel, entries, self_name):
    """(inventory host, how) of a channel's source; (None, why) when no inventory host matches."""
    uuid = channel.get('source_uuid')
    if uuid:
        hits = [e['name'] for e in entries.values()
                if e['facts'] and e['facts'].get('server_uuid') == uuid and e['name'] != self_name]
        if len(hits) == 1:
            return hits[0], 'server_uuid %s' % uuid
    sid = channel.get('source_server_id')
    if sid is not None:
        hits = [e['name'] for e in entries.values()
                if e['facts'] and e['facts'].get('server_id') == sid and e['name'] != self_name]
        if len(hits) == 1:
            return hits[0], 'server_id %s' % sid
    host, port = channel.get('source_host'), channel.get('source_port') or 3306
    hits = [e['name'] for e in entries.values()
            if host in e['addresses'] and e['port'] == port and e['name'] != self_name]
    if len(hits) == 1:
        return hits[0], 'address %s:%s' % (host, port)
    if len(hits) > 1:
        return None, 'address %s:%s matches several hosts (%s)' % (host, port, ', '.join(sorted(hits)))
    return None, 'no inventory host is %s:%s%s' % (host, port, ' (server_uuid %s)' % uuid if uuid else '')


def _depths(sources, names):
    """Longest replication chain above each host (0 for a primary); hosts in a cycle get the
    longest chain found before the cycle closes."""
    memo = {}

    def depth(name, seen):
        if name in memo:
            return memo[name]
        ups = [s for s in sources.get(name, ()) if s is not None]
        if not ups:
            memo[name] = 0
            return 0
        best = 0
        for up in ups:
            if up in seen:
                continue
            best = max(best, depth(up, seen | {name}) + 1)
        memo[name] = best
        return best

    return dict((n, depth(n, frozenset([n]))) for n in names)


def cluster_summary(cluster):
    """What the plan keeps of a host's cluster dict (None: not a cluster member)."""
    if not cluster:
        return None
    return dict((k, cluster.get(k)) for k in ('kind', 'name', 'label', 'size', 'state', 'status', 'ready', 'quorum',
                                              'role', 'queue', 'clients', 'member', 'members', 'connected',
                                              'wsrep_ready', 'error', 'single_primary', 'primary'))


def _member_clients(info):
    """Sort key of a Galera member: its client connections (fewest first, so that the node taking the writes
    restarts last); 0 for anything else."""
    cluster = info.get('cluster') or {}
    return (cluster.get('clients') or 0) if cluster.get('kind') == cluster_utils.GALERA else 0


def cluster_members(hosts, names):
    """{(kind, cluster name): [hosts of the play in it, in play order]}."""
    out = {}
    for name in names:
        cluster = hosts[name].get('cluster')
        if cluster and cluster.get('name'):
            out.setdefault((cluster['kind'], cluster['name']), []).append(name)
    return out


def _address_matches(address, entry):
    host, _sep, port = str(address or '').rpartition(':')
    return bool(host) and host in entry['addresses'] and str(entry['port']) == port


def cluster_topology(key, members, hosts, entries, outside):
    """The cluster of a topology: kind, name, label, size, its members in the play and those missing (each
    matched by its address to an inventory host when one has it: outside the play, or in the play but
    unread)."""
    kind, name = key
    views = [hosts[m]['cluster'] for m in members]
    size = max(v.get('size') or 0 for v in views)
    known_ids = set(filter(None, ((v.get('member') or {}).get('id') for v in views)))
    known_addresses = set(filter(None, ((v.get('member') or {}).get('address') for v in views)))
    listed = max((v.get('members') or [] for v in views), key=len)
    missing = []
    for member in listed:
        if member.get('id') in known_ids or (not member.get('id') and member.get('address') in known_addresses):
            continue
        where = [o for o in entries if o not in members and _address_matches(member.get('address'), entries[o])]
        missing.append(dict(name=member.get('name'), address=member.get('address'), id=member.get('id'),
                            inventory_host=where[0] if where else None,
                            in_play=bool(where) and where[0] not in outside))
    label_of = next((v.get('label') for v in views if v.get('label')), None)
    label = '%s %s' % (kind, label_of or name)
    return dict(kind=kind, name=name, label=label, size=size, members=list(members), missing=missing)


def cluster_health(cluster, hosts, restarts=True):
    """[dict(host, reason)] that stop a plan touching this cluster (empty: none). restarts: whether the plan stops
    members (a cluster too small to keep a majority with one member down is refused only then)."""
    out = []
    in_play = len(cluster['members'])
    if cluster['size'] > in_play:
        names = ['%s (%s)' % (m['inventory_host'], 'in the play, its cluster state was not read' if m['in_play']
                              else 'in the inventory, not in the play') if m['inventory_host'] else
                 '%s at %s (not in the inventory)' % (m['name'] or m['id'] or '?', m['address'] or '?')
                 for m in cluster['missing']]
        out.append(dict(host=cluster['label'], reason='the cluster counts %d members, the play has %d (%s); missing: %s'
                        % (cluster['size'], in_play, ', '.join(cluster['members']), ', '.join(names) or 'unknown')))
    for member in cluster['members']:
        problems = cluster_utils.member_problems(hosts[member]['cluster'], max_queue=None)
        if problems:
            out.append(dict(host=member, reason='; '.join(problems)))
    if restarts and not cluster_utils.quorum_after_stop(cluster['size']):
        out.append(dict(host=cluster['label'], reason='with %d member(s), stopping one leaves no majority'
                        % cluster['size']))
    return out


def group_primary_refusals(topologies, hosts, pending, switchover):
    """[dict(host, reason)]: pending primaries of single-primary Group Replication groups that may not restart.

    A group's primary restarts last, and only after its role went to another member (cluster_switchover);
    without switchover it is refused before anything changes, naming it."""
    out = []
    if switchover:
        return out
    for topo in topologies:
        cluster = topo.get('cluster') or {}
        if cluster.get('kind') != cluster_utils.GROUP_REPLICATION:
            continue
        for name in topo['members']:
            mine = hosts[name].get('cluster') or {}
            if name in pending and mine.get('role') == cluster_utils.GR_PRIMARY and mine.get('single_primary'):
                out.append(dict(host=name, reason='the PRIMARY of %s restarts only after a switchover to another member, '
                                                  'which is not allowed (restart_cluster_switchover: true allows it)'
                                                  % cluster['label']))
    return out


def _read_hosts(names, entries, pending):
    """Step 1 of build_plan(): each host's topology facts as build_plan() reports them, its channels located in the
    inventory. Returns (hosts, unknown, sources): sources[name] the inventory hosts name replicates from."""
    hosts, unknown, sources = {}, [], {}
    for name in names:
        e = entries[name]
        facts = e['facts'] or {}
        role = facts.get('role') or topology.UNKNOWN
        error = e['error'] or facts.get('error')
        if e['facts'] is None and not error:
            error = 'no topology facts were gathered for this host'
        if error:
            role = topology.UNKNOWN
        info = dict(role=role, error=error, sources=[], external_sources=[], topology=None, depth=None,
                    read_only=facts.get('read_only'), super_read_only=facts.get('super_read_only'),
                    server_uuid=facts.get('server_uuid'), server_id=facts.get('server_id'),
                    gtid=facts.get('gtid'), channels=facts.get('channels') or [],
                    inventory_role=e['inventory_role'], pending=name in pending, outside_play=False,
                    cluster=cluster_summary(facts.get('cluster')))
        hosts[name] = info
        if role == topology.UNKNOWN:
            unknown.append(dict(host=name, reason=error or 'the replication role could not be read'))
            sources[name] = []
            continue
        located = []
        for channel in info['channels']:
            src, how = _locate_source(channel, entries, name)
            channel = dict(channel, source_inventory_host=src, source_match=how)
            if src is None:
                info['external_sources'].append(dict(channel=channel['name'], reason=how))
            else:
                info['sources'].append(src)
            located.append(channel)
        info['channels'] = located
        sources[name] = list(info['sources'])
    return hosts, unknown, sources


def _same_server_disagreements(names, hosts):
    """Step 2 of build_plan(): two hosts that report the same server (their logins reach one server, or the ids were
    cloned), by server_uuid then server_id."""
    disagreements = []
    for key in ('server_uuid', 'server_id'):
        seen = {}
        for name in names:
            value = hosts[name][key] if hosts[name]['role'] != topology.UNKNOWN else None
            if value is not None:
                seen.setdefault(value, []).append(name)
        for value, same in sorted(seen.items(), key=lambda kv: kv[1]):
            if len(same) > 1:
                for name in same:
                    disagreements.append(dict(host=name, inventory='a server of its own',
                                              server='%s %s is also reported by %s: the logins reach one '
                                                     'server, or the ids were cloned'
                                                     % (key, value, ', '.join(x for x in same if x != name))))
    return disagreements


def _inventory_disagreements(names, hosts, entries, known=()):
    """Step 3 of build_plan(): where the inventory's role or source of a host differs from what its server says.
    known: the disagreements found already (a primary the inventory calls a replica of a named source is reported
    only when nothing else is said of it)."""
    disagreements = []
    for name in names:
        info, e = hosts[name], entries[name]
        if info['role'] == topology.UNKNOWN:
            continue
        said = e['inventory_role']
        where = e['inventory_role_source'] or 'the inventory'
        if said in (topology.PRIMARY, topology.REPLICA) and said != info['role']:
            server_says = ('replicates from %s' % ', '.join(
                info['sources'] + [c['source_host'] or '?' for c in info['channels']
                                   if c['source_inventory_host'] is None])
                if info['role'] == topology.REPLICA else 'replicates from no one')
            disagreements.append(dict(host=name, inventory='%s (%s)' % (said, where),
                                      server='%s: the server %s' % (info['role'], server_says)))
        wanted = e['inventory_source']
        if wanted and info['role'] == topology.REPLICA and wanted not in info['sources']:
            disagreements.append(dict(host=name, inventory='replica of %s (dbfleet_replication_source)' % wanted,
                                      server='replica of %s' % (', '.join(info['sources']) or 'a host outside the inventory')))
        elif wanted and info['role'] == topology.PRIMARY:
            if not any(d['host'] == name for d in list(known) + disagreements):
                disagreements.append(dict(host=name, inventory='replica of %s (dbfleet_replication_source)' % wanted,
                                          server='primary: the server replicates from no one'))
    return disagreements


def _add_outside(names, outside, hosts, entries, sources):
    """Step 4 of build_plan(): the hosts outside the play (not read) enter hosts and sources; those a host of the play
    replicates from join the names the topologies are made of (returned)."""
    for name in outside:
        hosts[name] = dict(role=None, error=None, sources=[], external_sources=[], topology=None, depth=None,
                           read_only=None, super_read_only=None, server_uuid=None, server_id=None, gtid=None,
                           channels=[], inventory_role=entries[name]['inventory_role'], pending=False,
                           outside_play=True, cluster=None)
        sources[name] = []
    linked = set(s for n in names for s in sources[n])
    return names + [n for n in outside if n in linked]


def _topologies(names, hosts, entries, outside, sources):
    """Step 5 of build_plan(): the topologies (connected components over replication links, a cluster's members one
    topology), each host's topology and depth set in hosts. Returns (topologies, depths)."""
    parent = dict((n, n) for n in names)

    def find(n):
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for name in names:
        for src in sources[name]:
            parent[find(name)] = find(src)
    # The members of one cluster are one topology, whatever their asynchronous links.
    by_cluster = cluster_members(hosts, names)
    for members in by_cluster.values():
        for member in members[1:]:
            parent[find(member)] = find(members[0])
    depths = _depths(sources, names)
    groups = {}
    for name in names:
        groups.setdefault(find(name), []).append(name)
    topologies = []
    position = dict((n, i) for i, n in enumerate(names))
    for members in sorted(groups.values(), key=lambda m: min(position[x] for x in m)):
        roots = [m for m in members if depths[m] == 0 and hosts[m]['role'] in (topology.PRIMARY, None)]
        label = roots[0] if len(roots) == 1 else '+'.join(sorted(roots)) or members[0]
        keys = [k for k in by_cluster if set(by_cluster[k]) & set(members)]
        cluster = None
        if keys:
            cluster = cluster_topology(keys[0], by_cluster[keys[0]], hosts, entries, outside)
            label = cluster['label']
            roots = list(by_cluster[keys[0]])
        # Deepest asynchronous replicas first; in a cluster, the primary of a single-primary group last and
        # the Galera node with the most client connections last.
        ordered = sorted(members, key=lambda m: (-depths[m], (hosts[m]['cluster'] or {}).get('role') == 'PRIMARY',
                                                 _member_clients(hosts[m]), not bool(hosts[m]['read_only']),
                                                 position[m]))
        for m in members:
            hosts[m]['topology'] = label
            hosts[m]['depth'] = depths[m]
        topologies.append(dict(name=label, primaries=roots, members=ordered, cluster=cluster,
                               external_sources=sorted(set(
                                   x['reason'] for m in members for x in hosts[m]['external_sources']))))
    return topologies, depths


def _unhealthy(names, hosts, topologies, pending, max_lag, restarts):
    """Step 6 of build_plan(): health before anything starts. Every replica of a topology with pending hosts must
    replicate; in a cluster every member is in the play, serving, with a majority left while one is stopped."""
    unhealthy = []
    touched = set(hosts[p]['topology'] for p in pending)
    for name in names:
        info = hosts[name]
        if info['topology'] not in touched or info['role'] != topology.REPLICA:
            continue
        problems = []
        for channel in info['channels']:
            problems += topology.channel_problems(channel, max_lag)
        if problems:
            unhealthy.append(dict(host=name, reason='; '.join(problems)))
    for topo in topologies:
        if topo['cluster'] and topo['name'] in touched:
            unhealthy += cluster_health(topo['cluster'], hosts, restarts)
    return unhealthy


def _wait_for_deeper(full_order, topologies, hosts, depths, reached):
    """Step 7 of build_plan(): of the pending hosts in order, those to act on now and those that wait (dicts of host
    and reason): a host whose part of the play has not run, or below which a host has not been reached, waits; once
    one host of a topology waits, the hosts above it wait too."""
    now, deferred = [], []
    for name in full_order:
        topo = next(t for t in topologies if t['name'] == hosts[name]['topology'])
        below = [m for m in topo['members'] if depths[m] > depths[name] and m not in reached]
        if name not in reached or below:
            deferred.append(dict(host=name, reason=(
                'waits for %s, deeper in its topology, whose part of the play has not run yet'
                % ', '.join(below)) if below else 'its part of the play has not run yet'))
        else:
            now.append(name)
    waiting_topos = set(hosts[d['host']]['topology'] for d in deferred)
    still = []
    for name in now:
        topo = hosts[name]['topology']
        blocked = [d['host'] for d in deferred if hosts[d['host']]['topology'] == topo
                   and depths[d['host']] > depths[name]]
        if topo in waiting_topos and blocked:
            deferred.append(dict(host=name, reason='waits for %s' % ', '.join(blocked)))
        else:
            still.append(name)
    return still, deferred


def _group_primary_last(now, deferred, names, hosts, reached):
    """Step 8 of build_plan(): the primary of a single-primary Group Replication group restarts after every other
    member of its group, also across play batches (serial): it waits while one of them has not been reached (its
    part of the play, which says whether it needs the action, has not run yet) or waits itself.
    Returns (now, deferred) with such a primary moved to deferred."""
    still, deferred = [], list(deferred)
    waiting = set(d['host'] for d in deferred)
    for name in now:
        mine = hosts[name].get('cluster') or {}
        others = []
        if mine.get('kind') == cluster_utils.GROUP_REPLICATION and mine.get('single_primary') \
                and mine.get('role') == cluster_utils.GR_PRIMARY:
            others = [m for m in names if m != name and (hosts[m].get('cluster') or {}).get('name') == mine.get('name')
                      and (m not in reached or m in waiting)]
        if others:
            deferred.append(dict(host=name, reason='the primary of its group restarts last: waits for %s' % ', '.join(others)))
        else:
            still.append(name)
    return still, deferred


def _plan_verdict(full_order, unknown, disagreements, unhealthy, refused):
    """Step 9 of build_plan(): (ok, message): the order, or why nothing starts, naming every problem."""
    problems = []
    if unknown:
        problems.append('the replication role of %s cannot be read: %s' % (
            ', '.join(u['host'] for u in unknown), '; '.join('%s: %s' % (u['host'], u['reason']) for u in unknown)))
    if disagreements:
        problems.append('the inventory and the servers disagree: %s' % '; '.join(
            '%s: the inventory says %s, %s' % (d['host'], d['inventory'], d['server']) for d in disagreements))
    if unhealthy:
        problems.append('replication or a cluster is not healthy in a topology with pending hosts: %s' % '; '.join(
            '%s: %s' % (u['host'], u['reason']) for u in unhealthy))
    if refused:
        problems.append('refused: %s' % '; '.join('%s: %s' % (r['host'], r['reason']) for r in refused))
    if not problems:
        return True, 'order: %s' % (', '.join(full_order) or 'nothing pending')
    return False, 'stopped before any change: %s. Untouched: %s.' % (
        ' / '.join(problems), ', '.join(full_order) or 'nothing was pending')


def build_plan(raw_entries, pending=None, reached=None, max_lag=topology.DEFAULT_MAX_LAG, order=None, cluster_switchover=False,
               restarts=True):
    """The replication topologies of the hosts and the order in which to act on them.

    raw_entries: {host: dict(facts=<topology facts or None>, error=<why they could not be read>,
      addresses=[names/addresses of the host], port=<MySQL port>, inventory_role='primary'|'replica'|None,
      inventory_role_source=<where the inventory says it>, inventory_source=<inventory host or None>)}.
    pending: hosts that need the action (default: every host). reached: hosts whose part of the play
    has already run (default: every host); a pending host waits while a deeper host of its topology
    has not been reached yet (play batches with serial). order: inventory order of the hosts.
    max_lag: the lag limit a replica must be under before anything in its topology restarts.
    cluster_switchover: whether the primary of a single-primary Group Replication group may restart after
    handing its role to another member (else a pending group primary is refused, naming it).
    restarts: whether the action restarts the pending hosts; a change that restarts nothing (the guarded drop
    and conversion) refuses no group primary for want of a switchover.

    Returns dict(ok, message, hosts, topologies, order, now, deferred, unknown, disagreements, unhealthy).
    """
    names = list(order or sorted(raw_entries))
    names += [n for n in sorted(raw_entries) if n not in names]
    entries = dict((n, _entry(n, raw_entries[n])) for n in names)
    # Hosts outside the play (outside=True) are not read: they only give replicas a source to map to.
    outside = [n for n in names if entries[n]['outside']]
    names = [n for n in names if not entries[n]['outside']]
    pending = list(names if pending is None else [p for p in names if p in set(pending)])
    reached = set(names if reached is None else reached)

    hosts, unknown, sources = _read_hosts(names, entries, pending)
    disagreements = _same_server_disagreements(names, hosts)
    disagreements += _inventory_disagreements(names, hosts, entries, disagreements)
    names = _add_outside(names, outside, hosts, entries, sources)
    topologies, depths = _topologies(names, hosts, entries, outside, sources)
    unhealthy = _unhealthy(names, hosts, topologies, pending, max_lag, restarts)

    full_order = [m for t in topologies for m in t['members'] if m in pending]
    now, deferred = _wait_for_deeper(full_order, topologies, hosts, depths, reached)
    now, deferred = _group_primary_last(now, deferred, names, hosts, reached)

    refused = group_primary_refusals(topologies, hosts, pending, cluster_switchover or not restarts)
    ok, message = _plan_verdict(full_order, unknown, disagreements, unhealthy, refused)
    return dict(ok=ok, message=message, hosts=hosts, topologies=topologies, order=full_order, now=now,
                deferred=deferred, unknown=unknown, disagreements=disagreements, unhealthy=unhealthy,
                refused=refused, max_lag=max_lag)


def inventory_role(host_vars, groups, name, group='replicas'):
    """(role, source) the inventory gives a host: dbfleet_replication_role first, then membership
    of the group (when the inventory has that group); (None, None) when it says nothing."""
    role = host_vars.get('dbfleet_replication_role')
    if role not in (None, ''):
        return str(role), 'dbfleet_replication_role'
    if group in (groups or {}):
        members = groups.get(group) or []
        return (topology.REPLICA if name in members else topology.PRIMARY), 'group %s' % group
    return None, None
