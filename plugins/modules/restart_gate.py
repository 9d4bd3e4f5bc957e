#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: restart_gate
short_description: The gate a restarted server must pass before the next server of its topology restarts
version_added: 1.0.0
description:
  - Waits, up to O(timeout) seconds, until the server answers, and, when O(expect_replica) is set, until every
    replication channel runs its IO and SQL threads and is at most O(max_lag) seconds behind its source.
  - With O(expect_cluster), also until the server serves as a member of that cluster again (Galera V(Synced),
    C(wsrep_ready), Primary component) with an empty receive queue, and the cluster counts O(expect_cluster_size)
    members.
  - Then, when O(source_position) is given, waits until the server has applied that GTID position
    (C(WAIT_FOR_EXECUTED_GTID_SET) on MySQL and Percona Server, C(MASTER_GTID_WAIT) on MariaDB), so the replica
    has caught up with what its source had committed when the gate started.
  - Checks that every setting of O(settings) runs with the desired value (the change the restart was for).
  - Fails, naming what is wrong, when the time is up; fails at once when a replication thread stopped with an
    error, which does not mend itself.
  - Used by the role P(dbfleet.innodb.restart#role) after each restart, and before the first one on every host of the
    topologies concerned.
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.read_only
  - dbfleet.innodb.attributes.pymysql
  - dbfleet.innodb.login
options:
  timeout:
    description:
      - Seconds to wait for the gate to pass (1 to 86400).
    type: int
    default: 300
  expect_replica:
    description:
      - The server was a replica before the restart (from M(dbfleet.innodb.topology_plan)); its replication must run.
    type: bool
    default: false
  max_lag:
    description:
      - Most seconds a replica may be behind its source (C(Seconds_Behind_Source)) to pass.
    type: int
    default: 60
  source_position:
    description:
      - GTID position of the source to wait for (C(gtid_executed) of a MySQL source, C(gtid_binlog_pos) of a
        MariaDB source). Empty or V(null) skips the catch-up check (no GTIDs, or no source known).
    type: str
  settings:
    description:
      - Settings that must run with these values after the restart, name -> value (any spelling of the name).
    type: dict
    default: {}
  expect_server_id:
    description:
      - The C(server_id) the server had before the restart (from M(dbfleet.innodb.topology_plan)). A server that
        answers with another id is not the one that restarted (a login that points elsewhere), so the gate fails at
        once.
    type: int
  expect_server_uuid:
    description:
      - The C(server_uuid) the server had before the restart, checked like O(expect_server_id) (MySQL, Percona).
    type: str
  expect_cluster:
    description:
      - The cluster the server was a member of before the restart (C(cluster.name) from
        M(dbfleet.innodb.topology_plan); Galera C(wsrep_cluster_state_uuid)). The gate then waits until the server is a
        member of that cluster again and serves - Galera V(Synced), C(wsrep_ready=ON), connected, in the Primary
        component - with at most O(max_queue) transactions received and not yet applied; answering SQL is not
        enough (a rejoining Galera node answers while still Joining, and refuses work with error 1047).
      - Used also before a cluster member is stopped, delegated to each other member, so that none is stopped while
        another does not serve (a donor still Desynced after feeding the last restarted node, for example).
    type: str
  expect_cluster_size:
    description:
      - With O(expect_cluster), the cluster must count at least this many members again (C(wsrep_cluster_size)).
    type: int
  max_queue:
    description:
      - With O(expect_cluster), most transactions the member may have received and not yet applied
        (C(wsrep_local_recv_queue)).
    type: int
    default: 0
  interval:
    description:
      - Seconds between two looks while waiting.
    type: int
    default: 2
seealso:
  - module: dbfleet.innodb.topology_facts
  - module: dbfleet.innodb.topology_plan
'''

EXAMPLES = r'''
- name: Wait until a restarted Galera node is Synced again, with nothing left to apply, in its 3-node cluster
  dbfleet.innodb.restart_gate:
    expect_cluster: 24b97d40-e8cf-11f1-b24a-c7da101eb7b5
    expect_cluster_size: 3
    timeout: 600

- name: Wait until the restarted replica replicates, has caught up and runs 16 AHI partitions
  dbfleet.innodb.restart_gate:
    expect_replica: true
    max_lag: 30
    source_position: "{{ source_topology.topology.gtid.executed }}"
    settings:
      innodb_adaptive_hash_index_parts: 16
    timeout: 300
'''

RETURN = r'''
passed:
  description: Whether the gate passed (the task fails when it did not).
  returned: always
  type: bool
problems:
  description: What kept the gate shut at the last look.
  returned: always
  type: list
  elements: str
  sample: ["replication: SQL thread No"]
waited:
  description: Seconds the gate waited.
  returned: always
  type: float
caught_up:
  description: Whether the server applied O(source_position); V(null) when not checked.
  returned: always
  type: bool
topology:
  description: The server's topology facts at the last look (as M(dbfleet.innodb.topology_facts) returns them).
  returned: when the server answered
  type: dict
'''

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection as conn_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.tls import warn_unverified
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import (
    error_text, global_status, global_variables, query, query_one)
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import gtid_sets
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import restart_gate
from ansible_collections.dbfleet.innodb.plugins.module_utils import values


# A look whose login the collection's rules refused (connection.LoginRefused): waiting does not change them, the
# gate shuts at once.
REFUSED = 'the login was refused and waiting does not change that: '

# Seconds a read may take past the gate's deadline (the GTID wait after the last look runs up to the deadline).
READ_MARGIN = 5


def read_timeout(deadline, now):
    """Seconds a read of this look may block: the time left to the deadline and a margin. A read that blocks
    longer (a Group Replication member's recovery channel still connecting to an unreachable donor holds its
    replication status) fails, so the gate shuts at its timeout instead of a minute or more after it."""
    return max(READ_MARGIN, int(deadline - now) + READ_MARGIN)


def look(params, settings, deadline=None):
    """(facts, problems, conn) of one look at the server; conn is open when it answered.

    deadline: time.time() by which the gate shuts; reads are bounded by it (read_timeout)."""
    bounded = dict(params, connect_timeout=min(params['connect_timeout'], 5))
    if deadline is not None:
        bounded['read_timeout'] = read_timeout(deadline, time.time())
    try:
        conn = conn_utils.open_connection(bounded)
    except conn_utils.LoginRefused as e:
        return None, [REFUSED + str(e)], None
    except conn_utils.ConnectError as e:
        return None, ['the server does not answer: %s' % e], None
    try:
        facts = topology.read_server(conn, query, global_variables, global_status)
        check = []
        if settings:
            identity = server_identity.identity_from_variables(global_variables(conn, server_identity.DETECT_VARIABLES))
            check = restart_gate.settings_check(identity, global_variables(conn), settings)
    except (ValueError, conn_utils.pymysql.err.MySQLError) as e:
        conn.close()
        why = error_text(e)
        if 'timed out' in why:
            why += ' (a read blocked past the gate\'s timeout)'
        return None, ['reading the server failed: %s' % why], None
    return facts, restart_gate.gate_problems(facts, params['expect_replica'], params['max_lag'], check,
                                             expect_cluster=params.get('expect_cluster'),
                                             expect_cluster_size=params.get('expect_cluster_size'),
                                             max_queue=params.get('max_queue', 0)), conn


def hopeless(facts, params=None):
    """Problems that waiting does not mend: another server than expected, a thread stopped with an error."""
    out = []
    params = params or {}
    if facts and params.get('expect_server_id') is not None and facts.get('server_id') is not None \
            and facts['server_id'] != params['expect_server_id']:
        out.append('this login reaches server_id %s, not %s: not the server that restarted'
                   % (facts['server_id'], params['expect_server_id']))
    if facts and params.get('expect_server_uuid') and facts.get('server_uuid') \
            and facts['server_uuid'] != params['expect_server_uuid']:
        out.append('this login reaches server_uuid %s, not %s: not the server that restarted'
                   % (facts['server_uuid'], params['expect_server_uuid']))
    cluster = (facts or {}).get('cluster')
    if params.get('expect_cluster') and cluster and cluster.get('name') and cluster['name'] != params['expect_cluster']:
        out.append('member of another cluster (%s) than %s: it formed or joined a new one'
                   % (cluster['name'], params['expect_cluster']))
    for channel in (facts or {}).get('channels') or []:
        if not channel.get('sql_running') and channel.get('last_sql_errno'):
            out.append('SQL thread stopped with error %s: %s' % (channel['last_sql_errno'],
                                                                 channel.get('last_sql_error')))
        if not channel.get('io_running') and channel.get('io_state') == 'No' and channel.get('last_io_errno'):
            out.append('IO thread stopped with error %s: %s' % (channel['last_io_errno'],
                                                                channel.get('last_io_error')))
    return out


BOUNDS = (
    ('timeout', 1, 86400, 'must be between 1 and 86400 seconds'),
    ('max_lag', 0, None, 'must be 0 or more seconds'),
    ('max_queue', 0, None, 'must be 0 or more transactions'),
    ('expect_cluster_size', 1, None, 'must be 1 or more'),
    ('interval', 1, 60, 'must be between 1 and 60 seconds'),
)


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(
        timeout=dict(type='int', default=300),
        expect_replica=dict(type='bool', default=False),
        expect_server_id=dict(type='int'),
        expect_server_uuid=dict(type='str'),
        max_lag=dict(type='int', default=topology.DEFAULT_MAX_LAG),
        source_position=dict(type='str'),
        settings=dict(type='dict', default={}),
        interval=dict(type='int', default=2),
        expect_cluster=dict(type='str'),
        expect_cluster_size=dict(type='int'),
        max_queue=dict(type='int', default=0),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    p = module.params
    errors = values.bound_problems(p, BOUNDS)
    if errors:
        module.fail_json(msg='; '.join(errors))
    conn_utils.require_pymysql(module)
    warn_unverified(module)

    started = time.time()
    deadline = started + p['timeout']
    result = dict(changed=False, passed=False, caught_up=None, problems=[])
    while True:
        facts, problems, conn = look(p, p['settings'], deadline)
        result['problems'] = problems
        if facts is not None:
            result['topology'] = facts
        stuck = hopeless(facts, p) or [q for q in problems if q.startswith(REFUSED)]
        if not problems and not stuck:
            break
        if stuck or time.time() + p['interval'] > deadline:
            if conn:
                conn.close()
            result['waited'] = round(time.time() - started, 1)
            module.fail_json(msg='gate shut after %.0f s: %s' % (result['waited'], '; '.join(stuck or problems)),
                             **result)
        if conn:
            conn.close()
        time.sleep(p['interval'])

    position = (p['source_position'] or '').strip()
    model = (facts.get('gtid') or {}).get('model')
    sql, caught_up_value = gtid_sets.gtid_wait_sql(model)
    if position and sql:
        remaining = max(1, int(deadline - time.time()))
        try:
            row = query_one(conn, sql, (position, remaining))
        except conn_utils.pymysql.err.MySQLError as e:
            conn.close()
            result['waited'] = round(time.time() - started, 1)
            module.fail_json(msg='gate shut: waiting for GTID position %s failed: %s'
                             % (position, error_text(e)), **result)
        value = row.get('r') if row else None
        result['caught_up'] = value is not None and int(value) == caught_up_value
        if not result['caught_up']:
            conn.close()
            result['waited'] = round(time.time() - started, 1)
            result['problems'] = ['has not applied its source\'s GTID position %s within %d s' % (position, p['timeout'])]
            module.fail_json(msg='gate shut after %.0f s: %s' % (result['waited'], result['problems'][0]), **result)
    conn.close()
    result['passed'] = True
    result['waited'] = round(time.time() - started, 1)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
