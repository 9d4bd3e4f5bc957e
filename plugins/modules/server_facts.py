#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: server_facts
short_description: Who a MySQL, Percona Server or MariaDB server is and where its configuration comes from
version_added: 1.0.0
description:
  - Reads, over one connection, the server's flavor (C(mysql), C(percona), C(mariadb), C(aurora-mysql)),
    version (as a comparable list of three integers), replication role, paths and the capability data the
    collection keeps per flavor and version.
  - When the server runs on the host the module runs on, the module also reads the server process
    (C(/proc/PID), with the PID from C(@@pid_file)) to find the option files the server really reads and in
    which order (C(--defaults-file), C(--defaults-extra-file), C(--no-defaults), C(--defaults-group-suffix),
    otherwise the flavor's default search order) and whether it runs as root.
  - Changes nothing.
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.read_only
  - dbfleet.innodb.login
  - dbfleet.innodb.option_file
options:
  variables:
    description:
      - Variable names to return per-variable facts for (name as resolved on this server, whether it exists,
        its running GLOBAL value, kind, whether it can change at runtime, default, where its value came from).
      - Any spelling of a name is accepted; it is resolved for the server's flavor and version.
    type: list
    elements: str
    default: []
attributes:
  platform:
    platforms: posix
    support: full
    description: Reading the server process needs Linux C(/proc) on the server host; the rest runs anywhere.
seealso:
  - module: dbfleet.innodb.verify
notes:
  - The replication role comes from C(SHOW REPLICA STATUS) (MySQL 8.0.22 and later), C(SHOW SLAVE STATUS)
    (older MySQL) or C(SHOW ALL SLAVES STATUS) (MariaDB); a server that replicates from no source is a
    C(primary). On Aurora, reader instances are C(replica). Without the C(REPLICATION CLIENT) privilege the
    role is V(null) and C(replication.error) in RV(server_facts) says why.
  - RV(server_facts.runs_as_root) is V(null) when the server process cannot be read from here; SQL alone
    cannot tell.
'''

EXAMPLES = r'''
- name: Read the server facts
  dbfleet.innodb.server_facts:
    login_unix_socket: /run/mysqld/mysqld.sock
  register: facts

- name: Only on replicas
  ansible.builtin.debug:
    msg: "{{ inventory_hostname }} replicates from {{ facts.server_facts.replication.channels[0].source_host }}"
  when: facts.server_facts.replication.role == 'replica'

- name: Is the AHI partition variable dynamic here, and what is it called?
  dbfleet.innodb.server_facts:
    login_user: admin
    login_password: "{{ vault_admin_password }}"
    variables: [innodb_adaptive_hash_index_parts]
  register: facts
'''

RETURN = r'''
server_facts:
  description: The facts.
  returned: success
  type: dict
  contains:
    flavor:
      description: C(mysql), C(percona), C(mariadb) or C(aurora-mysql).
      type: str
      sample: mysql
    version:
      description: Version as three integers, comparable as a list.
      type: list
      elements: int
      sample: [8, 0, 33]
    version_text:
      description: The version as C(X.Y.Z).
      type: str
      sample: 8.0.33
    version_string:
      description: C(@@version) as the server reports it.
      type: str
      sample: 10.11.19-MariaDB-0+deb12u1
    aurora_reader:
      description: On Aurora, whether this is a reader instance; V(null) elsewhere.
      type: bool
    datadir:
      description: C(@@datadir).
      type: str
    basedir:
      description: C(@@basedir).
      type: str
    plugin_dir:
      description: C(@@plugin_dir).
      type: str
    pid_file:
      description: C(@@pid_file).
      type: str
    socket:
      description: C(@@socket).
      type: str
    log_error:
      description: C(@@log_error).
      type: str
    hostname:
      description: C(@@hostname).
      type: str
    port:
      description: C(@@port).
      type: int
    server_id:
      description: C(@@server_id).
      type: int
    replication:
      description:
        - Replication role and state.
        - C(cluster) is the server's cluster membership (V(null) when it is no cluster member) - for a MariaDB
          Galera node its cluster (C(name) C(wsrep_cluster_state_uuid), C(label) C(wsrep_cluster_name)), C(size),
          its C(state) (C(wsrep_local_state_comment)), C(status) (V(Primary)...), C(ready), C(quorum), C(role)
          (V(null) on Galera) and C(queue) (C(wsrep_local_recv_queue)).
      type: dict
      sample:
        role: replica
        read_only: true
        super_read_only: true
        statement: SHOW REPLICA STATUS
        channels: [{name: '', source_host: 10.0.0.1, source_port: 3306, io_running: 'Yes', sql_running: 'Yes',
                    seconds_behind: 0}]
        error: null
        cluster: {kind: galera, name: 24b97d40-e8cf-11f1-b24a-c7da101eb7b5, label: dbfleet_galera, size: 3,
                  state: Synced, status: Primary, ready: true, quorum: true, role: null, queue: 0}
    capabilities:
      description: What the collection knows about this flavor and version (module_utils/versions/flavors.py).
      type: dict
    option_groups:
      description: Option-file groups the server reads, including versioned ones and the group suffix.
      type: list
      elements: str
      sample: [mysqld, server, mysqld-8.0]
    option_files:
      description: The option files the server reads, in the order it reads them (later ones win).
      type: list
      elements: str
      sample: [/etc/my.cnf, /etc/mysql/my.cnf, /root/.my.cnf]
    option_files_source:
      description: How RV(server_facts.option_files) was worked out.
      type: str
      sample: "server command line (pid 4242): --defaults-file on the command line"
    local:
      description: Whether the server process was found on this host.
      type: bool
    process:
      description: The server process (pid, argv, cwd, uid, home) when found on this host, else V(null).
      type: dict
    runs_as_root:
      description: Whether the server process runs as root; V(null) when it cannot be read from here.
      type: bool
    runs_as_user:
      description: The user the server process runs as; V(null) when unknown.
      type: str
    dropin_dir:
      description:
        - The drop-in directory found on the host - the last directory the server's option files include
          (C(!includedir)); V(null) when none is included or the files are not readable from here.
        - The roles write there unless the inventory sets C(dbfleet_option_dropin_dir) (docs/hosts.md).
      type: str
      sample: /etc/mysql/mariadb.conf.d
    dropin_dir_source:
      description: Where RV(server_facts.dropin_dir) was found, or why not (naming the variable that tells it).
      type: str
    unit:
      description: The systemd service running the server (from C(/proc/PID/cgroup)); V(null) when none.
      type: str
      sample: mariadb
    unit_source:
      description: Where RV(server_facts.unit) was found, or why not.
      type: str
    login_socket_source:
      description:
        - When no login option named a server, where the socket of the login was found (the system option files'
          client groups, or the OS family's package place); V(null) otherwise.
      type: str
      sample: socket of the client groups in /etc/mysql/my.cnf
    notes:
      description: Why some facts are unknown.
      type: list
      elements: str
    variables:
      description: Per-variable facts for O(variables), keyed by the name given.
      type: dict
      sample:
        innodb_adaptive_hash_index_partitions:
          resolved_name: innodb_adaptive_hash_index_parts
          exists: true
          runtime: '8'
          kind: int
          dynamic: false
          default: '8'
          origin: COMPILED
          settable: true
          reason: null
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(
        variables=dict(type='list', elements='str', default=[]),
        fallback_option_files=dict(type='list', elements='path', default=[]),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    facts = server_facts.read_for_module(module, module.params['variables'])
    module.exit_json(changed=False, server_facts=facts)


if __name__ == '__main__':
    main()
