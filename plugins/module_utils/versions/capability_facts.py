# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The capabilities of each flavor and version, as data: the statements, tables and features a server has
(CAPABILITIES: name -> version spans, CAPABILITY_DEFAULTS where no span holds, each with its source), those derived
from the variable table (DERIVED_CAPABILITIES), and the lookups on them (capability(), capabilities(),
option_groups_for(), memcached_support()). Sources are listed in docs/innodb-facts.md.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavors import (
    AURORA, MARIADB, MYSQL, MYSQL_LIKE, PERCONA, _lookup, _span, format_version, resolve_name)

# name -> spans whose value is the capability's value; absent means the default below.
CAPABILITIES = {
    # SET PERSIST / performance_schema.persisted_variables (not on Aurora or MariaDB).
    'set_persist': [_span((MYSQL, PERCONA), (8, 0, 0), None, True)],
    # The InnoDB memcached plugin exists in these builds (deprecated 8.0.22, removed 8.3.0).
    'memcached_plugin': [_span((MYSQL, PERCONA), (5, 6, 6), (8, 3, 0), True)],
    # The mysql_native_password authentication plugin: not loaded by default from MySQL 8.4 (mysql_native_password=ON
    # loads it), removed in 9.0 (MySQL 9.0 release notes); MariaDB keeps it.
    'mysql_native_password': [_span(MYSQL_LIKE, (4, 1, 0), (9, 0, 0), True), _span((MARIADB,), (5, 0, 0), None, True)],
    # Column of INFORMATION_SCHEMA.INNODB_METRICS that says whether a counter is on.
    'innodb_metrics_enabled_column': [_span((MARIADB,), (10, 5, 0), None, 'ENABLED')],
    # SHOW GLOBAL STATUS Innodb_adaptive_hash_hash_searches / _non_hash_searches.
    'ahi_status_counters': [_span((MARIADB,), (10, 5, 0), None, True),
                            _span((PERCONA,), (5, 5, 0), (5, 7, 0), True)],
    # DROP TABLE frees the table's AHI entries lazily (MDEV-22456), so no AHI toggle is needed.
    'ahi_lazy_drop': [_span((MARIADB,), (10, 2, 33), (10, 3, 0), True),
                      _span((MARIADB,), (10, 3, 24), (10, 4, 0), True),
                      _span((MARIADB,), (10, 4, 14), (10, 5, 0), True),
                      _span((MARIADB,), (10, 5, 4), None, True)],
    # What dbfleet.innodb.drop_tables does around DROP TABLE when AHI is ON and the strategy
    # is 'auto': 'toggle' (switch AHI off first, put it back after) or 'keep' (leave it on).
    # Decided by bench/drop_tables (numbers in docs/drop_tables.md):
    #   .venv/bin/python bench/drop_tables/run.py --host mysql80   (146 MiB AHI-hashed table, 1 GiB pool):
    #     plain DROP 6.05 s, guarded 0.74 s; server CPU per query in the window x2.5 vs x1.3 -> toggle.
    #   .venv/bin/python bench/drop_tables/run.py --host mariadb1011: plain DROP 0.56 s, guarded 0.79 s,
    #     CPU per query B/A 1.5, worst latency B/A 0.9 (lazy AHI removal, MDEV-22456) -> keep.
    #   ... --host mysql57 --rows 500000 --rounds 2: plain DROP 4.70 s, guarded 0.89 s, CPU per query
    #     B/A 0.32, worst latency B/A 0.53 -> toggle.
    #   ... --host mysql97 --rows 500000 --rounds 2 (9.7.4): plain DROP 0.97 s, guarded 0.18 s, worst
    #     latency B/A 0.56, worst 1 s throughput B/A 1.62, CPU per query B/A 0.89 -> toggle.
    #   ... --host mariadb118 --rows 500000 (11.8.9): plain DROP 0.30-0.36 s; 2 rounds said toggle, 3 rounds
    #     and a 10.11 control in the same (loaded) conditions said keep -> keep (docs/drop_tables.md).
    # Spans cover what was measured (MySQL 5.7, 8.0, 9.7) or documented (MariaDB: MDEV-22456, lazy AHI
    # removal; measured on 10.11 and 11.8). Other MySQL/Percona/Aurora versions (5.5/5.6, 8.1-9.6, 9.8+)
    # are not measured and fall to the default 'toggle' (Bug #91977: the drop removes the table's AHI
    # entries while holding the latches; current source still scans the LRU for them).
    'drop_table_ahi_strategy': [_span((MYSQL,), (5, 7, 0), (5, 8, 0), 'toggle'),
                                _span((MYSQL,), (8, 0, 0), (8, 1, 0), 'toggle'),
                                _span((MYSQL,), (9, 7, 0), (9, 8, 0), 'toggle'),
                                _span((MARIADB,), (10, 2, 33), (10, 3, 0), 'keep'),
                                _span((MARIADB,), (10, 3, 24), (10, 4, 0), 'keep'),
                                _span((MARIADB,), (10, 4, 14), (10, 5, 0), 'keep'),
                                _span((MARIADB,), (10, 5, 4), None, 'keep')],
    # Where to see which sessions hold metadata locks on a table, in order of preference;
    # the module checks at run time that the source is enabled (instrument / plugin).
    'metadata_lock_sources': [_span(MYSQL_LIKE, (5, 7, 0), None, ('performance_schema',)),
                              _span((MARIADB,), (10, 5, 0), None,
                                    ('metadata_lock_info', 'performance_schema')),
                              _span((MARIADB,), (10, 0, 7), (10, 5, 0), ('metadata_lock_info',))],
    # MariaDB skips neighbor flushing for tablespaces it detected as SSD at startup (MDEV-17380).
    'flush_neighbors_ssd_autodetect': [_span((MARIADB,), (10, 4, 4), None, True)],
    # innodb_buffer_pool_size is rounded up to chunk size x instances (MariaDB 10.8 dropped the rounding).
    'buffer_pool_chunk_rounding': [_span(MYSQL_LIKE, (5, 7, 5), None, True),
                                   _span((MARIADB,), (10, 2, 2), (10, 8, 0), True)],
    # Option-file groups the server reads (besides [mysqld-X.Y] / [mariadb-X.Y] for its version).
    'option_groups': [_span(MYSQL_LIKE, (5, 0, 0), None, ('mysqld', 'server')),
                      _span((MARIADB,), (10, 0, 0), None,
                            ('mysqld', 'server', 'mariadb', 'mariadbd', 'client-server', 'galera'))],
    # Default option files, in the order the server reads them (later files win).
    'default_option_files': [
        _span(MYSQL_LIKE, (5, 0, 0), None, ('/etc/my.cnf', '/etc/mysql/my.cnf', '~/.my.cnf')),
        _span((MARIADB,), (10, 0, 0), None, ('/etc/my.cnf', '/etc/mysql/my.cnf', '~/.my.cnf')),
    ],
    # Versioned option groups, given the version triple, are built by option_groups_for().
    'versioned_group_prefixes': [_span(MYSQL_LIKE, (5, 0, 0), None, ('mysqld',)),
                                 _span((MARIADB,), (10, 0, 0), None, ('mysqld', 'mariadb', 'mariadbd'))],
    # Statement that lists the replication channels this server replicates from.
    'replica_status_statement': [_span(MYSQL_LIKE, (8, 0, 22), None, 'SHOW REPLICA STATUS'),
                                 _span(MYSQL_LIKE, (5, 0, 0), (8, 0, 22), 'SHOW SLAVE STATUS'),
                                 _span((MARIADB,), (10, 0, 0), None, 'SHOW ALL SLAVES STATUS')],
    # Statement that lists the replicas registered with this server (SHOW SLAVE HOSTS became SHOW
    # REPLICAS in MySQL 8.0.22; MariaDB keeps SHOW SLAVE HOSTS, also spelled SHOW REPLICA HOSTS from 10.5.1).
    'replica_hosts_statement': [_span(MYSQL_LIKE, (8, 0, 22), None, 'SHOW REPLICAS')],
    # Statement that shows the binary log file and position being written (SHOW MASTER STATUS was
    # deprecated in MySQL 8.2.0 for SHOW BINARY LOG STATUS and removed in 8.4.0; 9.7.4 refuses it).
    'binlog_status_statement': [_span(MYSQL_LIKE, (8, 2, 0), None, 'SHOW BINARY LOG STATUS')],
    # How the server keeps its GTID state: 'mysql' (gtid_mode, gtid_executed, UUID:interval sets;
    # MySQL 5.6.5+) or 'mariadb' (gtid_binlog_pos / gtid_slave_pos, domain-server-sequence; 10.0.2+).
    'gtid_model': [_span(MYSQL_LIKE, (5, 6, 5), None, 'mysql'),
                   _span((MARIADB,), (10, 0, 2), None, 'mariadb')],
    # The asynchronous replication switchover (replication/switchover.py, module replication_switchover), its statements and
    # names per flavor and version. MySQL 8.0.22 added START/STOP/RESET REPLICA (for START/STOP/RESET SLAVE) and
    # 8.0.23 CHANGE REPLICATION SOURCE TO with SOURCE_* options (for CHANGE MASTER TO with MASTER_*) (MySQL 8.0
    # release notes 8.0.22 / 8.0.23, "Replication: terminology"); MariaDB keeps CHANGE MASTER TO and START/STOP/
    # RESET SLAVE (10.5.1 added REPLICA as a synonym of SLAVE only) (MariaDB KB "CHANGE MASTER TO", "START SLAVE").
    'replica_statements': [
        _span(MYSQL_LIKE, (8, 0, 23), None, dict(
            change='CHANGE REPLICATION SOURCE TO', start='START REPLICA', stop='STOP REPLICA', reset_all='RESET REPLICA ALL',
            host='SOURCE_HOST', port='SOURCE_PORT', user='SOURCE_USER', password='SOURCE_PASSWORD', ssl='SOURCE_SSL',
            gtid='SOURCE_AUTO_POSITION = 1')),
        _span(MYSQL_LIKE, (8, 0, 22), (8, 0, 23), dict(
            change='CHANGE MASTER TO', start='START REPLICA', stop='STOP REPLICA', reset_all='RESET REPLICA ALL',
            host='MASTER_HOST', port='MASTER_PORT', user='MASTER_USER', password='MASTER_PASSWORD', ssl='MASTER_SSL',
            gtid='MASTER_AUTO_POSITION = 1')),
        _span(MYSQL_LIKE, (5, 6, 5), (8, 0, 22), dict(
            change='CHANGE MASTER TO', start='START SLAVE', stop='STOP SLAVE', reset_all='RESET SLAVE ALL',
            host='MASTER_HOST', port='MASTER_PORT', user='MASTER_USER', password='MASTER_PASSWORD', ssl='MASTER_SSL',
            gtid='MASTER_AUTO_POSITION = 1')),
        _span((MARIADB,), (10, 0, 2), None, dict(
            change='CHANGE MASTER TO', start='START SLAVE', stop='STOP SLAVE', reset_all='RESET SLAVE ALL',
            host='MASTER_HOST', port='MASTER_PORT', user='MASTER_USER', password='MASTER_PASSWORD', ssl='MASTER_SSL',
            gtid='MASTER_USE_GTID = slave_pos'))],
    # The variable that keeps every write out of a demoted primary, replication's own excepted: super_read_only
    # (MySQL 5.7.8+, which also refuses users with SUPER / CONNECTION_ADMIN) or read_only (MariaDB, whose read_only
    # lets SUPER / READ_ONLY ADMIN users write: the switchover's session step ends their sessions or waits for them).
    'demote_variable': [_span(MYSQL_LIKE, (5, 7, 8), None, 'super_read_only'),
                        _span((MARIADB,), (10, 0, 0), None, 'read_only')],
    # Whether a replica writes what it applies to its own binary log: log_replica_updates from MySQL 8.0.26
    # (log_slave_updates before); MariaDB log_slave_updates (KB "Replication and Binary Log System Variables").
    'log_replica_updates_variable': [_span(MYSQL_LIKE, (8, 0, 26), None, 'log_replica_updates'),
                                     _span(MYSQL_LIKE, (5, 0, 0), (8, 0, 26), 'log_slave_updates'),
                                     _span((MARIADB,), (10, 0, 0), None, 'log_slave_updates')],
    # performance_schema.variables_info (VARIABLE_SOURCE / VARIABLE_PATH of each global value).
    'variables_info_table': [_span(MYSQL_LIKE, (8, 0, 0), None, True)],
    # information_schema.SYSTEM_VARIABLES (READ_ONLY, DEFAULT_VALUE, GLOBAL_VALUE_ORIGIN).
    'system_variables_table': [_span((MARIADB,), (10, 1, 0), None, True)],
    # Its GLOBAL_VALUE_PATH column: the option file that set a value at startup (NULL for a compiled-in default,
    # a SET GLOBAL, the command line). Not in the 10.1.1 table (the MariaDB 10.1.1 announcement lists its
    # columns); documented by the MariaDB KB and read on the lab's 10.11 and 11.8 (docs/innodb-facts.md).
    'system_variables_value_path': [_span((MARIADB,), (10, 2, 0), None, True)],
    # SELECT group_replication_set_as_primary(uuid): hands a single-primary group's primary role to a member
    # (MySQL 8.0.13+ on every member; Group Replication exists in MySQL and Percona Server, not Aurora or MariaDB).
    'group_replication_set_as_primary': [_span((MYSQL, PERCONA), (8, 0, 13), None, True)],
    # Where the real size of a file-per-table tablespace is read (FILE_SIZE: apparent size of the .ibd,
    # ALLOCATED_SIZE: bytes allocated on disk), not the statistics of information_schema.TABLES (DATA_LENGTH,
    # INDEX_LENGTH), which lag behind until ANALYZE TABLE or the statistics refresh: MySQL 8.0
    # information_schema.INNODB_TABLESPACES; MySQL 5.7 and MariaDB 10.2+ information_schema.INNODB_SYS_TABLESPACES
    # (MySQL 5.7.8 added FILE_SIZE / ALLOCATED_SIZE; MariaDB carries them from 10.2 on). Name -> 'db/table'.
    'tablespace_size_table': [_span(MYSQL_LIKE, (8, 0, 0), None, 'information_schema.INNODB_TABLESPACES'),
                              _span(MYSQL_LIKE, (5, 7, 8), (8, 0, 0), 'information_schema.INNODB_SYS_TABLESPACES'),
                              _span((MARIADB,), (10, 2, 0), None, 'information_schema.INNODB_SYS_TABLESPACES')],
    # Where the files a table owns are named (drop_tables' staged file removal, module_utils/guarded/staged_removal.py):
    # the tables catalog (NAME 'db/table' in the server's file-name encoding, 'db/table#p#p0' for a MySQL 8
    # partition, '#P#' on MySQL 5.7 and MariaDB; SPACE), the tablespaces catalog (NAME, FILE_SIZE; SPACE_TYPE
    # Single / General / System on MySQL 5.7+) and the file's path: MySQL 8.0 INNODB_DATAFILES.PATH, MySQL 5.7
    # INNODB_SYS_DATAFILES.PATH; MariaDB 10.6 removed INNODB_SYS_DATAFILES (MDEV-22343) and names the file in
    # INNODB_SYS_TABLESPACES.FILENAME (read on the lab's 10.11). MariaDB has no general tablespaces: a table whose
    # SPACE is 0 is in the system tablespace. FILE_SIZE: MySQL 5.7.8+, MariaDB 10.2+ (as tablespace_size_table).
    'tablespace_files_catalog': [
        _span(MYSQL_LIKE, (8, 0, 0), None, dict(
            tables='information_schema.INNODB_TABLES', tablespaces='information_schema.INNODB_TABLESPACES',
            datafiles='information_schema.INNODB_DATAFILES', path='d.PATH', space_type='s.SPACE_TYPE')),
        _span(MYSQL_LIKE, (5, 7, 8), (8, 0, 0), dict(
            tables='information_schema.INNODB_SYS_TABLES', tablespaces='information_schema.INNODB_SYS_TABLESPACES',
            datafiles='information_schema.INNODB_SYS_DATAFILES', path='d.PATH', space_type='s.SPACE_TYPE')),
        _span((MARIADB,), (10, 2, 0), (10, 6, 0), dict(
            tables='information_schema.INNODB_SYS_TABLES', tablespaces='information_schema.INNODB_SYS_TABLESPACES',
            datafiles='information_schema.INNODB_SYS_DATAFILES', path='d.PATH', space_type=None)),
        _span((MARIADB,), (10, 6, 0), None, dict(
            tables='information_schema.INNODB_SYS_TABLES', tablespaces='information_schema.INNODB_SYS_TABLESPACES',
            datafiles=None, path='s.FILENAME', space_type=None)),
    ],
}

CAPABILITY_DEFAULTS = {
    'set_persist': False,
    'memcached_plugin': False,
    'mysql_native_password': False,
    'innodb_metrics_enabled_column': 'STATUS',
    'ahi_status_counters': False,
    'ahi_lazy_drop': False,
    'drop_table_ahi_strategy': 'toggle',
    'metadata_lock_sources': (),
    'flush_neighbors_ssd_autodetect': False,
    'buffer_pool_chunk_rounding': False,
    'option_groups': ('mysqld', 'server'),
    'default_option_files': ('/etc/my.cnf', '/etc/mysql/my.cnf', '~/.my.cnf'),
    'versioned_group_prefixes': ('mysqld',),
    'replica_status_statement': 'SHOW SLAVE STATUS',
    'binlog_status_statement': 'SHOW MASTER STATUS',
    'replica_hosts_statement': 'SHOW SLAVE HOSTS',
    'variables_info_table': False,
    'system_variables_table': False,
    'system_variables_value_path': False,
    'gtid_model': None,
    'replica_statements': None,
    'demote_variable': 'read_only',
    'log_replica_updates_variable': 'log_slave_updates',
    'group_replication_set_as_primary': False,
    'tablespace_size_table': None,
    'tablespace_files_catalog': None,
}

# Why a capability is missing, for messages.
MEMCACHED_UNSUPPORTED_REASON = {
    MARIADB: 'MariaDB never shipped the InnoDB memcached plugin',
    AURORA: 'Aurora MySQL does not offer the InnoDB memcached plugin',
    'removed': 'the InnoDB memcached plugin was removed in MySQL 8.3.0 (deprecated since 8.0.22)',
    'too_old': 'the InnoDB memcached plugin first shipped in MySQL 5.6.6',
}


def capability(name, flavor, version):
    """The value of capability name for flavor/version."""
    span = _lookup(CAPABILITIES[name], flavor, version)
    return span.value if span else CAPABILITY_DEFAULTS[name]


def capabilities(flavor, version):
    """All capabilities as a dict, for facts (derived ones included, e.g. ahi_partition_variable)."""
    result = dict((name, capability(name, flavor, version)) for name in sorted(CAPABILITIES))
    for name, derive in DERIVED_CAPABILITIES.items():
        result[name] = derive(flavor, version)
    return result


def option_groups_for(flavor, version):
    """Option-file groups the server reads, in order of increasing precedence within a file."""
    groups = list(capability('option_groups', flavor, version))
    major_minor = '%d.%d' % (version[0], version[1])
    for prefix in capability('versioned_group_prefixes', flavor, version):
        groups.append('%s-%s' % (prefix, major_minor))
    return tuple(groups)


def ahi_partition_variable(flavor, version):
    """The AHI partition variable name, or None (MySQL 5.6 and older have none).

    The one source is VARIABLES (which spelling exists where) and ALIASES (which spellings mean
    the partitions); callers ask here, never a table of their own."""
    return resolve_name('innodb_adaptive_hash_index_parts', flavor, version)


# Facts derived from VARIABLES rather than kept twice: name -> function(flavor, version).
DERIVED_CAPABILITIES = {
    'ahi_partition_variable': ahi_partition_variable,
}


def memcached_support(flavor, version):
    """(supported, reason) for the InnoDB memcached plugin on flavor/version."""
    if capability('memcached_plugin', flavor, version):
        return True, 'the InnoDB memcached plugin exists in %s %s' % (flavor, format_version(version))
    if flavor in MEMCACHED_UNSUPPORTED_REASON:
        return False, MEMCACHED_UNSUPPORTED_REASON[flavor]
    if tuple(version) >= (8, 3, 0):
        return False, MEMCACHED_UNSUPPORTED_REASON['removed']
    return False, MEMCACHED_UNSUPPORTED_REASON['too_old']
