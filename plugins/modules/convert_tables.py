#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: convert_tables
short_description: Convert named tables to InnoDB or MyRocks in an off-peak window, checking rows and checksums
version_added: 1.0.0
description:
  - Converts a list of tables with C(ALTER TABLE ... ENGINE=...), one table at a time, with the guard rails every
    guarded change of the collection shares (window, bounded lock waits, metadata locks, signals, per-server
    marker).
  - Converts TokuDB, MyISAM, Aria or
    MyRocks to InnoDB, or InnoDB (or TokuDB) to MyRocks (C(ROCKSDB)) where the server has MyRocks loaded.
  - "Before anything changes: checks every name (plain identifiers, no system schema), the target engine and the
    window, then on the server that it is no replica, that the target engine is loaded
    (C(information_schema.ENGINES) C(SUPPORT) V(YES) or V(DEFAULT)), that each table exists, is a base table in an
    engine that converts to the target (and, for MyRocks, has no foreign keys), and that no session holds a
    metadata lock on it. Any refusal names its input and converts nothing."
  - Then per table, checking the window again first, takes C(LOCK TABLES ... WRITE) with a short session
    C(lock_wait_timeout) and bounded retries, counts the rows and computes a content checksum, runs the C(ALTER),
    counts and checksums again and releases the lock (also on failure). Unequal rows or checksums fail the module
    at that table; the remaining tables are not attempted.
  - The content checksum hashes each row's values (CRC32 of the columns and their NULL flags, and of the same
    bytes reversed, summed over the rows), not C(CHECKSUM TABLE), which hashes the stored record image and can
    change when the C(ALTER) rebuilds the rows in another format (same rows, another value).
  - A table already in the target engine is left alone (not changed); a second run is idempotent.
  - With O(verify=true) it changes nothing and checks that each table is in the target engine with the rows and
    checksum given in O(expect); the playbook runs it on each replica after the conversion has replicated.
  - The playbook C(dbfleet.innodb.convert_tables) drives this module over a fleet, one host at a time.
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.pymysql
  - dbfleet.innodb.guarded
  - dbfleet.innodb.login
attributes:
  check_mode:
    support: full
    description: Checks everything and reports each table, its engine, the target and its size; converts nothing.
  diff_mode:
    support: none
    description: The per-table report (engine before and after, rows, checksums) says what changed.
options:
  tables:
    description:
      - Tables to convert, each as C(db.table) with plain identifiers (letters, digits, C(_), C($)).
      - System schemas are refused, as are wildcards, quotes, backticks and spaces.
      - Converted one at a time, in this order; after a failure the rest are not attempted.
    type: list
    elements: str
    required: true
  engine:
    description:
      - Target engine, V(InnoDB) or V(ROCKSDB) (also spelled V(MyRocks)), in any case.
    type: str
    default: InnoDB
  lock_wait_timeout:
    description:
      - Session C(lock_wait_timeout) in seconds for each attempt to lock a table, so a conversion waiting for a
        metadata lock gives up quickly instead of queueing the application behind it (1-3600).
    type: int
    default: 2
  retries:
    description: Further attempts to lock a table after a lock wait timeout or deadlock (0-10).
    type: int
    default: 3
  verify:
    description:
      - Change nothing; check that each table is in the target engine here and, with O(expect), has those rows
        and that checksum. Allowed on replicas (the playbook's check after the conversion replicated).
    type: bool
    default: false
  follow:
    description:
      - On a replica of a server being converted, change nothing and check that each table exists here in an engine
        that converts to the target, and that the target engine is loaded (the C(ALTER) arrives by replication).
        Refused on a server that is no replica.
    type: bool
    default: false
  expect:
    description:
      - With O(verify), C(db.table) -> C({rows, checksum}) as RV(tables) reported them after the conversion on the
        source.
    type: dict
    default: {}
  state_dir:
    description:
      - Private directory (created 0700) for the per-server marker file on the host the module runs on. The marker
        records the table being converted and its rows and checksum before the C(ALTER), with the server's identity
        (server UUID, start time) and the session's (id, user, client address, start).
      - After a run killed outright (C(SIGKILL)) during an C(ALTER), the next run kills that session only when it
        is still the same one, and checks that table's rows and checksum against the recorded ones when it is in
        the target engine already, instead of skipping it as done.
    type: path
    default: ~/.dbfleet/convert_tables
  restore_timeout:
    description: Seconds to keep trying to reconnect after a signal, to kill this run's session (1-3600).
    type: int
    default: 60
notes:
  - The table is locked for writes and reads from the first checksum until after the second (C(LOCK TABLES ...
    WRITE)), so the two checksums see the same rows; the copying C(ALTER) blocks writes for its whole duration
    anyway. Each checksum reads the whole table once.
  - A replica is refused (an C(ALTER) there would be an errant transaction); convert on its primary and let the
    C(ALTER) replicate, as the playbook does.
seealso:
  - module: dbfleet.innodb.drop_tables
  - module: dbfleet.innodb.storage_engines
  - name: docs/convert_tables.md
    description: The runbook, what is refused and why, and examples.
    link: https://example.invalid/dbfleet/innodb/docs/convert_tables.md
'''

EXAMPLES = r'''
- name: Preview (check mode lists table, engine, target and size)
  dbfleet.innodb.convert_tables:
    tables: [shop.orders_2019, shop.sessions]
    engine: InnoDB
  check_mode: true

- name: Convert two MyISAM tables in the night window, Berlin time
  dbfleet.innodb.convert_tables:
    tables: [shop.orders_2019, shop.sessions]
    engine: InnoDB
    window: "02:00-05:00"
    timezone: Europe/Berlin
  register: converted

- name: On a replica, after the ALTER replicated, check engine, rows and checksum
  dbfleet.innodb.convert_tables:
    tables: [shop.orders_2019]
    engine: InnoDB
    verify: true
    expect:
      shop.orders_2019: "{{ converted.tables[0].after }}"
'''

RETURN = r'''
engine:
  description: The target engine.
  returned: always
  type: str
  sample: InnoDB
converted:
  description: Tables converted by this run, as C(db.table).
  returned: always
  type: list
  elements: str
  sample: [shop.orders_2019]
tables:
  description: One entry per table with what was found and what happened.
  returned: always
  type: list
  elements: dict
  sample:
    - name: shop.orders_2019
      schema: shop
      table: orders_2019
      exists: true
      engine: MyISAM
      to_engine: InnoDB
      engine_after: InnoDB
      action: convert
      reason: MyISAM -> InnoDB
      rows_estimate: 125000
      size_bytes: 40265318
      size: 38.4 MiB
      result: converted
      attempts: 1
      seconds: 2.3121
      before: {rows: 125000, checksum: 9f1c2e4a0b7d3c5e}
      after: {rows: 125000, checksum: 9f1c2e4a0b7d3c5e}
plan:
  description: What the run does (or, in check mode, would do), per table.
  returned: always
  type: list
  elements: str
  sample:
    - "shop.orders_2019: MyISAM -> InnoDB (38.4 MiB, ~125000 rows): LOCK TABLES WRITE (up to 4 attempts), ..."
steps:
  description: Each step with its duration in seconds and whether it worked.
  returned: always
  type: list
  elements: dict
blockers:
  description: Sessions found holding metadata locks on the tables (the module refuses then).
  returned: always
  type: list
  elements: dict
engines_loaded:
  description: The engines the server has loaded (C(SUPPORT) V(YES) or V(DEFAULT)), as the collection spells them.
  returned: when connected
  type: list
  elements: str
  sample: [ARIA, CSV, INNODB, MEMORY, MYISAM]
role:
  description: The server's replication role as read from it (primary or replica).
  returned: when connected
  type: str
gtid_position:
  description:
    - The server's GTID position after the last conversion (C(gtid_executed) or C(gtid_binlog_pos)); replicas
      have applied the conversion once they reach it. Null without GTIDs.
  returned: when connected
  type: str
window:
  description: Where the run stood relative to O(window); null without a window.
  returned: always
  type: dict
replica_hosts:
  description: The replicas registered with this server; null when they cannot be listed.
  returned: when connected
  type: list
  elements: dict
server:
  description: Flavor and version of the server.
  returned: when connected
  type: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.connection import require_pymysql
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.convert_tables import (
    CONVERT_OPTIONS, Conversion, ConvertError, parse_tables, target_engine)
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.module import (
    module_argument_spec, module_ranges, module_window_gate, run_for_module)
from ansible_collections.dbfleet.innodb.plugins.module_utils.option_specs import range_problems


def argument_spec():
    return module_argument_spec(login_argument_spec(), Conversion, CONVERT_OPTIONS)


RANGES = module_ranges(CONVERT_OPTIONS)


def pure_checks(module):
    """Everything that needs no server. Returns the window status (or None); fails the module."""
    p = module.params
    nothing = dict(converted=[], changed=False)
    problems = range_problems(p, RANGES)
    for check, value in ((target_engine, p['engine']), (parse_tables, p['tables'])):
        try:
            check(value)
        except ConvertError as e:
            problems.append(str(e))
    if problems:
        module.fail_json(msg='refusing to convert anything: ' + '; '.join(problems), **nothing)
    return module_window_gate(module, nothing, applies=not (p['verify'] or p['follow']))


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    require_pymysql(module)
    conv, result = run_for_module(module, Conversion, pure_checks(module))
    if module.params['verify']:
        msg = 'verified %s' % ', '.join(conv.verified)
    elif module.params['follow']:
        msg = 'replica: ' + '; '.join(conv.plan)
    elif module.check_mode:
        msg = 'check mode: ' + '; '.join(conv.plan)
    else:
        msg = 'converted %s to %s' % (', '.join(result['converted']) or 'nothing', result['engine'])
    module.exit_json(msg=msg, **result)


if __name__ == '__main__':
    main()
