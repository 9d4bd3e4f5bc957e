# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Storage engines of a server: tables by engine, engines loaded, upgrade blockers.

Pure functions on rows (summarize, blockers, engine_report) are unit-tested with plain dicts;
read_engines() / read_tables() are the two queries against a live server. What each flavor/version
ships is data in engine_facts.STORAGE_ENGINES; nothing here decides it with `if`s of its own.
"""

from __future__ import annotations

import re

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import engine_facts

# Schemas of the server itself: an upgrade converts them, they are never a user's blocker.
SYSTEM_SCHEMAS = ('mysql', 'information_schema', 'performance_schema', 'sys')

# TABLE_TYPE values that hold rows (MariaDB adds SYSTEM VERSIONED and SEQUENCE).
TABLE_TYPES = ('BASE TABLE', 'SYSTEM VERSIONED', 'SEQUENCE')

LOADED_SUPPORT = ('YES', 'DEFAULT')

# An upgrade target as verify takes it: <flavor>-<major>.<minor>[.<patch>] (the flavor may hold a dash).
_TARGET_RE = re.compile(r'^([a-z]+(?:-[a-z]+)*)-(\d+\.\d+(?:\.\d+)?)$')


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _text(value):
    if isinstance(value, bytes):
        return value.decode('utf-8', 'replace')
    return value


def parse_target(target_flavor, target_version, identity):
    """(flavor, version) of the upgrade target, or None when no target is asked for.

    target_flavor defaults to the server's own flavor. Raises ValueError naming the bad input."""
    if not target_version and not target_flavor:
        return None
    if not target_version:
        raise ValueError('target_flavor %r needs target_version as well' % target_flavor)
    flavor = target_flavor or identity.flavor
    if flavor not in flavors.FLAVORS:
        raise ValueError('target_flavor %r is not one of %s' % (target_flavor, ', '.join(flavors.FLAVORS)))
    try:
        version = server_identity.parse_version(target_version if str(target_version).count('.') >= 2
                                                else '%s.0' % target_version)
    except ValueError:
        raise ValueError('target_version %r is not a version such as 8.4.0 or 11.8' % (target_version,))
    return flavor, version


def engine_rows(rows):
    """INFORMATION_SCHEMA.ENGINES rows -> list of dicts (engine, support, loaded, transactions, comment)."""
    result = []
    for row in rows:
        support = str(_text(row.get('SUPPORT')) or '').upper()
        result.append(dict(engine=_text(row.get('ENGINE')), support=support,
                           loaded=support in LOADED_SUPPORT,
                           default=support == 'DEFAULT',
                           transactions=str(_text(row.get('TRANSACTIONS')) or '').upper() == 'YES',
                           comment=_text(row.get('COMMENT')) or ''))
    return sorted(result, key=lambda e: engine_facts.engine_key(e['engine']))


def table_rows(rows):
    """INFORMATION_SCHEMA.TABLES rows -> list of dicts with sizes as ints."""
    result = []
    for row in rows:
        data = _int(row.get('DATA_LENGTH'))
        index = _int(row.get('INDEX_LENGTH'))
        result.append(dict(schema=_text(row.get('TABLE_SCHEMA')), table=_text(row.get('TABLE_NAME')),
                           engine=_text(row.get('ENGINE')), table_type=_text(row.get('TABLE_TYPE')),
                           rows_estimate=_int(row.get('TABLE_ROWS')), data_bytes=data, index_bytes=index,
                           total_bytes=data + index, data_free_bytes=_int(row.get('DATA_FREE')),
                           row_format=_text(row.get('ROW_FORMAT')),
                           create_options=_text(row.get('CREATE_OPTIONS')) or '',
                           comment=_text(row.get('TABLE_COMMENT')) or ''))
    return sorted(result, key=lambda t: (t['schema'], t['table']))


def summarize(tables):
    """Tables by engine: {engine: {tables, rows_estimate, data_bytes, index_bytes, total_bytes}}.

    A table whose engine the server cannot tell (ENGINE NULL: not loaded, or the table is broken)
    is counted under the empty name ''."""
    by_engine = {}
    for table in tables:
        entry = by_engine.setdefault(table['engine'] or '', dict(tables=0, rows_estimate=0, data_bytes=0,
                                                                 index_bytes=0, total_bytes=0))
        entry['tables'] += 1
        for key in ('rows_estimate', 'data_bytes', 'index_bytes', 'total_bytes'):
            entry[key] += table[key]
    return by_engine


def engine_lifecycle(engines, identity):
    """For each engine name: its status on the server's own flavor/version (engine_facts.engine_status)."""
    result = {}
    for name in engines:
        status, reason, facts = engine_facts.engine_status(name, identity.flavor, identity.version)
        result[name] = dict(status=status, reason=reason, plugin=facts.plugin if facts else None)
    return result


def blockers(tables, target_flavor, target_version):
    """Tables whose engine the target flavor/version does not ship, each with a clear reason.

    An engine the table does not know is a blocker too (nobody can promise it is there); so is a
    table whose engine the server itself cannot name."""
    found = []
    target = '%s %s' % (target_flavor, flavors.format_version(target_version))
    for table in tables:
        base = dict(schema=table['schema'], table=table['table'], engine=table['engine'],
                    rows_estimate=table['rows_estimate'], total_bytes=table['total_bytes'])
        if not table['engine']:
            base.update(status=engine_facts.ENGINE_UNKNOWN,
                        reason='the server reports no engine for %s.%s (%s): its engine is not loaded '
                               'or the table is damaged; %s cannot be checked'
                               % (table['schema'], table['table'], table['comment'] or 'no comment', target))
            found.append(base)
            continue
        status, reason, _facts = engine_facts.engine_status(table['engine'], target_flavor, target_version)
        if status in (engine_facts.ENGINE_AVAILABLE, engine_facts.ENGINE_DEPRECATED):
            continue
        successors = engine_facts.ENGINE_SUCCESSORS.get(engine_facts.engine_key(table['engine']), ())
        convert = [engine_facts.engine_display_name(s) for s in successors
                   if engine_facts.engine_available(s, target_flavor, target_version)]
        advice = ('; convert it first (ALTER TABLE ... ENGINE=%s)' % ' or '.join(convert)) if convert else ''
        base.update(status=status,
                    reason='%s.%s uses %s, which %s does not have: %s%s'
                           % (table['schema'], table['table'], engine_facts.engine_display_name(table['engine']),
                              target, reason, advice))
        found.append(base)
    return found


def parse_target_spec(text, name='target_version'):
    """(flavor, version) from 'mysql-8.4', 'mariadb-11.8', 'percona-8.0.28' or 'aurora-mysql-3.0';
    None for an empty value. Raises ValueError naming the input (name) and the form it takes."""
    if text is None or str(text).strip() == '':
        return None
    text = str(text).strip()
    match = _TARGET_RE.match(text)
    if match and match.group(1) in flavors.FLAVORS:
        version = match.group(2)
        return match.group(1), server_identity.parse_version(version if version.count('.') >= 2 else '%s.0' % version)
    raise ValueError('%s %r is not an upgrade target: use <flavor>-<version> with a flavor of %s, such as '
                     'mysql-8.4 or mariadb-11.8' % (name, text, ', '.join(flavors.FLAVORS)))


def upgrade_blockers(tables, identity, target):
    """The tables whose engine the server's own version or the target does not have, one finding per
    table (pure). Each: schema, table, engine, rows_estimate, total_bytes, status, reason, where
    ('current', 'target' or both), version (the flavor and version the finding is about), gone_in
    (the version that removed the engine, null when the flavor never shipped it) and source."""
    found = {}
    checks = [('current', identity.flavor, tuple(identity.version))]
    if target is not None:
        checks.append(('target', target[0], tuple(target[1])))
    for where, flavor, version in checks:
        for item in blockers(tables, flavor, version):
            key = (item['schema'], item['table'])
            if key in found:
                found[key]['where'].append(where)
                if item['reason'] not in found[key]['reason']:
                    found[key]['reason'] += '; ' + item['reason']
                continue
            spans = engine_facts.STORAGE_ENGINES.get(engine_facts.engine_key(item['engine'])) or []
            removed = [s.removed for s in spans if flavor in s.flavors and s.removed]
            item.update(where=[where], version='%s %s' % (flavor, flavors.format_version(version)),
                        gone_in=('%s %s' % (flavor, flavors.format_version(removed[0]))) if removed else None,
                        source=engine_facts.ENGINE_SOURCES.get(engine_facts.engine_key(item['engine']),
                                                               'docs/innodb-facts.md#storage-engines'))
            found[key] = item
    return [found[k] for k in sorted(found)]


def warnings_for(tables, identity, target=None):
    """Advice that is no blocker: engines deprecated on the server or on the target, and plugin
    engines the target has to load (a separate package, e.g. mariadb-plugin-rocksdb)."""
    notes = []
    engines = sorted(set(t['engine'] for t in tables if t['engine']), key=engine_facts.engine_key)
    for name in engines:
        status, reason, _facts = engine_facts.engine_status(name, identity.flavor, identity.version)
        if status == engine_facts.ENGINE_DEPRECATED:
            notes.append('%s (tables: %d)' % (reason, sum(1 for t in tables if t['engine'] == name)))
        if target is None:
            continue
        status, reason, facts = engine_facts.engine_status(name, target[0], target[1])
        if status == engine_facts.ENGINE_DEPRECATED:
            notes.append('target: %s' % reason)
        if status in (engine_facts.ENGINE_AVAILABLE, engine_facts.ENGINE_DEPRECATED) and facts is not None and facts.plugin:
            notes.append('target: the %s engine is the plugin %s; install and load it on %s %s before the '
                         'upgrade' % (engine_facts.engine_display_name(name), facts.plugin, target[0],
                                      flavors.format_version(target[1])))
    return notes


def check_engine_names(names):
    """The engine names in their table spelling; ValueError naming any name the table does not know."""
    unknown = [n for n in names or () if not engine_facts.known_engine(n)]
    if unknown:
        raise ValueError('engines: %s is not an engine the collection knows (%s)'
                         % (', '.join(repr(n) for n in unknown), ', '.join(sorted(engine_facts.STORAGE_ENGINES))))
    return [engine_facts.engine_key(n) for n in names or ()]


def engine_report(identity, engines, tables, target=None, list_tables=False, asked=()):
    """The module's result from the server's identity, engine rows and table rows (pure).

    asked: engine names (table spelling) whose lifecycle is reported even when not loaded or in use."""
    loaded = [e['engine'] for e in engines if e['loaded']]
    in_use = sorted(set(t['engine'] for t in tables if t['engine']), key=engine_facts.engine_key)
    report = dict(
        server=dict(flavor=identity.flavor, version=flavors.format_version(identity.version)),
        engines=engines,
        engines_loaded=loaded,
        default_engine=next((e['engine'] for e in engines if e['default']), None),
        by_engine=summarize(tables),
        engines_in_use=in_use,
        lifecycle=engine_lifecycle(sorted(set(in_use) | set(loaded) | set(asked), key=engine_facts.engine_key), identity),
        table_count=len(tables),
        notes=warnings_for(tables, identity, target),
    )
    if list_tables:
        report['tables'] = tables
    if target is not None:
        report['target'] = dict(flavor=target[0], version=flavors.format_version(target[1]))
        report['blockers'] = blockers(tables, target[0], target[1])
    else:
        report['target'] = None
        report['blockers'] = []
    return report


# ---------------------------------------------------------------- queries
def read_engines(conn, query):
    return engine_rows(query(conn, 'SELECT ENGINE, SUPPORT, TRANSACTIONS, COMMENT FROM information_schema.ENGINES'))


def loaded_engine_facts(conn, query, names):
    """{NAME: {loaded, tables}} for engine names (upper case): whether the server has the engine loaded
    and how many tables use it (what the myrocks role's desired state needs, role_states.myrocks())."""
    out = {}
    engines = dict((str(e['engine']).upper(), e) for e in read_engines(conn, query))
    for name in names:
        key = str(name).upper()
        rows = query(conn, 'SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE ENGINE = %s', [key])
        count = _int(rows[0].get('n')) if rows else 0
        out[key] = dict(loaded=bool(engines.get(key, {}).get('loaded')), tables=count)
    return out


def read_tables(conn, query, schemas=None, include_system_schemas=False):
    """Rows of INFORMATION_SCHEMA.TABLES (base tables only), filtered by schema."""
    sql = ('SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH, '
           'DATA_FREE, ROW_FORMAT, CREATE_OPTIONS, TABLE_COMMENT FROM information_schema.TABLES '
           'WHERE TABLE_TYPE IN (%s)' % ', '.join(['%s'] * len(TABLE_TYPES)))
    args = list(TABLE_TYPES)
    if schemas:
        sql += ' AND TABLE_SCHEMA IN (%s)' % ', '.join(['%s'] * len(schemas))
        args.extend(schemas)
    elif not include_system_schemas:
        sql += ' AND TABLE_SCHEMA NOT IN (%s)' % ', '.join(['%s'] * len(SYSTEM_SCHEMAS))
        args.extend(SYSTEM_SCHEMAS)
    return table_rows(query(conn, sql, args))


def missing_schemas(conn, query, schemas):
    """The names in schemas that the server does not have."""
    if not schemas:
        return []
    rows = query(conn, 'SELECT SCHEMA_NAME FROM information_schema.SCHEMATA')
    have = set(_text(r['SCHEMA_NAME']) for r in rows)
    return [s for s in schemas if s not in have]
