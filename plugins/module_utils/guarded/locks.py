# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who holds a metadata lock on a table: the sources a flavor offers (versions/capability_facts.py metadata_lock_sources names
them per flavor/version), each probed first, and the holders listed from the first that is enabled. The guarded-change
engine (guarded/engine.py, GuardedChange.find_blockers) refuses a change while anyone holds one.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import query, query_one

try:
    import pymysql
except ImportError:  # pragma: no cover - reported by the module
    pymysql = None


# Where metadata locks are listed (versions/capability_facts.py metadata_lock_sources names them per flavor/version):
# source -> (probe that says whether it is enabled, its column, the enabled value, the listing, its first argument).
MDL_SOURCES = {
    'performance_schema': (
        "SELECT ENABLED FROM performance_schema.setup_instruments WHERE NAME = 'wait/lock/metadata/sql/mdl'",
        'ENABLED', 'YES',
        'SELECT ml.OBJECT_SCHEMA AS db, ml.OBJECT_NAME AS tbl, ml.LOCK_TYPE AS lock_type, '
        'ml.LOCK_STATUS AS lock_status, t.PROCESSLIST_ID AS id, t.PROCESSLIST_USER AS user, '
        't.PROCESSLIST_HOST AS host, t.PROCESSLIST_COMMAND AS command, t.PROCESSLIST_TIME AS time '
        'FROM performance_schema.metadata_locks ml JOIN performance_schema.threads t '
        'ON t.THREAD_ID = ml.OWNER_THREAD_ID WHERE ml.OBJECT_TYPE = %s AND ml.OBJECT_SCHEMA = %s '
        'AND ml.OBJECT_NAME = %s AND (t.PROCESSLIST_ID IS NULL OR t.PROCESSLIST_ID <> CONNECTION_ID())',
        ('TABLE',)),
    'metadata_lock_info': (
        "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO'",
        'PLUGIN_STATUS', 'ACTIVE',
        'SELECT m.TABLE_SCHEMA AS db, m.TABLE_NAME AS tbl, m.LOCK_TYPE AS lock_type, '
        'm.LOCK_MODE AS lock_status, p.ID AS id, p.USER AS user, p.HOST AS host, '
        'p.COMMAND AS command, p.TIME AS time FROM information_schema.METADATA_LOCK_INFO m '
        'LEFT JOIN information_schema.PROCESSLIST p ON p.ID = m.THREAD_ID '
        'WHERE m.LOCK_TYPE LIKE %s AND m.TABLE_SCHEMA = %s AND m.TABLE_NAME = %s '
        'AND m.THREAD_ID <> CONNECTION_ID()',
        ('Table%',)),
}


def lock_holders(conn, source, present):
    """The sessions holding metadata locks on the tables present ([(db, table)]) from one source (MDL_SOURCES), or
    None when it is not enabled here."""
    if source not in MDL_SOURCES:  # pragma: no cover - data error
        return None
    probe, column, enabled, sql, prefix = MDL_SOURCES[source]
    try:
        on = query_one(conn, probe)
    except pymysql.err.MySQLError:
        return None
    if not on or on[column] != enabled:
        return None
    rows = []
    for db, table in present:
        for r in query(conn, sql, prefix + (db, table)):
            rows.append(dict(table='%s.%s' % (r['db'], r['tbl']), connection_id=r['id'], user=r['user'],
                             host=r['host'], command=r['command'], seconds=r['time'],
                             lock=r['lock_type'], status=r['lock_status'], source=source))
    return rows
