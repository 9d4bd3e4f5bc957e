# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the collection knows about server flavors and versions, as data.

Everything version- or flavor-dependent lives in the tables below; modules and
roles ask through the functions at the end instead of writing their own `if`s.
Sources are listed in docs/innodb-facts.md.
"""

from __future__ import annotations

import re
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
    # The drain of a cluster member before its restart (role restart, restart_cluster_drain; clusters.DRAIN_METHODS).
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

# ---------------------------------------------------------------- capabilities
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
    # The asynchronous replication switchover (switchover.py, module replication_switchover), its statements and
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


# ---------------------------------------------------------------- detection
_VERSION_RE = re.compile(r'^(\d+)\.(\d+)\.(\d+)')

DETECT_VARIABLES = ('version', 'version_comment', 'aurora_version', 'innodb_read_only')


def parse_version(text):
    """'10.11.19-MariaDB-0+deb12u1' -> (10, 11, 19). Raises ValueError on garbage."""
    m = _VERSION_RE.match(str(text or '').strip())
    if not m:
        raise ValueError('cannot read a version from %r' % (text,))
    return tuple(int(x) for x in m.groups())


def display_name(flavor):
    """'MySQL', 'Percona Server', 'MariaDB', 'Aurora MySQL' (an unknown flavor as given)."""
    return DISPLAY_NAMES.get(flavor, str(flavor))


def format_version(version):
    return '.'.join(str(x) for x in version)


def detect_flavor(version, version_comment='', aurora_version=None):
    """Flavor name from @@version, @@version_comment and @@aurora_version."""
    text = ('%s %s' % (version or '', version_comment or '')).lower()
    if aurora_version:
        return AURORA
    if 'mariadb' in text:
        return MARIADB
    if 'percona' in text:
        return PERCONA
    return MYSQL


class ServerIdentity(namedtuple('ServerIdentity', 'flavor version version_string aurora_reader')):
    """Who the server is: flavor, version triple, the raw version text."""

    def to_dict(self):
        return dict(flavor=self.flavor, version=list(self.version),
                    version_string=self.version_string,
                    version_text=format_version(self.version),
                    aurora_reader=self.aurora_reader)


def identity_from_variables(variables):
    """ServerIdentity from a {name: value} dict of global variables (see DETECT_VARIABLES)."""
    version_string = variables.get('version', '')
    flavor = detect_flavor(version_string, variables.get('version_comment', ''),
                           variables.get('aurora_version'))
    aurora_reader = None
    if flavor == AURORA:
        # Aurora readers run with innodb_read_only=ON.
        aurora_reader = str(variables.get('innodb_read_only', '')).upper() in ('ON', '1')
    return ServerIdentity(flavor, parse_version(version_string), version_string, aurora_reader)


def settable(name, identity):
    """(True, '') or (False, reason) for whether a running server honours SET/option values of name."""
    if identity.flavor == AURORA and identity.aurora_reader and name == 'innodb_adaptive_hash_index':
        return False, ('Aurora reader instances run without the adaptive hash index whatever the '
                       'parameter group says')
    return True, ''
