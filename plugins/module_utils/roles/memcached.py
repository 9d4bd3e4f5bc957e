# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The desired state of the memcached role: the InnoDB memcached plugin's daemon option and static settings, its
runtime setting, and what the role refuses to install.

memcached() is the function of the role's record in module_utils/roles/desired.py's registry, with the contract of
every role function (module_utils/roles/states.py); its steps, each a function of its own: the inputs (read_inputs,
with the user's daemon options, extra_options, and the containers, container_refusals), the settings the server
runs with (server_settings) and the drop-in's lines (dropin_lines). Loaded only when this role's desired state is
worked out (an audit of other roles does not compile the memcached code). Unit tests: test_memcached.py,
test_desired.py.
"""

from __future__ import annotations

import re

from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache import containers as memcache_containers
from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache import daemon_options
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import option_writer
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import inputs as role_input
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts

# memcached command-line options: letters, digits, spaces and the punctuation options use.
_DAEMON_OPTIONS_RE = re.compile(r'^[A-Za-z0-9 ._,:=/+-]*$')
_ADDRESS_RE = re.compile(r'^[A-Za-z0-9.:_%-]+$')

COMMENTS = (
    'Managed by the dbfleet.innodb.memcached role: local changes are overwritten.',
    'Set memcached_* variables in the inventory instead.',
    "loose- lets a server without the plugin start; INSTALL PLUGIN reads these lines again.",
    'innodb_api_enable_binlog / innodb_api_enable_mdl are read at server start only.',
)


def extra_options(check):
    """The user's memcached options (memcached_daemon_extra_options), stripped: '' when none, None (and a message to
    check) when they are not one line of plain options, or set what the role sets or the plugin must not get
    (daemon_options.extra_option_problems(), read by the plugin's own option parser)."""
    name = 'memcached_daemon_extra_options'
    value = check.raw(name)
    if value is None:
        return ''
    if not isinstance(value, str):
        check.error('%s must be a string of memcached options; got %s' % (name, desired.shown(value)))
        return None
    if '\n' in value or '\r' in value:
        check.error('%s must be on one line (it goes into the drop-in file); got %s' % (name, desired.shown(value)))
        return None
    quotes = [q for q in ('"', "'") if value.count(q) % 2]
    if quotes:
        check.error('%s has an unbalanced %s quote; got %s' % (name, quotes[0], desired.shown(value)))
        return None
    if not _DAEMON_OPTIONS_RE.match(value):
        check.error('%s may hold only letters, digits, spaces and . _ , : = / + - (memcached options such as '
                    '"-c 1024 -t 4"); got %s' % (name, desired.shown(value)))
        return None
    # Read by the plugin's own option parser: -vl 0.0.0.0 sets -l as surely as -l 0.0.0.0 does.
    problems = daemon_options.extra_option_problems(value)
    if problems:
        check.error('%s: %s; got %s' % (name, '; '.join(problems), desired.shown(value)))
        return None
    return value.strip()


def read_inputs(check, facts):
    """Step 1 of memcached(): the role's inputs, bad ones to check: dict(state, port, bind, extra, batch, binlog,
    mdl, trx_level). The bind address stays on loopback unless memcached_allow_remote says otherwise; the batch
    sizes and the transaction level are in the version table's ranges for this server."""
    state = check.choice('memcached_state', ('present', 'absent'))
    for name in ('memcached_skip_unsupported', 'memcached_containers_exclusive', 'memcached_allow_remote',
                 'memcached_reload_on_change', 'memcached_load_demo', 'memcached_remove_schema'):
        check.boolean(name, allow_none=False)
    port = check.integer('memcached_port', 1, 65535)
    if check.raw('memcached_port') is None:
        check.error('memcached_port must be 1-65535; got null')
    bind = check.text('memcached_bind_address', allow_none=False)
    if bind is not None and (not bind.strip() or not _ADDRESS_RE.match(bind)):
        check.error('memcached_bind_address must be one address without spaces; got %s' % desired.shown(bind))
        bind = None
    allow_remote = check.boolean('memcached_allow_remote', allow_none=False)
    if bind is not None and allow_remote is False and not daemon_options.is_loopback(bind):
        check.error('memcached_bind_address %s is beyond loopback: the plugin has no authentication (CIS MySQL '
                    'benchmark 4.7 says to disable daemon_memcached). Keep it on 127.0.0.1, or firewall the port / '
                    'use a private network and set memcached_allow_remote: true' % bind)
    extra = extra_options(check)
    for name in ('memcached_get_policy', 'memcached_write_policy', 'memcached_flush_policy'):
        check.choice(name, memcache_containers.POLICY_CHOICES)
    for name in ('memcached_policy_name', 'memcached_separator', 'memcached_table_map_delimiter',
                 'memcached_config_sql_file', 'memcached_probe_container'):
        check.text(name)
    where = 'on ' + role_input.server_text(facts)
    batch = {}
    for short, name in (('r', 'daemon_memcached_r_batch_size'), ('w', 'daemon_memcached_w_batch_size')):
        low, high = role_input.variable_range(name, facts)
        batch[name] = check.integer('memcached_%s_batch_size' % short, low, high, where=where)
    binlog = check.boolean('memcached_api_enable_binlog')
    mdl = check.boolean('memcached_api_enable_mdl')
    low, high = role_input.variable_range('innodb_api_trx_level', facts)
    trx_level = check.integer('memcached_api_trx_level', low, high, where=where)
    role_input.restart_inputs(check, 'memcached')
    check.integer('memcached_probe_timeout', 1)
    check.mapping('memcached_probe_expected')
    return dict(state=state, port=port, bind=bind, extra=extra, batch=batch, binlog=binlog, mdl=mdl,
                trx_level=trx_level)


def container_refusals(check, state):
    """Step 2 of memcached(): the containers (memcached_containers) checked, bad ones to check; returns what the role
    refuses to install although the settings can be audited: no container to serve with state present."""
    refusals = []
    containers = check.raw('memcached_containers')
    if containers is None:
        containers = []
    if not isinstance(containers, list) or not all(isinstance(c, dict) for c in containers):
        check.error('memcached_containers must be a list of maps; got %s' % desired.shown(containers))
    else:
        if state == 'present' and not containers:
            # What the server should run can still be audited (verify); installing needs a container.
            refusals.append('memcached_containers: at least one container is needed (the plugin serves nothing '
                            'without one)')
        names = [str(c.get('name')) for c in containers]
        dupes = sorted(set(n for n in names if names.count(n) > 1))
        if dupes:
            check.error('duplicate container names: %s' % ', '.join(dupes))
    return refusals


def server_settings(inputs, option):
    """Step 3 of memcached(): (static, dynamic): the settings read at server start (daemon_memcached_option, the batch
    sizes, innodb_api_enable_binlog / _mdl) and the one set at runtime (innodb_api_trx_level), those given only."""
    static = {'daemon_memcached_option': option}
    static.update((k, v) for k, v in inputs['batch'].items() if v is not None)
    if inputs['binlog'] is not None:
        static['innodb_api_enable_binlog'] = inputs['binlog']
    if inputs['mdl'] is not None:
        static['innodb_api_enable_mdl'] = inputs['mdl']
    dynamic = {} if inputs['trx_level'] is None else {'innodb_api_trx_level': inputs['trx_level']}
    return static, dynamic


def dropin_lines(inputs, option):
    """Step 4 of memcached(): the drop-in's lines, each written loose- (a server without the plugin starts); the
    daemon option always in double quotes (it holds spaces; the writer refuses what cannot be quoted)."""
    lines = [('loose-daemon_memcached_option', option, 'text')]
    lines.extend(('loose-' + k, v, 'int') for k, v in sorted(inputs['batch'].items()) if v is not None)
    if inputs['binlog'] is not None:
        lines.append(('loose-innodb_api_enable_binlog', inputs['binlog'], 'bool'))
    if inputs['mdl'] is not None:
        lines.append(('loose-innodb_api_enable_mdl', inputs['mdl'], 'bool'))
    if inputs['trx_level'] is not None:
        lines.append(('loose-innodb_api_trx_level', inputs['trx_level'], 'int'))
    return lines


def memcached(variables, facts):
    """Desired state of the memcached role.

    facts: server_facts (flavor, version, runs_as_root, capabilities). Raises InputError. Returns a
    dict: settings (what verify compares), static_settings, daemon_option, option_file, runtime,
    supported and reason, and refusals: what the role cannot install although the settings can be
    audited (no container).
    """
    check = role_input.Checker(variables, desired.INPUTS['memcached'], facts)
    inputs = read_inputs(check, facts)
    refusals = container_refusals(check, inputs['state'])
    check.done()

    supported, reason = capability_facts.memcached_support(*role_input.identity(facts))
    # memcached refuses to run as root without -u root and takes mysqld down; when it cannot be told
    # whether mysqld runs as root, -u root is added (a non-root daemon ignores it).
    as_root = facts.get('runs_as_root') is None or bool(facts.get('runs_as_root'))
    option = daemon_options.daemon_option(inputs['port'], inputs['bind'], as_root, inputs['extra'])
    static, dynamic = server_settings(inputs, option)
    present = inputs['state'] == 'present'
    return option_writer.with_option_file(
        COMMENTS, dropin_lines(inputs, option),
        settings=dict(static, **dynamic) if (present and supported) else {},
        static_settings=static,
        daemon_option=option,
        runtime=dynamic,
        supported=supported,
        reason=reason,
        refusals=refusals,
        dropin='write' if present else 'remove',
        runtime_steps=[dynamic] if (present and dynamic) else [],
        notes=[],
    )
