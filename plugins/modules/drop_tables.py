#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: drop_tables
short_description: Drop InnoDB tables in an off-peak window, handling the adaptive hash index
version_added: 1.0.0
description:
  - Drops (or moves to a holding schema) a list of tables as one guarded sequence, so that a drop
    never freezes the application and the adaptive hash index (AHI) always ends as it began.
  - "Before anything changes: checks the window, the confirmation and every name (plain identifiers
    only, no system schema), then on the server that each table exists and is a base table, is not
    mapped by the InnoDB memcached plugin, is not referenced by a foreign key from a table that
    stays, and that no session holds a metadata lock on it (where the server can tell)."
  - Then, in one C(try/finally), switches AHI off only where the flavor and version need it and AHI
    is on (O(ahi_strategy=auto) reads the per-version decision from the collection's flavor data,
    which the C(bench/drop_tables) benchmark set), runs each C(DROP TABLE) with a short session
    C(lock_wait_timeout) and bounded retries, and puts AHI back to what it was, also when a drop
    fails, times out, or the module gets SIGTERM, SIGINT or SIGHUP. After a signal the interrupted
    session is killed first, so a C(DROP) still waiting for a lock cannot run later.
  - With O(window), the window is checked again before each table and before each retry; when it has
    closed, the remaining tables are not attempted and the module fails saying so (AHI goes back).
  - A marker file per server in O(state_dir) records a guarded part under way (what AHI and
    C(super_read_only) were and what the run set, the tables done, the process, the server's identity
    (server UUID, start time) and the session's (id, user, client address, start)). When a run is killed
    outright (C(SIGKILL)) the next run on that server checks before it acts - it kills the old session
    only when it is still the same one, puts C(super_read_only) back only on a server that is still a
    replica, and AHI only when nobody changed it since, and otherwise reports what it found and leaves
    it - and counts the tables the old run dropped as done; a follower
    of another run that is still waiting is cancelled through its cancel file; a drop of another run
    still under way makes this run refuse. After a complete run the marker records what was dropped,
    so running the same drop again has nothing left to do.
  - With O(follow=true) it is the replica side of a replicated drop. It switches AHI off where needed,
    waits until replication has applied the drop (the tables are gone here), and puts AHI back.
    It never drops anything itself. Run it asynchronously before the primary drops.
  - The playbook C(dbfleet.innodb.drop_tables) drives this module over a fleet.
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.guarded
  - dbfleet.innodb.login
attributes:
  check_mode:
    support: full
    description: Checks everything and reports the plan (each statement it would run); drops nothing.
  diff_mode:
    support: none
    description: Dropping has no before/after text worth a diff; the plan and the per-table report say it all.
  platform:
    platforms: posix
    support: full
    description: >-
      Runs wherever PyMySQL can reach the server (the follower's cancel file and the marker are on the host
      it runs on).
options:
  tables:
    description:
      - Tables to drop, each as C(db.table) with plain identifiers (letters, digits, C(_), C($)).
      - Schemas C(mysql), C(sys), C(information_schema), C(performance_schema) and C(innodb_memcache)
        are refused, as are wildcards, quotes, backticks and spaces.
      - Dropped one at a time, in this order; after a failure the rest are not attempted.
    type: list
    elements: str
    required: true
  confirm:
    description:
      - Must be V(true) for anything to be dropped. Without it a real run fails before connecting;
        check mode reports the plan and that a real run would refuse.
      - Not needed with O(follow=true).
    type: bool
    default: false
  ahi_strategy:
    description:
      - V(auto) switches AHI off around the drops where the collection's data for this flavor and
        version says so (C(drop_table_ahi_strategy) in C(module_utils/versions/capability_facts.py)).
      - V(toggle) always switches it off first (when it is on) and back on after.
      - V(keep) never touches it.
    type: str
    choices: [auto, toggle, keep]
    default: auto
  lock_wait_timeout:
    description:
      - Session C(lock_wait_timeout) in seconds for each attempt, so a drop waiting for a metadata
        lock gives up quickly instead of queueing the application behind it.
    type: int
    default: 2
  retries:
    description: Further attempts after a lock wait timeout or deadlock (0-10).
    type: int
    default: 3
  rename_first:
    description:
      - Move each table to O(holding_schema) with C(RENAME TABLE) instead of dropping it, for a
        later purge (drop the holding tables with this module in a later window).
      - The new name is C(<db>__<table>__<UTC timestamp>), shortened with a hash above 64 characters.
    type: bool
    default: false
  holding_schema:
    description: Schema that O(rename_first) moves tables to; created when missing.
    type: str
    default: dbfleet_holding
  disable_binlog:
    description:
      - Set C(sql_log_bin=0) for this module's session only, so the drops are not written to the
        binary log and do not replicate (rolling drops, host by host). Needs the privilege to set it
        (SUPER or SYSTEM_VARIABLES_ADMIN / SESSION_VARIABLES_ADMIN on MySQL 8).
    type: bool
    default: false
  lift_super_read_only:
    description:
      - When C(super_read_only) is ON (a replica), switch it OFF for the drops and back ON after,
        in the same C(finally) as AHI. Without it such a server is refused before anything changes.
      - Only together with O(disable_binlog=true), else refused before connecting, because a drop on a replica
        with the binary log on would be a transaction of its own there (an errant GTID) and stop
        replication with error 1051 when the source's drop arrives.
    type: bool
    default: false
  follow:
    description:
      - Replica side of a replicated drop, see the description. Tables missing here are not an error.
    type: bool
    default: false
  follow_timeout:
    description:
      - With O(follow), seconds to wait for replication to apply the drop before putting AHI back
        and failing. Keep it below the C(async) time of the task.
    type: int
    default: 600
  cancel_file:
    description:
      - With O(follow), stop waiting (and put AHI back) as soon as this file exists. The playbook
        creates it when the drop on the primary failed.
      - Its directory must be private (owned by this user, writable by no one else); a predictable
        name in C(/tmp) is refused. The playbook makes a directory per run with M(ansible.builtin.tempfile).
    type: path
  run_id:
    description:
      - Identifies one run of the playbook across its tasks, so that the readiness probe does not take
        this run's own follower for an interrupted one. Any text; the playbook sets it.
    type: str
  file_removal:
    description:
      - V(immediate) lets C(DROP TABLE) remove the tables' files inside the statement (the server's own way).
      - V(staged) gives every file a table owns (its C(.ibd), each partition's) a second name (a hard link) in
        O(staging_dir) just before its C(DROP TABLE), so the statement removes one name only; after the drops
        the files are truncated in steps of at most O(shrink_step_mb), each kept within O(shrink_step_seconds),
        with O(shrink_pause) between steps, within O(shrink_max_seconds), and removed. The files are read from the server's InnoDB catalog; a table in the
        system or a general tablespace, or not InnoDB, is dropped as it is and the result says so (C(left_alone)
        of RV(file_removal)). Nothing is linked for a drop that is refused or not attempted; the links of a table
        whose DROP failed are removed at once (a file is only ever truncated when the link is its last name).
      - Needs the module to run on the database host as a user that can read the datadir and own files there
        (C(become)); with O(follow=true) each replica or cluster member frees its own copy.
      - A manifest in O(staging_dir) lists each run's links; the next staged run (or O(finish_staged_only))
        finishes what an interrupted run left, checking each link's device and inode.
    type: str
    choices: [immediate, staged]
    default: immediate
  staging_dir:
    description:
      - With O(file_removal=staged), the directory of the links. It must be on the datadir's filesystem, owned
        by the datadir's owner (the server's user) and closed to others (0700 or 0750); created 0700 when missing.
      - Default C(dbfleet-staged-drop) beside the datadir (a directory inside the datadir would be a database to
        MariaDB); give a directory on the datadir's filesystem when the datadir is a mount point of its own.
    type: path
  server_root:
    description:
      - Where the server's filesystem root is seen from the host the module runs on (a chroot or a
        container's root); the datadir and the catalog's paths are read below it.
    type: path
    default: /
  shrink_step_mb:
    description: With O(file_removal=staged), MiB each truncate step frees (1-1048576).
    type: int
    default: 256
  shrink_pause:
    description:
      - With O(file_removal=staged), seconds between two truncate steps of O(shrink_step_mb) (0-3600); after a
        smaller step (see O(shrink_step_seconds)) the pause is in proportion to what the step freed, so the pace
        (and the schedule's estimate) stays O(shrink_step_mb) per O(shrink_pause).
    type: float
    default: 0.5
  shrink_step_seconds:
    description:
      - With O(file_removal=staged), the time one truncate step may take (0.001-60 s). Each step is timed (the
        filesystem freeing its extents, and trimming them when mounted with C(discard)); a step that took longer
        halves the next one (down to 1 MiB), one that took under a quarter of it doubles the next one (up to
        O(shrink_step_mb)); the first step is 16 MiB (or O(shrink_step_mb) when smaller). C(shrink_steps) of
        RV(file_removal) says what the steps took.
    type: float
    default: 0.05
  shrink_max_seconds:
    description:
      - With O(file_removal=staged), the upper bound of the whole shrinking in seconds (1-604800). A schedule
        (steps times pause) longer than the bound is refused before anything changes; when truncating takes
        longer than planned, what is left when the bound is reached is removed at once.
    type: int
    default: 3600
  free_space_margin_mb:
    description:
      - With O(file_removal=staged), the drop is refused when the staging directory's filesystem has less free
        space than this (MiB). The links hold the tables' space until they are gone
        (C(space.held_bytes) of RV(file_removal), reported before the drop).
    type: int
    default: 1024
  finish_staged_only:
    description:
      - Only finish what interrupted staged runs left in O(staging_dir) (by their manifests); drops nothing,
        O(tables) may be empty.
    type: bool
    default: false
  state_dir:
    description:
      - Private directory (created 0700) for the per-server marker file on the host the module runs on.
    type: path
    default: ~/.dbfleet/drop_tables
  restore_timeout:
    description:
      - Seconds to keep trying to put AHI and C(super_read_only) back (reconnecting when the
        connection was lost) before the module fails loudly.
    type: int
    default: 60
notes:
  - The module opens one connection; the drops, C(lock_wait_timeout) and C(sql_log_bin) are session
    settings of that connection only. AHI and C(super_read_only) are global and always restored.
  - A C(SIGKILL) cannot be caught; Ansible's C(async) sends one when the async time runs out, so
    keep O(follow_timeout) and O(lock_wait_timeout) times O(retries) well below it.
  - Metadata locks are listed from C(performance_schema.metadata_locks) (MySQL, when the C(mdl)
    instrument is enabled) or C(information_schema.METADATA_LOCK_INFO) (MariaDB, with the
    C(metadata_lock_info) plugin); elsewhere the module warns and relies on the short lock wait.
seealso:
  - name: docs/drop_tables.md
    description: The playbook, the measured per-version AHI strategy, and examples.
    link: https://example.invalid/dbfleet/innodb/docs/drop_tables.md
'''

EXAMPLES = r'''
- name: Drop two old tables in the night window, Berlin time
  dbfleet.innodb.drop_tables:
    tables: [shop.orders_2019, shop.orders_2020]
    window: "02:00-05:00"
    timezone: Europe/Berlin
    confirm: true
    login_unix_socket: /run/mysqld/mysqld.sock

- name: Preview (check mode prints every statement it would run)
  dbfleet.innodb.drop_tables:
    tables: [shop.orders_2019]
    confirm: true
  check_mode: true

- name: Move to a holding schema now, purge later
  dbfleet.innodb.drop_tables:
    tables: [shop.orders_2019]
    rename_first: true
    holding_schema: dbfleet_holding
    confirm: true

- name: On one host only, without binary logging (rolling drop)
  dbfleet.innodb.drop_tables:
    tables: [shop.orders_2019]
    disable_binlog: true
    lift_super_read_only: true
    confirm: true
'''

RETURN = r'''
dropped:
  description: Tables dropped (or renamed with O(rename_first)), as C(db.table).
  returned: always
  type: list
  elements: str
  sample: [shop.orders_2019]
renamed:
  description: With O(rename_first), each table and its new name.
  returned: always
  type: dict
  sample: {shop.orders_2019: dbfleet_holding.shop__orders_2019__20240310021500}
sizes:
  description:
    - Table name -> its size as the server estimates it (null for a table that is not there), for reports; given
      for every table, also on a host that dropped nothing.
  returned: always
  type: dict
  sample: {shop.orders_2019: 1.2 GiB, shop.orders_2018: null}
tables:
  description:
    - One entry per table with what was found and what happened.
    - V(size_bytes) / V(size) is the tablespace file's size where the server reports it (V(size_source) says
      C(tablespace file) or C(table statistics)); V(stats_bytes) is DATA_LENGTH + INDEX_LENGTH of
      information_schema.TABLES, which lags behind until the statistics refresh.
    - V(result) of a follower is C(dropped_by_replication) on a replica and C(dropped_by_cluster) on a Galera or
      Group Replication member whose cluster got the drop from another member.
  returned: always
  type: list
  elements: dict
  sample:
    - name: shop.orders_2019
      schema: shop
      table: orders_2019
      exists: true
      engine: InnoDB
      rows_estimate: 1250000
      stats_bytes: 402653184
      size_bytes: 415236096
      size: 396.0 MiB
      size_source: tablespace file
      file_bytes: 415236096
      file_size: 396.0 MiB
      allocated_bytes: 415236096
      result: dropped
      attempts: 1
      seconds: 0.0412
ahi:
  description:
    - AHI before and after, the strategy and why, whether it was switched off, and for how long.
  returned: always
  type: dict
  sample:
    requested: auto
    strategy: toggle
    before: 'ON'
    after: 'ON'
    toggled: true
    off_seconds: 0.0921
    reason: "AHI is ON and versions/capability_facts.py drop_table_ahi_strategy for mysql 5.7.22 is toggle: ..."
steps:
  description: Each step with its duration in seconds and whether it worked.
  returned: always
  type: list
  elements: dict
  sample:
    - {step: switch AHI OFF, seconds: 0.0132, ok: true, detail: reads OFF}
    - {step: drop attempt 1, target: shop.orders_2019, seconds: 0.0412, ok: true}
    - {step: restore AHI ON, seconds: 0.0021, ok: true}
plan:
  description: The statements the run makes (or, in check mode, would make), in order.
  returned: always
  type: list
  elements: str
blockers:
  description: Sessions found holding metadata locks on the tables (the module refuses then).
  returned: always
  type: list
  elements: dict
binlog_disabled:
  description: Whether C(sql_log_bin=0) was in effect for the drops.
  returned: always
  type: bool
super_read_only:
  description: C(super_read_only) before and after, and whether it was lifted; null where none.
  returned: always
  type: dict
interrupted_run:
  description:
    - What an earlier run on this server left behind and what this run did about it (outcome
      C(undone), C(left) when nothing of it was still the earlier run's, C(cancelled), or in check mode
      C(would_undo), C(would_cancel)); null when nothing.
    - C(findings) says what was checked before acting and found otherwise (a session id that belongs to
      another session now, a server promoted since, AHI changed since).
  returned: always
  type: dict
  sample:
    found: drop
    pid: 4242
    started: '20261123200102'
    tables: [shop.orders_2019]
    done: []
    ahi_before: 'ON'
    process_alive: false
    outcome: undone
    actions: ["SET GLOBAL innodb_adaptive_hash_index = ON (the interrupted run found it ON, it is OFF)"]
    findings: ["session 812 is gone"]
follow:
  description: With O(follow), the outcome (applied, already_absent, cancelled, timeout, interrupted)
    and the seconds waited.
  returned: always
  type: dict
window:
  description: Where the run stood relative to O(window); null without a window.
  returned: always
  type: dict
replica_hosts:
  description:
    - The replicas registered with this server (C(SHOW REPLICAS) / C(SHOW SLAVE HOSTS)); the playbook
      refuses a run that leaves out a replica of a host it drops on. Null when they cannot be listed.
  returned: when connected
  type: list
  elements: dict
  sample: [{server_id: 2, host: 10.0.0.12, port: 3306, uuid: 3e11fa47-71ca-11e1-9e33-c80aa9429562}]
file_removal:
  description:
    - How the files were (or, in check mode, would be) removed. C(mode) is V(immediate) or V(staged); with
      V(staged) also C(staging_dir), C(files) (each file with its C(table), C(partition), C(source), C(link),
      C(bytes), C(state) (planned, linked, dropped, removed or released)), C(left_alone) (tables with no file of
      their own, and why), C(space) (C(free_bytes), and C(held_bytes), what the links hold until they are gone,
      C(margin_bytes)), C(schedule) (C(steps), C(seconds), C(bound), C(fits), C(text)), C(leftovers) (what
      earlier runs left and what was done about it), C(removed), C(released), C(shrink_seconds) and
      C(shrink_steps) (C(steps), C(truncate_seconds), C(max_step_seconds), C(step_bound_seconds), C(over_bound),
      C(smallest_step_bytes), what the truncate steps took; see O(shrink_step_seconds)).
  returned: always
  type: dict
  sample:
    mode: staged
    staging_dir: /var/lib/dbfleet-staged-drop
    space: {free_bytes: 53687091200, held_bytes: 2147483648, held: 2.0 GiB, margin_bytes: 1073741824}
    schedule: {steps: 8, seconds: 3.5, bound: 3600, fits: true}
    removed: [/var/lib/dbfleet-staged-drop/20261128070000-4242-000-orders_2019.ibd]
    shrink_steps: {steps: 8, truncate_seconds: 0.21, max_step_seconds: 0.041, step_bound_seconds: 0.05, over_bound: 0}
server:
  description: Flavor and version of the server.
  returned: when connected
  type: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.connection import require_pymysql
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.drop_rules import (
    DROP_OPTIONS, LIFT_NEEDS_NO_BINLOG, STAGED_NOT_WITH_RENAME, parse_table_names)
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.drop_tables import Drop
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import GuardedError
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.marker import cancel_file_problem
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.module import (
    module_argument_spec, module_ranges, module_window_gate, run_for_module)
from ansible_collections.dbfleet.innodb.plugins.module_utils.option_specs import range_problems


def argument_spec():
    return module_argument_spec(login_argument_spec(), Drop, DROP_OPTIONS)


RANGES = module_ranges(DROP_OPTIONS)


def pure_checks(module):
    """Everything that needs no server. Returns the window status (or None); fails the module."""
    p = module.params
    nothing = dict(dropped=[], changed=False)
    problems = range_problems(p, RANGES)
    if problems:
        module.fail_json(msg='; '.join(problems), **nothing)
    try:
        if p['tables'] or not p['finish_staged_only']:
            parse_table_names(p['tables'])
    except GuardedError as e:
        module.fail_json(msg=str(e), **nothing)
    if p['file_removal'] == 'staged' and p['rename_first']:
        module.fail_json(msg='refusing: ' + STAGED_NOT_WITH_RENAME, **nothing)
    if p['lift_super_read_only'] and not p['disable_binlog'] and not p['follow']:
        module.fail_json(msg='refusing: ' + LIFT_NEEDS_NO_BINLOG, **nothing)
    problem = cancel_file_problem(p['cancel_file'])
    if problem:
        module.fail_json(msg='refusing: ' + problem, **nothing)
    st = module_window_gate(module, nothing)
    if not p['confirm'] and not p['follow'] and not p['finish_staged_only'] and not module.check_mode:
        module.fail_json(msg='confirm is not set: nothing is dropped without confirm=true', window=st, **nothing)
    return st


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    require_pymysql(module)
    seq, result = run_for_module(module, Drop, pure_checks(module))
    if module.check_mode:
        msg = 'check mode: ' + '; '.join(seq.plan)
    elif module.params['finish_staged_only']:
        msg = 'staged files of earlier runs: %d removed, %d released' % (len(seq.staged.removed), len(seq.staged.released))
    elif module.params['follow']:
        msg = 'replica: %s after %ss; AHI %s -> %s' % (
            result['follow']['outcome'], result['follow']['waited_seconds'], seq.ahi['before'], seq.ahi['after'])
    else:
        msg = '%s %s; AHI %s -> %s' % (
            'renamed' if module.params['rename_first'] else 'dropped', ', '.join(result['dropped']) or 'nothing',
            seq.ahi['before'], seq.ahi['after'])
    if seq.staged is not None and not module.check_mode and not module.params['finish_staged_only']:
        msg += '; staged files: %d removed in %ss, %d released' % (
            len(seq.staged.removed), seq.staged.shrink_seconds, len(seq.staged.released))
    module.exit_json(msg=msg, **result)


if __name__ == '__main__':
    main()
