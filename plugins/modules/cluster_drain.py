#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: cluster_drain
short_description: Take a cluster member out of its clients' view before its stop, and put it back after
version_added: 1.0.0
description:
  - With O(state=drained), sets the drain variable of O(method) on the server and waits O(seconds), so that health
    checks fail and a load balancer or router moves the member's clients to the other members before it stops.
  - V(reject_queries) (MariaDB Galera, 10.1.17 and later) sets C(wsrep_reject_queries=ALL) - every client query fails
    with error 1047 (C(WSREP has not yet prepared node for application use)), as a C(clustercheck)-style health check
    does; the node stays in the cluster and keeps applying write-sets.
  - V(offline_mode) (MySQL and Percona Server 5.7.5 and later) sets C(offline_mode=ON) - sessions of users without
    C(CONNECTION_ADMIN) or C(SUPER) are disconnected and new ones refused with error 3032; replication keeps running.
  - With O(state=restored), sets the variable back to O(restore_value) (the value RV(before) of the drain), else to
    the serving value (C(NONE), C(OFF)).
  - Refuses, before anything changes, a method the server's flavor or version lacks (the version table of
    C(versions/flavors.py)), V(reject_queries) on a server without a Galera provider, and a server that is not a member of
    O(expect_cluster). The role P(dbfleet.innodb.restart#role) uses this module (C(restart_cluster_drain)).
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.pymysql
  - dbfleet.innodb.login
attributes:
  check_mode:
    support: full
    description: Says which value it would set and how long it would wait; sets nothing and does not wait.
  diff_mode:
    support: none
    description: RV(before) and RV(after) are the value of the variable before and after the task.
options:
  method:
    description:
      - How the member is taken out of its clients' view.
    type: str
    required: true
    choices: [reject_queries, offline_mode]
  state:
    description:
      - V(drained) takes the member out of view, V(restored) puts it back.
    type: str
    default: drained
    choices: [drained, restored]
  seconds:
    description:
      - With O(state=drained), seconds to wait after the change (only when something changed), for health checks to
        notice and clients to move away.
    type: int
    default: 0
  restore_value:
    description:
      - With O(state=restored), the value to put back (RV(before) of the drain); by default the serving value.
    type: str
  expect_cluster:
    description:
      - The cluster (C(wsrep_cluster_state_uuid) or C(group_replication_group_name)) the server must be a member of.
    type: str
seealso:
  - module: dbfleet.innodb.restart_gate
  - module: dbfleet.innodb.cluster_switchover
  - name: wsrep_reject_queries
    description: MariaDB Galera Cluster system variables.
    link: https://mariadb.com/kb/en/galera-cluster-system-variables/#wsrep_reject_queries
  - name: offline_mode
    description: MySQL 8.0 Reference Manual, server system variables.
    link: https://dev.mysql.com/doc/refman/8.0/en/server-system-variables.html#sysvar_offline_mode
'''

EXAMPLES = r'''
- name: Reject client queries on this Galera node, give the load balancer 10 seconds
  dbfleet.innodb.cluster_drain:
    method: reject_queries
    seconds: 10
  register: drain

- name: Serve again, with the value the node had before
  dbfleet.innodb.cluster_drain:
    method: reject_queries
    state: restored
    restore_value: "{{ drain.before }}"
'''

RETURN = r'''
variable:
  description: The variable of the method.
  returned: always
  type: str
  sample: wsrep_reject_queries
before:
  description: Its value before the task; V(null) when the task refused before reading it.
  returned: always
  type: str
  sample: NONE
after:
  description: Its value after the task (in check mode, the value it would set).
  returned: always
  type: str
  sample: ALL
waited:
  description: Seconds waited after the change.
  returned: always
  type: float
clients_before:
  description: Client connections besides the module's own before the change (C(Threads_connected) - 1).
  returned: always
  type: int
clients_after:
  description: Client connections besides the module's own after the change and the wait.
  returned: always
  type: int
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import cluster_drain
from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection as conn_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import execute, global_status, global_variables, query


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(
        method=dict(type='str', required=True, choices=sorted(cluster_drain.DRAIN_METHODS)),
        state=dict(type='str', default='drained', choices=list(cluster_drain.DRAIN_STATES)),
        seconds=dict(type='int', default=0),
        restore_value=dict(type='str'),
        expect_cluster=dict(type='str'),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    p = module.params
    if p['seconds'] < 0:
        module.fail_json(msg='seconds must be 0 or more, got %d; nothing was changed' % p['seconds'])
    conn_utils.run_and_exit(module, 'the drain (%s %s)' % (p['method'], p['state']), lambda conn: cluster_drain.run_drain(
        conn, query, execute, global_variables, global_status, p['method'],
        p['state'], p['restore_value'], p['seconds'], p['expect_cluster'], module.check_mode))


if __name__ == '__main__':
    main()
