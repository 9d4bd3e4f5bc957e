# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an upgrade target needs to know of one server, read over its connection: the tables whose engine the server or
the target lacks (read_blockers()), and the server's settings from every place they come from, what it uses, for the
upgrade findings (read_upgrade(): versions/upgrade.py). Loaded only by an audit with an upgrade target.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import all_global_variables, error_text, execute, query
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts


def read_blockers(conn, identity, target):
    """Upgrade blockers (storage_engines.upgrade_blockers) from the server's tables, over conn."""
    # Imported here: only an audit with an upgrade target compiles the storage engines' code.
    from ansible_collections.dbfleet.innodb.plugins.module_utils import storage_engines
    if flavors.variable_facts('information_schema_stats_expiry', identity.flavor, identity.version):
        # Session only: the sizes are read live instead of from the statistics cache.
        execute(conn, 'SET SESSION information_schema_stats_expiry = 0')
    tables = storage_engines.read_tables(conn, query)
    return storage_engines.upgrade_blockers(tables, identity, target), storage_engines.warnings_for(
        tables, identity, target)


def read_upgrade(conn, identity, target, catalog, variables, plan, parsed, persisted):
    """The upgrade findings (upgrade.findings) of this server's settings for target, over conn: every global
    variable and where its value came from, the option files read again for the target's option groups, the command
    line, mysqld-auto.cnf, and what the target drops that the server uses (upgrade.result()). catalog: the target's
    facts (upgrade.Target)."""
    # Imported here: only an audit with an upgrade target compiles the upgrade code (a module's payload runs from a
    # zip, compiled on every run).
    from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import upgrade
    from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import upgrade_settings
    target_facts = upgrade.Target(target[0], target[1], catalog)
    notes = []
    if target[0] != identity.flavor:
        notes.append('%s to %s is a migration to another flavor, not an in-place upgrade: the settings are compared '
                     'as for one' % (flavors.display_name(identity.flavor), target_facts.label))
    runtime = variables if isinstance(variables, dict) else all_global_variables(conn)
    table, reason = server_facts.variable_table(conn, identity, list(runtime))
    compared = runtime
    if reason:
        compared = {}       # without where each value came from, a value set at run time would pass for a default
        notes.append('%s: the defaults the server relies on are not compared' % reason)
    origins = dict((name, row.get('origin')) for name, row in table.items())
    settings = upgrade_settings.persisted_settings(persisted)
    current_entries, target_entries = (), None
    if plan['source'] == 'unavailable':
        rows = dict((name, dict(row, value=runtime.get(name))) for name, row in table.items() if name not in persisted)
        settings += upgrade_settings.origin_settings(rows)
        notes.append('%s: the settings are those the server records as set by a file or the command line (an option '
                     'that is no variable, or a line written loose-, is not seen)' % plan['note'])
    else:
        suffix = plan['command_line'].group_suffix if plan['command_line'] else None
        groups = optionfiles.group_names(capability_facts.option_groups_for(target[0], target[1]), suffix)
        target_parsed = optionfiles.read_option_files(plan['files'], groups)
        current_entries, target_entries = parsed.entries, target_parsed.entries
        settings += upgrade_settings.option_settings(target_entries)
        if plan['command_line']:
            settings += upgrade_settings.option_settings(plan['command_line'].options, 'command_line')
    uses = dict(memcached_plugin=False, native_password_accounts=[])
    try:
        rows = query(conn, "SELECT PLUGIN_NAME FROM information_schema.PLUGINS WHERE PLUGIN_NAME = "
                           "'daemon_memcached' AND PLUGIN_STATUS = 'ACTIVE'")
        uses['memcached_plugin'] = bool(rows)
        if capability_facts.capability('mysql_native_password', identity.flavor, identity.version) \
                and not capability_facts.capability('mysql_native_password', target[0], target[1]):
            rows = query(conn, "SELECT CONCAT(User, '@', Host) AS account FROM mysql.user "
                               "WHERE plugin = 'mysql_native_password' ORDER BY User, Host")
            uses['native_password_accounts'] = [_decoded(r['account']) for r in rows]
    except connection.pymysql.err.MySQLError as e:
        notes.append('what the server uses (plugins, accounts) could not be read: %s' % error_text(e))
    items = upgrade.findings(target_facts, identity, settings, compared, origins, uses, current_entries, target_entries)
    return upgrade.result(target_facts, items, notes)


def _decoded(value):
    return value.decode('utf-8', 'replace') if isinstance(value, bytes) else value
