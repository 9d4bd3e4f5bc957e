#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: memcached_config
short_description: Manage the InnoDB memcached plugin's configuration schema (containers, cache policy, options)
version_added: 1.0.0
description:
  - Loads the C(innodb_memcache) configuration schema from the server's own
    C(innodb_memcached_config.sql) when the schema does not exist yet, and never touches an
    existing schema's structure.
  - Of the stock file it runs only the schema, its three tables and the C(config_options)
    defaults; the demo container C(aaa), the demo C(cache_policy) row and C(test.demo_test) are
    loaded only with O(demo=true).
  - Validates every container against the real table before anything is written (table exists
    and is InnoDB, columns exist with types the plugin accepts, the unique index exists and is
    on the key column alone) and then inserts or updates the C(containers) rows.
  - Keeps exactly one row in C(cache_policies), because the plugin reads only the first row of that
    table (by policy name) for every container, so any other row would silently override or be ignored.
  - The plugin reads containers and the cache policy when it starts; C(plugin_reload_needed)
    says when a running plugin still works with the old definitions (a new container is read on
    first use and needs no reload).
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.login
attributes:
  check_mode:
    support: full
    description: Reports exactly the statements it would run, and the diff, without writing.
  diff_mode:
    support: full
    description: Shows containers, cache policies and config options before and after.
  platform:
    platforms: posix
    support: full
    description: Runs where PyMySQL is installed.
    details:
      - The module reads C(innodb_memcached_config.sql) on the host it runs on, which must be the
        database host (or O(sql_file) must point at a copy).
options:
  state:
    description:
      - V(present) loads the schema when missing and makes the containers, policy and options match.
      - V(absent) drops the C(innodb_memcache) schema (only the configuration, never the mapped tables).
    type: str
    choices: [present, absent]
    default: present
  sql_file:
    description:
      - Path of C(innodb_memcached_config.sql).
      - By default it is looked for under the server's C(@@basedir)/share, then in package directories
        such as C(/usr/share/mysql).
    type: path
  demo:
    description:
      - Also load the stock demo parts (container C(aaa), database C(test), table C(test.demo_test))
        when the schema is loaded.
    type: bool
    default: false
  containers:
    description:
      - Containers to define. Nothing is written when any of them is invalid.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Container name, used as C(@@name.key). At most 50 characters, without the table map delimiter.
        type: str
        required: true
      schema:
        description: Database of the mapped table.
        type: str
        required: true
      table:
        description: The mapped InnoDB table.
        type: str
        required: true
      key_column:
        description: Column holding the memcache key (CHAR, VARCHAR or integer).
        type: str
        required: true
      value_columns:
        description:
          - Columns returned as the value; several are joined by the C(separator) option.
        type: list
        elements: str
        required: true
      unique_index:
        description: Name of a unique index on the key column alone (V(PRIMARY) for the primary key).
        type: str
        required: true
      flags_column:
        description: Integer column for memcache flags.
        type: str
      cas_column:
        description: Integer column for CAS values.
        type: str
      expire_column:
        description: Integer column for expiry times.
        type: str
  exclusive:
    description:
      - Delete container rows that are not in O(containers).
    type: bool
    default: false
  cache_policy:
    description:
      - The one cache policy row. Values are C(innodb_only), C(cache_only), C(caching) or C(disabled).
      - With V(null) the policy table is left alone.
    type: dict
    suboptions:
      name:
        description: The policy name.
        type: str
        default: cache_policy
      get:
        description: Policy for C(get).
        type: str
        choices: [innodb_only, cache_only, caching, disabled]
        default: innodb_only
      set:
        description: Policy for C(set), C(add), C(replace), C(incr), C(decr), ...
        type: str
        choices: [innodb_only, cache_only, caching, disabled]
        default: disabled
      delete:
        description: Policy for C(delete).
        type: str
        choices: [innodb_only, cache_only, caching, disabled]
        default: disabled
      flush:
        description: Policy for C(flush_all). V(innodb_only) lets C(flush_all) empty the mapped tables.
        type: str
        choices: [innodb_only, cache_only, caching, disabled]
        default: disabled
  separator:
    description:
      - The C(separator) config option that joins several value columns. V(null) leaves it alone.
    type: str
  table_map_delimiter:
    description:
      - The C(table_map_delimiter) config option between container name and key. V(null) leaves it alone.
    type: str
  drop_schema:
    description:
      - With O(state=absent), really drop the schema. Without it, O(state=absent) fails,
        so a schema is never dropped by accident.
    type: bool
    default: false
notes:
  - Identifiers must be plain ([A-Za-z0-9_$], 1-64 characters); the plugin compares column and
    index names exactly, so they must be spelled as the server reports them.
seealso:
  - module: dbfleet.innodb.memcached_plugin
  - module: dbfleet.innodb.memcached_probe
'''

EXAMPLES = r'''
- name: Token lookups by key, read straight from InnoDB, no writes
  dbfleet.innodb.memcached_config:
    containers:
      - name: token
        schema: app
        table: token
        key_column: id
        value_columns: [token]
        unique_index: PRIMARY
    exclusive: true
    cache_policy:
      get: innodb_only
      set: disabled
      delete: disabled
      flush: disabled
  register: memcached_config

- name: Remove the configuration schema
  dbfleet.innodb.memcached_config:
    state: absent
    drop_schema: true
'''

RETURN = r'''
sql_file:
  description: The stock file used (or that would be used) to load the schema.
  returned: when the schema was or would be loaded
  type: str
  sample: /usr/share/mysql/innodb_memcached_config.sql
schema_loaded:
  description: Whether this run loaded (or in check mode would load) the schema.
  returned: always
  type: bool
containers:
  description: The container definitions after the run (in check mode, what they would be).
  returned: always
  type: list
  elements: dict
  sample: [{name: token, schema: app, table: token, key_column: id, value_columns: [token],
            unique_index: PRIMARY, flags_column: null, cas_column: null, expire_column: null}]
changes:
  description: One line per change made or (check mode) to be made.
  returned: always
  type: list
  elements: str
  sample: ['load schema innodb_memcache from /usr/share/mysql/innodb_memcached_config.sql', 'add container token']
plugin_reload_needed:
  description:
    - True when a change affects definitions a running plugin read at start (a changed or removed
      container, the cache policy, the config options). The plugin must be reinstalled or the server
      restarted for them to apply.
  returned: always
  type: bool
diff:
  description: Before and after of the configuration tables.
  returned: when diff mode is on
  type: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.connection import connect, pymysql
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import error_text, execute, global_variables, query_one
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache.config import (
    CONFIG_OPTIONS, apply_plan, plan_cache_policy, plan_config_options, plan_containers, policy_view, read_state,
    schema_exists, schema_tables, stock_state, table_metadata)
from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache.containers import (
    DELIMITER_MAX, check_container_against_table, check_container_specs, row_to_spec)
from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache.plugin import CONFIG_SCHEMA, CONFIG_TABLES, find_config_sql, plan_config_sql

CONTAINER_SPEC = dict(
    name=dict(type='str', required=True),
    schema=dict(type='str', required=True),
    table=dict(type='str', required=True),
    key_column=dict(type='str', required=True, no_log=False),
    value_columns=dict(type='list', elements='str', required=True),
    unique_index=dict(type='str', required=True),
    flags_column=dict(type='str'),
    cas_column=dict(type='str'),
    expire_column=dict(type='str'),
)
POLICIES = ['innodb_only', 'cache_only', 'caching', 'disabled']
POLICY_SPEC = dict(
    name=dict(type='str', default='cache_policy'),
    get=dict(type='str', choices=POLICIES, default='innodb_only'),
    set=dict(type='str', choices=POLICIES, default='disabled'),
    delete=dict(type='str', choices=POLICIES, default='disabled'),
    flush=dict(type='str', choices=POLICIES, default='disabled'),
)


def validate_input(module):
    p = module.params
    problems = []
    for opt in ('separator', 'table_map_delimiter'):
        value = p[opt]
        if value is not None and not 1 <= len(value) <= DELIMITER_MAX:
            problems.append('%s must be 1 to %d characters long, got %r' % (opt, DELIMITER_MAX, value))
    if p['table_map_delimiter'] is not None and any(c.isspace() for c in p['table_map_delimiter']):
        problems.append('table_map_delimiter must not contain whitespace: memcache keys cannot')
    if p['cache_policy'] is not None and not 1 <= len(p['cache_policy']['name'] or '') <= 40:
        problems.append('cache_policy.name must be 1 to 40 characters long')
    return problems


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(
        state=dict(type='str', choices=['present', 'absent'], default='present'),
        sql_file=dict(type='path'),
        demo=dict(type='bool', default=False),
        containers=dict(type='list', elements='dict', options=CONTAINER_SPEC, default=[]),
        exclusive=dict(type='bool', default=False),
        cache_policy=dict(type='dict', options=POLICY_SPEC),
        separator=dict(type='str'),
        table_map_delimiter=dict(type='str'),
        drop_schema=dict(type='bool', default=False),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    p = module.params
    result = dict(changed=False, schema_loaded=False, containers=[], changes=[], plugin_reload_needed=False)

    problems = validate_input(module)
    if problems:
        module.fail_json(msg='; '.join(problems), **result)

    conn = connect(module)
    try:
        if p['state'] == 'absent':
            absent(module, conn, result)
        else:
            present(module, conn, result)
    except pymysql.err.MySQLError as e:
        module.fail_json(msg='memcached configuration failed: %s' % error_text(e), **result)
    finally:
        conn.close()


def absent(module, conn, result):
    if not schema_exists(conn):
        module.exit_json(**result)
    if not module.params['drop_schema']:
        module.fail_json(msg='state=absent drops the %s schema; set drop_schema=true to confirm' % CONFIG_SCHEMA,
                         **result)
    containers, policies, options = read_state(conn) if schema_tables(conn) >= set(CONFIG_TABLES) else ([], [], {})
    result['changed'] = True
    result['changes'].append('drop schema %s' % CONFIG_SCHEMA)
    result['plugin_reload_needed'] = True
    if module._diff:
        result['diff'] = dict(before=dict(containers=[row_to_spec(r) for r in containers],
                                          cache_policies=[policy_view(r) for r in policies],
                                          config_options=options),
                              after={})
    if not module.check_mode:
        execute(conn, 'DROP DATABASE `%s`' % CONFIG_SCHEMA)
    module.exit_json(**result)


def _schema_plan(module, conn, result):
    """The statements that load the stock schema (innodb_memcached_config.sql, found under @@basedir or given as
    sql_file); fails the module naming the file when it cannot be found or read."""
    p = module.params
    sql_file = find_config_sql(query_one(conn, 'SELECT @@GLOBAL.basedir AS b')['b'], p['sql_file'])
    if sql_file is None:
        module.fail_json(msg='cannot find %s (looked under @@basedir/share and package directories); '
                             'set sql_file' % (p['sql_file'] or 'innodb_memcached_config.sql'), **result)
    result['sql_file'] = sql_file
    try:
        with open(sql_file) as handle:
            plan = plan_config_sql(handle.read(), demo=p['demo'])
    except (IOError, OSError) as e:
        module.fail_json(msg='cannot read %s: %s' % (sql_file, e), **result)
    except ValueError as e:
        module.fail_json(msg='%s: %s' % (sql_file, e), **result)
    result['schema_loaded'] = True
    result['changes'].append('load schema %s from %s%s'
                             % (CONFIG_SCHEMA, sql_file, ' (with the demo)' if p['demo'] else ''))
    return plan


def _container_problems(conn, specs, delimiter):
    """What is wrong with the containers asked for: their specs, then each against its table on the server."""
    problems = check_container_specs(specs, delimiter)
    if not problems:
        for spec in specs:
            table, columns, indexes = table_metadata(conn, spec['schema'], spec['table'])
            problems.extend(check_container_against_table(spec, table, columns, indexes))
    return problems


def present(module, conn, result):
    p = module.params
    identity = server_identity.identity_from_variables(global_variables(conn, server_identity.DETECT_VARIABLES))
    supported, reason = capability_facts.memcached_support(identity.flavor, identity.version)
    if not supported:
        module.fail_json(msg='%s (server %s %s): nothing to configure' % (
            reason, identity.flavor, identity.version_string), **result)

    specs = [dict((k, v) for k, v in spec.items()) for spec in p['containers']]
    exists = schema_exists(conn)
    tables = schema_tables(conn) if exists else set()
    if exists and not tables >= set(CONFIG_TABLES):
        module.fail_json(msg='schema %s exists but lacks the table(s) %s; it is left untouched: '
                             'repair or drop it first' % (CONFIG_SCHEMA, ', '.join(sorted(set(CONFIG_TABLES) - tables))),
                         **result)
    containers, policies, options = read_state(conn) if exists else ([], [], {})

    problems = _container_problems(conn, specs, p['table_map_delimiter'] or options.get('table_map_delimiter') or '.')
    if problems:
        module.fail_json(msg='invalid memcached containers, nothing changed: %s' % '; '.join(problems), **result)

    schema_plan = []
    if not exists:
        schema_plan = _schema_plan(module, conn, result)
        containers, policies, options = stock_state(p['demo'])

    before = dict(containers=[row_to_spec(r) for r in containers],
                  cache_policies=[policy_view(r) for r in policies], config_options=dict(options))
    statements, reload_needed = [], False
    container_plan = plan_containers(specs, containers, p['exclusive'])
    policy_plan = plan_cache_policy(p['cache_policy'], policies)
    option_plan = plan_config_options(dict((o, p[o]) for o in CONFIG_OPTIONS), options)
    for more, changes, _after, reload_here in (container_plan, policy_plan, option_plan):
        statements += more
        result['changes'] += changes
        reload_needed = reload_needed or reload_here
    after_rows = container_plan[2]

    result['containers'] = [row_to_spec(after_rows[n]) for n in sorted(after_rows)]
    result['changed'] = bool(result['changes'])
    result['plugin_reload_needed'] = bool(reload_needed and exists)
    if module._diff:
        result['diff'] = dict(before=before if exists else {},
                              after=dict(containers=result['containers'], cache_policies=policy_plan[2],
                                         config_options=option_plan[2]))
    if module.check_mode or not result['changed']:
        module.exit_json(**result)

    apply_plan(conn, schema_plan, statements)
    containers, policies, options = read_state(conn)
    result['containers'] = [row_to_spec(r) for r in containers]
    if module._diff:
        result['diff']['after'] = dict(containers=result['containers'],
                                       cache_policies=[policy_view(r) for r in policies], config_options=options)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
