# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The playbooks' inputs as data, checked and defaulted in one place (lookup dbfleet.innodb.playbook_inputs).

PLAYBOOKS holds per playbook its variable prefix and options (variable <prefix>_<option>), each in Ansible's
argument spec form (type, elements, choices, default, required) plus, where it has them, its range ('range': (low,
high), high None for no upper bound, as option_specs.range_problems reads it) and the engine's own check of the value
('check': a function that raises GuardedError or ValueError with a message for the user). An option a playbook hands
to a module or a role is its own definition there (guarded_module.GUARDED_OPTIONS, drop_rules.DROP_OPTIONS,
convert_tables.CONVERT_OPTIONS, ahi_advisor.ADVISOR_OPTIONS, the restart role's argument specs): its default and
range live once, in the engine. Controller-side (it reads the restart role's argument specs with PyYAML).

check() validates the variables given with Ansible's ArgumentSpecValidator (what validate_argument_spec runs, so
the same messages), then the ranges and checks of the values that passed, and raises PlaybookInputError with every
problem, each naming the variable and the value as given; else it returns the inputs by option name with their
defaults."""

from __future__ import annotations

import copy
import json
import os
import re

import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology
from ansible_collections.dbfleet.innodb.plugins.module_utils.ahi_advisor import ADVISOR_OPTIONS, DEFAULT_THRESHOLDS
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.convert_tables import CONVERT_OPTIONS, target_engine
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.drop_rules import DROP_OPTIONS, STAGED_NOT_WITH_RENAME
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import GuardedError, parse_table_name
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.module import GUARDED_OPTIONS
from ansible_collections.dbfleet.innodb.plugins.module_utils.masking import MASK
from ansible_collections.dbfleet.innodb.plugins.module_utils.option_specs import option_ranges, option_spec, range_problems
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles.inputs import RESTART_RANGES
from ansible_collections.dbfleet.innodb.plugins.module_utils.storage_engines import parse_target_spec
from ansible_collections.dbfleet.innodb.plugins.action.verify_fleet import ARGUMENT_SPEC as VERIFY_FLEET_OPTIONS

# The collection's roles, beside plugins/ (the repository, an installed collection, the execution environment alike).
ROLES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'roles')


class PlaybookInputError(Exception):
    """Inputs of a playbook that fail their spec, range or check; the message names every one."""


class Playbook(object):
    """One playbook's inputs: its name (playbooks/<name>.yml), the prefix of its variables, its options and its
    rules (functions of the inputs by option name, once each has passed its own checks, that return a message
    when the inputs do not go together, else None). old_prefix: the prefix its variables had before they took the
    playbook's name, still read, deprecated (renamed())."""

    def __init__(self, name, prefix, options, rules=(), old_prefix=None):
        self.name = name
        self.prefix = prefix
        self.options = options
        self.rules = rules
        self.old_prefix = old_prefix

    def variable(self, option):
        """The play variable of an option: <prefix>_<option>."""
        return '%s_%s' % (self.prefix, option)

    @property
    def variables(self):
        """{variable: option}, in the order of the options."""
        return dict((self.variable(option), option) for option in self.options)

    @property
    def old_variables(self):
        """{deprecated variable: its new name}: <old_prefix>_<option> for each option (none without old_prefix)."""
        if not self.old_prefix:
            return {}
        return dict(('%s_%s' % (self.old_prefix, option), self.variable(option)) for option in self.options)


def renamed(name, given):
    """given ({variable: value}, new and deprecated names alike) with each deprecated variable under its new name,
    and the messages that say so, one per deprecated variable given. A new name given too wins over the old."""
    playbook = PLAYBOOKS[name]
    out = dict((k, v) for k, v in given.items() if k not in playbook.old_variables)
    messages = []
    for old, new in playbook.old_variables.items():
        if old not in given:
            continue
        if new in given:
            messages.append('%s is the old name of %s, which is given too and used: remove %s (playbooks/%s.yml)'
                            % (old, new, old, name))
        else:
            out[new] = given[old]
            messages.append('%s is the old name of %s (playbooks/%s.yml): use %s' % (old, new, name, new))
    return out, messages


def _tables(verb):
    """The check of a list of "db.table": at least one, each a plain name outside the system schemas."""
    def check(names):
        if not names:
            raise GuardedError('give at least one "db.table"')
        problems = []
        for name in names:
            try:
                parse_table_name(name, verb)
            except GuardedError as e:
                problems.append(str(e))
        if problems:
            raise GuardedError('; '.join(problems))
    return check


def _engine(name):
    target_engine(name)


def _lift_in_rolling_mode_only(inputs):
    """drop_tables.yml's form of the drop's LIFT_NEEDS_NO_BINLOG: its rolling mode is the one with the binary log off."""
    if inputs['lift_super_read_only'] and inputs['mode'] != 'rolling':
        return ('drop_tables_lift_super_read_only is only for drop_tables_mode=rolling, where the binary log is off for the drop '
                'session: in replicated mode a drop on a replica would be a transaction of its own there (an errant '
                'GTID) and stop replication with error 1051. Replicas follow the drop of their primary instead.')
    return None


def _staged_not_with_rename(inputs):
    """drop_tables.yml's form of the drop's STAGED_NOT_WITH_RENAME."""
    if inputs['file_removal'] == 'staged' and inputs['rename_first']:
        return 'drop_tables_file_removal=staged: ' + STAGED_NOT_WITH_RENAME
    return None


# The advisor's thresholds, as ahi_advisor.yml takes them in one dict (ahi_advisor_thresholds).
_THRESHOLDS = dict((name, ADVISOR_OPTIONS[name]) for name in DEFAULT_THRESHOLDS)


def _thresholds(value):
    """The ranges of the thresholds given (those of a wrong type are the spec's own message)."""
    problems = range_problems(dict((k, v) for k, v in value.items() if _number(v)), option_ranges(_THRESHOLDS))
    if problems:
        raise ValueError('; '.join(problems))


def _guarded(name, **change):
    """A guarded-change module's option as the playbook takes it (change: what differs, such as required)."""
    return dict(GUARDED_OPTIONS[name], **change)


def role_option(role, option, **change):
    """An option of a role's main entry point as its meta/argument_specs.yml says (type, elements, choices, default),
    for a playbook that hands it to the role (change: what the playbook adds, such as its range)."""
    with open(os.path.join(ROLES_DIR, role, 'meta', 'argument_specs.yml'), encoding='utf-8') as handle:
        spec = yaml.safe_load(handle)['argument_specs']['main']['options'][option]
    return dict(dict((k, v) for k, v in spec.items() if k in ('type', 'elements', 'choices', 'default', 'no_log')),
                **change)


def _settings_map(text):
    """settings.yml's map as YAML text: empty (the inventory's settings_values), or a map of settings. The message
    does not show the text, which may name a secret (wsrep_sst_auth)."""
    if not text.strip():
        return
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError('not YAML (%s)' % str(e).splitlines()[0])
    if not isinstance(value, dict):
        raise ValueError('must be a YAML map of settings (innodb_io_capacity: 2000, one per line), not a %s'
                         % type(value).__name__)


def _upgrade_target(text):
    """verify.yml's upgrade target, as the verify modules read it (<flavor>-<version> of the flavors' table)."""
    parse_target_spec(text, 'value')


def _verify_fleet(option, **change):
    """A verify_fleet option as verify.yml takes it (its default once, in the action's spec)."""
    return dict(VERIFY_FLEET_OPTIONS[option], **change)


# A host pattern, or a list of them (the hosts of a play).
_HOSTS = dict(type='list', elements='str', default=['all'])

# The topology preflight's lag bound (topology_plan max_lag), before the run and, in the playbooks' gates, after.
_MAX_LAG = dict(type='int', default=topology.DEFAULT_MAX_LAG, range=(0, None))

PLAYBOOKS = dict((p.name, p) for p in (
    Playbook('drop_tables', 'drop_tables', dict(
        tables=_guarded('tables', check=_tables('dropped')),
        window=_guarded('window', required=True),
        timezone=_guarded('timezone'),
        confirm=DROP_OPTIONS['confirm'],
        mode=dict(type='str', default='replicated', choices=['replicated', 'rolling']),
        force_window=_guarded('force_window'),
        rename_first=DROP_OPTIONS['rename_first'],
        holding_schema=DROP_OPTIONS['holding_schema'],
        ahi_strategy=DROP_OPTIONS['ahi_strategy'],
        lock_wait_timeout=_guarded('lock_wait_timeout'),
        retries=_guarded('retries'),
        retry_delay=_guarded('retry_delay'),
        lift_super_read_only=DROP_OPTIONS['lift_super_read_only'],
        follow_timeout=DROP_OPTIONS['follow_timeout'],
        # The staged file removal (module_utils/guarded/staged_removal.py), on every host that drops or follows.
        file_removal=DROP_OPTIONS['file_removal'],
        staging_dir=DROP_OPTIONS['staging_dir'],
        shrink_step_mb=DROP_OPTIONS['shrink_step_mb'],
        shrink_pause=DROP_OPTIONS['shrink_pause'],
        shrink_step_seconds=DROP_OPTIONS['shrink_step_seconds'],
        shrink_max_seconds=DROP_OPTIONS['shrink_max_seconds'],
        free_space_margin_mb=DROP_OPTIONS['free_space_margin_mb'],
        # Seconds each replica may take to switch AHI off before the primaries drop.
        replica_ready_timeout=dict(type='int', default=30, range=(1, None)),
        max_lag=_MAX_LAG,
        hosts=dict(type='str', default='all'),
    ), rules=(_lift_in_rolling_mode_only, _staged_not_with_rename), old_prefix='drop'),
    # The second half of drop_tables.yml's staged file removal: the same variables (one value serves both).
    Playbook('drop_tables_finish_staged', 'drop_tables', dict(
        hosts=dict(type='str', default='all'),
        staging_dir=DROP_OPTIONS['staging_dir'],
        shrink_step_mb=DROP_OPTIONS['shrink_step_mb'],
        shrink_pause=DROP_OPTIONS['shrink_pause'],
        shrink_step_seconds=DROP_OPTIONS['shrink_step_seconds'],
        shrink_max_seconds=DROP_OPTIONS['shrink_max_seconds'],
    ), old_prefix='drop'),
    Playbook('convert_tables', 'convert_tables', dict(
        tables=_guarded('tables', check=_tables('converted')),
        window=_guarded('window', required=True),
        engine=dict(CONVERT_OPTIONS['engine'], check=_engine),
        timezone=_guarded('timezone'),
        force_window=_guarded('force_window'),
        whole_topology=dict(type='bool', default=False),
        lock_wait_timeout=_guarded('lock_wait_timeout'),
        retries=_guarded('retries'),
        retry_delay=_guarded('retry_delay'),
        max_lag=_MAX_LAG,
        # Seconds a replica may take to apply one ALTER (the gate after each table).
        replica_timeout=dict(type='int', default=600, range=(1, None)),
        hosts=dict(type='str', default='all'),
    )),
    Playbook('rolling_restart', 'rolling_restart', dict(
        hosts=dict(type='list', elements='str', default=['all']),   # a pattern, or a list of them
        # The roles whose desired settings are checked: by default those site.yml applies to every host that may
        # restart a server (the registry's, as lookup dbfleet.innodb.roles 'restart').
        roles=dict(type='list', elements='str', default=desired.restart_roles(desired.site_roles()),
                   choices=list(desired.ROLES)),
        all=dict(type='bool', default=False),
        # Handed to the restart role as restart_timeout / restart_max_lag: its defaults, the roles' ranges.
        timeout=role_option('restart', 'restart_timeout', range=RESTART_RANGES['restart_timeout']),
        max_lag=role_option('restart', 'restart_max_lag', range=RESTART_RANGES['restart_max_lag']),
        serial=dict(type='raw', default=0),
        # The asynchronous primary's restart (the restart role's restart_primary*): in place, or after a switchover.
        primary=role_option('restart', 'restart_primary'),
        primary_candidate=role_option('restart', 'restart_primary_candidate'),
        primary_hand_back=role_option('restart', 'restart_primary_hand_back'),
        primary_endpoint=role_option('restart', 'restart_primary_endpoint', choices=['haproxy', 'tasks', 'none']),
        primary_endpoint_tasks=role_option('restart', 'restart_primary_endpoint_tasks'),
        primary_sessions=role_option('restart', 'restart_primary_sessions'),
        primary_sessions_timeout=role_option('restart', 'restart_primary_sessions_timeout', range=(1, None)),
        primary_wait_timeout=role_option('restart', 'restart_primary_wait_timeout', range=(1, None)),
        primary_replication_user=role_option('restart', 'restart_primary_replication_user'),
        primary_replication_password=role_option('restart', 'restart_primary_replication_password'),
    )),
    Playbook('site', 'site', dict(
        hosts=_HOSTS,
        roles=dict(type='list', elements='str', choices=list(desired.ROLES)),
        # No default here: unset, the role registry's group (lookup dbfleet.innodb.roles reads site_<role>_hosts).
        memcached_hosts=dict(type='list', elements='str'),
    )),
    Playbook('settings', 'dbfleet_settings', dict(
        hosts=_HOSTS,
        # The map as YAML text (what a job template survey answers), used instead of settings_values when given.
        text=dict(type='str', default='', check=_settings_map),
    )),
    Playbook('prerequisites', 'prerequisites', dict(
        hosts=_HOSTS,
        method=dict(type='str', default='auto', choices=['auto', 'package', 'pip']),
        cryptography=dict(type='bool', default=True),
        pip_find_links=dict(type='path'),
    )),
    Playbook('verify', 'verify', dict(
        hosts=_HOSTS,
        desired_from=dict(type='list', elements='str', choices=list(desired.ROLES)),
        extra_settings=dict(type='dict', default={}),
        target_version=dict(type='str', check=_upgrade_target),
        report_dir=dict(type='path'),
        report_mode=dict(_verify_fleet('report_mode'), type='str'),
        fail_on_error=dict(type='bool', default=True),
        fail_on_drift=dict(type='bool', default=False),
        pipelining=dict(type='bool'),
        mode=dict(type='str', default='host', choices=['host', 'controller']),
        # Controller mode: the verify_fleet action's own options.
        pool=_verify_fleet('pool'),
        workers=_verify_fleet('workers'),
        timeout=_verify_fleet('timeout'),
        deadline=_verify_fleet('deadline'),
        controller_ca_cert=_verify_fleet('controller_ca_cert'),
        controller_client_cert=_verify_fleet('controller_client_cert'),
        controller_client_key=_verify_fleet('controller_client_key'),
        startup_cache=_verify_fleet('startup_cache'),
        startup_cache_max_age=_verify_fleet('startup_cache_max_age'),
    )),
    Playbook('ahi_advisor', 'ahi_advisor', dict(
        hosts=dict(type='list', elements='str', default=['all']),   # a pattern, or a list of them
        sample_seconds=ADVISOR_OPTIONS['sample_seconds'],
        thresholds=dict(type='dict', default={}, options=option_spec(_THRESHOLDS), check=_thresholds),
    ), old_prefix='advise_ahi'),
))


def argument_spec(playbook):
    """The playbook's inputs as an argument spec by variable name (what validate_argument_spec would take)."""
    return option_spec(dict((playbook.variable(o), spec) for o, spec in playbook.options.items()))


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# ArgumentSpecValidator's message about one argument's type ("argument 'x' is of type str and ...").
_ARGUMENT = re.compile(r"^argument '([^']+)' is of type ")

# ansible-core before 2.19 names a type as its class ("is of type <class 'str'>"): the messages read the same on
# every ansible-core the collection supports.
_CLASS = re.compile(r"<class '([A-Za-z_]+)'>")

# The Python type a value of a spec type has once the validator has converted it (a check runs on those only).
_CONVERTED = dict(list=list, str=str, dict=dict)


def check(name, given, option=None):
    """The inputs of playbook name, by option name with their defaults, from given ({variable: value as the play
    holds it, templated}); PlaybookInputError naming every variable that fails its spec, range or check, with the
    value as given. With option, that one input only (its value), for a play keyword that needs no other (a
    playbook's hosts, as ansible-playbook --syntax-check works them out without the required inputs)."""
    playbook = PLAYBOOKS[name]
    if option is not None:
        one = Playbook(name, playbook.prefix, {option: playbook.options[option]})
        return _check(one, dict((k, v) for k, v in given.items() if k == one.variable(option)))[option]
    return _check(playbook, given)


def _check(playbook, given):
    name = playbook.name
    spec = argument_spec(playbook)
    given = dict((k, v) for k, v in given.items() if k in spec)
    result = ArgumentSpecValidator(spec).validate(copy.deepcopy(given))
    secret = set(playbook.variable(o) for o, opt in playbook.options.items() if opt.get('no_log'))
    problems = [_with_value(message, dict((k, v) for k, v in given.items() if k not in secret))
                for message in result.error_messages]
    values = result.validated_parameters
    ranges = dict((playbook.variable(o), r) for o, r in option_ranges(playbook.options).items())
    problems += range_problems(dict((k, v) for k, v in values.items() if k in ranges and _number(v)), ranges, given)
    for option, opt in playbook.options.items():
        variable = playbook.variable(option)
        if 'check' not in opt or variable not in given or not isinstance(values.get(variable), _CONVERTED[opt['type']]):
            continue  # not given, or the spec's own message says what is wrong with it
        try:
            opt['check'](values[variable])
        except (GuardedError, ValueError) as e:
            problems.append('%s=%s: %s' % (variable, MASK if variable in secret else shown(given[variable]), e))
    inputs = dict((option, values.get(playbook.variable(option))) for option in playbook.options)
    if not problems:
        problems = [message for message in (rule(inputs) for rule in playbook.rules) if message]
    if problems:
        raise PlaybookInputError('playbooks/%s.yml: bad input, nothing was run: %s' % (name, '; '.join(problems)))
    # A secret (no_log) input is checked, never returned: the result goes into a fact, which -v prints; the play
    # hands the variable itself to where it is used.
    return dict((option, value) for option, value in inputs.items() if not playbook.options[option].get('no_log'))


def _with_value(message, given):
    """Ansible's message about a variable whose type is wrong, with the value as given when it does not show it."""
    message = _CLASS.sub(r'\1', message)
    found = _ARGUMENT.match(message)
    if found and found.group(1) in given and repr(given[found.group(1)]) not in message:
        return '%s (got %s)' % (message, json.dumps(given[found.group(1)], default=str))
    return message


def shown(value):
    """A value as given, for a message: a list or dict as JSON, anything else as it is."""
    if isinstance(value, (list, dict)):
        return json.dumps(value, default=str, sort_keys=True)
    return value
