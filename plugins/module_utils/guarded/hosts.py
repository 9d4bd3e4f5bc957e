# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A guarded change over several hosts, the playbooks' checks before anything changes (filters
dbfleet.innodb.replica_problems, dbfleet.innodb.cluster_parts and dbfleet.innodb.cluster_problems): the replicas
that stop the run (replica_problems), which member of each cluster runs the statement while the others follow it
(cluster_parts) and the cluster members that stop the run (cluster_problems); and, once drop_tables.yml has
given each host its part, what keeps a primary from dropping (drop_blockers, filter dbfleet.innodb.drop_blockers)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters as cluster_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils import play_hosts
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology


def cluster_parts(plan_hosts, run_hosts):
    """{host: dict(part, cluster, by)} for the hosts of a run that are cluster members (others are absent):
    the statement runs once per cluster, on one member ('drop'), and reaches every other member by itself,
    which follows it ('follow', by: the member that runs it). The member that runs it: a Group Replication
    group's primary (a secondary refuses writes); in a Galera cluster the first member of the run.

    plan_hosts: topology_plan's plan.hosts (cluster: kind, name, role per host); run_hosts: the run's hosts in
    play order."""
    plan_hosts = plan_hosts or {}
    groups = {}
    for h in run_hosts or []:
        cluster = (plan_hosts.get(h) or {}).get('cluster') or {}
        if cluster.get('name'):
            groups.setdefault((cluster.get('kind'), cluster['name']), []).append(h)
    out = {}
    for (kind, name), members in groups.items():
        runner = members[0]
        if kind == cluster_utils.GROUP_REPLICATION:
            primaries = [m for m in members if (plan_hosts[m].get('cluster') or {}).get('role') == cluster_utils.GR_PRIMARY]
            runner = primaries[0] if primaries else None
        for m in members:
            out[m] = dict(part='drop' if m == runner else 'follow', cluster=name, kind=kind, by=runner)
    return out


def topology_replicas(plan_hosts, run_hosts, topology):
    """The hosts of a run that are replicas in the replication topology named topology (topology_plan's plan.hosts:
    role, topology), in play order: where a change on that topology's primary is gated and verified."""
    plan_hosts = plan_hosts or {}
    return [h for h in run_hosts or []
            if (plan_hosts.get(h) or {}).get('role') == 'replica' and plan_hosts[h].get('topology') == topology]


def cluster_followers(plan_hosts, run_hosts, host):
    """The other members of host's cluster in a run that follow the statement host runs (cluster_parts' by), in play
    order: where it is verified after host ran it."""
    parts = cluster_parts(plan_hosts, run_hosts)
    return [h for h in run_hosts or [] if h != host and (parts.get(h) or {}).get('by') == host]


def cluster_problems(plan_hosts, run_hosts, one_per_host=False):
    """What stops a guarded change over the cluster members of a run before anything changes, one message per member,
    in play order: a Group Replication group whose primary is not in the run (a secondary refuses writes: no member
    can run the statement); with one_per_host (a change run on each host by itself, such as drop_tables.yml's rolling
    mode) every member, as one statement reaches every member of its cluster."""
    parts = cluster_parts(plan_hosts, run_hosts)
    out = []
    for h in run_hosts or []:
        part = parts.get(h)
        if part is None:
            continue
        if one_per_host:
            out.append('%s is a member of cluster %s: a change per host does not apply to a cluster, where one '
                       'statement reaches every member' % (h, part['cluster']))
        elif part['by'] is None:
            out.append('%s: no primary of Group Replication group %s is in this run (a secondary refuses writes)'
                       % (h, part['cluster']))
    return out


def replica_problems(plan_hosts, run_hosts, check, results=None, whole_topology=True):
    """What stops a guarded change over several hosts before anything changes, one message per finding.

    plan_hosts: the topology plan's hosts (topology_plan's plan.hosts: role, sources, external_sources,
    server_id); run_hosts: the hosts of the run. check:
      - 'sources': replicas of the run whose source is not in the run (a replica only follows its source);
      - 'replicas': replicas of the run at all (a change that may not reach a replica);
      - 'registered': replicas registered with a host of the run (results: host -> the module's preflight
        result with replica_hosts) that are not in the run, or any of them when whole_topology is false.
    """
    plan_hosts = plan_hosts or {}
    run = list(run_hosts or [])
    out = []
    if check in ('sources', 'replicas'):
        for h in run:
            entry = plan_hosts.get(h) or {}
            if entry.get('role') != topology.REPLICA:
                continue
            if check == 'replicas':
                channels = list(entry.get('sources') or []) + [
                    e.get('channel') for e in entry.get('external_sources') or [] if e.get('channel')]
                out.append('%s is a replica of %s' % (h, ', '.join(str(c) for c in channels)))
                continue
            away = [s for s in entry.get('sources') or [] if s not in run] + [
                e.get('reason') for e in entry.get('external_sources') or [] if e.get('reason')]
            if away:
                out.append('%s replicates from %s' % (h, ', '.join(str(a) for a in away)))
        return out
    if check != 'registered':
        raise ValueError('check %r: sources, replicas or registered' % (check,))
    ids = [e.get('server_id') for e in plan_hosts.values() if isinstance(e, dict)]
    for h in run:
        result = (results or {}).get(h)
        if not isinstance(result, dict):
            continue
        for r in result.get('replica_hosts') or []:
            if r.get('server_id') in ids and whole_topology:
                continue
            where = ('%s:%s' % (r.get('host'), r.get('port'))) if r.get('host') else 'it reports no host'
            out.append('%s has replica server_id %s (%s)%s' % (
                h, r.get('server_id'), where, '' if whole_topology else ', and the whole topology is not converted'))
    return out


def drop_blockers(hostvars, run_hosts):
    """What keeps the primaries of drop_tables.yml's replicated mode from dropping, over the run's hosts in play
    order (hostvars: each host's __drop_part, 'drop' or 'follow', and the facts its steps set):

    not_ready: the replicas (part follow) that have not said they are ready (no __drop_replica_ready: AHI not
    switched off in time, or not reached); failed: the primaries (part drop) whose drop failed (__drop_failed), which
    the replicas' followers are told of."""
    def where(part, name, defined):
        return [h for h in run_hosts or [] if play_hosts.value(hostvars, h, '__drop_part') == part
                and (play_hosts.value(hostvars, h, name) is not None) == defined]
    return dict(not_ready=where('follow', '__drop_replica_ready', False), failed=where('drop', '__drop_failed', True))
