#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: topology_plan
short_description: Build the replication topologies from what the servers say, check them against the inventory, order the hosts
version_added: 1.0.0
description:
  - Runs on the controller, once (use C(run_once)), from the M(dbfleet.innodb.topology_facts) results of every host.
  - Maps each replica's source to an inventory host, by the source's C(server_uuid) where the server reports it
    (MySQL, Percona Server), else by its C(server_id) (MariaDB), else by address and port (C(ansible_host),
    C(dbfleet_login_host) or the inventory name, and C(dbfleet_login_port)).
  - Builds the replication topologies (hosts linked by replication) and orders the pending hosts replicas
    first, deepest first, the primary last, within each topology.
  - Compares with the inventory, which may say a host's role with the host variable C(dbfleet_replication_role)
    (V(primary) or V(replica)) or by membership of the group O(inventory_group) (when the inventory has it),
    and a replica's source with C(dbfleet_replication_source).
  - "Fails closed: when a host's role cannot be read (privilege error, server down, host unreachable over SSH),
    when the inventory and the servers disagree, or when a replica in a topology with pending hosts does not
    replicate (IO or SQL thread stopped, lag over O(max_lag)), the task fails before anything changes and the
    message names every such host and what each side says."
  - Cluster members (MariaDB Galera) with the same cluster are one topology; their asynchronous replicas belong to
    it and come first, then the members one at a time, the Galera node with the fewest client connections first
    (the node taking the writes last). The plan fails closed when a member of a topology with
    pending hosts is not Synced, not ready or not in the Primary component, when the cluster counts more members
    than the play has (naming them), or when it has fewer than three members (stopping one would leave no
    majority). See C(docs/topology.md).
author:
  - dbfleet maintainers (@dbfleet)
options:
  facts:
    description:
      - The registered result of M(dbfleet.innodb.topology_facts) for the hosts, either of a loop over the
        hosts with C(delegate_to) (as the restart role does), or a dict host name -> result.
      - A host whose result is missing, failed or unreachable has the role V(unknown).
    type: raw
    required: true
  hosts:
    description:
      - The hosts to plan for, in inventory order. Default C(ansible_play_hosts_all).
    type: list
    elements: str
  pending:
    description:
      - The hosts that need the action (a restart, a drop). Default all of O(hosts).
      - The topology of every pending host is checked for replication health.
    type: list
    elements: str
  reached:
    description:
      - Hosts whose part of the play has run (with C(serial), the hosts of this batch and earlier ones).
        Default all of O(hosts).
      - A pending host waits (RV(plan.deferred)) while a deeper host of its topology has not been reached, so a
        primary never goes before its replicas whatever the batches.
    type: list
    elements: str
  max_lag:
    description:
      - Seconds a replica may be behind its source (C(Seconds_Behind_Source)) for its topology to be healthy.
    type: int
    default: 60
  inventory_group:
    description:
      - The inventory group that lists replicas. When the inventory has this group, a host outside it is a
        primary as far as the inventory is concerned.
    type: str
    default: replicas
  cluster_switchover:
    description:
      - Whether the primary of a single-primary Group Replication group may be acted on (restarted) after its role
        went to another member (M(dbfleet.innodb.cluster_switchover)). With V(false), a pending group primary is
        refused before anything changes (RV(plan.refused)), naming it. The primary is always ordered last.
    type: bool
    default: false
  restarts:
    description:
      - Whether the action planned restarts the pending hosts (the restart path). With V(false) (the guarded
        drop and conversion, C(playbooks/tasks/topology_preflight.yml), which restart nothing), a Group
        Replication primary is not refused for want of a switchover (O(cluster_switchover) does not apply), and a
        cluster is not refused because stopping one of its members would leave no majority; every other check
        of the plan (inventory, members in the play, Synced / ONLINE, the majority now, replication health) is
        the same.
    type: bool
    default: true
  fail_closed:
    description:
      - Fail the task when the plan is not safe (RV(plan.ok) is V(false)). With V(false) the plan is returned
        for reporting, and the caller must check RV(plan.ok).
    type: bool
    default: true
attributes:
  action:
    support: full
    description: Runs on the controller; it reads the other hosts' variables from C(hostvars).
  async:
    support: none
    description: Runs on the controller in an instant.
  bypass_host_loop:
    support: none
    description: Runs per host; use C(run_once) to plan once for the play.
  platform:
    platforms: posix
    support: full
    description: Runs on the controller.
seealso:
  - module: dbfleet.innodb.topology_facts
  - module: dbfleet.innodb.restart_gate
  - name: docs/topology.md
    description: How the topology component reads, checks and orders the hosts.
    link: https://github.com/dbfleet/innodb/blob/main/docs/topology.md
extends_documentation_fragment:
  - dbfleet.innodb.attributes.read_only
'''

EXAMPLES = r'''
- name: Read every host's replication state (also the hosts of later serial batches)
  dbfleet.innodb.topology_facts:
  delegate_to: "{{ item }}"
  loop: "{{ ansible_play_hosts_all }}"
  run_once: true
  ignore_unreachable: true
  register: topology

- name: Plan, replicas first; stop before any change when the servers and the inventory disagree
  dbfleet.innodb.topology_plan:
    facts: "{{ topology }}"
    max_lag: 30
  run_once: true
  register: topology_plan

- name: Say the order
  ansible.builtin.debug:
    msg: "{{ topology_plan.plan.order | join(' -> ') }}"
  run_once: true
'''

RETURN = r'''
msg:
  description: The order, or why the plan stopped (naming the hosts).
  returned: always
  type: str
  sample: "order: db2, db1, db4, db3"
plan:
  description: The plan.
  returned: always
  type: dict
  contains:
    ok:
      description: Whether it is safe to go on.
      type: bool
    message:
      description: Same as RV(msg).
      type: str
    order:
      description: Pending hosts in the order to act on them, topology by topology, replicas first.
      type: list
      elements: str
      sample: [db2, db1, db4, db3]
    now:
      description: The hosts of RV(plan.order) that can go now (see O(reached)).
      type: list
      elements: str
    deferred:
      description: Pending hosts that wait for a later batch, with the reason.
      type: list
      elements: dict
    hosts:
      description:
        - Per host, role, topology, depth (0 for a primary), sources (inventory hosts), channels, GTID state.
        - C(cluster) is the host's cluster membership as M(dbfleet.innodb.topology_facts) read it (V(null) when
          it is no cluster member).
      type: dict
      sample:
        db2: {role: replica, topology: db1, depth: 1, sources: [db1], read_only: true, pending: true, cluster: null}
    topologies:
      description:
        - Each topology with its primaries and its members, replicas first.
        - The members of one cluster (same C(cluster.name)) are one topology, named C(<kind> <label>), with
          C(cluster) (C(kind), C(name), C(label), C(size), C(members) in the play, C(missing) members the play
          lacks); V(null) for an asynchronous topology.
      type: list
      elements: dict
      sample: [{name: db1, primaries: [db1], members: [db2, db1], external_sources: [], cluster: null}]
    unknown:
      description: Hosts whose role could not be read, with the reason.
      type: list
      elements: dict
    disagreements:
      description: Hosts where the inventory and the server disagree, with what each side says.
      type: list
      elements: dict
      sample: [{host: db2, inventory: "primary (group replicas)", server: "replica: the server replicates from db1"}]
    unhealthy:
      description:
        - Replicas of topologies with pending hosts that do not replicate, with the reason.
        - Cluster members of such topologies that do not serve (not Synced, not ready, not in the Primary
          component), and clusters with members missing from the play or fewer than three members.
      type: list
      elements: dict
    refused:
      description: Pending hosts the plan refuses to act on (the primary of a Group Replication group without
        O(cluster_switchover)), with the reason.
      type: list
      elements: dict
      sample: [{host: gr1, reason: "the PRIMARY of group_replication d6df88c0-... restarts only after a switchover ..."}]
    max_lag:
      description: The lag limit used.
      type: int
'''
