#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: desired_settings
short_description: What a dbfleet.innodb role wants on a server, from the role's variables and the server's facts
version_added: 1.0.0
description:
  - Reads the server's flavor, version and the variables a role manages, checks the role's variables against
    the ranges of this flavor and version, and returns what the role wants on this server - the settings (as
    M(dbfleet.innodb.verify) compares them), the lines of the role's drop-in file, what to set at runtime,
    what waits for a restart - and notes.
  - For C(flush_neighbors) it also detects the storage class under the server's datadir (as
    M(dbfleet.innodb.storage_facts) does).
  - Bad input fails with one message per variable that names the variable and the value as written. Every
    value bound for an option file is checked (one line, no control characters, the form its variable takes).
  - Without O(variables), the action plugin passes every variable of the play whose name starts with the
    role's prefix (C(<role>_), e.g. C(adaptive_hash_)); a name the role does not
    know gets a warning, whatever else the role has to do.
  - With O(roles), it works out several roles at once, in one run over one connection (RV(desired_states), and
    their settings merged in RV(settings)); C(playbooks/site.yml) and C(playbooks/rolling_restart.yml) do so for
    their roles, and C(site.yml) passes each role its state when it includes it (role variable
    C(dbfleet_desired_state)) instead of running this module again.
  - For C(settings) it reads the server's own catalog of variables in one bounded statement
    (C(information_schema.SYSTEM_VARIABLES) on MariaDB, C(performance_schema.variables_info) on MySQL 8.0+ - types,
    ranges, choices, block sizes, read-only flags) and the memory the server process may use (C(MemTotal), or the
    memory limit of its cgroup), so that every name and value of C(settings_values) is checked before anything changes.
  - For a role that may restart its server (its record in the role registry says so) it checks the restart
    method (O(restart_method), O(restart_command)) every time, whether or not a restart is pending.
  - Each role's state says where its drop-in file goes (C(dropin_file)) - in O(option_dropin_dir), else in the
    last directory the server's own option files include (C(!includedir), found from the running server's
    command line and its default option files, e.g. C(/etc/mysql/mariadb.conf.d) of Debian's MariaDB), else in the
    directory the packaged servers of the host's OS family include (C(/etc/mysql/conf.d) on Debian and Ubuntu,
    C(/etc/my.cnf.d) on the RedHat family, from C(/etc/os-release)).
  - Changes nothing. The same computation (C(plugins/module_utils/roles/desired.py)) serves M(dbfleet.innodb.verify)
    and M(dbfleet.innodb.verify_fleet).
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.read_only
  - dbfleet.innodb.login
  - dbfleet.innodb.option_file
options:
  role:
    description:
      - The role whose desired state to work out (RV(desired)), a role of the registry
        (C(plugins/module_utils/roles/desired.py) C(REGISTRY)). One of O(role) and O(roles) is required.
    type: str
  roles:
    description:
      - Several roles of the registry whose desired state to work out in this one run (RV(desired_states)).
      - Every bad input of every role is named before the module fails.
    type: list
    elements: str
  variables:
    description:
      - The role's variables (of every role in O(roles)), name to value, as the user wrote them. Missing ones take
        the role's defaults.
      - Filled by the action plugin from the play's variables with the role's prefix when not given.
    type: dict
  option_dropin_dir:
    description:
      - The directory the server includes drop-in files from. Filled by the action plugin from the host variable
        C(dbfleet_option_dropin_dir) when not given; without it, the last directory the server's option files
        include, else the directory of the host's OS family.
    type: path
  restart_method:
    description:
      - How the host's server restarts, C(service) or C(command). Filled by the action plugin from the host variable
        C(dbfleet_restart_method) when not given. Anything else fails (for a role that may restart) before
        anything changes.
    type: raw
  restart_command:
    description:
      - The argv list that restarts the server with O(restart_method=command). Filled by the action plugin from the
        host variable C(dbfleet_restart_command) when not given.
    type: raw
  dropin_required:
    description:
      - Fail, before anything changes, when the drop-in directory of a role cannot be told (no O(option_dropin_dir)
        and an OS family without a known directory). The roles set it; an audit or a restart does not need it.
    type: bool
    default: false
  probe:
    description:
      - For C(flush_neighbors), run the read-only latency probe under the datadir. Defaults to the role's
        C(flush_neighbors_probe).
    type: bool
attributes:
  platform:
    platforms: posix
    support: full
    description: Storage detection reads Linux sysfs and C(/proc) on the server host.
seealso:
  - module: dbfleet.innodb.server_facts
  - module: dbfleet.innodb.verify
'''

EXAMPLES = r'''
- name: What the adaptive_hash role wants here (its variables come from the play)
  dbfleet.innodb.desired_settings:
    role: adaptive_hash
  register: ahi_desired

- name: What two roles want here, in one run
  dbfleet.innodb.desired_settings:
    roles: [flush_neighbors, adaptive_hash]
  register: both

- name: Check some values without a play around them
  dbfleet.innodb.desired_settings:
    role: memcached
    variables:
      memcached_containers: [{name: t, schema: s, table: t, key_column: id, value_columns: [v], unique_index: PRIMARY}]
      memcached_daemon_extra_options: "-c 1024 -t 4"
'''

RETURN = r'''
desired_states:
  description: With O(roles), role name to what the role wants on this server (each as RV(desired)).
  returned: success and O(roles) is given
  type: dict
settings:
  description: With O(roles), the settings of every role merged in the order of O(roles) (a later role's value wins).
  returned: success and O(roles) is given
  type: dict
desired:
  description: >-
    What the role wants on this server. Keys besides these are role-specific (see the role's function in
    C(plugins/module_utils/roles/states.py) or C(plugins/module_utils/roles/settings.py)).
  returned: success and O(role) is given
  type: dict
  contains:
    settings:
      description: Server variable (as named on this server) to desired value; what M(dbfleet.innodb.verify) compares.
      type: dict
      sample: {innodb_adaptive_hash_index: false, innodb_adaptive_hash_index_parts: 16}
    option_file:
      description: The C([mysqld]) lines of the role's drop-in file, each checked for the option-file syntax.
      type: list
      elements: dict
      sample: [{name: innodb_adaptive_hash_index, value: 'OFF'}]
    option_file_text:
      description: The drop-in file as the role writes it (after the C(ansible_managed) header), from the one writer.
      type: str
    dropin_file:
      description: Where the role's drop-in file goes; V(null) when the host's OS family has no known directory.
      type: str
    dropin_problem:
      description: Why RV(desired.dropin_file) is V(null).
      type: str
    dropin_now:
      description:
        - What the drop-in file holds now - C(exists), and for a regular file its C(checksum) (SHA-1) and C(mode)
          (for example V(0644)); V(null) when that cannot be told (a symbolic link, a file that cannot be read).
        - The role C(dbfleet.innodb.scaffold) writes the drop-in only when it differs from what the role would write,
          and removes it only when there is one.
      type: dict
      sample: {exists: true, checksum: 22d640285278029fe6c3bf37fc07d21c62d7aaf5, mode: '0644'}
    runtime:
      description: What to set at runtime (a dict; for C(flush_neighbors) a list of one-variable dicts in a safe order).
      type: raw
    notes:
      description: Plain sentences about the decision.
      type: list
      elements: str
    published:
      description: >-
        The role's outputs that the state says (fact name to value: C(<role>_desired_settings), and for example
        C(<role>_pending_restart) before any restart), which the role C(dbfleet.innodb.scaffold) sets as facts.
      type: dict
      sample: {adaptive_hash_desired_settings: {innodb_adaptive_hash_index_parts: 16}, adaptive_hash_pending_restart: true}
server_facts:
  description: The server's facts, as M(dbfleet.innodb.server_facts) returns them.
  returned: success
  type: dict
unknown_variables:
  description: Variables with the role's prefix that the role does not know (each also a warning).
  returned: success
  type: list
  elements: str
  sample: [adaptive_hash_part]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import os_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import method as restart_method
from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import storage


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(
        role=dict(type='str'),
        roles=dict(type='list', elements='str'),
        variables=dict(type='dict'),
        fallback_option_files=dict(type='list', elements='path', default=[]),
        probe=dict(type='bool'),
        option_dropin_dir=dict(type='path'),
        dropin_required=dict(type='bool', default=False),
        restart_method=dict(type='raw'),
        restart_command=dict(type='raw'),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           mutually_exclusive=[('role', 'roles')], required_one_of=[('role', 'roles')])
    # A secret-valued setting in the roles' inputs (settings_values: {wsrep_sst_auth: ...}, which the settings role
    # refuses) is masked wherever Ansible shows this task: its messages, its result, its invocation at -vvv.
    module.no_log_values.update(masking.secret_values(module.params['variables']))
    try:
        roles = desired.check_roles(module.params['roles'] or [module.params['role']],
                                    'roles' if module.params['roles'] else 'role')
    except ValueError as e:
        module.fail_json(msg=str(e))
    unknown = []
    for role in roles:
        for name in desired.role_inputs(role, module.params['variables'])[1]:
            module.warn('%s is not a variable of the %s role (misspelt?); it is ignored' % (name, role))
            unknown.append(name)
    restarting = desired.restart_roles(roles)
    if restarting:
        errors = restart_method.restart_method_errors(module.params['restart_method'], module.params['restart_command'])
        if errors:
            module.fail_json(msg='%s: invalid input, nothing changed: %s' % (', '.join(restarting), '; '.join(errors)),
                             errors=errors, unknown_variables=unknown)
    facts = server_facts.read_for_module(module, desired.server_variable_names(roles), desired.server_engine_names(roles),
                                         desired.server_catalog(roles), persisted=True)
    probe = module.params['probe']

    def detect(datadir, role_probe):
        return storage.detect_datadir(datadir, role_probe if probe is None else probe)

    try:
        settings, states, unknown = desired.for_roles(roles, module.params['variables'], facts, detect)
    except desired.InputError as e:
        module.fail_json(msg=' | '.join('%s: invalid input, nothing changed: %s' % (role, '; '.join(messages))
                                        for role, messages in e.by_role.items()),
                         errors=e.messages, unknown_variables=unknown)
    # The inventory's directory, else the one the server's own option files include last (host/discovery.py),
    # else the OS family's (os_facts.FAMILIES).
    dropin_dir = module.params['option_dropin_dir'] or facts.get('dropin_dir')
    family = None if dropin_dir else os_facts.host_family()
    for role in roles:
        states[role]['dropin_file'], states[role]['dropin_problem'] = desired.dropin_file(role, dropin_dir, family)
        # What it holds now: the scaffold writes it only when it differs (roles/scaffold/tasks/apply.yml).
        path = states[role]['dropin_file']
        states[role]['dropin_now'] = optionfiles.file_now(path) if path else None
        if module.params['dropin_required'] and states[role]['dropin_file'] is None:
            module.fail_json(msg='%s: nothing changed: %s' % (role, states[role]['dropin_problem']),
                             unknown_variables=unknown)
    # The catalog (every variable the server runs) served the desired state; the result names its source only.
    facts.pop('catalog', None)
    if module.params['roles']:
        module.exit_json(changed=False, desired_states=states, settings=settings, server_facts=facts,
                         unknown_variables=unknown)
    module.exit_json(changed=False, desired=states[roles[0]], server_facts=facts, unknown_variables=unknown)


if __name__ == '__main__':
    main()
