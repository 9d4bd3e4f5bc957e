#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: topology_facts
short_description: Read a server's place in its replication topology from the server itself
version_added: 1.0.0
description:
  - Reads, over one connection, what the server says about replication; the inventory is not consulted.
  - C(server_uuid) and C(server_id), C(read_only) and C(super_read_only) (V(null) where the flavor and
    version have no such variable), the GTID state (C(gtid_mode) and C(gtid_executed) on MySQL and
    Percona Server, C(gtid_binlog_pos), C(gtid_slave_pos) and C(gtid_current_pos) on MariaDB), and every
    replication channel with its source host, port and UUID (or server id), IO and SQL thread state,
    seconds behind and last errors.
  - The channels come from C(SHOW REPLICA STATUS) (MySQL 8.0.22 and later), C(SHOW SLAVE STATUS) (older
    MySQL) or C(SHOW ALL SLAVES STATUS) (MariaDB), chosen from the flavor and version.
  - When the server is a MariaDB Galera node (C(wsrep_on) with a provider loaded), RV(topology.cluster) holds its
    cluster state from C(SHOW GLOBAL STATUS) (C(wsrep_cluster_state_uuid), C(wsrep_cluster_size),
    C(wsrep_cluster_status), C(wsrep_local_state_comment), C(wsrep_ready), C(wsrep_connected),
    C(wsrep_local_recv_queue)) and the members from C(mysql.wsrep_cluster_members) (MariaDB 10.4 and later;
    C(wsrep_incoming_addresses) otherwise).
  - A server with at least one channel is a V(replica); one with none is a V(primary). When the channels
    cannot be read (for example without the C(REPLICATION CLIENT) privilege) or the server cannot be reached,
    the role is V(unknown) and RV(topology.error) says why. An V(unknown) host is never taken for a primary;
    M(dbfleet.innodb.topology_plan) stops before any change when it sees one.
  - Feed the results of all hosts to M(dbfleet.innodb.topology_plan), which builds the topologies on the
    controller. See C(docs/topology.md).
  - Changes nothing.
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.read_only
  - dbfleet.innodb.attributes.pymysql
  - dbfleet.innodb.login
options: {}
notes:
  - The module does not fail when the role cannot be read; it returns role V(unknown) and the reason, so that
    the plan can name every such host at once. It fails only on a bad login option.
seealso:
  - module: dbfleet.innodb.topology_plan
  - module: dbfleet.innodb.restart_gate
'''

EXAMPLES = r'''
- name: Read each server's replication state
  dbfleet.innodb.topology_facts:
  register: topology

- name: Refuse to go on from a host whose role cannot be read
  ansible.builtin.assert:
    that: topology.topology.role != 'unknown'
    fail_msg: "{{ inventory_hostname }}: {{ topology.topology.error }}"
'''

RETURN = r'''
topology:
  description: What the server says about its replication.
  returned: always
  type: dict
  contains:
    role:
      description: V(primary) (replicates from no one), V(replica) or V(unknown) (could not be read).
      type: str
      sample: replica
    error:
      description: Why the role could not be read; V(null) when it could.
      type: str
      sample: "SHOW REPLICA STATUS failed: (1227) Access denied; you need (at least one of) the SUPER, REPLICATION CLIENT privilege(s)"
    server:
      description: Flavor and version of the server; V(null) when it could not be reached.
      type: dict
      sample: {flavor: mysql, version: [8, 0, 33], version_text: 8.0.33}
    server_uuid:
      description: C(@@server_uuid); V(null) on MariaDB, which has none.
      type: str
      sample: 4f6c3a0e-2c1b-11ef-9a53-0242ac120002
    server_id:
      description: C(@@server_id).
      type: int
      sample: 2
    read_only:
      description: C(@@read_only).
      type: bool
    super_read_only:
      description: C(@@super_read_only); V(null) where the server has no such variable (MariaDB, MySQL before 5.7.8).
      type: bool
    log_bin:
      description: C(@@log_bin).
      type: bool
    gtid:
      description:
        - GTID state; C(model) is V(mysql), V(mariadb) or V(null).
        - C(position) is what a replica of this server must have applied to have caught up with it
          (C(gtid_executed) with C(gtid_mode=ON), C(gtid_binlog_pos) on MariaDB), V(null) when unknown.
      type: dict
      sample: {model: mysql, mode: 'ON', executed: '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42',
               position: '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42'}
    statement:
      description: The statement that listed the channels.
      type: str
      sample: SHOW REPLICA STATUS
    channels:
      description: One entry per replication channel.
      type: list
      elements: dict
      sample:
        - {name: '', source_host: 10.23.0.11, source_port: 3306, source_uuid: 4f6c3a0e-2c1b-11ef-9a53-0242ac120002,
           source_server_id: 1, io_running: true, sql_running: true, seconds_behind: 0, last_io_errno: 0,
           last_io_error: '', last_sql_errno: 0, last_sql_error: ''}
    replicating:
      description: Whether every channel runs both threads; V(null) on a primary.
      type: bool
    cluster:
      description:
        - The server's cluster membership; V(null) when it is no cluster member. The same shape for every kind of
          cluster (C(docs/topology.md)).
        - C(kind) V(galera) or V(group_replication); C(name) the cluster's identity (Galera C(wsrep_cluster_state_uuid));
          C(label) C(wsrep_cluster_name); C(size) members the cluster counts now; C(state) this member's state as the
          server names it (V(Synced), V(Donor/Desynced), V(Joining), V(Joined)...); C(status) C(wsrep_cluster_status)
          (V(Primary), V(non-Primary), V(Disconnected)); C(ready) whether the member serves (Synced, C(wsrep_ready),
          connected, Primary); C(quorum) whether it is in the Primary component; C(role) V(null) on Galera (every
          node writable); C(queue) C(wsrep_local_recv_queue); C(clients) client connections besides the reading one
          (C(Threads_connected) - 1); C(member) this member (C(id) C(wsrep_gcomm_uuid),
          C(name), C(address)); C(members) every member it knows.
      type: dict
      sample: {kind: galera, name: 24b97d40-e8cf-11f1-b24a-c7da101eb7b5, label: dbfleet_galera, size: 3, state: Synced,
               status: Primary, ready: true, quorum: true, role: null, queue: 0,
               member: {id: 24e7f0db-e8cf-11f1-a56b-86ad0b9b76f6, name: galera2, address: '127.0.0.1:36302'}}
    service:
      description:
        - The service that restarts this server when C(dbfleet_restart_method) is V(service) and the inventory
          sets no C(dbfleet_service_name) - the systemd unit running the server when there is one, else the unit
          the OS family's packages install for the flavor (Debian C(mysql) / C(mariadb), RHEL family
          C(mysqld) / C(mariadb)).
        - C(name) is V(null) when neither tells; C(source) says where the name came from.
      type: dict
      sample: {name: mariadb, source: the systemd unit running the server}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection as conn_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import describe_target
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.tls import warn_unverified
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import (
    error_text, global_status, global_variables, query)
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import discovery
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import os_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology


def unreadable(reason):
    """Facts of a server that could not be read at all."""
    return dict(role=topology.UNKNOWN, error=reason, server=None, server_uuid=None, server_id=None,
                read_only=None, super_read_only=None, log_bin=None, gtid=None, statement=None,
                channels=[], replicating=None, cluster=None)


def main():
    module = AnsibleModule(argument_spec=login_argument_spec(), supports_check_mode=True)
    conn_utils.require_pymysql(module)
    warn_unverified(module)
    try:
        conn = conn_utils.open_connection(module.params)
    except conn_utils.ConnectError as e:
        module.exit_json(changed=False, topology=unreadable('%s; the role of this server cannot be read' % e))
    pid_file = None
    try:
        facts = topology.read_server(conn, query, global_variables, global_status)
        pid_file = global_variables(conn, ['pid_file']).get('pid_file')
    except (ValueError, conn_utils.pymysql.err.MySQLError) as e:
        facts = unreadable('reading %s failed: %s; the role of this server cannot be read'
                           % (describe_target(module.params), error_text(e)))
    finally:
        conn.close()
    facts['service'] = discovery.service_name((facts.get('server') or {}).get('flavor'), os_facts.host_family(),
                                              cgroup_of(pid_file))
    module.exit_json(changed=False, topology=facts)


def read_text(path):
    try:
        with open(path, encoding='utf-8', errors='replace') as handle:
            return handle.read()
    except (OSError, TypeError):
        return None


def cgroup_of(pid_file):
    """/proc/PID/cgroup of the server whose pid file this is (None when it cannot be read here)."""
    text = read_text(pid_file) if pid_file else None
    pid = text.split()[0] if text and text.split() else ''
    return read_text('/proc/%s/cgroup' % pid) if pid.isdigit() else None


if __name__ == '__main__':
    main()
