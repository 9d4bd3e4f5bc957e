#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: global_variables
short_description: Set dynamic global variables of a MySQL, Percona Server or MariaDB server, compared by meaning
version_added: 0.1.0
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
  - After each change the module reads the value back. A SET that the server accepted but did not apply
    (it happens to C(innodb_adaptive_hash_index) during a buffer pool resize) fails the task.
  - Read-only (static) variables are refused, with a message that says to write them to an option file and restart.
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.pymysql
  - dbfleet.innodb.login
options:
  variables:
    description:
      - Variable name to desired value. A V(null) value leaves that variable alone.
    type: dict
    required: true
  persist:
    description:
      - Use C(SET PERSIST) instead of C(SET GLOBAL), so the value also survives a restart.
      - Only servers that have it (MySQL and Percona Server 8.0 and later); anywhere else the task fails
        before anything is changed.
      - A variable whose running value is right but which is not persisted with that value counts as a change.
    type: bool
    default: false
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
server:
  description: Flavor and version of the server.
  returned: always
  type: dict
  sample: {flavor: mysql, version: [8, 0, 33], version_string: 8.0.33}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils import connection as conn_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils import values


def _persisted(conn):
    rows = conn_utils.query(conn, 'SELECT VARIABLE_NAME, VARIABLE_VALUE FROM performance_schema.persisted_variables')
    return dict((r['VARIABLE_NAME'].lower(), r['VARIABLE_VALUE']) for r in rows)


def _plan(module, conn, identity, wanted):
    """Validate everything and work out the changes before touching the server.

    Names, kinds, ranges and settability are decided by values.resolve/describe/check, values compared
    by values.compare: the same answers dbfleet.innodb.verify gives for the same server."""
    server_vars = conn_utils.global_variables(conn)
    persisted = _persisted(conn) if module.params['persist'] else {}
    names = frozenset(server_vars)
    plan, errors, found = [], [], {}
    for name, desired in sorted(wanted.items()):
        if desired is None:
            continue
        found[name] = values.resolve(name, identity, names)
        if found[name].problem is not None:
            errors.append((name, '%s: %s' % (name, found[name].reason)))
    table, _reason = server_facts.variable_table(conn, identity, [f.resolved for f in found.values()
                                                                  if f.problem is None])
    rounding = None
    if flavors.capability('buffer_pool_chunk_rounding', identity.flavor, identity.version):
        rounding = (server_vars.get('innodb_buffer_pool_chunk_size'), server_vars.get('innodb_buffer_pool_instances'))
    for name, resolved in sorted(found.items()):
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


def main():
    argument_spec = conn_utils.login_argument_spec()
    argument_spec.update(
        variables=dict(type='dict', required=True),
        persist=dict(type='bool', default=False),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    conn_utils.require_pymysql(module)

    wanted = module.params['variables']
    bad_names = [n for n in wanted if not conn_utils.is_plain_identifier(n)]
    if bad_names:
        module.fail_json(msg='variables: not a variable name: %s' % ', '.join(repr(n) for n in bad_names))

    conn = conn_utils.connect(module)
    try:
        identity = flavors.identity_from_variables(conn_utils.global_variables(conn, flavors.DETECT_VARIABLES))
        if module.params['persist'] and not flavors.capability('set_persist', identity.flavor, identity.version):
            module.fail_json(msg='persist: SET PERSIST does not exist on %s %s; write the value to an option '
                                 'file instead' % (identity.flavor, flavors.format_version(identity.version)),
                             server=identity.to_dict())
        plan, errors = _plan(module, conn, identity, wanted)
        if errors:
            module.fail_json(msg='nothing was changed: ' + '; '.join(errors), errors=errors,
                             server=identity.to_dict())

        result_vars, before_diff, after_diff = {}, {}, {}
        verb = 'PERSIST' if module.params['persist'] else 'GLOBAL'
        for item in plan:
            after = item['before']
            if item['change'] and not module.check_mode:
                sql = 'SET %s %s = %%s' % (verb, item['resolved'])
                try:
                    conn_utils.execute(conn, sql, (values.sql_value(item['canonical'], item['kind'],
                                                                    item['choices']),))
                except Exception as e:  # PyMySQL raises its own error classes
                    module.fail_json(msg='SET %s %s failed: %s' % (verb, item['resolved'], conn_utils.error_text(e)),
                                     variables=result_vars, server=identity.to_dict())
                after = conn_utils.global_variables(conn, [item['resolved']]).get(item['resolved'])
                if not values.equal(item['canonical'], after, item['kind'], item['choices'], limits=item['limits']):
                    module.fail_json(
                        msg='SET %s %s = %s was accepted but the server still runs with %s (for '
                            'innodb_adaptive_hash_index this happens during a buffer pool resize); '
                            'nothing claims success' % (verb, item['resolved'], item['canonical'], after),
                        variables=result_vars, server=identity.to_dict())
            elif item['change']:
                after = values.display(item['canonical'], item['kind'])
            result_vars[item['name']] = dict(resolved_name=item['resolved'], desired=item['desired'],
                                             before=item['before'], after=after, changed=item['change'])
            if item['change']:
                before_diff[item['resolved']] = item['before']
                after_diff[item['resolved']] = str(after)
        changed = any(v['changed'] for v in result_vars.values())
        module.exit_json(changed=changed, variables=result_vars, server=identity.to_dict(),
                         diff=dict(before=before_diff, after=after_diff))
    finally:
        conn.close()


if __name__ == '__main__':
    main()
