#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: memcached_plugin
short_description: Install or uninstall the InnoDB memcached plugin (daemon_memcached), with guards
version_added: 1.0.0
description:
  - Checks whether the server can have the InnoDB memcached plugin at all (MySQL or Percona Server
    5.6.6 to 8.2, never MariaDB, and a build with C(libmemcached.so) and C(innodb_engine.so) in
    C(plugin_dir)) and reports why not.
  - Runs C(INSTALL PLUGIN daemon_memcached) only when the plugin is not already C(ACTIVE), after
    checking what the daemon will read. C(INSTALL PLUGIN) reads the server's option files again,
    so the module reads the same files (from the server's command line) and refuses to install when
    they do not give the wanted C(daemon_memcached_option), when a server running as root would start
    the daemon without C(-u root) (memcached then refuses to run as root and takes mysqld down with
    it), or when something else already listens on the port.
  - After installing it checks that the server is alive, that the plugin is C(ACTIVE), that it runs
    with the wanted options and that the port answers the memcache C(version) command; when the port
    does not answer (the plugin stays C(ACTIVE) but silent when the port is taken), it uninstalls the
    plugin again and fails.
  - Compares static settings with the running values and reports those that need a restart.
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.login
  - dbfleet.innodb.option_file
attributes:
  check_mode:
    support: full
    description:
      - Says what it would install, uninstall or reload. Pre-install checks that depend on earlier tasks of
        the same run (schema, drop-in) are reported as warnings and in RV(preinstall_problems).
  diff_mode:
    support: full
    description: Shows the plugin status and C(daemon_memcached_option) before and after.
  platform:
    platforms: posix
    support: full
    description: Needs Linux C(/proc) on the database host for the process checks.
    details:
      - Plugin files, the server's pid file, command line and option files are read on the host the
        module runs on, which must be the database host.
options:
  state:
    description:
      - V(present) installs the plugin when it is not C(ACTIVE); V(absent) uninstalls it when it is there.
    type: str
    choices: [present, absent]
    default: present
  preflight_only:
    description:
      - Only report whether the plugin can run here (RV(supported), RV(reason)) and the facts the checks
        use; never change anything and never fail because the plugin is unsupported.
    type: bool
    default: false
  daemon_option:
    description:
      - The C(daemon_memcached_option) the plugin must run with, as the option-file drop-in gives it
        (for example C(-p11211 -l 127.0.0.1 -u root)).
      - Before installing, the option files must give exactly this value.
    type: str
  port:
    description:
      - Port the daemon must answer on after installing. By default the C(-p) of O(daemon_option), else 11211.
    type: int
  host:
    description:
      - Address to probe the daemon on after installing. By default the C(-l) of O(daemon_option) when it
        is an address, else 127.0.0.1.
    type: str
  listen_timeout:
    description:
      - Seconds to wait for the daemon to answer after C(INSTALL PLUGIN).
    type: float
    default: 10
  runs_as_root:
    description:
      - Whether mysqld runs as root. By default it is read from C(/proc) for the pid in C(@@pid_file).
    type: bool
  static_settings:
    description:
      - Settings the server reads only at start (or the plugin only at install), name to wanted value,
        for example C(daemon_memcached_r_batch_size) or C(innodb_api_enable_binlog). Values are compared
        by meaning; those that differ from the running values are listed in RV(pending_restart).
      - V(null) values are skipped.
    type: dict
    default: {}
  reload:
    description:
      - When the plugin is C(ACTIVE) and O(reload_reason) is set or the running C(daemon_memcached_*)
        values differ from the wanted ones, uninstall and install it again so it reads its
        configuration and options again (memcache clients are disconnected for a moment; mysqld keeps
        running). C(innodb_api_*) settings still need a server restart.
      - Every pre-install check (configuration schema, containers, the option files, C(-u root), a free port)
        runs before the running plugin is uninstalled; a refused check leaves it running. In check mode the
        reload is reported as a change, with the options it would run with.
    type: bool
    default: false
  reload_reason:
    description:
      - Why a reload is needed even if the options did not change (for example
        C(containers changed)); only used with O(reload=true).
    type: str
notes:
  - C(daemon_memcached_option) is read-only at runtime; left at its default the daemon listens on
    port 11211 on all addresses without authentication. Write it in an option file first
    (the P(dbfleet.innodb.memcached#role) role does).
  - The plugin needs the C(innodb_memcache) schema with at least one container
    (M(dbfleet.innodb.memcached_config)).
seealso:
  - module: dbfleet.innodb.memcached_config
  - module: dbfleet.innodb.memcached_probe
'''

EXAMPLES = r'''
- name: Can this server have the plugin?
  dbfleet.innodb.memcached_plugin:
    preflight_only: true
  register: memcached_preflight

- name: Install the plugin, listening on loopback only
  dbfleet.innodb.memcached_plugin:
    daemon_option: "-p11211 -l 127.0.0.1"
    static_settings:
      daemon_memcached_r_batch_size: 1
      innodb_api_enable_binlog: false

- name: Uninstall it
  dbfleet.innodb.memcached_plugin:
    state: absent
'''

RETURN = r'''
supported:
  description: Whether the plugin can run on this server (flavor, version and plugin files).
  returned: always
  type: bool
reason:
  description: Why the plugin can or cannot run here, and what to do.
  returned: always
  type: str
  sample: MariaDB never shipped the InnoDB memcached plugin
server:
  description: Flavor, version, plugin_dir, basedir, pid and whether mysqld runs as root.
  returned: always
  type: dict
  sample: {flavor: mysql, version: [8, 0, 33], version_text: 8.0.33, plugin_dir: /usr/lib/mysql/plugin/,
           basedir: /usr/, pid: 1234, runs_as_root: false}
missing_files:
  description: Plugin libraries missing from plugin_dir.
  returned: always
  type: list
  elements: str
status_before:
  description: PLUGIN_STATUS of daemon_memcached before the run, or null when not installed.
  returned: always
  type: str
  sample: ACTIVE
status:
  description: PLUGIN_STATUS after the run (in check mode, what it would be).
  returned: always
  type: str
daemon_option:
  description: The running C(daemon_memcached_option) after the run, or null.
  returned: always
  type: str
  sample: -p11211 -l 127.0.0.1
option_files:
  description: The option files read for the pre-install check, the value they give and where from.
  returned: when O(daemon_option) is set
  type: dict
  sample: {files: [/etc/mysql/my.cnf], value: '-p11211 -l 127.0.0.1', source: /etc/mysql/conf.d/60-dbfleet-memcached.cnf}
pending_restart:
  description: Names from O(static_settings) whose running value differs from the wanted one.
  returned: always
  type: list
  elements: str
actions:
  description: What was done (or would be done in check mode).
  returned: always
  type: list
  elements: str
  sample: ['INSTALL PLUGIN daemon_memcached SONAME libmemcached.so']
preinstall_problems:
  description: In check mode, what would stop C(INSTALL PLUGIN) if the run were real (the schema or the
    drop-in may only be missing because earlier tasks ran in check mode too).
  returned: in check mode, when there are any
  type: list
  elements: str
memcache_version:
  description: What the daemon answered to C(version) after installing.
  returned: when the plugin was installed or reloaded
  type: str
'''

import os
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.connection import (
    connect, ConnectError, open_connection, pymysql)
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import (
    error_text, execute, global_variables, query, query_one)
from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts, values
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache.client import MemcacheClient, MemcacheError, wait_for_server
from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache.daemon_options import (
    beyond_loopback, daemon_option_has_user, parse_daemon_option)
from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache.plugin import (
    CONFIG_SCHEMA, ENGINE_LIBRARY, PLUGIN_LIBRARY, PLUGIN_NAME, PLUGIN_VARIABLES)


def plugin_status(conn):
    row = query_one(conn, 'SELECT PLUGIN_STATUS AS s FROM information_schema.PLUGINS WHERE PLUGIN_NAME = %s',
                    (PLUGIN_NAME,))
    return row['s'] if row else None


def port_answers(host, port):
    """True when something accepts a TCP connection on host:port."""
    client = MemcacheClient(host, port, 1.0)
    try:
        client.connect()
        return True
    except MemcacheError:
        return False
    finally:
        client.sock and client.sock.close()
        client.sock = None


def gather(module, conn):
    """Facts for the checks: identity, paths, the server process (root?), option files, support."""
    facts = server_facts.gather(conn, login_params=module.params,
                                fallback_option_files=module.params['fallback_option_files'])
    identity = facts['_identity']
    plan = facts['_plan']
    keys = ('flavor', 'version', 'version_string', 'version_text', 'basedir', 'plugin_dir', 'pid_file',
            'runs_as_root', 'option_files', 'option_files_source', 'option_groups', 'notes')
    server = dict((k, facts.get(k)) for k in keys)
    server['pid'] = (facts.get('process') or {}).get('pid')
    server['_local'] = plan.get('local')
    if module.params['runs_as_root'] is not None:
        server['runs_as_root'] = module.params['runs_as_root']
    gv = dict(plugin_dir=facts.get('plugin_dir'))
    supported, reason = capability_facts.memcached_support(identity.flavor, identity.version)
    missing = []
    if supported:
        plugin_dir = gv.get('plugin_dir') or ''
        missing = [name for name in (PLUGIN_LIBRARY, ENGINE_LIBRARY)
                   if not os.path.isfile(os.path.join(plugin_dir, name))]
        if missing:
            supported = False
            reason = ('this %s %s build has no %s in plugin_dir %s: install a build with the InnoDB memcached '
                      'plugin (built with -DWITH_INNODB_MEMCACHED=ON; the official MySQL packages have it)'
                      % (identity.flavor, identity.version_string, ' and '.join(missing), plugin_dir))
    return identity, server, supported, reason, missing


def pending(conn, identity, settings):
    """Names whose running value differs from the wanted one (skipping unknown and None)."""
    wanted = dict((k.lower(), v) for k, v in (settings or {}).items() if v is not None)
    if not wanted:
        return []
    running = global_variables(conn, list(wanted))
    out = []
    for name in sorted(wanted):
        if name not in running:
            continue
        variable = values.describe(name, identity, running[name])
        try:
            same = values.equal(wanted[name], running[name], variable.kind, variable.choices, limits=variable.limits)
        except values.ValueError_ as e:
            raise ValueError('static_settings.%s: %s' % (name, e))
        if not same:
            out.append(name)
    return out


def fail(module, result, msg):
    module.fail_json(msg=msg, **result)


def install(module, conn, result, server):
    """INSTALL PLUGIN and the checks after it; uninstalls again when the daemon stays silent."""
    p = module.params
    execute(conn, "INSTALL PLUGIN daemon_memcached SONAME 'libmemcached.so'")
    result['actions'].append('INSTALL PLUGIN daemon_memcached SONAME libmemcached.so')
    time.sleep(0.2)
    # Is mysqld still alive? (A daemon refusing to run as root kills it.)
    try:
        check = open_connection(p)
        check.close()
        status = plugin_status(conn)
    except (ConnectError, pymysql.err.MySQLError) as e:
        fail(module, result, 'the server stopped answering after INSTALL PLUGIN (%s); look at mysqld\'s standard '
                             'output: memcached refuses to run as root without -u root' % e)
    result['status'] = status
    if status != 'ACTIVE':
        fail(module, result, 'INSTALL PLUGIN left daemon_memcached in status %s; see the server error log' % status)
    running = global_variables(conn, ['daemon_memcached_option']).get('daemon_memcached_option')
    result['daemon_option'] = running
    host, port = probe_target(module)
    version, error = wait_for_server(host, port, 2.0, p['listen_timeout'])
    if version is None:
        execute(conn, 'UNINSTALL PLUGIN daemon_memcached')
        result['actions'].append('UNINSTALL PLUGIN daemon_memcached (the daemon did not answer)')
        result['status'] = plugin_status(conn)
        fail(module, result, 'the plugin is ACTIVE but nothing answers memcache on %s:%s within %ss (%s); the port '
                             'is probably taken by another process (the daemon then only complains on mysqld\'s '
                             'standard output). The plugin was uninstalled again.'
                             % (host, port, p['listen_timeout'], error))
    result['memcache_version'] = version
    if p['daemon_option'] is not None and (running or '').strip() != p['daemon_option'].strip():
        fail(module, result, 'the plugin runs with daemon_memcached_option %r instead of %r' % (running, p['daemon_option']))


def probe_target(module):
    p = module.params
    opts = parse_daemon_option(p['daemon_option'] or '')
    port = p['port'] or int(opts.get('p', 11211))
    host = p['host']
    if host is None:
        bind = opts.get('l')
        host = bind if bind and bind not in ('0.0.0.0', '::', '*') and ',' not in bind else '127.0.0.1'
    return host, port


def preinstall_checks(module, conn, result, server, identity, running_option=None):
    """Everything INSTALL PLUGIN needs, checked before anything changes (also before the UNINSTALL of a
    reload). running_option: the daemon_memcached_option of the plugin running now, whose port is its
    own and free again once it is uninstalled."""
    p = module.params

    def fail(module, result, msg):
        if module.check_mode:
            # Earlier steps of the same run (schema, drop-in) have not really happened in check mode.
            result.setdefault('preinstall_problems', []).append(msg)
            module.warn('in a real run INSTALL PLUGIN could be refused: %s' % msg)
            return
        module.fail_json(msg=msg, **result)

    tables = query(conn, 'SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s',
                   (CONFIG_SCHEMA,))
    if not set(r['t'] for r in tables) >= set(['containers', 'cache_policies', 'config_options']):
        fail(module, result, 'the %s configuration schema is missing or incomplete: load it first '
                             '(dbfleet.innodb.memcached_config)' % CONFIG_SCHEMA)
    elif query_one(conn, 'SELECT COUNT(*) AS n FROM `innodb_memcache`.`containers`')['n'] == 0:
        fail(module, result, 'innodb_memcache.containers is empty: define a container first '
                             '(dbfleet.innodb.memcached_config)')
    if p['daemon_option'] is not None:
        if not server.get('_local') or server.get('option_files_source') == 'unavailable':
            module.warn('cannot tell which option files INSTALL PLUGIN will read (%s); the daemon options are '
                        'checked after installing' % '; '.join(server.get('notes') or ['server process not found']))
        else:
            files = server.get('option_files') or []
            read = optionfiles.read_option_files(files, server.get('option_groups') or ['mysqld', 'server'])
            value, entry = optionfiles.lookup(read.entries, 'daemon_memcached_option')
            source = '%s:%s' % (entry.file, entry.line) if entry else None
            result['option_files'] = dict(files=files, value=value, source=source)
            if (value or '').strip() != p['daemon_option'].strip():
                fail(module, result, 'INSTALL PLUGIN reads the option files again, and they give daemon_memcached_option '
                                     '%r (from %s) instead of %r (files read: %s). Make sure the drop-in directory is '
                                     'included by the server\'s option file.'
                                     % (value, source or 'nowhere: the default, port 11211 on all addresses',
                                        p['daemon_option'], ', '.join(read.files_read) or 'none'))
    effective = p['daemon_option']
    if effective is None and result.get('option_files'):
        effective = result['option_files'].get('value')
    if server.get('runs_as_root') and not daemon_option_has_user(effective or ''):
        fail(module, result, 'mysqld runs as root and daemon_memcached_option has no -u: memcached would refuse to '
                             'run as root and INSTALL PLUGIN would take mysqld down. Add "-u root" (the role does).')
    if server.get('runs_as_root') is None and not daemon_option_has_user(effective or ''):
        module.warn('cannot tell whether mysqld runs as root; if it does, INSTALL PLUGIN without -u root in '
                    'daemon_memcached_option stops it (set runs_as_root)')
    host, port = probe_target(module)
    if running_option is not None and port == int(parse_daemon_option(running_option).get('p', 11211)):
        return
    if port_answers(host, port):
        fail(module, result, 'something already listens on %s:%s; the daemon could not listen there (the plugin would '
                             'be ACTIVE but silent). Free the port or choose another one.' % (host, port))


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(
        state=dict(type='str', choices=['present', 'absent'], default='present'),
        preflight_only=dict(type='bool', default=False),
        daemon_option=dict(type='str'),
        port=dict(type='int'),
        host=dict(type='str'),
        listen_timeout=dict(type='float', default=10),
        runs_as_root=dict(type='bool'),
        static_settings=dict(type='dict', default={}),
        reload=dict(type='bool', default=False),
        reload_reason=dict(type='str'),
        fallback_option_files=dict(type='list', elements='path', default=[]),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    p = module.params
    if p['port'] is not None and not 1 <= p['port'] <= 65535:
        module.fail_json(msg='port must be between 1 and 65535, got %s' % p['port'])
    if p['daemon_option'] is not None:
        opts = parse_daemon_option(p['daemon_option'])
        if 'p' in opts and not (opts['p'].isdigit() and 1 <= int(opts['p']) <= 65535):
            module.fail_json(msg='daemon_option: -p must be a port between 1 and 65535, got %r' % opts['p'])
        if 'l' not in opts:
            module.warn('daemon_option has no -l: the daemon listens on all addresses, without authentication')

    result = dict(changed=False, supported=False, reason='', server={}, missing_files=[], status_before=None,
                  status=None, daemon_option=None, pending_restart=[], actions=[])
    conn = connect(module)
    try:
        run(module, conn, result)
    except pymysql.err.MySQLError as e:
        module.fail_json(msg='memcached plugin step failed: %s' % error_text(e), **result)
    except ValueError as e:
        module.fail_json(msg=str(e), **result)
    finally:
        try:
            conn.close()
        except Exception:  # pylint: disable=broad-except
            pass


def run(module, conn, result):
    p = module.params
    identity, server, supported, reason, missing = gather(module, conn)
    result.update(supported=supported, reason=reason, missing_files=missing,
                  server=dict((k, v) for k, v in server.items() if not k.startswith('_')))
    status = plugin_status(conn)
    result['status_before'] = result['status'] = status
    if status is not None:
        result['daemon_option'] = global_variables(conn, ['daemon_memcached_option']).get('daemon_memcached_option')
    option_before = result['daemon_option']
    reloading = False

    if p['preflight_only']:
        module.exit_json(**result)

    if p['state'] == 'absent':
        if status is not None:
            result['changed'] = True
            result['actions'].append('UNINSTALL PLUGIN daemon_memcached')
            result['status'] = None
            if not module.check_mode:
                execute(conn, 'UNINSTALL PLUGIN daemon_memcached')
                result['status'] = plugin_status(conn)
                result['daemon_option'] = None
        if module._diff:
            result['diff'] = dict(before=dict(plugin=status), after=dict(plugin=result['status']))
        module.exit_json(**result)

    if not supported:
        module.fail_json(msg='the InnoDB memcached plugin cannot run on this server: %s; leave this host out'
                             % reason, **result)
    if p['daemon_option'] is not None:
        # The plugin's own option parser: -vl 0.0.0.0 listens on 0.0.0.0 as -l 0.0.0.0 does.
        beyond = beyond_loopback(p['daemon_option'])
        if beyond:
            module.warn('the memcached daemon will listen on %s, beyond loopback, without authentication'
                        % ', '.join(beyond))

    if status == 'ACTIVE':
        plugin_settings = dict((k, v) for k, v in p['static_settings'].items() if k.lower() in PLUGIN_VARIABLES)
        if p['daemon_option'] is not None:
            plugin_settings['daemon_memcached_option'] = p['daemon_option']
        stale_plugin = pending(conn, identity, plugin_settings)
        reason_text = p['reload_reason'] or (stale_plugin and 'running %s differ' % ', '.join(stale_plugin))
        if p['reload'] and reason_text:
            reloading = True
            # Every check before the UNINSTALL: a refused check leaves the running plugin alone.
            preinstall_checks(module, conn, result, server, identity, running_option=option_before or '')
            result['changed'] = True
            result['actions'].append('UNINSTALL PLUGIN daemon_memcached (reload: %s)' % reason_text)
            if not module.check_mode:
                execute(conn, 'UNINSTALL PLUGIN daemon_memcached')
                # The port must be free again before the new daemon binds it.
                host, port = probe_target(module)
                deadline = time.time() + 10
                while port_answers(host, port) and time.time() < deadline:
                    time.sleep(0.3)
                install(module, conn, result, server)
            else:
                result['actions'].append('INSTALL PLUGIN daemon_memcached SONAME libmemcached.so')
                result['daemon_option'] = p['daemon_option'] if p['daemon_option'] is not None else option_before
    elif status is not None:
        fail(module, result, 'daemon_memcached is installed but %s; uninstall it (state=absent) and look at the '
                             'server error log' % status)
    else:
        preinstall_checks(module, conn, result, server, identity)
        result['changed'] = True
        if module.check_mode:
            result['actions'].append('INSTALL PLUGIN daemon_memcached SONAME libmemcached.so')
            result['status'] = 'ACTIVE'
            result['daemon_option'] = p['daemon_option']
        else:
            install(module, conn, result, server)

    settings = dict(p['static_settings'])
    if p['daemon_option'] is not None:
        settings['daemon_memcached_option'] = p['daemon_option']
    if module.check_mode and (status != 'ACTIVE' or reloading):
        # A (re)install reads the plugin's options afresh: only the InnoDB ones can stay behind.
        settings = dict((k, v) for k, v in settings.items() if k.lower() not in PLUGIN_VARIABLES)
    result['pending_restart'] = pending(conn, identity, settings)
    if module._diff:
        result['diff'] = dict(before=dict(plugin=status, daemon_memcached_option=option_before),
                              after=dict(plugin=result['status'], daemon_memcached_option=result['daemon_option']))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
