#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: verify
short_description: Check what a MySQL, Percona Server or MariaDB server really runs with, and what a restart would bring
version_added: 1.0.0
description:
  - For each variable in O(settings), compares the desired value with the running GLOBAL value (never the
    session value), with what the option files the server reads say (the file and line that wins), with
    the persisted value (MySQL 8 C(SET PERSIST)) and the server's own record of where the running value
    came from, and gives one status per variable.
  - C(ok) - the server runs the desired value and a restart keeps it.
  - C(startup_unknown) - the server runs the desired value, but what a restart brings cannot be told, as the
    option files were not read (the controller-side audit of M(dbfleet.innodb.verify_fleet)) and the server
    does not say where the value came from, or says it was set at runtime. Not drift, counted on its own.
  - C(drift_runtime) - the running value differs.
  - C(drift_config) - the server runs the desired value, but a restart loses it (set at runtime only, or the
    option files say something else).
  - C(pending_restart) - a read-only variable is configured right but the server still runs the old value.
  - C(unsupported) - the server has no such variable (flavor, version, or a plugin that is not loaded).
  - C(not_settable) - the server ignores the setting (for example the adaptive hash index on an Aurora reader).
  - C(error) - the status cannot be decided; the notes say why (bad desired value, a number outside the
    variable's range, unknown name, an option file that cannot be read).
  - Values are compared by meaning, with the same code as M(dbfleet.innodb.global_variables) - booleans
    in any spelling or YAML type, numbers with the K/M/G/T/P/E suffixes the server reads, floats, enums
    without regard to case - and C(innodb_buffer_pool_size) rounded up by the server to whole chunks is
    C(ok) with a note. Option-file values are read as the server reads them (a boolean written C(yes) in
    a file is C(OFF) to the server; a number outside the range is clamped), with a note.
  - Names are resolved per flavor and version (C(innodb_adaptive_hash_index_parts) and
    C(innodb_adaptive_hash_index_partitions) are the same setting).
  - Without O(option_files), the module reads the files the running server reads, found from its command
    line in C(/proc) when it runs on this host (C(--defaults-file), C(--defaults-extra-file),
    C(--no-defaults), C(--defaults-group-suffix)), else the flavor's default search order; C(!include) and
    C(!includedir) are followed as the server does.
  - With O(desired_from), the roles' desired state is worked out in the same run, over the same
    connection, from the roles' variables and this server's flavor, version and storage (what
    M(dbfleet.innodb.desired_settings) computes for one role), and verified with O(settings) on top.
    C(playbooks/verify.yml) audits a host this way in one module run.
  - With O(target_version), it also lists the tables whose storage engine this server's own version or
    the upgrade target does not have (RV(blockers)), from C(information_schema.TABLES), and what the server's
    settings would do on the target (RV(upgrade)) - settings the target has no option for (it would not start, with
    the file and line, or ignores a C(loose-) line), values it refuses or adjusts, lines of a versioned option group
    it no longer reads, settings left at a default the target changes (value now and after), and features it drops
    that the server uses (the InnoDB memcached plugin, C(mysql_native_password) accounts). The target's facts come
    from its own server in the lab (C(plugins/module_utils/versions/flavor_data/), docs/upgrades.md).
  - One connection, reads only. It never changes anything; C(changed) is always false.
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.read_only
  - dbfleet.innodb.login
  - dbfleet.innodb.option_file
options:
  settings:
    description:
      - Variable name to desired value, as written in YAML (C(ON), V(true), C(1), C(1G), C(512M), integers,
        enum names). A V(null) value is skipped (the roles use V(null) for "leave alone").
      - With O(desired_from), these come on top of the roles' desired settings (a name in both takes this value).
    type: dict
    default: {}
  desired_from:
    description:
      - Roles whose desired state on this server is verified too, in this order (a later role's value wins); roles
        of the registry (C(plugins/module_utils/roles/desired.py) C(REGISTRY)).
      - The roles' variables come from O(role_variables); each variable not set there takes the role's
        default. A bad role variable fails the task with the role and the variable named, as the role would.
    type: list
    elements: str
    default: []
  role_variables:
    description:
      - The C(<role>_*) variables of the roles in O(desired_from), as the roles would see them.
      - When not given, the action plugin takes them from the play (the host's variables), as
        M(dbfleet.innodb.desired_settings) does; a name with a role's prefix that the role does not know
        is reported in RV(unknown_variables) with a warning.
    type: dict
  target_version:
    description:
      - An upgrade target, V(<flavor>-<version>) with a flavor of C(mysql), C(percona), C(mariadb),
        C(aurora-mysql) (for example V(mysql-8.4), V(mariadb-11.8), V(percona-8.0.28)).
      - When set, the tables whose engine this server's own version or the target does not have are
        returned as RV(blockers), and the upgrade readiness of the server's settings as RV(upgrade). Any other value
        fails the task before the server is read.
    type: str
  target_facts:
    description:
      - The version facts the upgrade check of O(target_version) compares with (every variable and option of each
        version's own server, from C(plugins/module_utils/versions/flavor_data/), the target's and this server's own).
      - Set by the action plugin on the controller when O(target_version) is given; not meant to be passed by hand.
        The module's payload thus carries them only when a target is asked for, not on every host of every audit
        (about 310 KB of Python).
    type: dict
  option_files:
    description:
      - Read these option files, in this order, instead of the ones the server reads. A file in this list
        that does not exist is an error.
    type: list
    elements: path
  fail_on_drift:
    description:
      - Fail the task when any variable's status is other than C(ok) or C(unsupported) (the full result is
        still returned).
    type: bool
    default: false
attributes:
  platform:
    platforms: posix
    support: full
    description: Reading option files and the server process needs the module to run on the server host.
seealso:
  - module: dbfleet.innodb.server_facts
  - module: dbfleet.innodb.global_variables
notes:
  - On MySQL 8 persisted values (C(performance_schema.persisted_variables)) override the option files and
    the command line at startup, and are taken into account for C(drift_config) and C(pending_restart).
  - Whether a variable can change at runtime comes from C(information_schema.SYSTEM_VARIABLES) on MariaDB
    and from the collection's tables elsewhere; when it is not known, RV(variables.dynamic) is V(null) and a
    running value that differs from a correct configuration is reported as C(pending_restart) with a note.
  - MySQL's abbreviated option names (unique prefixes such as C(innodb_buffer_pool_si)) in option files are
    not recognised.
'''

EXAMPLES = r'''
- name: Verify what the roles want on this host
  dbfleet.innodb.verify:
    login_unix_socket: /run/mysqld/mysqld.sock
    settings:
      innodb_flush_neighbors: 0
      innodb_adaptive_hash_index: "OFF"
      innodb_buffer_pool_size: 1G
  register: audit

- name: Fail in CI when anything drifted
  dbfleet.innodb.verify:
    login_user: auditor
    login_password: "{{ vault_auditor_password }}"
    settings: "{{ wanted }}"
    fail_on_drift: true

- name: Audit what the roles want here and what stops a move to MySQL 8.4, in one run
  dbfleet.innodb.verify:
    desired_from: [flush_neighbors, adaptive_hash]
    target_version: mysql-8.4
  register: audit

# Ad-hoc:
# ansible db1 -m dbfleet.innodb.verify -a '{"settings": {"innodb_adaptive_hash_index": "ON"}}'
'''

RETURN = r'''
variables:
  description: One entry per verified variable, keyed by the name given in O(settings).
  returned: success
  type: dict
  contains:
    desired:
      description: The desired value as given.
      type: raw
    desired_normalized:
      description: The desired value in the server's form (C(ON)/C(OFF), bytes, enum spelling).
      type: str
    resolved_name:
      description: The variable's name on this server, V(null) when it has none.
      type: str
    runtime:
      description: The running GLOBAL value.
      type: str
    configured:
      description: What the option files say - C(value), C(file), C(line), C(group) and C(text) of the line
        that wins - or V(null) when no file sets it.
      type: dict
    command_line:
      description: The value from the server's command line (C(value), C(text)), or V(null).
      type: dict
    persisted:
      description: The value in C(performance_schema.persisted_variables) (MySQL 8), or V(null).
      type: str
    startup:
      description: What a restart would give (C(value), C(source), C(state)); C(value) V(null) means the
        default.
      type: dict
    dynamic:
      description: Whether the variable can change at runtime; V(null) when not known.
      type: bool
    origin:
      description: Where the running value came from, as the server says (MySQL 8 C(VARIABLE_SOURCE), MariaDB
        C(GLOBAL_VALUE_ORIGIN)), or V(null).
      type: str
    origin_path:
      description: The option file the running value came from, as MySQL 8 records it.
      type: str
    default:
      description: The default value, as the server (MariaDB) or the collection's tables know it.
      type: str
    kind:
      description: C(bool), C(int), C(size), C(enum) or C(str).
      type: str
    status:
      description: One of C(ok), C(startup_unknown), C(drift_runtime), C(drift_config), C(pending_restart),
        C(unsupported), C(not_settable), C(error).
      type: str
    notes:
      description: The evidence and reasons behind the status.
      type: list
      elements: str
  sample:
    innodb_flush_neighbors:
      desired: 0
      desired_normalized: '0'
      resolved_name: innodb_flush_neighbors
      runtime: '0'
      configured: null
      persisted: null
      startup: {value: null, source: null, state: known}
      dynamic: true
      origin: SQL
      default: '1'
      kind: int
      status: drift_config
      notes: ['nothing configures it: a restart brings the default 1']
summary:
  description: Number of variables per status (every status listed).
  returned: success
  type: dict
  sample: {ok: 3, startup_unknown: 0, drift_runtime: 1, drift_config: 0, pending_restart: 0, unsupported: 1, not_settable: 0, error: 0}
drift:
  description: True when any status is other than C(ok), C(startup_unknown) or C(unsupported).
  returned: success
  type: bool
pending_restart:
  description:
    - The settings that wait for a restart (status C(pending_restart)), name -> the desired value, as
      C(playbooks/rolling_restart.yml) hands them to the restart role (whose gate checks them after the restart).
  returned: success
  type: dict
  sample: {innodb_adaptive_hash_index_parts: 16}
skipped_variables:
  description: Names whose desired value was V(null) (not audited). Not C(skipped), which Ansible reserves for a skipped task.
  returned: success
  type: list
  elements: str
server:
  description: The server facts, as returned by M(dbfleet.innodb.server_facts) (without per-variable facts).
  returned: success
  type: dict
option_files:
  description: The option files read (C(files), C(files_read) with includes, C(groups), C(source), C(missing),
    C(warnings), C(errors)).
  returned: success
  type: dict
errors:
  description: Problems that concern the whole host (an unreadable option file, a table that could not be read).
  returned: success
  type: list
  elements: str
desired:
  description: Per role of O(desired_from), what it wants on this server - C(settings), C(notes) and, for
    C(flush_neighbors), C(storage) (the storage class, its source, confidence and evidence).
  returned: success
  type: dict
  sample:
    flush_neighbors:
      settings: {innodb_flush_neighbors: 0}
      storage: {storage_class: ssd, source: override, confidence: high}
      notes: []
unknown_variables:
  description: Variables with a role's prefix (of O(desired_from)) that the role does not know (misspelt?).
  returned: success
  type: list
  elements: str
target:
  description: The upgrade target of O(target_version) (C(flavor), C(version)), or V(null).
  returned: success
  type: dict
blockers:
  description:
    - With O(target_version), one entry per table whose engine this server's version (C(where) has
      C(current)) or the target (C(target)) does not have; empty otherwise.
    - C(schema), C(table), C(engine), C(rows_estimate), C(total_bytes), C(status) (C(removed), C(never),
      C(not_yet), C(unknown)), C(reason), C(where), C(version) (the flavor and version concerned),
      C(gone_in) (the version that removed the engine, V(null) when the flavor never had it), C(source).
  returned: success
  type: list
  elements: dict
  sample:
    - schema: shop
      table: sessions
      engine: Aria
      rows_estimate: 500
      total_bytes: 49152
      status: never
      where: [target]
      version: mysql 8.4.0
      gone_in: null
      source: MariaDB KB "Aria" (MariaDB only)
      reason: 'shop.sessions uses Aria, which mysql 8.4.0 does not have: mysql never shipped the Aria engine
        (it exists in mariadb only); convert it first (ALTER TABLE ... ENGINE=InnoDB)'
engine_notes:
  description: With O(target_version), engine advice that is no blocker (a deprecated engine in use; a plugin
    engine the target must load first).
  returned: success
  type: list
  elements: str
upgrade:
  description:
    - With O(target_version), what this server's settings would do on the target; V(null) otherwise.
    - C(target) (C(flavor), C(version), C(label)); C(facts), where the target's facts come from (the lab server, how
      it was read, when); C(complete), false when the collection has no facts of every variable of the target (then
      only the defaults of its version table are compared; then also C(known_versions), the versions the collection
      has facts of, and C(start_unknown), why whether the server would start is not known); C(notes).
    - C(findings), one per problem, in this order - C(kind) C(would_not_start) (the target has no such option;
      C(target_name) is its successor where there is one), C(value_refused) (would not start either),
      C(feature_removed), C(ignored) (a C(loose-) line, or a persisted value, dropped with a warning), C(not_read)
      (a line in a group only this version reads, such as C([mysqld-8.0])), C(value_adjusted) (outside the target's
      range), C(default_changes) (left at its default, which the target changes, C(now) and C(after); C(machine) says
      why a target default depends on the machine, its value then being the lab's) - with C(setting), C(message),
      C(stops_start), C(where), C(file), C(line), C(value) and C(pin), how to keep the value (the owning role and its
      variable (C(adaptive_hash_enabled) for AHI) or C(dbfleet.innodb.settings) with C(settings_values)).
    - C(summary) - C(would_start) (V(null) when not known, with no facts of the target and no finding that stops it),
      C(stops_start), C(silent_changes), C(by_kind), and the one-run pins
      C(settings_values) (for the settings role) and C(role_inputs) (per role).
  returned: success
  type: dict
  sample:
    target: {flavor: mysql, version: 9.7.0, label: MySQL 9.7}
    complete: true
    facts: "mysql 9.7.4 (9.7.4-2), read 2026-11-27 by lab/read_flavor_data.py: ..."
    findings:
      - kind: would_not_start
        setting: innodb_log_files_in_group
        where: /etc/mysql/conf.d/90-app.cnf:3 [mysqld]
        target_name: innodb_redo_log_capacity
        stops_start: true
        message: "would not start: innodb_log_files_in_group (/etc/mysql/conf.d/90-app.cnf:3 [mysqld]) is not an option of
          MySQL 9.7 (...): mysqld refuses to start on an unknown variable. Its successor on MySQL 9.7: innodb_redo_log_capacity."
      - kind: default_changes
        setting: innodb_adaptive_hash_index
        now: 'ON'
        after: 'OFF'
        pin: {role: dbfleet.innodb.adaptive_hash, variable: adaptive_hash_enabled, value: true}
        message: "innodb_adaptive_hash_index ON -> OFF: left at its default on MySQL 8.0.33, which MySQL 9.7 changes"
    summary: {would_start: false, stops_start: 1, silent_changes: 1, settings_values: {},
              role_inputs: {dbfleet.innodb.adaptive_hash: {adaptive_hash_enabled: true}}}
startup_state:
  description:
    - What this run read of what a restart brings, per server variable name (C(value), V(null) when nothing
      sets it; C(source), the option file and line, the command line or C(mysqld-auto.cnf); C(state) C(known)),
      for the variables it could tell; never the value of a secret variable. C(option_files_source) says how
      the option files were found.
    - C(playbooks/verify.yml) keeps it, with the time it was read (C(read_at)), as the cacheable fact
      C(verify_startup_state) when C(verify_startup_cache) is true, for the controller-side audit
      (M(dbfleet.innodb.verify_fleet) O(dbfleet.innodb.verify_fleet#module:startup_cache)).
  returned: success
  type: dict
  sample:
    option_files_source: command_line
    variables:
      innodb_flush_neighbors: {value: '0', source: '/etc/mysql/conf.d/60-dbfleet-flush_neighbors.cnf:3 [mysqld]', state: known}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection as conn_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import describe_target
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import error_text
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verdict
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify


def detect_storage(datadir, probe):
    """storage.detect_datadir(), for a role that decides on the storage (flush_neighbors). Imported here: an audit
    of other roles does not compile the storage code (a module's payload runs from a zip, compiled on every run)."""
    from ansible_collections.dbfleet.innodb.plugins.module_utils.host import storage
    return storage.detect_datadir(datadir, probe)


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(
        settings=dict(type='dict', default={}),
        desired_from=dict(type='list', elements='str', default=[]),
        role_variables=dict(type='dict'),
        target_version=dict(type='str'),
        target_facts=dict(type='dict'),
        option_files=dict(type='list', elements='path'),
        fallback_option_files=dict(type='list', elements='path', default=[]),
        fail_on_drift=dict(type='bool', default=False),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    # A secret's desired value (settings: {wsrep_sst_auth: ...}, or in the roles' variables) is masked wherever
    # Ansible shows this task, its invocation at -vvv included; the result masks the items by name (masking.mask_item).
    module.no_log_values.update(masking.secret_values(params['settings']))
    module.no_log_values.update(masking.secret_values(params['role_variables']))
    try:
        verify.check_settings(params['settings'])
        target, catalog = None, None
        if params['target_version']:
            # Imported here: only an audit with a target compiles the storage engines' code.
            from ansible_collections.dbfleet.innodb.plugins.module_utils import storage_engines
            target = storage_engines.parse_target_spec(params['target_version'])
        if target is not None:
            if not params['target_facts']:
                raise ValueError('target_version %s: no target_facts (the action plugin of dbfleet.innodb.verify sets '
                                 'them on the controller; run the module as a task of that name)'
                                 % params['target_version'])
            # Imported here: only an audit with a target compiles the version facts' shape.
            from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import facts as version_facts
            catalog = version_facts.Catalog(params['target_facts'])
    except ValueError as e:
        module.fail_json(msg=str(e))
    try:
        roles = desired.check_roles(params['desired_from'])
    except ValueError as e:
        module.fail_json(msg=str(e))
    conn = conn_utils.connect(module)
    try:
        result = verify.audit(conn, params['settings'], params,
                              option_files=params['option_files'],
                              fallback_option_files=params['fallback_option_files'],
                              desired_from=roles, role_variables=params['role_variables'],
                              detect_storage=detect_storage, target=target,
                              catalog=catalog, read_named=True)
    except desired.InputError as e:
        module.fail_json(msg='invalid role input, nothing verified: %s' % '; '.join(e.messages), errors=e.messages)
    except conn_utils.pymysql.err.MySQLError as e:
        module.fail_json(msg='verifying %s failed: %s'
                         % (describe_target(module.params), error_text(e)))
    except ValueError as e:
        module.fail_json(msg='verifying %s failed: %s' % (describe_target(module.params), e))
    finally:
        conn.close()
    for name in result['unknown_variables']:
        module.warn('%s is not a variable of its role (misspelt?); it is ignored' % name)
    if params['fail_on_drift'] and result['drift']:
        drifted = ['%s: %s' % (name, item['status']) for name, item in sorted(result['variables'].items())
                   if item['status'] not in verdict.NO_DRIFT]
        module.fail_json(msg='drift on %s' % ', '.join(drifted), changed=False, **result)
    module.exit_json(changed=False, **result)


if __name__ == '__main__':
    main()
