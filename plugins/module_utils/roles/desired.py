# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The role registry: each role with a desired state is one record (REGISTRY, Role), and the one route from a role's
variables and the server's facts to its desired state (for_role(), for_roles()).

A record names the role's desired-state function, outputs, server variables, settings, engines, drop-in, whether
site.yml applies it; every table by role derives from it. The functions themselves live by idea, each loaded only
when its role's desired state is worked out (a module's payload runs from a zip, compiled on every run: an audit of
explicit settings compiles none of them): the InnoDB roles' in module_utils/roles/states.py (flush_neighbors' and memcached's
in module_utils/roles/flush_neighbors.py and memcached.py), the settings role's in module_utils/roles/settings.py;
they read their input through module_utils/roles/inputs.py (Checker) and write their drop-in through the one option-file writer,
module_utils/roles/option_writer.py. This file keeps what every caller shares: the registry, InputError and shown() (bad input, named
as the user wrote it) and the drop-in's path (dropin_file()). for_roles() is the one route every caller takes:
dbfleet.innodb.desired_settings (the roles, playbooks/site.yml, playbooks/rolling_restart.yml), dbfleet.innodb.verify
(per host) and dbfleet.innodb.verify_fleet (controller). The roles' YAML only orchestrates.

The roles' defaults are written down once, in roles/<role>/meta/argument_specs.yml; INPUTS is generated
from them (module_utils/roles/specs.py, `make role-specs`; test_role_specs.py says when it is stale), as the module runs on
the host, where the role files are not. Unit tests: test_desired.py, test_option_writer.py.
"""

from __future__ import annotations

import functools

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import os_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import specs as role_specs

# The inputs of each role and their defaults: generated from roles/<role>/meta/argument_specs.yml, the one
# source of a role's defaults (module_utils/roles/specs.py; `make role-specs`, checked by test_role_specs.py).
INPUTS = role_specs.INPUTS


class InputError(Exception):
    """Bad role input; .messages names each variable and the value as the user wrote it."""

    def __init__(self, messages):
        self.messages = list(messages)
        super().__init__('; '.join(self.messages))


def shown(value):
    """A value as the user wrote it, for messages: 513, 'ten', {'ssd': 'x'}, null."""
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return repr(str(value))
    if isinstance(value, dict):
        return '{%s}' % ', '.join('%s: %s' % (k, shown(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return '[%s]' % ', '.join(shown(v) for v in value)
    return repr(value)


def dropin_file(role, dropin_dir=None, family=None):
    """(path, None) of the role's drop-in file, or (None, why): in dropin_dir (the inventory's
    dbfleet_option_dropin_dir), else in the directory of the OS family (os_facts.FAMILIES; family as
    os_facts.family() names it)."""
    name = RECORDS[role].dropin
    if dropin_dir:
        return '%s/%s' % (str(dropin_dir).rstrip('/') or '/', name), None
    directory = os_facts.fact(family, 'dropin_dir')
    if directory:
        return '%s/%s' % (directory, name), None
    return None, ('no drop-in directory is known for OS family %s (known: %s); set dbfleet_option_dropin_dir for '
                  'this host' % (os_facts.display_name(family) or 'unknown',
                                 ', '.join(os_facts.display_name(f) for f in sorted(os_facts.FAMILIES))))


# ---------------------------------------------------------------- the role registry
class Role(object):
    """One role with a desired state: everything that makes it a role, in one record.

    name            the role (roles/<name>/, variables <name>_*); its inputs and their defaults are
                    INPUTS[name], generated from roles/<name>/meta/argument_specs.yml
    function        its desired-state function: function(variables, facts) -> state (with detects_storage:
                    function(variables, facts, detected)); see for_role() for what a state holds. The record
                    holds it by name (module, function) and imports it on first use (Role.function);
                    ('role_states', 'from_record') for a role whose record says all of it (each owned setting
                    from the one input that pins it: states.from_record())
    outputs         facts the role sets under its prefix: not inputs, never reported as unknown. The scaffold
                    publishes those a state says (published_outputs(): <name>_desired_settings, <name>_pending_restart,
                    <name>_restarted, <name>_<key> for a key of the state); the role's tasks set the others
    server_variables  server variables its function reads (server_facts `variables`)
    owns            the server variables its states may name in `settings`, in order, each with the input that
                    pins it: a name (that input's value is the setting's: upgrade.pin() offers it), a tuple of
                    names (the role works the value out of them), or None (the role sets it without owning it:
                    the settings role may set it too). Every one has a range in flavors.VARIABLES
                    (test_desired.py). setting_variables is its names (what verify compares; the controller-side
                    audit reads only these)
    owns_prefixes   {name prefix: the inputs to name}: the server variables of that prefix the role owns although
                    its states never name them (the settings role refuses them: settings.owner())
    engines         storage engines whose state its function reads (server_facts `engines`)
    site            whether playbooks/site.yml and verify.yml apply/audit it by default (false: opt-in
                    through site_roles / verify_desired_from, e.g. a role that loads a storage engine)
    hosts           None: every host of the play; else the group of hosts it applies to by default
                    (site.yml's site_<name>_hosts, verify.yml's verify_<name>_hosts override it)
    detects_storage its function also takes what storage_facts finds under the datadir (its <name>_probe input
                    says how hard to look); its <name>_storage_class input, when set, stands for what is found
                    (the controller-side audit works its state out only then: verify_fleet.controller_roles())
    catalog         its function reads the server's catalog of variables and its memory
                    (server_facts.report(catalog=True)): a role that takes any setting by name
    persists_with   the inputs ('<input>=<value>') with which its states SET PERSIST the desired values (a value
                    persisted on the server is then persisted over, not reset: persisted.py); every role has the
                    input <name>_persisted, written into its specs by `make role-specs` like the restart inputs
    restarts        it may restart its server: its specs get the inputs <name>_restart (never | allowed),
                    <name>_restart_timeout and <name>_restart_max_lag, written by `make role-specs` from the
                    restart role's own (tests/unit/plugins/module_utils/roles/test_specs.py), checked by
                    role_input.restart_inputs() and handed to the restart role by the scaffold
    """

    def __init__(self, name, source, outputs, server_variables=(), owns=(), owns_prefixes=(), engines=(),
                 site=True, hosts=None, detects_storage=False, catalog=False, restarts=False, persists_with=()):
        self.name = name
        self.source = source
        self.outputs = tuple(outputs)
        self.server_variables = tuple(server_variables)
        self.owns = tuple(owns)
        self.owns_prefixes = tuple(owns_prefixes)
        self.engines = tuple(engines)
        self.site = site
        self.hosts = hosts
        self.detects_storage = detects_storage
        self.catalog = catalog
        self.restarts = restarts
        self.persists_with = tuple(persists_with)

    @property
    def function(self):
        """Its desired-state function, imported here (source: (module, function)): an audit loads the code of the
        roles it audits only."""
        module, function = self.source
        if module == 'role_states':
            from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import states as loaded
        elif module == 'flush_neighbors':
            from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import flush_neighbors as loaded
        elif module == 'memcached':
            from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import memcached as loaded
        elif module == 'settings':
            from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import settings as loaded
        else:
            raise ValueError('role %s: no desired-state module %r' % (self.name, module))
        if function == 'from_record':
            # The function of a role whose record says all of it takes the record (states.from_record()).
            return functools.partial(loaded.from_record, self)
        return getattr(loaded, function)

    @property
    def setting_variables(self):
        """The server variables its states may name in `settings` (owns' names)."""
        return tuple(name for name, _inputs in self.owns)

    def pinning_input(self, name):
        """The one input whose value pins server variable name, or None (not owned, or worked out of several)."""
        inputs = dict(self.owns).get(name)
        return inputs if isinstance(inputs, str) else None

    @property
    def storage_class_input(self):
        """The input that stands for the storage detected (a role that detects storage), else None."""
        return self.name + '_storage_class' if self.detects_storage else None

    @property
    def inputs(self):
        """{name: default} from the role's argument specs."""
        return INPUTS[self.name]

    @property
    def dropin(self):
        """The file name of the role's drop-in (in dbfleet_option_dropin_dir)."""
        return '60-dbfleet-%s.cnf' % self.name


# In the order site.yml applies them and verify.yml audits them.
REGISTRY = (
    Role('flush_neighbors', ('flush_neighbors', 'flush_neighbors'),
         outputs=('flush_neighbors_desired_settings', 'flush_neighbors_storage', 'flush_neighbors_report'),
         server_variables=('innodb_flush_neighbors', 'innodb_io_capacity', 'innodb_io_capacity_max'),
         # innodb_io_capacity / innodb_io_capacity_max are the settings role's too: flush_neighbors sets them only
         # with flush_neighbors_io_profile: true (do not use both for one host).
         owns=(('innodb_flush_neighbors', ('flush_neighbors_storage_class', 'flush_neighbors_map')),
               ('innodb_io_capacity', None), ('innodb_io_capacity_max', None)),
         detects_storage=True, persists_with=('flush_neighbors_persist=set_persist', 'flush_neighbors_persist=both')),
    Role('adaptive_hash', ('role_states', 'adaptive_hash'),
         outputs=('adaptive_hash_desired_settings', 'adaptive_hash_report', 'adaptive_hash_pending_restart',
                  'adaptive_hash_restarted'),
         server_variables=('innodb_adaptive_hash_index', 'innodb_adaptive_hash_index_parts'),
         owns=(('innodb_adaptive_hash_index', 'adaptive_hash_enabled'),
               ('innodb_adaptive_hash_index_parts', 'adaptive_hash_parts'),
               ('innodb_adaptive_hash_index_partitions', 'adaptive_hash_parts')),
         owns_prefixes=(('innodb_adaptive_hash_index', ('adaptive_hash_enabled',)),),
         restarts=True),
    Role('memcached', ('memcached', 'memcached'),
         outputs=('memcached_desired_settings', 'memcached_report', 'memcached_restarted'),
         owns=(('daemon_memcached_option',
                ('memcached_port', 'memcached_bind_address', 'memcached_daemon_extra_options')),
               ('daemon_memcached_r_batch_size', 'memcached_r_batch_size'),
               ('daemon_memcached_w_batch_size', 'memcached_w_batch_size'),
               ('innodb_api_enable_binlog', 'memcached_api_enable_binlog'),
               ('innodb_api_enable_mdl', 'memcached_api_enable_mdl'),
               ('innodb_api_trx_level', 'memcached_api_trx_level')),
         owns_prefixes=(('daemon_memcached', ('memcached_port', 'memcached_bind_address',
                                              'memcached_daemon_extra_options')),),
         hosts='memcached', restarts=True),
    Role('myrocks', ('role_states', 'myrocks'),
         outputs=('myrocks_desired_settings', 'myrocks_report', 'myrocks_pending_restart', 'myrocks_restarted'),
         server_variables=('rocksdb_block_cache_size', 'rocksdb_flush_log_at_trx_commit',
                           'rocksdb_max_background_jobs', 'rocksdb_default_cf_options'),
         # Kinds, ranges and whether each is dynamic: flavors.VARIABLES (the MariaDB MyRocks reference).
         owns=(('rocksdb_block_cache_size', 'myrocks_block_cache_size'),
               ('rocksdb_flush_log_at_trx_commit', 'myrocks_flush_log_at_trx_commit'),
               ('rocksdb_max_background_jobs', 'myrocks_max_background_jobs'),
               ('rocksdb_default_cf_options', 'myrocks_default_cf_options')),
         owns_prefixes=(('rocksdb', ('myrocks_* (myrocks_enabled, myrocks_block_cache_size, ...)',)),),
         engines=('ROCKSDB',),
         # MyRocks loads a storage engine and restarts for it: applied only where asked for.
         site=False, restarts=True),
    Role('settings', ('settings', 'settings'),
         outputs=('settings_desired_settings', 'settings_report', 'settings_pending_restart', 'settings_restarted'),
         # Any setting by name (settings_values): checked against the server's own catalog, which it reads instead
         # of named variables; the settings other roles own are refused by name (settings.owner()).
         catalog=True,
         # Applied where asked for (site_roles, or the role on its own): a map of settings is the user's.
         site=False, restarts=True, persists_with=('settings_persist=true',)),
)
RECORDS = dict((r.name, r) for r in REGISTRY)
# The role names, sorted (module choices, messages).
ROLES = tuple(sorted(RECORDS))


def role_inputs(role, variables):
    """(inputs, unknown): the role's own input variables out of variables (<role>_* names of the play),
    and the names with the role's prefix that the role does not know."""
    variables = variables or {}
    unknown = unknown_variables(role, variables)
    inputs = dict((k, v) for k, v in variables.items() if k in INPUTS[role])
    return inputs, unknown


def unknown_variables(role, names):
    """Names with the role's prefix that the role does not know (misspelt, or from an old release)."""
    prefix = role + '_'
    known = set(INPUTS[role]) | set(RECORDS[role].outputs)
    return sorted(n for n in names if str(n).startswith(prefix) and n not in known)


def check_roles(roles, label='desired_from'):
    """The role names in order without repeats; ValueError naming any that has no desired state."""
    unknown = [str(r) for r in roles or () if r not in RECORDS]
    if unknown:
        raise ValueError('%s: %s is not a role with a desired state (%s)'
                         % (label, ', '.join(repr(r) for r in unknown), ', '.join(ROLES)))
    out = []
    for role in roles or ():
        if role not in out:
            out.append(role)
    return out


def _names(roles, field):
    names = []
    for role in roles:
        names.extend(n for n in getattr(RECORDS[role], field) if n not in names)
    return names


def server_variable_names(roles):
    """The server variables the roles read (server_facts `variables`), in one list."""
    return _names(roles, 'server_variables')


def setting_variable_names(roles):
    """The server variables the roles' desired states may name as settings (what verify compares), in one list:
    the controller-side audit reads these by name (verify.audit_variable_names())."""
    return _names(roles, 'setting_variables')


def setting_owner(name):
    """The role whose record names server variable name among its setting variables, or None."""
    for record in REGISTRY:
        if name in record.setting_variables:
            return record.name
    return None


def owning_role(name):
    """(role, its inputs) of the role that owns server variable name, or None: a role's own setting with the inputs
    that pin it (its record's owns), else the longest of the roles' owns_prefixes that name starts with. A setting
    a role sets without owning it (owns: None) has no owner."""
    for record in REGISTRY:
        inputs = dict(record.owns).get(name)
        if inputs is not None:
            return record.name, (inputs,) if isinstance(inputs, str) else tuple(inputs)
    prefixes = [(prefix, record.name, tuple(inputs)) for record in REGISTRY for prefix, inputs in record.owns_prefixes
                if name.startswith(prefix)]
    if not prefixes:
        return None
    _prefix, role, inputs = max(prefixes, key=lambda item: len(item[0]))
    return role, inputs


def server_engine_names(roles):
    """The storage engines whose state the roles read (server facts `engines`)."""
    return _names(roles, 'engines')


def server_catalog(roles):
    """Whether the roles read the server's catalog of variables and its memory (server_facts.report(catalog=True))."""
    return any(RECORDS[r].catalog for r in roles)


def restart_roles(roles):
    """The roles of roles that may restart a server (their records say so: Role restarts)."""
    return [r for r in roles if RECORDS[r].restarts]


def site_roles(hosts=False):
    """The roles site.yml applies by default: those on every host (hosts=False) or those with a host group
    of their own (hosts=True), in the registry's order."""
    return [r.name for r in REGISTRY if r.site and bool(r.hosts) == hosts]


def for_role(role, inputs, facts, detect_storage):
    """The desired state of one role, from its record's function. detect_storage(datadir, probe) runs only for
    a role that detects storage (what storage_facts finds under the datadir; probe: its <role>_probe input).

    What every state holds (the contract of a desired-state function, filled here where the function leaves
    a key out; the scaffold role roles/scaffold reads these):
      settings           {server variable: value}: what verify compares
      option_file, option_file_text  the drop-in's lines and body, from the one writer (option_writer.with_option_file())
      dropin             write | remove | leave: what happens to the drop-in (default: write when it has lines)
      runtime            what to set at runtime; runtime_steps the same as a list of {name: value} steps in the
                         order the server takes them (innodb_io_capacity_max before a higher innodb_io_capacity),
                         without those the server runs already (runtime_to_set());
                         runtime_variables the steps as one {name: value} in that order (runtime_in_order()), which
                         the scaffold sets in ONE global_variables run (it sets its variables in the order given);
                         runtime_persist: SET PERSIST them
      pending_restart, restart_settings, restart_reason  what waits for a restart (role_input.restart_state())
      persisted_reset    settings whose persisted value (mysqld-auto.cnf) would override the drop-in at the next
                         start: RESET PERSIST before the runtime steps (persisted.plan(), by <role>_persisted)
      notes              plain sentences
      inputs             the role's inputs as used: its defaults with the user's values over them
      role               the role's name
      published          {output: value}: the record's outputs the state says (published_outputs()), set as facts
                         by the scaffold's desired step (its restart step sets <role>_restarted and
                         <role>_pending_restart again after a restart)
    """
    from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import inputs as role_input
    record = RECORDS[role]
    if record.detects_storage:
        probe = role_input.Checker(inputs, INPUTS[role], facts).boolean(role + '_probe')
        found = detect_storage(facts['datadir'], bool(probe)) if facts.get('datadir') else dict(
            storage_class='unknown', confidence='low', reasons=['the server reported no datadir'])
        state = record.function(inputs, facts, found)
    else:
        state = record.function(inputs, facts)
    runtime = state.get('runtime') or {}
    state.setdefault('runtime_steps', list(runtime) if isinstance(runtime, list) else ([runtime] if runtime else []))
    state.setdefault('runtime_persist', False)
    state['runtime_steps'] = runtime_to_set(state['runtime_steps'], facts, state['runtime_persist'])
    state['runtime_variables'] = runtime_in_order(role, state['runtime_steps'])
    state.setdefault('dropin', 'write' if state.get('option_file') else 'leave')
    state.setdefault('notes', [])
    for key, value in role_input.restart_state(False, {}, '').items():
        state.setdefault(key, value)
    state['inputs'] = dict(INPUTS[role], **inputs)
    state['role'] = role
    _persisted(role, inputs, facts, state)
    state['published'] = published_outputs(record, state)
    return state


def runtime_to_set(steps, facts, persist):
    """The runtime steps that change something on this server: a step none of whose settings the server runs already
    (its facts: a dynamic, settable variable whose running value means the desired one, values.equal()) is left out, so
    the scaffold runs no global_variables where it would find nothing to do. With persist every step stays (SET
    PERSIST writes mysqld-auto.cnf, whatever the server runs). A setting without facts, or whose value cannot be
    compared, stays (global_variables decides)."""
    if persist:
        return list(steps)
    from ansible_collections.dbfleet.innodb.plugins.module_utils import values
    known = facts.get('variables') or {}

    def runs_already(name, value):
        fact = known.get(name) or {}
        settable = fact.get('exists') and fact.get('dynamic') is True and fact.get('settable') is True
        if not (settable and fact.get('kind')):
            return False
        try:
            return values.equal(value, fact.get('runtime'), fact['kind'])
        except values.ValueError_:
            return False
    return [step for step in steps if not all(runs_already(name, value) for name, value in step.items())]


def runtime_in_order(role, steps):
    """The runtime steps ([{name: value}], in order) as one {name: value} in the same order: what the scaffold gives
    global_variables in one run. A name in two steps would lose its place; it is the role function's mistake
    (ValueError naming the role)."""
    out = {}
    for step in steps:
        for name, value in step.items():
            if name in out:
                raise ValueError('%s: runtime_steps set %s twice' % (role, name))
            out[name] = value
    return out


def published_outputs(record, state):
    """{output: value} of the record's outputs that the state says, before any restart: <role>_desired_settings
    (the state's settings), <role>_pending_restart, <role>_restarted (false: nothing restarted yet), and
    <role>_<key> for a key of the state (flush_neighbors_storage). The role's tasks set the others (its report)."""
    prefix = record.name + '_'
    said = dict(state, desired_settings=state['settings'], restarted=False)
    return dict((name, said[name[len(prefix):]]) for name in record.outputs if name[len(prefix):] in said)


def _persisted(role, inputs, facts, state):
    """The state's persisted_reset and notes for the persisted values of its settings (persisted.plan(), by the
    role's <role>_persisted input), when the facts hold the server's persisted values; InputError for a refusal."""
    from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import persisted
    from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import inputs as role_input
    state.setdefault('persisted_reset', [])
    name = persisted.input_name(role)
    if name not in INPUTS[role] or 'persisted' not in facts:
        return
    check = role_input.Checker(inputs, INPUTS[role], facts)
    mode = check.choice(name, persisted.MODES)
    check.done()
    refusals = persisted.plan(role, state, facts, mode)
    if refusals:
        raise InputError(refusals)


def for_roles(roles, variables, facts, detect_storage):
    """The desired state of each role in roles, from the play's variables (each role's defaults fill
    what is not set: INPUTS). Returns (settings, states, unknown): the roles' settings merged in
    order, {role: desired state}, and the unknown <role>_* names. Raises InputError naming every bad role
    (its messages prefixed with the role; .by_role: {role: [messages]})."""
    settings, states, unknown, by_role = {}, {}, [], {}
    for role in roles:
        inputs, role_unknown = role_inputs(role, variables)
        unknown.extend(role_unknown)
        try:
            states[role] = for_role(role, inputs, facts, detect_storage)
        except InputError as e:
            by_role[role] = e.messages
            continue
        settings.update(states[role]['settings'])
    if by_role:
        error = InputError('%s: %s' % (role, m) for role in by_role for m in by_role[role])
        error.by_role = by_role
        raise error
    return settings, states, unknown
