#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: replication_switchover
short_description: One step of an asynchronous GTID replication switchover, on the server it concerns
version_added: 1.0.0
description:
  - The steps of handing the primary role of an asynchronous GTID replication topology (MySQL, MariaDB) to one of its
    replicas, each run on the server it concerns (delegated to it, logging in with its own C(dbfleet_login_*)); the
    role P(dbfleet.innodb.restart#role) runs them in order with C(restart_primary=switchover) (docs/topology.md
    "Switchover"), after the checks of the filter C(dbfleet.innodb.switchover_plan).
  - V(demote) (the old primary) sets C(super_read_only) (MySQL) or C(read_only) (MariaDB), kills the other client
    sessions (O(sessions=kill)) or waits up to O(sessions_timeout) seconds for their open transactions
    (O(sessions=wait)), then returns its whole GTID set (C(gtid_executed) / C(gtid_binlog_pos)) in RV(position)
    and the values to put back in RV(before). Setting the variable waits at most O(sessions_timeout) seconds for
    other sessions' table locks (C(lock_wait_timeout)); when it is refused, or the write sessions are not handled in
    time, the step puts the variable back and fails.
  - V(restore) (the old primary, when the switch failed before the promotion) puts O(restore_value) back.
  - V(promote) (the candidate) waits for O(wait_for) with C(WAIT_FOR_EXECUTED_GTID_SET) / C(MASTER_GTID_WAIT) for at
    most O(timeout) seconds, then stops replication, resets it (C(RESET REPLICA ALL) / C(RESET SLAVE ALL)) and turns
    C(read_only) (and C(super_read_only)) off. A timeout fails before anything changed on the candidate.
  - V(endpoint) moves the writer endpoint through HAProxy's runtime API (O(haproxy_socket), on the host the task runs
    on, usually the load balancer's) - V(drained) drains O(old_server), V(moved) sets O(new_server) ready and
    O(old_server) in maintenance with its sessions shut, V(restored) the other way round (O(endpoint_state)). No
    database login is made for it.
  - V(switch) takes the whole switch in one run, on the host of the writer endpoint (or the candidate), reaching both
    servers over the network with O(primary_login) and O(candidate_login), which the action plugin fills in from
    O(primary_host)'s and O(candidate_host)'s C(dbfleet_login_*) host variables (the collection's one login path;
    their address is their C(ansible_host) when the login names none, or a loopback address). Before any change it
    reads both servers, checks that the candidate replicates from the primary and has applied everything the primary
    had committed (the same wait, O(timeout)) and, with O(haproxy_socket), that the backend has both servers. Then,
    back to back - the writers' outage - the endpoint drained, V(demote), V(promote) and the endpoint moved. A failure
    before the promotion puts the old primary's C(read_only) and the endpoint back and fails naming the step
    (RV(stage)); after it, it fails with RV(stage=promoted). RV(timings) and RV(window) say where the time went.
  - V(repoint) (every other replica, and the old primary) points the server at O(source_host):O(source_port) with GTID
    auto-positioning (C(SOURCE_AUTO_POSITION=1) / C(MASTER_USE_GTID=slave_pos)) and starts replication. A server that
    was a primary needs O(replication_user) and O(replication_password).
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.pymysql
  - dbfleet.innodb.login
attributes:
  check_mode:
    support: full
    description: Runs nothing; RV(msg) and RV(statements) name what the step would do.
  diff_mode:
    support: none
    description: Nothing to show a difference of; RV(msg) says what changed.
options:
  step:
    description:
      - Which step of the switchover to take on this server.
    type: str
    required: true
    choices: [demote, restore, promote, repoint, endpoint, switch]
  sessions:
    description:
      - V(demote) - what happens to the other client sessions once the server is read-only. V(kill) ends them (on
        MariaDB C(read_only) lets privileged users write, so only this is safe with such writers); V(wait) waits for
        their open transactions to end, at most O(sessions_timeout) seconds, and fails after (the caller restores).
    type: str
    choices: [kill, wait]
    default: kill
  sessions_timeout:
    description:
      - V(demote) - most seconds to wait for other sessions' table locks while the variable is set, and with
        O(sessions=wait) for their open transactions after.
    type: int
    default: 10
  restore_value:
    description:
      - V(restore) - C(read_only) / C(super_read_only) as V(demote) returned them (RV(before)).
    type: dict
  wait_for:
    description:
      - V(promote) - the old primary's GTID set (RV(position) of V(demote)) the candidate must have applied.
    type: str
  timeout:
    description:
      - V(promote) - most seconds to wait for O(wait_for).
    type: int
    default: 30
  expect_source_server_id:
    description:
      - V(promote) - the old primary's C(server_id), which the candidate must replicate from.
    type: int
  source_host:
    description:
      - V(repoint) - address of the new primary.
    type: str
  source_port:
    description:
      - V(repoint) - port of the new primary.
    type: int
    default: 3306
  replication_user:
    description:
      - V(repoint) - the replication account; V(null) keeps the one the channel has (a server that was a primary has
        none and needs it).
    type: str
  replication_password:
    description:
      - V(repoint) - its password (never shown).
    type: str
  replication_ssl:
    description:
      - V(repoint) - whether replication connects with TLS (C(SOURCE_SSL) / C(MASTER_SSL)); V(null) leaves it.
    type: bool
  primary_host:
    description:
      - V(switch) - the old primary's inventory host; the action plugin logs in to its server with its host variables
        (O(primary_login)).
    type: str
  candidate_host:
    description:
      - V(switch) - the candidate's inventory host (O(candidate_login)).
    type: str
  primary_login:
    description:
      - V(switch) - the login of the old primary's server, reached over the network; the suboptions are this module's
        login options of the same names (doc fragment C(dbfleet.innodb.login)). Filled in by the action plugin from
        O(primary_host)'s host variables when not given.
    type: dict
    suboptions: &login_suboptions
      login_user:
        description: The account.
        type: str
        aliases: [login_username]
      login_password:
        description: Its password (never shown).
        type: str
      login_host:
        description: The server's address.
        type: str
      login_port:
        description: Its port.
        type: int
      login_unix_socket:
        description: A socket on the host the module runs on.
        type: str
      config_file:
        description: An option file on the host the module runs on (the action plugin gives none).
        type: path
        default: '~/.my.cnf'
      connect_timeout:
        description: Seconds to connect.
        type: int
        default: 30
      ca_cert:
        description: The CA file that verifies the server's certificate.
        type: path
        aliases: [ssl_ca]
      client_cert:
        description: A client certificate.
        type: path
        aliases: [ssl_cert]
      client_key:
        description: Its key.
        type: path
        aliases: [ssl_key]
      check_hostname:
        description: Whether the certificate must name the server.
        type: bool
      login_ssl_mode:
        description: TLS as MySQL's C(--ssl-mode) names it.
        type: str
        choices: [disabled, preferred, required, verify_ca, verify_identity]
      login_server_public_key:
        description: The server's RSA public key file.
        type: path
      login_get_server_public_key:
        description: Whether to ask the server for its RSA public key.
        type: bool
      login_trust_loopback:
        description: Whether a loopback listener is trusted as the server.
        type: bool
  candidate_login:
    description:
      - V(switch) - the same for the candidate's server (from O(candidate_host)).
    type: dict
    suboptions: *login_suboptions
  endpoint_state:
    description:
      - V(endpoint) - V(drained), V(moved) or V(restored).
    type: str
    choices: [drained, moved, restored]
  haproxy_socket:
    description:
      - V(endpoint) - path of HAProxy's admin socket (C(stats socket ... level admin)).
      - V(switch) - when given, the writer endpoint (with O(haproxy_backend), O(old_server), O(new_server)) is
        drained and moved inside the switch.
    type: path
  haproxy_backend:
    description:
      - V(endpoint) - the backend (or C(listen) section) of the writers.
    type: str
  old_server:
    description:
      - V(endpoint) - the old primary's server name in the backend.
    type: str
  new_server:
    description:
      - V(endpoint) - the new primary's server name in the backend.
    type: str
seealso:
  - module: dbfleet.innodb.topology_facts
  - module: dbfleet.innodb.restart_gate
  - module: dbfleet.innodb.cluster_switchover
  - name: WAIT_FOR_EXECUTED_GTID_SET()
    description: MySQL 8.0 Reference Manual, functions used with global transaction identifiers.
    link: https://dev.mysql.com/doc/refman/8.0/en/gtid-functions.html
  - name: MASTER_GTID_WAIT()
    description: MariaDB Knowledge Base.
    link: https://mariadb.com/kb/en/master_gtid_wait/
'''

EXAMPLES = r'''
- name: Make the old primary read-only and read its GTID set
  dbfleet.innodb.replication_switchover:
    step: demote
  delegate_to: db1
  register: demoted

- name: Promote the candidate once it has applied that set
  dbfleet.innodb.replication_switchover:
    step: promote
    wait_for: "{{ demoted.position }}"
    timeout: 30
  delegate_to: db2

- name: Put HAProxy's writers on the new primary
  dbfleet.innodb.replication_switchover:
    step: endpoint
    endpoint_state: moved
    haproxy_socket: /run/haproxy/admin.sock
    haproxy_backend: writer_db1
    old_server: db1
    new_server: db2
  delegate_to: lb1

- name: The whole switch from db1 to db2 in one run, on the load balancer's host
  dbfleet.innodb.replication_switchover:
    step: switch
    primary_host: db1
    candidate_host: db2
    timeout: 30
    haproxy_socket: /run/haproxy/admin.sock
    haproxy_backend: writer_db1
    old_server: db1
    new_server: db2
  delegate_to: lb1

- name: Point the old primary at the new one
  dbfleet.innodb.replication_switchover:
    step: repoint
    source_host: 10.0.0.12
    replication_user: repl
    replication_password: "{{ vault_repl_password }}"
    replication_ssl: true
  delegate_to: db1
'''

RETURN = r'''
msg:
  description: What the step did (in check mode, would do).
  returned: always
  type: str
before:
  description: V(demote) and V(switch) - C(read_only) (and C(super_read_only)) before the step, for V(restore); also
    when the step failed (having put them back itself when it could).
  returned: when step is demote or switch
  type: dict
  sample: {read_only: 'OFF', super_read_only: 'OFF'}
position:
  description: V(demote) - the server's whole GTID set once read-only (MySQL C(gtid_executed), MariaDB C(gtid_binlog_pos)).
  returned: when step is demote or switch
  type: str
killed:
  description: V(demote) - the sessions killed (C(id), C(user), C(host)).
  returned: when step is demote or switch
  type: list
  elements: dict
statements:
  description: V(promote), V(repoint) - the statements run (would run), passwords not included.
  returned: when step is promote, repoint or switch
  type: list
  elements: str
commands:
  description: V(endpoint) - the runtime API commands run (would run).
  returned: when step is endpoint or switch
  type: list
  elements: str
after:
  description: V(endpoint) - each server's state in the backend after the step (C(ready), C(drain), C(maint)).
  returned: when step is endpoint
  type: dict
waited:
  description: V(promote) - seconds the candidate waited for the GTID set.
  returned: when step is promote or switch, and not in check mode
  type: float
stage:
  description:
    - V(switch) - how far the switch went; on a failure, the step it failed at - V(prepare) (nothing changed),
      V(drain), V(demote), V(promote) (put back), V(promoted) (the new primary writable, the rest not done), V(done).
  returned: when step is switch
  type: str
timings:
  description: V(switch) - seconds from the module's start to the end of each step (C(prepare), C(drain), C(demote),
    C(promote), C(endpoint)).
  returned: when step is switch
  type: dict
window:
  description: V(switch) - seconds from the drain to the endpoint on the new primary (the writers' outage).
  returned: when step is switch and it went through
  type: float
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection as conn_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import execute, global_variables, query
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import switchover
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import writer_endpoint


def run(conn, p, check_mode):
    q, e, g = query, execute, global_variables
    try:
        if p['step'] == 'demote':
            result = switchover.demote(conn, q, e, g, p['sessions'], p['sessions_timeout'], check_mode)
        elif p['step'] == 'restore':
            result = switchover.restore(conn, e, g, p['restore_value'] or {}, check_mode)
        elif p['step'] == 'promote':
            result = switchover.promote(conn, q, e, g, p['wait_for'], p['timeout'], p['expect_source_server_id'],
                                        check_mode)
        else:
            result = switchover.repoint(conn, q, e, g, p['source_host'], p['source_port'], p['replication_user'],
                                        p['replication_password'], p['replication_ssl'], check_mode)
    except switchover.SwitchoverError as err:
        failed = dict(failed=True, changed=False, msg='%s: %s' % (p['step'], err))
        if err.before is not None:
            failed['before'] = err.before       # demote: what the caller's restore puts back (done already when it could)
        return failed
    result['failed'] = False
    return result


def switch(module):
    """Step switch: both servers' connections opened first, then the switch (switchover.switch)."""
    p = module.params
    conn_utils.require_pymysql(module)
    spec = login_argument_spec()
    conns = []
    try:
        for name in ('primary', 'candidate'):
            login = dict((k, v.get('default')) for k, v in spec.items())
            login.update((k, v) for k, v in (p['%s_login' % name] or {}).items() if k in spec)
            try:
                conns.append(conn_utils.open_connection(login))
            except conn_utils.ConnectError as err:
                module.fail_json(msg='switch: prepare: the %s (%s): %s' % (name, p['%s_host' % name], err),
                                 changed=False, stage='prepare')
        endpoint = None
        if p['haproxy_socket']:
            def move_endpoint(state, check_mode):
                return writer_endpoint.move(p['haproxy_socket'], p['haproxy_backend'], state, p['old_server'],
                                            p['new_server'], check_mode)
            endpoint = move_endpoint
        try:
            result = switchover.switch(conns[0], conns[1], query, execute,
                                       global_variables, p['sessions'], p['sessions_timeout'], p['timeout'],
                                       p['expect_source_server_id'], endpoint, module.check_mode)
        except switchover.SwitchFailed as err:
            done = err.result
            if err.stage == 'promoted':
                what = '%s is the primary (writable); the rest was not done' % p['candidate_host']
            else:
                what = 'put back: %s' % err.put_back
            # before only once something was changed: the caller's restore needs it then, and nothing else.
            extra = dict(before=done['before']) if err.stage != 'prepare' else {}
            module.fail_json(msg='switch: %s: %s; %s' % (err.stage, err.why, what), changed=done['changed'],
                             stage=err.stage, position=done['position'], killed=done['killed'],
                             statements=done['statements'], commands=done['commands'], timings=done['timings'], **extra)
    finally:
        for conn in conns:
            conn.close()
    module.exit_json(**result)


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(
        step=dict(type='str', required=True, choices=['demote', 'restore', 'promote', 'repoint', 'endpoint', 'switch']),
        sessions=dict(type='str', choices=list(switchover.SESSION_MODES), default='kill'),
        sessions_timeout=dict(type='int', default=10),
        restore_value=dict(type='dict'),
        wait_for=dict(type='str'),
        timeout=dict(type='int', default=30),
        expect_source_server_id=dict(type='int'),
        source_host=dict(type='str'),
        source_port=dict(type='int', default=3306),
        replication_user=dict(type='str'),
        replication_password=dict(type='str', no_log=True),
        replication_ssl=dict(type='bool'),
        endpoint_state=dict(type='str', choices=list(writer_endpoint.STATES)),
        haproxy_socket=dict(type='path'),
        haproxy_backend=dict(type='str'),
        old_server=dict(type='str'),
        new_server=dict(type='str'),
        primary_host=dict(type='str'),
        candidate_host=dict(type='str'),
        primary_login=dict(type='dict', options=login_argument_spec()),
        candidate_login=dict(type='dict', options=login_argument_spec()),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           required_if=[('step', 'restore', ['restore_value']), ('step', 'promote', ['wait_for']),
                                        ('step', 'repoint', ['source_host']),
                                        ('step', 'endpoint', ['endpoint_state', 'haproxy_socket', 'haproxy_backend',
                                                              'old_server', 'new_server']),
                                        ('step', 'switch', ['primary_login', 'candidate_login'])],
                           required_by=dict(haproxy_socket=['haproxy_backend', 'old_server', 'new_server']))
    p = module.params
    if p['step'] == 'switch':
        switch(module)
    if p['step'] == 'endpoint':
        try:
            result = writer_endpoint.move(p['haproxy_socket'], p['haproxy_backend'], p['endpoint_state'], p['old_server'],
                                          p['new_server'], module.check_mode)
        except (OSError, ValueError) as err:
            module.fail_json(msg='endpoint %s: %s' % (p['endpoint_state'], err), changed=False)
        module.exit_json(**result)
    conn_utils.run_and_exit(module, 'the switchover step %s' % module.params['step'],
                            lambda conn: run(conn, module.params, module.check_mode))


if __name__ == '__main__':
    main()
