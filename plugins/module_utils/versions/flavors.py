# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The server variables of each flavor and version, as data: the flavors' names, the version spans, the variable
table (VARIABLES: kind, dynamic, default, range of each variable per flavor/version), its other spellings
(ALIASES), the variables later versions removed or renamed (RENAMED_VARIABLES, REDO_LOG), those a server ignores
or fixes at initialisation, and the lookups on them (variable_facts(), resolve_name(), runtime_flag(), ...).

Modules and roles ask through these functions instead of writing their own `if`s. The other version facts are
in the same package: capabilities (capability_facts.py), storage engines (engine_facts.py), clusters
(cluster_facts.py); who a server is, in identity.py. Sources are listed in docs/innodb-facts.md.
"""

from __future__ import annotations

from collections import namedtuple

MYSQL = 'mysql'
PERCONA = 'percona'
MARIADB = 'mariadb'
AURORA = 'aurora-mysql'
FLAVORS = (MYSQL, PERCONA, MARIADB, AURORA)
MYSQL_LIKE = (MYSQL, PERCONA, AURORA)
ANY = FLAVORS
# How messages name each flavor.
DISPLAY_NAMES = {MYSQL: 'MySQL', PERCONA: 'Percona Server', MARIADB: 'MariaDB', AURORA: 'Aurora MySQL'}

# A version range [since, until): until None means "and later".
Span = namedtuple('Span', 'flavors since until value')


def _span(flavors, since, until, value):
    return Span(tuple(flavors), tuple(since), tuple(until) if until else None, value)


# ---------------------------------------------------------------- variables
# Var: kind is bool | int | size | enum | str; dynamic None means "not known"; default, minimum,
# maximum None mean "not known or depends on the machine". plugin: the variable exists only while
# that plugin is loaded (None: it is the server's or InnoDB's own).
# Each span is asserted against every real server of the lab by tests/integration/local/flavors/test_version_truth.py.
# block_size: the server rounds a number down to a multiple of it (where the server's own catalog does not say:
# MySQL's performance_schema tables have no block size; MariaDB's SYSTEM_VARIABLES.NUMERIC_BLOCK_SIZE wins).
VarFacts = namedtuple('VarFacts', 'name kind dynamic default minimum maximum choices plugin block_size')


def _v(kind, dynamic, default=None, minimum=None, maximum=None, choices=None, plugin=None, block_size=None):
    return dict(kind=kind, dynamic=dynamic, default=default, minimum=minimum, maximum=maximum,
                choices=choices, plugin=plugin, block_size=block_size)


# name -> list of spans whose value is the facts dict for that flavor/version range.
VARIABLES = {
    'innodb_adaptive_hash_index': [
        _span(MYSQL_LIKE, (5, 0, 0), (8, 4, 0), _v('bool', True, 'ON')),
        _span((MYSQL, PERCONA), (8, 4, 0), None, _v('bool', True, 'OFF')),
        # Aurora MySQL 8.4 (first minor 8.4.7): a cluster parameter; its default is the parameter group's.
        _span((AURORA,), (8, 4, 0), None, _v('bool', True)),
        _span((MARIADB,), (5, 0, 0), (10, 5, 0), _v('bool', True, 'ON')),
        _span((MARIADB,), (10, 5, 0), (13, 1, 1), _v('bool', True, 'OFF')),
        # MDEV-37070: OFF / ON / IF_SPECIFIED (only tables created with ADAPTIVE_HASH_INDEX=YES).
        _span((MARIADB,), (13, 1, 1), None, _v('enum', True, 'OFF', choices=('OFF', 'ON', 'IF_SPECIFIED'))),
    ],
    'innodb_adaptive_hash_index_parts': [
        _span((MYSQL, PERCONA, AURORA), (5, 7, 8), None, _v('int', False, 8, 1, 512)),
        _span((MARIADB,), (10, 2, 0), None, _v('int', False, 8, 1, 512)),
    ],
    'innodb_adaptive_hash_index_partitions': [
        _span((PERCONA,), (5, 5, 0), (5, 7, 0), _v('int', False, 1, 1, 64)),
    ],
    # MDEV-37482: in 11.8.4+, 12.1.2+ and 12.2.1+, not in 12.0. The compiled default is the minimum;
    # a server started with it sizes the hash table from innodb_buffer_pool_size instead.
    'innodb_adaptive_hash_index_cells': [
        _span((MARIADB,), (11, 8, 4), (11, 9, 0), _v('int', True)),
        _span((MARIADB,), (12, 1, 2), (12, 2, 0), _v('int', True)),
        _span((MARIADB,), (12, 2, 1), None, _v('int', True)),
    ],
    'innodb_flush_neighbors': [
        _span(MYSQL_LIKE, (5, 6, 0), (8, 0, 0), _v('int', True, 1, 0, 2)),
        _span(MYSQL_LIKE, (8, 0, 0), None, _v('int', True, 0, 0, 2)),
        _span((MARIADB,), (10, 0, 0), None, _v('int', True, 1, 0, 2)),
    ],
    'innodb_io_capacity': [
        _span(MYSQL_LIKE, (5, 5, 0), (8, 4, 0), _v('int', True, 200, 100)),
        _span((MYSQL, PERCONA), (8, 4, 0), None, _v('int', True, 10000, 100)),
        _span((AURORA,), (8, 4, 0), None, _v('int', True, None, 100)),
        _span((MARIADB,), (10, 0, 0), None, _v('int', True, 200, 100)),
    ],
    'innodb_io_capacity_max': [
        _span(ANY, (5, 6, 0), None, _v('int', True, None, 100)),
    ],
    'innodb_buffer_pool_size': [
        _span(MYSQL_LIKE, (5, 7, 5), None, _v('size', True, 134217728)),
        _span(MYSQL_LIKE, (5, 0, 0), (5, 7, 5), _v('size', False, 134217728)),
        _span((MARIADB,), (10, 2, 2), None, _v('size', True, 134217728)),
    ],
    'innodb_buffer_pool_instances': [
        _span(MYSQL_LIKE, (5, 5, 0), None, _v('int', False)),
        # MariaDB 10.5.1+ ignores it (one buffer pool); 10.6.0 removed it.
        _span((MARIADB,), (10, 0, 0), (10, 6, 0), _v('int', False)),
    ],
    'innodb_buffer_pool_chunk_size': [
        _span(MYSQL_LIKE, (5, 7, 5), None, _v('size', False, 134217728)),
        _span((MARIADB,), (10, 2, 2), (10, 8, 1), _v('size', False, 134217728)),
        # 0 = autosize from 10.8.1; ignored (kept for compatibility) from 10.11.12 / 11.4.6 / 11.8.2.
        _span((MARIADB,), (10, 8, 1), None, _v('size', False, 0)),
    ],
    'innodb_dedicated_server': [
        _span((MYSQL, PERCONA), (8, 0, 3), None, _v('bool', False, 'OFF')),
    ],
    'innodb_lru_scan_depth': [
        _span(MYSQL_LIKE, (5, 6, 0), None, _v('int', True, 1024, 100)),
        _span((MARIADB,), (10, 0, 0), (10, 5, 7), _v('int', True, 1024, 100)),
        _span((MARIADB,), (10, 5, 7), None, _v('int', True, 1536, 100)),   # MDEV-23399
    ],
    'innodb_flush_method': [
        _span(MYSQL_LIKE, (5, 0, 0), None, _v('enum', False, None, choices=(
            'fsync', 'O_DSYNC', 'littlesync', 'nosync', 'O_DIRECT', 'O_DIRECT_NO_FSYNC'))),
        _span((MARIADB,), (10, 0, 0), None, _v('enum', False, None, choices=(
            'fsync', 'O_DSYNC', 'littlesync', 'nosync', 'O_DIRECT', 'O_DIRECT_NO_FSYNC'))),
    ],
    'innodb_flush_log_at_trx_commit': [
        _span(MYSQL_LIKE, (5, 0, 0), None, _v('int', True, 1, 0, 2)),
        _span((MARIADB,), (10, 0, 0), None, _v('int', True, 1, 0, 3)),    # 3: MariaDB's own
    ],
    'innodb_log_file_size': [
        # MySQL: deprecated 8.0.30 (innodb_redo_log_capacity); absent from 9.7.4 (the lab's server). The 9.x
        # release that removed it is not confirmed: 9.0-9.6 are treated as without it.
        _span(MYSQL_LIKE, (5, 0, 0), (9, 0, 0), _v('size', False)),
        _span((MARIADB,), (10, 0, 0), (10, 9, 0), _v('size', False)),
        _span((MARIADB,), (10, 9, 0), None, _v('size', True)),  # MDEV-27812: resized online
    ],
    'innodb_log_write_ahead_size': [
        _span(MYSQL_LIKE, (5, 7, 4), None, _v('size', True, 8192)),
        # MariaDB: dynamic in 10.2-10.7, removed in 10.8 (MDEV-14425), back as a static setting
        # in 10.11.9 and 11.4.3 (MDEV-33894). Other short-term series are not listed: not known.
        _span((MARIADB,), (10, 2, 0), (10, 8, 0), _v('size', True, 8192)),
        _span((MARIADB,), (10, 11, 9), (10, 12, 0), _v('size', False, 512, 512, 4096)),
        _span((MARIADB,), (11, 4, 3), (11, 5, 0), _v('size', False, 512, 512, 4096)),
        _span((MARIADB,), (11, 8, 0), None, _v('size', False, 512, 512, 4096)),
    ],
    # Redo log size, replacing innodb_log_file_size / innodb_log_files_in_group (MySQL 8.0.30+). SET GLOBAL rounds
    # it down to a multiple of 1 MiB (8.0.33 and 9.7.4 of the lab: 209727543 -> 209715200, warning 1292).
    'innodb_redo_log_capacity': [
        _span((MYSQL, PERCONA), (8, 0, 30), None, _v('size', True, 104857600, 8388608, block_size=1048576)),
    ],
    # Number of redo log files: MySQL until 9.0 (deprecated 8.0.30, absent from 9.7.4 of the lab), MariaDB until
    # 10.6.0 (one file from 10.5.2 on, whatever it says). REDO_LOG below folds it into the size a server takes.
    'innodb_log_files_in_group': [
        _span(MYSQL_LIKE, (5, 0, 0), (9, 0, 0), _v('int', False, 2, 2, 100)),
        _span((MARIADB,), (10, 0, 0), (10, 6, 0), _v('int', False, None, 1, 100)),
    ],
    # Dynamic from MySQL 8.0 (read-only on MariaDB: 10.11.19 and 11.8.9 of the lab); default 64 MiB from MySQL 8.4.
    # MySQL rounds down to a multiple of 1024 (8.0.33 and 9.7.4: 20000001 -> 19999744), MariaDB 4096 (its catalog).
    'innodb_log_buffer_size': [
        _span(MYSQL_LIKE, (8, 0, 0), (8, 4, 0), _v('size', True, 16777216, block_size=1024)),
        _span((MYSQL, PERCONA), (8, 4, 0), None, _v('size', True, 67108864, block_size=1024)),
        _span((AURORA,), (8, 4, 0), None, _v('size', True, block_size=1024)),
        _span((MARIADB,), (10, 0, 0), None, _v('size', False, block_size=4096)),
    ],
    'innodb_sort_buffer_size': [
        _span(MYSQL_LIKE, (5, 6, 4), None, _v('size', False, 1048576, 65536, 67108864)),
        _span((MARIADB,), (10, 0, 0), None, _v('size', False, 1048576, 65536, 67108864)),
    ],
    # Read-only on MySQL; dynamic on MariaDB from 10.11 (MDEV-11026; 10.11.19 and 11.8.9 of the lab accept SET GLOBAL).
    'innodb_read_io_threads': [
        _span(MYSQL_LIKE, (5, 5, 0), None, _v('int', False, None, 1, 64)),
        _span((MARIADB,), (10, 11, 0), None, _v('int', True, 4, 1, 64)),
    ],
    'innodb_write_io_threads': [
        _span(MYSQL_LIKE, (5, 5, 0), None, _v('int', False, 4, 1, 64)),
        _span((MARIADB,), (10, 11, 0), None, _v('int', True, 4, 2, 64)),
    ],
    'innodb_lock_wait_timeout': [
        _span(MYSQL_LIKE, (5, 5, 0), None, _v('int', True, 50, 1)),
        _span((MARIADB,), (10, 0, 0), None, _v('int', True, 50)),
    ],
    'innodb_print_all_deadlocks': [
        _span(MYSQL_LIKE, (5, 6, 2), None, _v('bool', True, 'OFF')),
        _span((MARIADB,), (10, 0, 0), None, _v('bool', True, 'OFF')),
    ],
    'innodb_stats_persistent_sample_pages': [
        _span(MYSQL_LIKE, (5, 6, 2), None, _v('int', True, 20, 1)),
        _span((MARIADB,), (10, 0, 0), None, _v('int', True, 20, 1)),
    ],
    'innodb_page_size': [
        _span(MYSQL_LIKE, (5, 6, 4), None, _v('int', False, 16384, 4096, 65536)),
        _span((MARIADB,), (10, 0, 0), None, _v('int', False, 16384, 4096, 65536)),
    ],
    'innodb_read_only': [
        _span(ANY, (5, 6, 0), None, _v('bool', False, 'OFF')),
    ],
    'read_only': [
        _span(ANY, (5, 0, 0), None, _v('bool', True, 'OFF')),
    ],
    'super_read_only': [
        _span(MYSQL_LIKE, (5, 7, 8), None, _v('bool', True, 'OFF')),
    ],
    'lock_wait_timeout': [
        _span(MYSQL_LIKE, (5, 5, 0), None, _v('int', True, 31536000, 1)),
        _span((MARIADB,), (10, 0, 0), None, _v('int', True, 86400)),
    ],
    # MySQL 8 caches information_schema.TABLES sizes for this long (0 = read them live).
    'information_schema_stats_expiry': [
        _span((MYSQL, PERCONA, AURORA), (8, 0, 3), None, _v('int', True, 86400, 0, 31536000)),
    ],
    'innodb_monitor_enable': [
        _span(ANY, (5, 6, 0), None, _v('str', True)),
    ],
    'daemon_memcached_option': [
        _span((MYSQL, PERCONA), (5, 6, 6), (8, 3, 0), _v('str', False, '', plugin='daemon_memcached')),
    ],
    'daemon_memcached_r_batch_size': [
        _span((MYSQL, PERCONA), (5, 6, 6), (8, 3, 0), _v('int', False, 1, 1, 1073741824,
                                                         plugin='daemon_memcached')),
    ],
    'daemon_memcached_w_batch_size': [
        _span((MYSQL, PERCONA), (5, 6, 6), (8, 3, 0), _v('int', False, 1, 1, 1048576,
                                                         plugin='daemon_memcached')),
    ],
    # The drain of a cluster member before its restart (role restart, restart_cluster_drain; cluster_drain.DRAIN_METHODS).
    # wsrep_reject_queries: MariaDB 10.1.17 (MW-245, Galera 25.3.16; MariaDB KB "Galera Cluster System Variables"),
    # in every MariaDB server built with wsrep, listed whether or not a Galera provider is loaded.
    'wsrep_reject_queries': [
        _span((MARIADB,), (10, 1, 17), None, _v('enum', True, 'NONE', choices=('NONE', 'ALL', 'ALL_KILL'))),
    ],
    # offline_mode: MySQL 5.7.5 (WL#3836); MariaDB has no such variable; Aurora MySQL does not document it.
    'offline_mode': [
        _span((MYSQL, PERCONA), (5, 7, 5), None, _v('bool', True, 'OFF')),
    ],
    # The InnoDB API variables outlived the memcached plugin: MySQL 9.7.4 still has them (lab server).
    'innodb_api_enable_binlog': [
        _span((MYSQL, PERCONA), (5, 6, 6), None, _v('bool', False, 'OFF')),
    ],
    'innodb_api_enable_mdl': [
        _span((MYSQL, PERCONA), (5, 6, 6), None, _v('bool', False, 'OFF')),
    ],
    'innodb_api_trx_level': [
        _span((MYSQL, PERCONA), (5, 6, 6), None, _v('int', True, 0, 0, 3)),
    ],
    # MyRocks (the myrocks role): variables of the ROCKSDB plugin (MariaDB 10.2.5+, Percona Server 5.7+). Ranges and
    # whether each is dynamic from the MariaDB KB "MyRocks System Variables" (docs/storage_engines.md); a server
    # that reports whether a variable is dynamic (information_schema.SYSTEM_VARIABLES) is believed first.
    'rocksdb_block_cache_size': [
        _span((MARIADB,), (10, 2, 5), None, _v('int', True, None, 1024, plugin='rocksdb')),
        _span((PERCONA,), (5, 7, 0), None, _v('int', True, None, 1024, plugin='rocksdb')),
    ],
    'rocksdb_flush_log_at_trx_commit': [
        _span((MARIADB,), (10, 2, 5), None, _v('int', True, None, 0, 2, plugin='rocksdb')),
        _span((PERCONA,), (5, 7, 0), None, _v('int', True, None, 0, 2, plugin='rocksdb')),
    ],
    'rocksdb_max_background_jobs': [
        _span((MARIADB,), (10, 2, 5), None, _v('int', True, None, -1, 64, plugin='rocksdb')),
        _span((PERCONA,), (5, 7, 0), None, _v('int', True, None, -1, 64, plugin='rocksdb')),
    ],
    'rocksdb_default_cf_options': [
        _span((MARIADB,), (10, 2, 5), None, _v('str', False, plugin='rocksdb')),
        _span((PERCONA,), (5, 7, 0), None, _v('str', False, plugin='rocksdb')),
    ],
}

# Names that mean the same setting on different flavors/versions. The first name
# a server has wins. Users may write any spelling; verify and the roles resolve it.
ALIASES = {
    'innodb_adaptive_hash_index_parts': ('innodb_adaptive_hash_index_parts',
                                         'innodb_adaptive_hash_index_partitions'),
    'innodb_adaptive_hash_index_partitions': ('innodb_adaptive_hash_index_parts',
                                              'innodb_adaptive_hash_index_partitions'),
}

# Settings that one version names differently with another value: the redo log's size. MySQL 8.0.30+ takes
# innodb_redo_log_capacity (the total); older MySQL takes innodb_log_file_size per file x innodb_log_files_in_group
# files; MariaDB takes innodb_log_file_size (one file from 10.5.2: MDEV-20907; innodb_log_files_in_group removed in
# 10.6.0). Which server has which comes from VARIABLES; the value is converted by module_utils/roles/settings.py.
# Sources: MySQL 8.0 refman "Configuring Redo Log Capacity (MySQL 8.0.30 or Higher)"; MariaDB KB
# innodb-system-variables (innodb_log_file_size, innodb_log_files_in_group).
REDO_LOG = dict(capacity='innodb_redo_log_capacity', file_size='innodb_log_file_size',
                files='innodb_log_files_in_group')


def _gone_since(name, flavor):
    """The version from which flavor has no variable name: where its last span of VARIABLES ends (the one statement
    of a cut-over, which RENAMED_VARIABLES takes from here)."""
    return [span for span in VARIABLES[name] if flavor in span.flavors][-1].until


# Why MySQL 9 has no per-file redo log settings (RENAMED_VARIABLES: both names point at the capacity).
_REDO_LOG_GONE = ('deprecated in MySQL 8.0.30, absent from 9.7.4: the redo log is sized by %(capacity)s '
                  '(%(file_size)s x %(files)s)' % REDO_LOG)

# Variables a later version removed, with the name that does the job there (None: nothing replaces it) and why.
# Which names a version has is read from its own server (flavor_data, lab/read_flavor_data.py: a name absent from
# the lab's MySQL 9.7.4 or MariaDB 11.8.9); this table only adds where the job went. A span starts at the first
# version without the name as the vendor's release notes give it; where the notes were not checked, at the lab's
# version that lacks it. Sources: MySQL 8.4 / 9.0 "What is new" (removed features), MySQL 8.0 refman (deprecations),
# MariaDB KB "System variables removed" per release (11.0, 11.1, 11.3), read on the lab's servers.
RENAMED_VARIABLES = {
    'default_authentication_plugin': [_span((MYSQL, PERCONA), (9, 0, 0), None, (
        'authentication_policy', 'removed in MySQL 9.0 (deprecated 8.0.27): the first element of '
        'authentication_policy names the default plugin'))],
    'expire_logs_days': [_span((MYSQL, PERCONA), (8, 4, 0), None, (
        'binlog_expire_logs_seconds', 'removed in MySQL 8.4 (deprecated 8.0.3): binlog_expire_logs_seconds, in seconds'))],
    # The redo log's names: REDO_LOG (one statement of them, also read by module_utils/roles/settings.py).
    # The version that removed them: VARIABLES' spans (_gone_since()).
    REDO_LOG['file_size']: [_span((MYSQL, PERCONA), _gone_since(REDO_LOG['file_size'], MYSQL), None,
                                  (REDO_LOG['capacity'], _REDO_LOG_GONE))],
    REDO_LOG['files']: [_span((MYSQL, PERCONA), _gone_since(REDO_LOG['files'], MYSQL), None,
                              (REDO_LOG['capacity'], _REDO_LOG_GONE))],
    'master_info_repository': [_span((MYSQL, PERCONA), (9, 0, 0), None, (
        None, 'removed in MySQL 9.0: replication metadata is always kept in tables (TABLE)'))],
    'relay_log_info_repository': [_span((MYSQL, PERCONA), (9, 0, 0), None, (
        None, 'removed in MySQL 9.0: replication metadata is always kept in tables (TABLE)'))],
    'relay_log_info_file': [_span((MYSQL, PERCONA), (9, 0, 0), None, (
        None, 'removed in MySQL 9.0: replication metadata is always kept in tables'))],
    'slave_parallel_type': [_span((MYSQL, PERCONA), (8, 3, 0), None, (
        None, 'removed in MySQL 8.3: replicas always apply in parallel by LOGICAL_CLOCK'))],
    'replica_parallel_type': [_span((MYSQL, PERCONA), (8, 3, 0), None, (
        None, 'removed in MySQL 8.3: replicas always apply in parallel by LOGICAL_CLOCK'))],
    'binlog_transaction_dependency_tracking': [_span((MYSQL, PERCONA), (8, 4, 0), None, (
        None, 'removed in MySQL 8.4: dependencies are always tracked by WRITESET'))],
    'transaction_write_set_extraction': [_span((MYSQL, PERCONA), (8, 3, 0), None, (
        None, 'removed in MySQL 8.3: write sets are always extracted with XXHASH64'))],
    'mysql_native_password_proxy_users': [_span((MYSQL, PERCONA), (9, 0, 0), None, (
        None, 'the mysql_native_password plugin it belongs to was removed in MySQL 9.0'))],
    'innodb_undo_tablespaces': [_span((MYSQL, PERCONA), (8, 4, 0), None, (
        None, 'removed in MySQL 8.4 (deprecated 8.0.14): undo tablespaces are made with CREATE UNDO TABLESPACE'))],
    'old_alter_table': [_span((MARIADB,), (11, 8, 0), None, (
        'alter_algorithm', 'absent from MariaDB 11.8.9 (deprecated since 10.3.7): alter_algorithm=COPY'))],
    'wsrep_causal_reads': [_span((MARIADB,), (11, 8, 0), None, (
        'wsrep_sync_wait', 'absent from MariaDB 11.8.9 (deprecated since 10.1): wsrep_sync_wait=1'))],
    'innodb_change_buffering': [_span((MARIADB,), (11, 0, 0), None, (
        None, 'removed in MariaDB 11.0 with the change buffer (deprecated 10.9)'))],
    'innodb_change_buffer_max_size': [_span((MARIADB,), (11, 0, 0), None, (
        None, 'removed in MariaDB 11.0 with the change buffer (deprecated 10.9)'))],
}
for _name in ('innodb_defragment', 'innodb_defragment_fill_factor', 'innodb_defragment_fill_factor_n_recs',
              'innodb_defragment_frequency', 'innodb_defragment_n_pages', 'innodb_defragment_stats_accuracy'):
    RENAMED_VARIABLES[_name] = [_span((MARIADB,), (11, 1, 0), None, (
        None, 'removed in MariaDB 11.1 with InnoDB defragmentation (OPTIMIZE TABLE rebuilds the table)'))]


def replacement(name, flavor, version):
    """(new name or None, why) for a variable that flavor/version removed, or None when the table has no entry."""
    span = _lookup(RENAMED_VARIABLES.get(str(name).lower(), ()), flavor, version)
    return span.value if span else None


# Settings a server ignores while another setting has a value: name -> (other, value, why). MariaDB with a
# memory-mapped redo log (innodb_log_file_mmap=ON: 11.8.9 of the lab; 10.11.19 runs OFF) writes the log file
# itself and reports innodb_log_buffer_size as the log file size less its 12 KiB header, whatever the option files
# say (seen: innodb_log_file_size 192M -> innodb_log_buffer_size 201314304 after a restart with it set to 32M).
IGNORED_WHILE = {
    'innodb_log_buffer_size': ('innodb_log_file_mmap', 'ON', 'the redo log is memory-mapped (innodb_log_file_mmap=ON): '
                               'the server runs innodb_log_buffer_size as the log file size, whatever is configured'),
}

# Variables fixed when the data directory is created: no option file or restart changes them on a running
# installation (MySQL refman "InnoDB startup options": innodb_page_size; "Identifier case sensitivity":
# lower_case_table_names from 8.0). A settings map that names them is refused.
INIT_ONLY_VARIABLES = ('innodb_page_size', 'lower_case_table_names', 'innodb_data_home_dir')


# ---------------------------------------------------------------- lookups
def _in_span(span, flavor, version):
    if flavor not in span.flavors:
        return False
    if tuple(version) < span.since:
        return False
    return span.until is None or tuple(version) < span.until


def _lookup(spans, flavor, version):
    for span in spans:
        if _in_span(span, flavor, version):
            return span
    return None


def variable_facts(name, flavor, version):
    """VarFacts for name on flavor/version, or None when the variable does not exist there."""
    name = name.lower()
    spans = VARIABLES.get(name)
    if not spans:
        return None
    span = _lookup(spans, flavor, version)
    if span is None:
        return None
    return VarFacts(name=name, **span.value)


def _flag_versions(flavor):
    """{version: (read-only names, dynamic names)} of runtime_flags.FLAGS for flavor."""
    from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import runtime_flags
    return dict((version, flags) for (fl, version), flags in runtime_flags.FLAGS.items() if fl == flavor)


def _version_number(version):
    version = tuple(int(x) for x in tuple(version)[:3]) + (0,) * (3 - len(tuple(version)[:3]))
    return version[0] * 10000 + version[1] * 100 + min(version[2], 99)


def runtime_flag(name, flavor, version):
    """(dynamic, source) of variable name on flavor/version: whether SET GLOBAL changes it (True), it is read-only
    (False) or not known (None), and where that comes from, for messages. The version table's spans first
    (VARIABLES, hand-checked), then what a fresh lab server of that version answered to SET GLOBAL v = @@GLOBAL.v
    (runtime_flags.FLAGS, from flavor_data: lab/read_flavor_data.py): the same major.minor as a lab version, or a
    version between two lab versions, takes the nearer one's flag and says so; outside them, None."""
    facts = variable_facts(name, flavor, version)
    if facts is not None and facts.dynamic is not None:
        return facts.dynamic, 'the version table'
    known = _flag_versions(flavor)
    if not known or version is None:
        return None, None
    version = tuple(int(x) for x in tuple(version)[:3])
    same_series = [v for v in known if v[:2] == version[:2]]
    if same_series:
        nearest = same_series[0]
    elif min(known) < version < max(known):
        nearest = min(known, key=lambda v: abs(_version_number(v) - _version_number(version)))
    else:
        return None, None
    read_only, dynamic = (frozenset(text.split()) for text in known[nearest])
    label = '%s %s' % (display_name(flavor), format_version(nearest))
    where = 'a fresh %s server' % label if nearest == version else (
        'a fresh %s server, the lab version nearest to %s' % (label, format_version(version)))
    name = name.lower()
    if name in read_only:
        return False, where
    if name in dynamic:
        return True, where
    return None, None


def plugin_variables(plugin):
    """The variables of VARIABLES that exist only while plugin is loaded (a span marked plugin=...), sorted: a
    plugin installed at run time (INSTALL PLUGIN, the memcached role) brings them, the server's own
    `--verbose --help` lists them only with the plugin loaded."""
    return tuple(sorted(name for name, spans in VARIABLES.items()
                        if any(span.value.get('plugin') == plugin for span in spans)))


def exists_anywhere(name):
    """True when the knowledge tables have name on at least one flavor/version."""
    return name.lower() in VARIABLES


def resolve_name(name, flavor, version, server_names=None):
    """The variable name that setting `name` has on this flavor/version.

    server_names, when given, is the set of global variable names the server reports;
    it wins over the tables (a build may lack or add variables).
    Returns None when no spelling exists there.
    """
    name = name.lower()
    candidates = ALIASES.get(name, (name,))
    if server_names is not None:
        for cand in candidates:
            if cand in server_names:
                return cand
        if not any(exists_anywhere(c) for c in candidates):
            return None
    for cand in candidates:
        if variable_facts(cand, flavor, version) is not None:
            return cand
    return None


def display_name(flavor):
    """'MySQL', 'Percona Server', 'MariaDB', 'Aurora MySQL' (an unknown flavor as given)."""
    return DISPLAY_NAMES.get(flavor, str(flavor))


def format_version(version):
    return '.'.join(str(x) for x in version)


def settable(name, identity):
    """(True, '') or (False, reason) for whether a running server honours SET/option values of name."""
    if identity.flavor == AURORA and identity.aurora_reader and name == 'innodb_adaptive_hash_index':
        return False, ('Aurora reader instances run without the adaptive hash index whatever the '
                       'parameter group says')
    return True, ''
