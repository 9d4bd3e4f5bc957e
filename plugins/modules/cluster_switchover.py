#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: cluster_switchover
short_description: Hand the primary role of a Group Replication group to another member before this one stops
version_added: 1.0.0
description:
  - Reads the Group Replication state of the server (C(performance_schema.replication_group_members)). When the
    server is the primary of a single-primary group, hands the role to another ONLINE member with
    C(SELECT group_replication_set_as_primary(<server_uuid>)) (MySQL 8.0.13 and later), which returns once the
    group elected it, then reads the group again and checks that this member is a secondary.
  - Nothing changes when the server is a secondary, a member of a multi-primary group, a Galera node or no
    cluster member at all (RV(needed) is V(false)).
  - With O(allowed=false), a primary is refused before anything changes, naming the member; the role
    P(dbfleet.innodb.restart#role) uses this before it restarts a group member (C(restart_cluster_switchover)).
  - Refuses, before anything changes, when the group has no majority, this member is not ONLINE, or no other
    member is ONLINE to take the role.
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.pymysql
  - dbfleet.innodb.login
attributes:
  check_mode:
    support: full
    description: Reports the switchover it would make (RV(new_primary)) without running it.
  diff_mode:
    support: none
    description: Nothing to show a difference of; RV(old_primary) and RV(new_primary) say what changed.
options:
  allowed:
    description:
      - Whether the primary role may be handed over. With V(false), a server that is the primary fails the task,
        naming it.
    type: bool
    default: true
  candidates:
    description:
      - C(server_uuid)s of members to prefer as the new primary, in order (for example members already restarted).
        The first that is an ONLINE secondary takes the role; when none is, the first ONLINE secondary the group
        lists.
    type: list
    elements: str
    default: []
  expect_cluster:
    description:
      - The group name (C(group_replication_group_name)) the server must be a member of; another group fails the task.
    type: str
seealso:
  - module: dbfleet.innodb.topology_facts
  - module: dbfleet.innodb.restart_gate
  - name: group_replication_set_as_primary()
    description: MySQL 8.0 Reference Manual, Group Replication functions for single-primary mode.
    link: https://dev.mysql.com/doc/refman/8.0/en/group-replication-functions-for-new-primary.html
'''

EXAMPLES = r'''
- name: Move the primary role away from this member before its restart
  dbfleet.innodb.cluster_switchover:
    expect_cluster: d6df88c0-0f29-5386-ac4b-a3cbf58450b1

- name: Refuse to go on when this member is the primary
  dbfleet.innodb.cluster_switchover:
    allowed: false
'''

RETURN = r'''
needed:
  description: Whether the server was the primary of a single-primary group (a switchover is needed before it stops).
  returned: always
  type: bool
old_primary:
  description: The primary before the task (C(id) server_uuid, C(address) host:port); V(null) when none was needed.
  returned: always
  type: dict
new_primary:
  description: The member that took (in check mode, would take) the primary role; V(null) when none was needed.
  returned: always
  type: dict
  sample: {id: 5caa445d-e8cf-11f1-89fb-02fc00000001, address: '127.0.0.1:37352'}
cluster:
  description: The server's cluster state after the task (the shape of RV(dbfleet.innodb.topology_facts#module:topology.cluster)).
  returned: always
  type: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import cluster_switchover
from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection as conn_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import global_variables, query


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(
        allowed=dict(type='bool', default=True),
        candidates=dict(type='list', elements='str', default=[]),
        expect_cluster=dict(type='str'),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    p = module.params
    conn_utils.run_and_exit(module, 'the switchover', lambda conn: cluster_switchover.run_switchover(
        conn, query, global_variables, p['allowed'], p['candidates'], p['expect_cluster'],
        module.check_mode))


if __name__ == '__main__':
    main()
