# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The storage-engine facts: which flavor and version ships which storage engine, where it is deprecated or gone
(STORAGE_ENGINES, one table, with its sources), and the lookups on it (engine_status(), engine_available())."""

from __future__ import annotations

from collections import namedtuple

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavors import ANY, MARIADB, MYSQL, PERCONA, format_version

# Which flavor/version ships which storage engine, and where it is deprecated or gone. Engine names
# are keyed in upper case (INFORMATION_SCHEMA.ENGINES / TABLES spell them in mixed case: InnoDB,
# Aria, ROCKSDB, TokuDB). since: first version known to ship it; deprecated: first version that
# deprecates it; removed: first version without it (None: still there). plugin: the engine is a
# plugin library that has to be installed and loaded (it may be in a separate package).
# Sources: docs/innodb-facts.md, section "Storage engines"; asserted against the lab by
# tests/integration/local/modules/test_storage_engines.py (engines each lab server reports).
EngineFacts = namedtuple('EngineFacts', 'flavors since deprecated removed plugin note')


def _engine(flavors, since, deprecated=None, removed=None, plugin=None, note=''):
    return EngineFacts(tuple(flavors), tuple(since), tuple(deprecated) if deprecated else None,
                       tuple(removed) if removed else None, plugin, note)


STORAGE_ENGINES = {
    'INNODB': [_engine(ANY, (5, 0, 0))],
    'MYISAM': [_engine((MYSQL, PERCONA, MARIADB), (5, 0, 0))],
    # Aurora MySQL keeps database tables in InnoDB only (its migration guide: convert MyISAM first).
    'MEMORY': [_engine((MYSQL, PERCONA, MARIADB), (5, 0, 0))],
    'CSV': [_engine((MYSQL, PERCONA, MARIADB), (5, 0, 0))],
    'ARCHIVE': [_engine((MYSQL, PERCONA), (5, 0, 0)),
                _engine((MARIADB,), (5, 0, 0), plugin='ha_archive')],
    'BLACKHOLE': [_engine((MYSQL, PERCONA), (5, 0, 0)),
                  _engine((MARIADB,), (5, 0, 0), plugin='ha_blackhole')],
    'MRG_MYISAM': [_engine((MYSQL, PERCONA, MARIADB), (5, 0, 0))],
    'FEDERATED': [_engine((MYSQL, PERCONA), (5, 0, 0)),
                  _engine((MARIADB,), (5, 0, 0), plugin='ha_federatedx',
                          note='MariaDB\'s FEDERATED is FederatedX')],
    'PERFORMANCE_SCHEMA': [_engine(ANY, (5, 5, 3))],
    # MariaDB's crash-safe MyISAM successor; the mysql.* system tables use it from 10.4.
    'ARIA': [_engine((MARIADB,), (5, 1, 0), note='MariaDB\'s own engine; MySQL and Percona never shipped it')],
    'SEQUENCE': [_engine((MARIADB,), (10, 0, 0))],
    'S3': [_engine((MARIADB,), (10, 5, 0), plugin='ha_s3')],
    # MyRocks: MariaDB alpha in 10.2.5, stable in 10.2.16 / 10.3.7 (package mariadb-plugin-rocksdb);
    # Percona MyRocks from Percona Server 5.7 (package percona-server-rocksdb). Not in MySQL.
    'ROCKSDB': [_engine((MARIADB,), (10, 2, 5), plugin='ha_rocksdb',
                        note='MariaDB ships it as a separate package, mariadb-plugin-rocksdb'),
                _engine((PERCONA,), (5, 7, 0), plugin='ha_rocksdb',
                        note='Percona ships it as a separate package, percona-server-rocksdb')],
    # TokuDB: Percona deprecated it with its first 8.0 GA (8.0.13-3), built it disabled from 8.0.26-16
    # (tokudb_enabled=OFF) and dropped it in 8.0.28-19. MariaDB stopped building it in 10.5 and
    # removed it in 10.6 (MDEV-19780).
    'TOKUDB': [_engine((PERCONA,), (5, 6, 0), deprecated=(8, 0, 13), removed=(8, 0, 28), plugin='ha_tokudb',
                       note='disabled by default from Percona Server 8.0.26-16 (tokudb_enabled)'),
               _engine((MARIADB,), (5, 5, 33), removed=(10, 5, 0), plugin='ha_tokudb',
                       note='not built from MariaDB 10.5, removed from the source in 10.6 (MDEV-19780)')],
}

# Display names, as the servers spell them.
ENGINE_DISPLAY_NAMES = {
    'INNODB': 'InnoDB', 'MYISAM': 'MyISAM', 'ARIA': 'Aria', 'ROCKSDB': 'ROCKSDB (MyRocks)',
    'TOKUDB': 'TokuDB', 'MRG_MYISAM': 'MRG_MyISAM',
}

# Where each engine's lifecycle above comes from (docs/innodb-facts.md#storage-engines has the full table);
# an upgrade blocker names it.
ENGINE_SOURCES = {
    'TOKUDB': 'Percona Server release notes 8.0.13-3 (deprecated), 8.0.26-16 (disabled), 8.0.28-19 (removed); '
              'MariaDB MDEV-19780 (removed in 10.6, not built from 10.5)',
    'ROCKSDB': 'MariaDB KB "MyRocks" (mariadb-plugin-rocksdb); Percona MyRocks installation guide; '
               'never in MySQL or Aurora',
    'ARIA': 'MariaDB KB "Aria" (MariaDB only)',
    'SEQUENCE': 'MariaDB KB "Sequence storage engine" (MariaDB only)',
    'S3': 'MariaDB KB "S3 storage engine" (MariaDB 10.5+ only)',
    'ARCHIVE': 'MySQL refman "Alternative storage engines"',
    'BLACKHOLE': 'MySQL refman "Alternative storage engines"',
    'FEDERATED': 'MySQL refman "Alternative storage engines"; MariaDB KB "FederatedX"',
    'MYISAM': 'MySQL refman "Alternative storage engines"; AWS Aurora user guide (database tables in InnoDB only)',
    'MEMORY': 'MySQL refman "Alternative storage engines"; AWS Aurora user guide (database tables in InnoDB only)',
    'CSV': 'MySQL refman "Alternative storage engines"; AWS Aurora user guide (database tables in InnoDB only)',
    'MRG_MYISAM': 'MySQL refman "Alternative storage engines"; AWS Aurora user guide (database tables in '
                  'InnoDB only)',
}

# What a careful DBA converts a table of a missing engine to (the successor engines).
ENGINE_SUCCESSORS = {
    'TOKUDB': ('ROCKSDB', 'INNODB'),
    'ARIA': ('INNODB',),
    'ROCKSDB': ('INNODB',),
    'MYISAM': ('INNODB',),
}

# Engine status values of engine_status().
ENGINE_AVAILABLE = 'available'
ENGINE_DEPRECATED = 'deprecated'
ENGINE_REMOVED = 'removed'
ENGINE_NOT_YET = 'not_yet'
ENGINE_NEVER = 'never'
ENGINE_UNKNOWN = 'unknown'


def engine_key(name):
    """The STORAGE_ENGINES key of an engine name in any spelling ('InnoDB' -> 'INNODB')."""
    return str(name or '').strip().upper()


def engine_display_name(name):
    key = engine_key(name)
    return ENGINE_DISPLAY_NAMES.get(key, key)


def known_engine(name):
    return engine_key(name) in STORAGE_ENGINES


def engine_status(name, flavor, version):
    """(status, reason, facts) for engine name on flavor/version.

    status: available | deprecated (still there) | removed | not_yet | never (the flavor never
    shipped it) | unknown (the table has no facts on this engine). facts: the EngineFacts of the
    flavor, or None."""
    key = engine_key(name)
    display = engine_display_name(key)
    where = '%s %s' % (flavor, format_version(version))
    spans = STORAGE_ENGINES.get(key)
    if spans is None:
        return ENGINE_UNKNOWN, 'the collection has no facts on the %s engine' % display, None
    facts = None
    for span in spans:
        if flavor in span.flavors:
            facts = span
            break
    if facts is None:
        shipped = sorted(set(f for s in spans for f in s.flavors))
        return (ENGINE_NEVER, '%s never shipped the %s engine (it exists in %s only)'
                % (flavor, display, ', '.join(shipped)), None)
    version = tuple(version)
    note = (' (%s)' % facts.note) if facts.note else ''
    if version < facts.since:
        return (ENGINE_NOT_YET, '%s first ships the %s engine in %s%s'
                % (flavor, display, format_version(facts.since), note), facts)
    if facts.removed is not None and version >= facts.removed:
        deprecated = (', deprecated since %s' % format_version(facts.deprecated)) if facts.deprecated else ''
        return (ENGINE_REMOVED, '%s removed the %s engine in %s%s%s; %s cannot open such tables'
                % (flavor, display, format_version(facts.removed), deprecated, note, where), facts)
    if facts.deprecated is not None and version >= facts.deprecated:
        removal = (' and removed in %s' % format_version(facts.removed)) if facts.removed else ''
        return (ENGINE_DEPRECATED, '%s deprecated the %s engine in %s%s%s'
                % (flavor, display, format_version(facts.deprecated), removal, note), facts)
    return ENGINE_AVAILABLE, '%s ships the %s engine%s' % (where, display, note), facts


def engine_available(name, flavor, version):
    """True / False whether flavor/version ships engine name; None when the table does not know it."""
    status = engine_status(name, flavor, version)[0]
    if status == ENGINE_UNKNOWN:
        return None
    return status in (ENGINE_AVAILABLE, ENGINE_DEPRECATED)
