#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: storage_engines
short_description: Tables by storage engine, the engines a server has loaded, and the upgrade blockers for a target version
version_added: 1.0.0
description:
  - Reads C(INFORMATION_SCHEMA.ENGINES) and C(INFORMATION_SCHEMA.TABLES) and reports, per engine, the number of
    tables with their row estimates and sizes (data and index), which engines the server has loaded, and where
    each engine in use is deprecated or gone on the server's own flavor and version.
  - Given an upgrade target (O(target_version), with O(target_flavor) when it is another flavor), it lists the
    tables whose engine the target does not ship - for example TokuDB tables before Percona Server 8.0.28 or
    MariaDB 10.5, or Aria and MyRocks tables before a move from MariaDB to MySQL - each with a clear reason
    and the engine to convert to. Such an upgrade otherwise fails late, on the host.
  - What each flavor and version ships is data in the collection's version table (C(engine_facts.STORAGE_ENGINES));
    the sources are listed in the collection's C(docs/innodb-facts.md).
  - The schemas of the server itself (C(mysql), C(information_schema), C(performance_schema), C(sys)) are left
    out unless O(include_system_schemas=true) or named in O(schemas); an upgrade converts them itself.
  - On MySQL 8.0+ the statistics are read live (C(information_schema_stats_expiry=0) for this session only).
  - Read-only; never changes anything.
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.read_only
  - dbfleet.innodb.attributes.pymysql
  - dbfleet.innodb.login
options:
  target_version:
    description:
      - The version to check the tables against, such as V(8.4.0) or V(11.8) (a missing patch level is 0).
      - Without it no blockers are computed (RV(storage_engines.blockers) is empty).
    type: str
  target_flavor:
    description:
      - The flavor of the target. Defaults to the server's own flavor.
    type: str
    choices: [mysql, percona, mariadb, aurora-mysql]
  schemas:
    description:
      - Only these schemas. A schema the server does not have fails the task with its name.
    type: list
    elements: str
  include_system_schemas:
    description:
      - Also report the tables of the server's own schemas (never blockers of interest; upgrades convert them).
    type: bool
    default: false
  engines:
    description:
      - Engine names whose lifecycle on this server to report in RV(storage_engines.lifecycle) even when the server
        has not loaded them and no table uses them (for example V(ROCKSDB) before loading MyRocks). Any spelling.
      - A name the collection's version table does not know fails the task with that name.
    type: list
    elements: str
  list_tables:
    description:
      - Return every table in RV(storage_engines.tables) (one entry per table; large on big servers).
    type: bool
    default: false
notes:
  - Sizes and row counts are the server's estimates (C(TABLE_ROWS), C(DATA_LENGTH), C(INDEX_LENGTH)); for InnoDB
    and MyRocks the row count is a sampled estimate.
  - An engine that the target ships as a separate plugin package (MyRocks as C(mariadb-plugin-rocksdb) or
    C(percona-server-rocksdb)) is no blocker, but RV(storage_engines.notes) says it has to be installed first.
seealso:
  - module: dbfleet.innodb.server_facts
  - module: dbfleet.innodb.verify
'''

EXAMPLES = r'''
- name: Tables by engine and the engines each server has loaded
  dbfleet.innodb.storage_engines:
  register: engines

- name: Which tables stop a move from MariaDB 11.8 to MySQL 8.4
  dbfleet.innodb.storage_engines:
    target_flavor: mysql
    target_version: "8.4.0"
  register: engines

- name: Stop before the upgrade when any table would be stranded
  ansible.builtin.assert:
    that: engines.storage_engines.blockers | length == 0
    fail_msg: "{{ engines.storage_engines.blockers | map(attribute='reason') | list }}"

- name: TokuDB tables before Percona Server 8.0.28, in two schemas
  dbfleet.innodb.storage_engines:
    target_version: "8.0.28"
    schemas: [shop, logs]
'''

RETURN = r'''
storage_engines:
  description: What the server holds, by storage engine.
  returned: success
  type: dict
  contains:
    server:
      description: The server's flavor and version.
      type: dict
      sample: {flavor: mariadb, version: 11.8.3}
    engines:
      description: Every engine the server knows (C(INFORMATION_SCHEMA.ENGINES)); C(loaded) is true for
        C(SUPPORT) V(YES) or V(DEFAULT).
      type: list
      elements: dict
      sample: [{engine: Aria, support: 'YES', loaded: true, default: false, transactions: false,
                comment: Crash-safe tables with MyISAM heritage}]
    engines_loaded:
      description: Names of the engines the server has loaded.
      type: list
      elements: str
      sample: [Aria, CSV, InnoDB, MEMORY, MRG_MyISAM, MyISAM, PERFORMANCE_SCHEMA, SEQUENCE]
    default_engine:
      description: The engine new tables get (C(SUPPORT=DEFAULT)).
      type: str
      sample: InnoDB
    by_engine:
      description: Per engine in use, the number of tables, the summed row estimates and sizes in bytes.
        A table the server reports without an engine is counted under the empty name.
      type: dict
      sample: {InnoDB: {tables: 12, rows_estimate: 1048576, data_bytes: 79691776, index_bytes: 16384,
               total_bytes: 79708160}, Aria: {tables: 1, rows_estimate: 3, data_bytes: 8192, index_bytes: 8192,
               total_bytes: 16384}}
    engines_in_use:
      description: Engines of the reported tables.
      type: list
      elements: str
      sample: [Aria, InnoDB]
    lifecycle:
      description: For each engine in use or loaded, its status on the server's own flavor and version
        (V(available), V(deprecated), V(removed), V(not_yet), V(never), V(unknown)), why, and the plugin library
        when the engine is a plugin there (null when it is built in). Also the engines named in O(engines), under
        the name given there in upper case.
      type: dict
      sample: {TokuDB: {status: deprecated, plugin: ha_tokudb,
               reason: "percona deprecated the TokuDB engine in 8.0.13 and removed in 8.0.28"}}
    table_count:
      description: Number of tables reported.
      type: int
      sample: 13
    tables:
      description: Every table with its engine, row estimate and sizes (only with O(list_tables=true)).
      type: list
      elements: dict
      returned: when O(list_tables=true)
    target:
      description: The upgrade target checked, or null.
      type: dict
      sample: {flavor: mysql, version: 8.4.0}
    blockers:
      description: Tables whose engine the target does not ship; empty without a target or when there are none.
      type: list
      elements: dict
      sample:
        - schema: shop
          table: sessions
          engine: Aria
          status: never
          rows_estimate: 3
          total_bytes: 16384
          reason: "shop.sessions uses Aria, which mysql 8.4.0 does not have: mysql never shipped the Aria engine
            (it exists in mariadb only); convert it first (ALTER TABLE ... ENGINE=InnoDB)"
    notes:
      description: Advice that is not a blocker (a deprecated engine in use; a plugin engine the target must load).
      type: list
      elements: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection as conn_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import describe_target
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import error_text, execute, global_variables, query
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils import storage_engines


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(
        target_version=dict(type='str'),
        target_flavor=dict(type='str', choices=list(flavors.FLAVORS)),
        schemas=dict(type='list', elements='str'),
        engines=dict(type='list', elements='str'),
        include_system_schemas=dict(type='bool', default=False),
        list_tables=dict(type='bool', default=False),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    try:
        asked = storage_engines.check_engine_names(params['engines'])
    except ValueError as e:
        module.fail_json(msg=str(e))
    conn = conn_utils.connect(module)
    try:
        identity = server_identity.identity_from_variables(global_variables(conn, server_identity.DETECT_VARIABLES))
        try:
            target = storage_engines.parse_target(params['target_flavor'], params['target_version'], identity)
        except ValueError as e:
            module.fail_json(msg=str(e))
        missing = storage_engines.missing_schemas(conn, query, params['schemas'])
        if missing:
            module.fail_json(msg='schemas: %s does not exist on %s' % (
                ', '.join(missing), describe_target(params)))
        if flavors.variable_facts('information_schema_stats_expiry', identity.flavor, identity.version):
            # Session only: the sizes are read live instead of from the statistics cache.
            execute(conn, 'SET SESSION information_schema_stats_expiry = 0')
        engines = storage_engines.read_engines(conn, query)
        tables = storage_engines.read_tables(conn, query, params['schemas'],
                                             params['include_system_schemas'])
    except conn_utils.pymysql.err.MySQLError as e:
        module.fail_json(msg='reading the storage engines of %s failed: %s'
                         % (describe_target(params), error_text(e)))
    except ValueError as e:
        module.fail_json(msg='cannot identify the server at %s: %s' % (describe_target(params), e))
    finally:
        conn.close()
    report = storage_engines.engine_report(identity, engines, tables, target, params['list_tables'], asked)
    module.exit_json(changed=False, storage_engines=report)


if __name__ == '__main__':
    main()
