#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: global_variables
short_description: Set dynamic global variables of a MySQL, Percona Server or MariaDB server, compared by meaning
version_added: 1.0.0
description:
  - Sets GLOBAL (never session) values of dynamic server variables, only where the running value differs
    from the desired one.
  - Values are compared by meaning, not spelling, exactly as M(dbfleet.innodb.verify) compares them
    (one implementation). C(ON), C(on), C(true), V(true), C(yes), C(y) and C(1) are the same boolean (the
    server is always sent C(ON) or C(OFF)); C(1G) and C(1073741824) the same size; any number may carry
    one of the suffixes K, M, G, T, P, E that the server reads in option files (C(innodb_io_capacity=2K) is
    2048); enum names are compared without regard to case. A second run therefore reports no change.
  - A value the server would refuse in an option file (C(2 G), C(1.5G)), or a number outside the
    variable's range, fails the task naming the variable, before anything is changed.
  - C(innodb_buffer_pool_size) is compared with the size the server will really run with (rounded up to a
    multiple of C(innodb_buffer_pool_chunk_size) times C(innodb_buffer_pool_instances)). A size below one
    chunk times instances is refused (a running server rounds it up; only a restart runs it).
  - Variable names are resolved for the server's flavor and version
    (for example C(innodb_adaptive_hash_index_parts) and C(innodb_adaptive_hash_index_partitions)).
  - The variables are set in the order O(variables) gives them (a YAML mapping keeps its order, and so does a
    mapping a role or a Jinja expression builds), one after the other on one connection. Order matters where one
    variable bounds another - C(innodb_io_capacity) may never exceed C(innodb_io_capacity_max), and MySQL quietly
    lowers a higher capacity to the maximum - so to raise both, give C(innodb_io_capacity_max) first. Every value is
    checked before the first is set.
  - After each change the module reads the value back. A SET that the server accepted but did not apply
    (it happens to C(innodb_adaptive_hash_index) during a buffer pool resize) fails the task.
  - Read-only (static) variables are refused, with a message that says to write them to an option file and restart.
  - The value of a secret variable (C(wsrep_sst_auth), C(report_password), C(*_password), ... - the collection's one
    list, C(plugins/module_utils/masking.py)) is masked in the result, the diff, the messages and the task's
    invocation (C(-vvv)). A server that hides a secret's running value (MariaDB shows a set C(wsrep_sst_auth) as
    C(********)) cannot be compared with it, so the module sets it on every run and reports a change.
  - A low-level module with the login's own privileges - it sets at runtime only what that login could set with
    C(SET GLOBAL) - so it does not refuse security-critical settings as the role C(dbfleet.innodb.settings) does
    (C(settings_allow_security_settings), docs/security.md); give it such a variable only in a playbook you wrote.
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.pymysql
  - dbfleet.innodb.login
options:
  variables:
    description:
      - Variable name to desired value, set in this order. A V(null) value leaves that variable alone.
      - When a SET fails, the variables before it stay set; the task fails naming the variable and those already
        set (RV(variables) holds what was done).
    type: dict
    default: {}
  reset_persisted:
    description:
      - Variables whose persisted value (C(performance_schema.persisted_variables), the file C(mysqld-auto.cnf) the
        server reads after every option file at its next start) is removed with C(RESET PERSIST), before O(variables)
        are set, so that the option files decide at the next start. The running values are left as they are.
      - A name that is not persisted is no change; one that is counts as a change, in check mode too, and the diff
        shows its persisted value going (C(persisted.<name>)).
      - Only servers that have SET PERSIST (MySQL and Percona Server 8.0 and later); anywhere else the task fails
        before anything is changed.
    type: list
    elements: str
    default: []
  persist:
    description:
      - Use C(SET PERSIST) instead of C(SET GLOBAL), so the value also survives a restart.
      - Only servers that have it (MySQL and Percona Server 8.0 and later); anywhere else the task fails
        before anything is changed.
      - A variable whose running value is right but which is not persisted with that value counts as a change.
    type: bool
    default: false
  persist_only:
    description:
      - Use C(SET PERSIST_ONLY) - the values go to C(mysqld-auto.cnf) only and apply at the next start, which is how
        read-only variables are persisted. Compared with the persisted value (performance_schema.persisted_variables),
        not the running one; nothing is read back from the running server.
      - Only servers that have it (MySQL and Percona Server 8.0 and later); anywhere else the task fails
        before anything is changed. Not with O(persist).
    type: bool
    default: false
  resize_timeout:
    description:
      - After a change of C(innodb_buffer_pool_size), seconds to wait for the server's online resize to finish
        (C(Innodb_buffer_pool_resize_status)); a resize that fails, or is still running then, fails the task (the
        result says how far it came). V(0) does not wait.
    type: int
    default: 300
attributes:
  check_mode:
    support: full
    description: Reports exactly which variables would change, and how, without setting anything.
  diff_mode:
    support: full
    description: Shows the running values before and after.
seealso:
  - module: dbfleet.innodb.verify
  - module: community.mysql.mysql_variables
'''

EXAMPLES = r'''
- name: Turn neighbor flushing off and the adaptive hash index on
  dbfleet.innodb.global_variables:
    login_unix_socket: /run/mysqld/mysqld.sock
    variables:
      innodb_flush_neighbors: 0
      innodb_adaptive_hash_index: "ON"

- name: Raise the I/O capacity and its maximum, in that order (the capacity may never exceed the maximum)
  dbfleet.innodb.global_variables:
    variables:
      innodb_io_capacity_max: 4000
      innodb_io_capacity: 3000

- name: Persist a read-only variable for the next start on MySQL 8 (SET PERSIST_ONLY)
  dbfleet.innodb.global_variables:
    variables:
      innodb_sort_buffer_size: 2M
    persist_only: true

- name: Let the drop-in decide innodb_io_capacity at the next start (remove its persisted value)
  dbfleet.innodb.global_variables:
    reset_persisted: [innodb_io_capacity]

- name: Set and persist a buffer pool size on MySQL 8 (a size with a suffix is fine)
  dbfleet.innodb.global_variables:
    login_user: admin
    login_password: "{{ vault_admin_password }}"
    variables:
      innodb_buffer_pool_size: 4G
    persist: true
'''

RETURN = r'''
variables:
  description: What happened to each variable, keyed by the name given in O(variables).
  returned: always
  type: dict
  sample:
    innodb_flush_neighbors:
      resolved_name: innodb_flush_neighbors
      desired: 0
      before: "1"
      after: "0"
      changed: true
    wsrep_sst_auth:
      resolved_name: wsrep_sst_auth
      desired: "********"
      before: "********"
      after: "********"
      changed: true
      masked: true
order:
  description: The names of O(variables) that are not V(null), in the order the module went through them, setting each
    that differs (in check mode, would set); one already right keeps its place and is not set.
  returned: success
  type: list
  elements: str
  sample: [innodb_io_capacity_max, innodb_io_capacity]
reset_persisted:
  description: The persisted values O(reset_persisted) removed (would remove, in check mode), name to the value that was
    persisted.
  returned: always
  type: dict
  sample: {innodb_io_capacity: '300'}
server:
  description: Flavor and version of the server.
  returned: always
  type: dict
  sample: {flavor: mysql, version: [8, 0, 33], version_string: 8.0.33}
resize:
  description: The online buffer pool resize a change of C(innodb_buffer_pool_size) started, as the server reported it.
  returned: when innodb_buffer_pool_size changed and O(resize_timeout) is above 0 (not in check mode)
  type: dict
  sample: {from: '134217728', to: '536870912', status: 'Completed resizing buffer pool at 261127 11:02:12.',
           seconds: 0.4, completed: true}
'''

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection as conn_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import (
    error_text, execute, global_status, global_variables, is_plain_identifier, query, quote_identifier)
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils import values


def _persisted(conn):
    rows = query(conn, 'SELECT VARIABLE_NAME, VARIABLE_VALUE FROM performance_schema.persisted_variables')
    return dict((r['VARIABLE_NAME'].lower(), r['VARIABLE_VALUE']) for r in rows)


RESIZE_STATUS = ('innodb_buffer_pool_resize_status', 'innodb_buffer_pool_resize_status_code')


def _resize_status(conn):
    return global_status(conn, RESIZE_STATUS)


def wait_for_resize(conn, before, timeout, interval=0.2):
    """Poll Innodb_buffer_pool_resize_status until the resize that SET GLOBAL innodb_buffer_pool_size started has
    finished (values.resize_state()), failed, or timeout seconds passed. Returns dict(status, seconds, completed,
    reason)."""
    start = time.monotonic()
    while True:
        now = _resize_status(conn)
        state, reason = values.resize_state(before, now)
        seconds = round(time.monotonic() - start, 1)
        if state in ('done', 'failed') or seconds >= timeout:
            if state not in ('done', 'failed'):
                reason = 'still running after %ss (resize_timeout): %s' % (timeout, reason)
            return dict(status=now.get('innodb_buffer_pool_resize_status'), seconds=seconds,
                        completed=state == 'done', reason=reason)
        time.sleep(interval)


def _plan(module, conn, identity, wanted):
    """Validate everything and work out the changes before touching the server.

    Names, kinds, ranges and settability are decided by values.resolve/describe/check, values compared
    by values.compare: the same answers dbfleet.innodb.verify gives for the same server."""
    server_vars = global_variables(conn)
    persist_only = module.params['persist_only']
    persisted = _persisted(conn) if module.params['persist'] or persist_only else {}
    names = frozenset(server_vars)
    plan, errors, found = [], [], {}
    for name, desired in wanted.items():
        if desired is None:
            continue
        found[name] = values.resolve(name, identity, names)
        if found[name].problem is not None:
            errors.append((name, '%s: %s' % (name, found[name].reason)))
    table, _reason = server_facts.variable_table(conn, identity, [f.resolved for f in found.values()
                                                                  if f.problem is None])
    rounding = None
    if capability_facts.capability('buffer_pool_chunk_rounding', identity.flavor, identity.version):
        rounding = (server_vars.get('innodb_buffer_pool_chunk_size'), server_vars.get('innodb_buffer_pool_instances'))
    # In the order given: the caller's order is the order of the SETs (innodb_io_capacity_max before a higher
    # innodb_io_capacity).
    for name, resolved in found.items():
        if resolved.problem is not None:
            continue
        resolved = resolved.resolved
        desired = wanted[name]
        variable = values.describe(resolved, identity, server_vars[resolved], table.get(resolved))
        kind, choices = variable.kind, variable.choices
        try:
            canonical = values.check(desired, kind, choices, variable.limits)
        except values.ValueError_ as e:
            errors.append((name, '%s: %s' % (name, e)))
            continue
        if not variable.settable:
            errors.append((name, '%s: %s' % (name, variable.reason)))
            continue
        rounding_here = rounding if resolved == 'innodb_buffer_pool_size' and rounding and rounding[0] else None
        if persist_only:
            # Only mysqld-auto.cnf changes: compared with what it holds; read-only variables are what it is for.
            before = persisted.get(resolved)
            same = values.equal(canonical, before, kind, choices, rounding_here, variable.limits)
            plan.append(dict(name=name, resolved=resolved, kind=kind, choices=choices, desired=desired,
                             canonical=canonical, before=before, change=not same, limits=variable.limits))
            continue
        if rounding_here:
            try:
                values.check_buffer_pool_runtime(canonical, *rounding_here)
            except values.ValueError_ as e:
                errors.append((name, '%s: %s' % (name, e)))
                continue
            # The server rounds up to a multiple of chunk size x instances: compare with what it will run.
            canonical = values.buffer_pool_effective(canonical, *rounding_here)
        before = server_vars[resolved]
        same = values.equal(canonical, before, kind, choices, rounding_here, variable.limits)
        if module.params['persist'] and not values.equal(canonical, persisted.get(resolved), kind, choices,
                                                         rounding_here, variable.limits):
            same = False
        if not same and variable.dynamic is False:
            errors.append((name, '%s is read-only at runtime on %s: write it to an option file and restart '
                                 'the server' % (resolved, values.server_text(identity))))
            continue
        plan.append(dict(name=name, resolved=resolved, kind=kind, choices=choices, desired=desired,
                         canonical=canonical, before=before, change=not same, limits=variable.limits))
    # One message per variable, in the order of the names.
    return plan, [text for _name, text in sorted(errors, key=lambda e: e[0])]


def masked(result_vars):
    """result_vars with a secret's values (wsrep_sst_auth, *_password, ...) masked by name, also the running value it
    replaced."""
    for name, item in result_vars.items():
        if masking.is_secret_variable(name) or masking.is_secret_variable(item['resolved_name']):
            item.update(dict((f, masking.MASK) for f in ('desired', 'before', 'after') if item[f] not in (None, '')),
                        masked=True)
    return result_vars


def fail_midway(module, msg, result_vars, identity, **extra):
    """Fail after the SETs before this one: they stay, the message names them (variables says what each did)."""
    done = [name for name, item in result_vars.items() if item['changed']]
    module.fail_json(msg='%s; set before it, and still set: %s' % (msg, ', '.join(done) or 'nothing'),
                     variables=masked(result_vars), server=identity.to_dict(), **extra)


def reset_persisted(module, conn, identity, before_diff):
    """RESET PERSIST each name of reset_persisted that is persisted (not in check mode); returns {name: the value that
    was persisted} and puts it in the diff's before as persisted.<name> (gone after)."""
    persisted = _persisted(conn) if module.params['reset_persisted'] else {}
    reset = {}
    for name in sorted(set(n.lower() for n in module.params['reset_persisted'])):
        if name not in persisted:
            continue
        if not module.check_mode:
            try:
                execute(conn, 'RESET PERSIST IF EXISTS %s' % quote_identifier(name))
            except Exception as e:  # PyMySQL raises its own error classes
                module.fail_json(msg='RESET PERSIST %s failed: %s' % (name, error_text(e)),
                                 reset_persisted=reset, server=identity.to_dict())
        reset[name] = persisted[name]
        before_diff['persisted.%s' % name] = persisted[name]
    return reset


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(
        variables=dict(type='dict', default={}),
        reset_persisted=dict(type='list', elements='str', default=[]),
        persist=dict(type='bool', default=False),
        persist_only=dict(type='bool', default=False),
        resize_timeout=dict(type='int', default=300),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           mutually_exclusive=[('persist', 'persist_only')])
    # The new value of a secret variable is masked wherever Ansible shows this task (messages, -vvv invocation).
    module.no_log_values.update(masking.secret_values(module.params['variables']))
    if module.params['resize_timeout'] < 0:
        module.fail_json(msg='resize_timeout must be 0 or more, got %d' % module.params['resize_timeout'])
    conn_utils.require_pymysql(module)

    wanted = module.params['variables']
    bad_names = [n for n in list(wanted) + module.params['reset_persisted'] if not is_plain_identifier(n)]
    if bad_names:
        module.fail_json(msg='variables: not a variable name: %s' % ', '.join(repr(n) for n in bad_names))

    conn = conn_utils.connect(module)
    try:
        identity = server_identity.identity_from_variables(global_variables(conn, server_identity.DETECT_VARIABLES))
        for option in ('persist', 'persist_only', 'reset_persisted'):
            if module.params[option] and not capability_facts.capability('set_persist', identity.flavor, identity.version):
                module.fail_json(msg='%s: SET PERSIST does not exist on %s %s; write the value to an option '
                                     'file instead' % (option, identity.flavor, flavors.format_version(identity.version)),
                                 server=identity.to_dict())
        plan, errors = _plan(module, conn, identity, wanted)
        if errors:
            module.fail_json(msg='nothing was changed: ' + '; '.join(errors), errors=errors,
                             server=identity.to_dict())

        result_vars, before_diff, after_diff = {}, {}, {}
        reset = reset_persisted(module, conn, identity, before_diff)
        verb = 'PERSIST' if module.params['persist'] else ('PERSIST_ONLY' if module.params['persist_only'] else 'GLOBAL')
        resize = None
        for item in plan:
            after = item['before']
            if item['change'] and not module.check_mode:
                watch = (item['resolved'] == 'innodb_buffer_pool_size' and verb != 'PERSIST_ONLY'
                         and module.params['resize_timeout'] > 0)
                status_before = _resize_status(conn) if watch else None
                sql = 'SET %s %s = %%s' % (verb, item['resolved'])
                try:
                    execute(conn, sql, (values.sql_value(item['canonical'], item['kind'],
                                                         item['choices']),))
                except Exception as e:  # PyMySQL raises its own error classes
                    fail_midway(module, 'SET %s %s failed: %s' % (verb, item['resolved'], error_text(e)),
                                result_vars, identity)
                if verb == 'PERSIST_ONLY':
                    after = _persisted(conn).get(item['resolved'])
                    result_vars[item['name']] = dict(resolved_name=item['resolved'], desired=item['desired'],
                                                     before=item['before'], after=after, changed=True)
                    before_diff[item['resolved']] = item['before']
                    after_diff[item['resolved']] = str(after)
                    continue
                if watch:
                    resize = wait_for_resize(conn, status_before, module.params['resize_timeout'])
                    resize.update({'from': item['before'], 'to': str(item['canonical'])})
                    if not resize['completed']:
                        fail_midway(module, 'the buffer pool resize to %s did not finish: %s' % (
                            item['canonical'], resize['reason']), result_vars, identity, resize=resize)
                after = global_variables(conn, [item['resolved']]).get(item['resolved'])
                # MariaDB shows a set wsrep_sst_auth as ******** (the read-back cannot compare a hidden secret).
                hidden = after == masking.MASK and masking.is_secret_variable(item['resolved'])
                if not hidden and not values.equal(item['canonical'], after, item['kind'], item['choices'],
                                                   limits=item['limits']):
                    fail_midway(
                        module, 'SET %s %s = %s was accepted but the server still runs with %s (for '
                                'innodb_adaptive_hash_index this happens during a buffer pool resize); '
                                'nothing claims success' % (verb, item['resolved'], item['canonical'], after),
                        result_vars, identity)
            elif item['change']:
                after = values.display(item['canonical'], item['kind'])
            result_vars[item['name']] = dict(resolved_name=item['resolved'], desired=item['desired'],
                                             before=item['before'], after=after, changed=item['change'])
            if item['change']:
                before_diff[item['resolved']] = item['before']
                after_diff[item['resolved']] = str(after)
        changed = bool(reset) or any(v['changed'] for v in result_vars.values())
        extra = dict(resize=resize) if resize else {}
        module.exit_json(changed=changed, variables=masked(result_vars), order=[item['name'] for item in plan],
                         server=identity.to_dict(), reset_persisted=masking.mask_by_name(reset),
                         diff=dict(before=masking.mask_by_name(before_diff), after=masking.mask_by_name(after_diff)),
                         **extra)
    finally:
        conn.close()


if __name__ == '__main__':
    main()
