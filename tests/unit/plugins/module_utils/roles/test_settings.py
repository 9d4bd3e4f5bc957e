"""The settings role's desired state (module_utils/roles/settings.py), from a map and a fake server catalog."""

from __future__ import annotations

import functools

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts, values
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import settings

from test_desired import error_of, facts as role_facts

GIB = 1 << 30
MIB = 1 << 20
# Running values for the variables whose default the version table leaves open (a lab-like server).
FILL = dict(innodb_io_capacity_max=2000, innodb_buffer_pool_instances=1, innodb_flush_method='fsync',
            innodb_log_file_size=50331648, innodb_read_io_threads=4, innodb_log_buffer_size=16777216,
            innodb_max_dirty_pages_pct='90.000000', innodb_adaptive_hash_index_cells=0)
# Block sizes MariaDB's catalog reports (10.11.19 and 11.8.9 of the lab).
MARIADB_BLOCKS = dict(innodb_buffer_pool_size=MIB, innodb_log_file_size=4096, innodb_log_buffer_size=4096)
KIND_TYPES = dict(bool='BOOLEAN', int='BIGINT UNSIGNED', size='BIGINT UNSIGNED', enum='ENUM', str='VARCHAR',
                  float='DOUBLE')


def server(flavor='mysql', version=(8, 0, 33), running=None, memory=8 * GIB, extra=None):
    """server_facts with a catalog as server_facts.report(catalog=True) gives it: every variable of the version table
    that this server has, its running value, and what the server's own catalog says (MariaDB: type, read-only flag,
    block size, choices; MySQL: the range only)."""
    out = role_facts(flavor, version)
    running = dict(running or {})
    catalog = {}
    for name in flavors.VARIABLES:
        vf = flavors.variable_facts(name, flavor, version)
        if vf is None or vf.plugin:
            continue
        value = running.get(name, vf.default if vf.default is not None else FILL.get(name, 0))
        row = dict(value=values.as_text(value), minimum=vf.minimum, maximum=vf.maximum, block_size=None,
                   type=None, choices=None, read_only=None)
        if flavor == flavors.MARIADB:
            row.update(type=KIND_TYPES[vf.kind], read_only=not vf.dynamic if vf.dynamic is not None else None,
                       block_size=MARIADB_BLOCKS.get(name), choices=list(vf.choices) if vf.choices else None)
        catalog[name] = row
    for name, row in (extra or {}).items():
        catalog[name] = dict(dict(minimum=None, maximum=None, block_size=None, type=None, choices=None,
                                  read_only=None), **row)
    out.update(catalog=catalog, catalog_source='test',
               memory=dict(bytes=memory, source='MemTotal of the host (/proc/meminfo)') if memory else
               dict(bytes=None, reason='the server process is not on this host'))
    return out


def state(values_map, facts=None, **inputs):
    return settings.settings(dict(inputs, settings_values=values_map), facts or server())


MAP = dict(
    innodb_buffer_pool_size='50%',
    innodb_io_capacity=3000,
    innodb_io_capacity_max=6000,
    innodb_redo_log_capacity='192M',
    innodb_sort_buffer_size='2M',
    innodb_log_buffer_size='32M',
    innodb_lru_scan_depth=2048,
    innodb_flush_log_at_trx_commit=2,
    innodb_read_io_threads=6,
    innodb_lock_wait_timeout=120,
    innodb_print_all_deadlocks=True,
    innodb_flush_method='o_direct',
    innodb_max_dirty_pages_pct=None,
)


# ---------------------------------------------------------------- the whole map on each kind of server
def test_mysql80_dynamic_at_runtime_read_only_pending_rounded_and_in_the_dropin():
    out = state(MAP)
    assert out['settings'] == dict(
        innodb_buffer_pool_size=4 * GIB, innodb_io_capacity=3000, innodb_io_capacity_max=6000,
        innodb_redo_log_capacity=192 * MIB, innodb_sort_buffer_size=2 * MIB, innodb_log_buffer_size=32 * MIB,
        innodb_lru_scan_depth=2048, innodb_flush_log_at_trx_commit=2, innodb_read_io_threads=6,
        innodb_lock_wait_timeout=120, innodb_print_all_deadlocks='ON', innodb_flush_method='O_DIRECT')
    runtime = [list(item)[0] for item in out['runtime']]
    # The new capacity is above the running maximum (2000): the maximum goes first.
    assert runtime.index('innodb_io_capacity_max') < runtime.index('innodb_io_capacity')
    assert set(runtime) == {'innodb_buffer_pool_size', 'innodb_io_capacity', 'innodb_io_capacity_max',
                            'innodb_redo_log_capacity', 'innodb_log_buffer_size', 'innodb_lru_scan_depth',
                            'innodb_flush_log_at_trx_commit', 'innodb_lock_wait_timeout', 'innodb_print_all_deadlocks'}
    assert out['pending_restart'] is True
    assert out['restart_settings'] == dict(innodb_sort_buffer_size=2 * MIB, innodb_read_io_threads=6,
                                           innodb_flush_method='O_DIRECT')
    assert out['left_alone'] == ['innodb_max_dirty_pages_pct']
    assert out['memory']['innodb_buffer_pool_size'] == dict(
        written='50%', bytes=4 * GIB, memory=8 * GIB, source='MemTotal of the host (/proc/meminfo)')
    assert out['resize'] == {'from': 134217728, 'to': 4 * GIB, 'timeout': 300}
    text = out['option_file_text']
    assert 'innodb_print_all_deadlocks = ON\n' in text and 'innodb_flush_method = O_DIRECT\n' in text
    assert 'innodb_buffer_pool_size = %d\n' % (4 * GIB) in text
    assert [i['name'] for i in out['issues']] == ['innodb_flush_method', 'innodb_read_io_threads',
                                                  'innodb_sort_buffer_size']


def test_second_run_changes_nothing():
    first = state(MAP)
    again = state(MAP, server(running=first['settings']))
    assert again['runtime'] == [] and again['pending_restart'] is False and again['issues'] == []
    assert again['option_file_text'] == first['option_file_text']


def test_buffer_pool_is_rounded_up_to_chunk_times_instances_on_mysql():
    out = state(dict(innodb_buffer_pool_size='300M'), server(running=dict(innodb_buffer_pool_instances=2)))
    assert out['settings']['innodb_buffer_pool_size'] == 512 * MIB
    assert 'innodb_buffer_pool_chunk_size 134217728 x innodb_buffer_pool_instances 2' in \
        out['predicted']['innodb_buffer_pool_size']['notes'][0]
    # The chunk the same map sets is the one the server rounds with.
    out = state(dict(innodb_buffer_pool_size='300M', innodb_buffer_pool_chunk_size='64M'))
    assert out['settings']['innodb_buffer_pool_size'] == 320 * MIB


def test_buffer_pool_below_one_chunk_waits_for_a_restart():
    out = state(dict(innodb_buffer_pool_size='64M'))
    assert out['runtime'] == [] and out['restart_settings'] == dict(innodb_buffer_pool_size=64 * MIB)
    assert 'a restart shrinks the chunk' in out['issues'][0]['reason']


def test_mariadb_rounds_down_to_its_block_size_and_takes_the_redo_log_as_one_file():
    out = state(MAP, server('mariadb', (10, 11, 19)))
    assert out['settings']['innodb_buffer_pool_size'] == 4 * GIB
    out = state(dict(MAP, innodb_buffer_pool_size=209727543), server('mariadb', (10, 11, 19)))
    assert out['settings']['innodb_buffer_pool_size'] == 200 * MIB
    assert 'innodb_redo_log_capacity' not in out['settings']
    assert out['settings']['innodb_log_file_size'] == 192 * MIB
    assert out['translated'][0]['written'] == 'innodb_redo_log_capacity'
    assert 'keeps the redo log in one file, innodb_log_file_size' in out['translated'][0]['reason']
    # innodb_read_io_threads is dynamic on MariaDB 10.11, innodb_log_buffer_size read-only.
    assert {'innodb_read_io_threads': 6} in out['runtime']
    assert set(out['restart_settings']) == {'innodb_sort_buffer_size', 'innodb_log_buffer_size', 'innodb_flush_method'}


def test_old_mysql_takes_the_redo_log_per_file_and_new_mysql_as_a_capacity():
    old = state(dict(innodb_redo_log_capacity='2G'), server(version=(8, 0, 28)))
    assert old['settings'] == dict(innodb_log_file_size=GIB)
    assert old['restart_settings'] == dict(innodb_log_file_size=GIB)
    new = state(dict(innodb_log_file_size='96M', innodb_log_files_in_group=3))
    assert new['settings'] == dict(innodb_redo_log_capacity=288 * MIB)
    assert 'innodb_log_file_size 96M x 3 file(s) = innodb_redo_log_capacity' in new['translated'][0]['reason']
    assert 'write the redo log size once' in error_of(state, dict(innodb_log_file_size='96M',
                                                                  innodb_redo_log_capacity='1G'))


def test_a_setting_other_versions_have_is_left_alone_with_a_reason():
    out = state(dict(innodb_buffer_pool_instances=4, innodb_io_capacity=500), server('mariadb', (11, 8, 9)))
    assert out['settings'] == dict(innodb_io_capacity=500)
    assert out['unsupported'][0]['name'] == 'innodb_buffer_pool_instances'
    assert 'MariaDB 11.8.9 has no innodb_buffer_pool_instances' in out['unsupported'][0]['reason']


def test_a_variable_the_version_table_does_not_know_is_taken_from_the_catalog():
    # Names no role owns (a role's settings are in the version table: test_desired.py).
    assert not {'innodb_stats_auto_recalc', 'innodb_autoinc_lock_mode'} & set(flavors.VARIABLES)
    extra = dict(innodb_monitor_disable=dict(value='', type='VARCHAR', read_only=False),
                 innodb_stats_auto_recalc=dict(value='ON', type='BOOLEAN', read_only=False))
    out = state(dict(innodb_stats_auto_recalc='off'), server('mariadb', (10, 11, 19), extra=extra))
    assert out['runtime'] == [{'innodb_stats_auto_recalc': 'OFF'}]
    # MySQL's catalog does not say whether it is dynamic: a fresh lab server of the version answered SET GLOBAL
    # (runtime_flags.py, from flavor_data), so it is set at runtime and nothing waits for a restart.
    mysql_extra = dict(innodb_stats_auto_recalc=dict(value='ON'), innodb_autoinc_lock_mode=dict(value='2'))
    out = state(dict(innodb_stats_auto_recalc='off'), server(extra=mysql_extra))
    assert out['runtime'] == [{'innodb_stats_auto_recalc': 'OFF'}] and out['restart_settings'] == {}
    assert not [n for n in out['notes'] if 'nearest' in n]
    # A read-only one waits for a restart and says who said so.
    out = state(dict(innodb_autoinc_lock_mode=1), server(extra=mysql_extra))
    assert out['runtime'] == [] and out['restart_settings'] == dict(innodb_autoinc_lock_mode=1)
    assert 'read-only at runtime on MySQL 8.0.33 (as on a fresh MySQL 8.0.33 server)' in out['issues'][0]['reason']
    # A version between two lab versions takes the nearer one's flag and says so.
    out = state(dict(innodb_stats_auto_recalc='off'), server(version=(8, 4, 3), extra=mysql_extra))
    assert out['runtime'] == [{'innodb_stats_auto_recalc': 'OFF'}]
    assert ('innodb_stats_auto_recalc: set at runtime as on a fresh MySQL 8.0.33 server, the lab version nearest to '
            '8.4.3') in out['notes']
    # Outside the lab's versions: not known, a restart applies it, and the result says why.
    out = state(dict(innodb_stats_auto_recalc='off'), server(version=(5, 7, 44), extra=mysql_extra))
    assert out['runtime'] == [] and out['restart_settings'] == dict(innodb_stats_auto_recalc='OFF')
    assert 'not known on MySQL 5.7.44 (not in the version table)' in out['issues'][0]['reason']


# ---------------------------------------------------------------- refused before any change
@pytest.mark.parametrize('values_map,message', [
    (dict(innodb_bufer_pool_size='1G'),
     'settings_values.innodb_bufer_pool_size: MySQL 8.0.33 has no such variable (closest: innodb_buffer_pool_size'),
    (dict(innodb_io_capacity=50),
     'settings_values.innodb_io_capacity must be a whole number of at least 100 on MySQL 8.0.33; got 50'),
    (dict(innodb_io_capacity='fast'), "settings_values.innodb_io_capacity must be a whole number of at least 100"),
    (dict(innodb_flush_method='direct'), 'must be one of fsync, O_DSYNC, littlesync, nosync, O_DIRECT, '
                                         "O_DIRECT_NO_FSYNC on MySQL 8.0.33; got 'direct'"),
    (dict(innodb_flush_neighbors=0), 'settings_values.innodb_flush_neighbors belongs to the flush_neighbors role: '
                                     'set it with flush_neighbors_storage_class / flush_neighbors_map'),
    (dict(innodb_adaptive_hash_index=False), 'belongs to the adaptive_hash role: set it with adaptive_hash_enabled'),
    (dict(innodb_adaptive_hash_index_parts=16), 'belongs to the adaptive_hash role: set it with adaptive_hash_parts'),
    (dict(daemon_memcached_option='-p 1'), 'belongs to the memcached role'),
    (dict(rocksdb_block_cache_size='1G'), 'belongs to the myrocks role'),
    (dict(innodb_page_size=32768), 'settings_values.innodb_page_size is fixed when the data directory is created'),
    (dict(innodb_io_capacity=3000), 'innodb_io_capacity (3000) exceeds innodb_io_capacity_max (2000, what the '
                                    'server runs)'),
    (dict(innodb_lock_wait_timeout='20%'), 'a percentage of memory is for sizes'),
    (dict(innodb_buffer_pool_size='170%'), 'must be a percentage above 0 and at most 100'),
    (dict(innodb_monitor_enable='all\ninit_file=/tmp/p.sql'), 'settings_values.innodb_monitor_enable must be on one line'),
    ({'bad name': 1}, 'settings_values.bad name: not a variable name'),
])
def test_bad_names_values_and_owners_fail_naming_them(values_map, message):
    assert message in error_of(state, values_map)


def test_every_problem_is_named_at_once():
    text = error_of(state, dict(innodb_io_capacity=50, innodb_flush_neighbors=1, innodb_nonsense=3))
    assert 'innodb_io_capacity' in text and 'flush_neighbors role' in text and 'innodb_nonsense' in text


def test_persisted_settings_only_where_the_server_has_them():
    assert 'MariaDB has no persisted settings' in error_of(functools.partial(state, settings_persist=True),
                                                           dict(innodb_io_capacity=500), server('mariadb', (10, 11, 19)))
    out = state(dict(innodb_io_capacity=500, innodb_sort_buffer_size='2M'), settings_persist=True)
    assert out['persist'] is True and out['runtime'] == [{'innodb_io_capacity': 500}]
    assert out['persist_only'] == dict(innodb_sort_buffer_size=2 * MIB)


# ---------------------------------------------------------------- memory
def test_a_percentage_needs_the_memory_and_respects_the_floor():
    out = state(dict(innodb_buffer_pool_size='70%'), server(memory=None))
    assert out['unresolved'][0]['name'] == 'innodb_buffer_pool_size' and out['settings'] == {}
    small = server(memory=2 * GIB)
    text = error_of(functools.partial(state, settings_buffer_pool_floor='2G'), dict(innodb_buffer_pool_size='70%'), small)
    assert ('settings_values.innodb_buffer_pool_size would be 1610612736 bytes on this server (70% of 2147483648 '
            'bytes, MemTotal of the host (/proc/meminfo)), below settings_buffer_pool_floor (2147483648)') in text
    assert state(dict(innodb_buffer_pool_size='70%'), small, settings_buffer_pool_floor='1G')['settings'] == dict(
        innodb_buffer_pool_size=1610612736)
    assert 'settings_buffer_pool_floor must be a size' in error_of(
        functools.partial(state, settings_buffer_pool_floor='big'), {}, small)


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize('layout,limit', [
    ('v2', 3 * GIB), ('v1', 2 * GIB), ('none', None),
])
def test_server_memory_is_the_lower_of_memtotal_and_the_cgroup_limit(tmp_path, layout, limit):
    proc, sys = tmp_path / 'proc', tmp_path / 'cgroup'
    write(proc / 'meminfo', 'MemTotal:       8388608 kB\nMemFree: 1 kB\n')
    if layout == 'v2':
        write(proc / '42' / 'cgroup', '0::/system.slice/mysql.service\n')
        write(sys / 'cgroup.controllers', 'memory\n')
        write(sys / 'system.slice' / 'mysql.service' / 'memory.max', 'max\n')
        write(sys / 'system.slice' / 'memory.max', '%d\n' % (3 * GIB))
    elif layout == 'v1':
        write(proc / '42' / 'cgroup', '4:memory:/docker/abc\n1:cpu:/\n0::/\n')
        write(sys / 'memory' / 'docker' / 'abc' / 'memory.limit_in_bytes', '%d\n' % (2 * GIB))
        write(sys / 'memory' / 'memory.limit_in_bytes', '9223372036854771712\n')
    else:
        write(proc / '42' / 'cgroup', '4:memory:/\n')
        write(sys / 'memory' / 'memory.limit_in_bytes', '9223372036854771712\n')
    out = server_facts.server_memory(42, str(proc), str(sys))
    assert out['mem_total'] == 8 * GIB
    if limit is None:
        assert out['bytes'] == 8 * GIB and out['source'] == 'MemTotal of the host (/proc/meminfo)'
    else:
        assert out['bytes'] == limit and out['source'].startswith('the memory limit of cgroup ')


# ---------------------------------------------------------------- the resize and the drop-in
@pytest.mark.parametrize('before,now,expected', [
    ({'innodb_buffer_pool_resize_status': 'Completed resizing buffer pool at 261127 11:02:12.',
      'innodb_buffer_pool_resize_status_code': '0'},
     {'innodb_buffer_pool_resize_status': 'Completed resizing buffer pool at 261127 11:02:12.',
      'innodb_buffer_pool_resize_status_code': '0'}, 'running'),
    ({'innodb_buffer_pool_resize_status': ''},
     {'innodb_buffer_pool_resize_status': 'Resizing buffer pool from 134217728 to 536870912',
      'innodb_buffer_pool_resize_status_code': '5'}, 'running'),
    ({'innodb_buffer_pool_resize_status': ''},
     {'innodb_buffer_pool_resize_status': 'Completed resizing buffer pool at 261127 11:05:00.',
      'innodb_buffer_pool_resize_status_code': '0'}, 'done'),
    ({}, {'innodb_buffer_pool_resize_status': 'Resizing failed', 'innodb_buffer_pool_resize_status_code': '7'},
     'failed'),
    ({'innodb_buffer_pool_resize_status': ''}, {'innodb_buffer_pool_resize_status': ''}, 'done'),
])
def test_resize_state(before, now, expected):
    assert values.resize_state(before, now)[0] == expected


def test_the_role_is_registered_with_the_route():
    assert 'settings' in desired.ROLES and desired.server_catalog(['settings'])
    assert desired.for_role('settings', dict(settings_values=dict(innodb_io_capacity=500)), server(), None)[
        'settings'] == dict(innodb_io_capacity=500)


def test_a_setting_the_server_ignores_is_left_alone_with_the_reason():
    mmap = dict(innodb_log_file_mmap=dict(value='ON', type='BOOLEAN', read_only=True))
    out = state(dict(innodb_log_buffer_size='32M'), server('mariadb', (11, 8, 9), extra=mmap))
    assert out['settings'] == {} and out['unsupported'][0]['status'] == 'ignored'
    assert 'innodb_log_file_mmap=ON' in out['unsupported'][0]['reason']
    mmap['innodb_log_file_mmap']['value'] = 'OFF'
    out = state(dict(innodb_log_buffer_size='32M'), server('mariadb', (10, 11, 19), extra=mmap))
    assert out['settings'] == dict(innodb_log_buffer_size=32 * MIB)


# ---------------------------------------------------------------- the catalog read (one bounded statement)
def test_the_catalog_is_read_in_one_bounded_statement(monkeypatch):
    statements = []

    def fake_query(_conn, sql, args=None):
        statements.append(sql)
        if 'SYSTEM_VARIABLES' in sql:
            return [dict(VARIABLE_NAME='INNODB_FLUSH_METHOD', VARIABLE_TYPE='ENUM', NUMERIC_MIN_VALUE=None,
                         NUMERIC_MAX_VALUE=None, NUMERIC_BLOCK_SIZE=None, READ_ONLY='YES',
                         ENUM_VALUE_LIST='fsync,O_DSYNC,littlesync,nosync,O_DIRECT,O_DIRECT_NO_FSYNC'),
                    dict(VARIABLE_NAME='INNODB_BUFFER_POOL_SIZE', VARIABLE_TYPE='BIGINT UNSIGNED',
                         NUMERIC_MIN_VALUE='2097152', NUMERIC_MAX_VALUE='18446744073701163008',
                         NUMERIC_BLOCK_SIZE='1048576', READ_ONLY='NO', ENUM_VALUE_LIST=None)]
        return [dict(VARIABLE_NAME='innodb_io_capacity', MIN_VALUE='100', MAX_VALUE='4294967295'),
                dict(VARIABLE_NAME='innodb_print_all_deadlocks', MIN_VALUE='0', MAX_VALUE='0')]

    monkeypatch.setattr(server_facts, 'query', fake_query)
    maria = server_identity.ServerIdentity('mariadb', (10, 11, 19), '10.11.19-MariaDB', None)
    table, source, problem = server_facts.variable_catalog(None, maria)
    assert source == 'information_schema.SYSTEM_VARIABLES' and problem is None
    assert table['innodb_flush_method']['read_only'] is True and 'O_DIRECT' in table['innodb_flush_method']['choices']
    assert table['innodb_buffer_pool_size']['block_size'] == MIB and table['innodb_buffer_pool_size']['read_only'] is False
    mysql = server_identity.ServerIdentity('mysql', (8, 0, 33), '8.0.33', None)
    table, source, problem = server_facts.variable_catalog(None, mysql)
    assert source == 'performance_schema.variables_info'
    assert table['innodb_io_capacity']['minimum'] == 100 and table['innodb_io_capacity']['read_only'] is None
    assert table['innodb_print_all_deadlocks']['minimum'] is None        # 0/0: no range
    assert len(statements) == 2 and all('LIMIT %d' % server_facts.CATALOG_LIMIT in s for s in statements)
    old = server_identity.ServerIdentity('mysql', (5, 7, 44), '5.7.44', None)
    assert server_facts.variable_catalog(None, old)[0] == {} and 'has no table of its variables' in \
        server_facts.variable_catalog(None, old)[2]


# ---------------------------------------------------------------- the steps of settings(), each on its own
def checker(facts=None, **inputs):
    from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import inputs as role_input
    return role_input.Checker(inputs, desired.INPUTS['settings'], facts or server())


def test_role_inputs_reads_the_inputs_and_names_each_bad_one():
    check = checker(settings_values=dict(innodb_lock_wait_timeout=5), settings_buffer_pool_floor='1G',
                    settings_resize_timeout=30)
    assert settings.role_inputs(check, server(), 'MySQL 8.0.33') == (dict(innodb_lock_wait_timeout=5), False, 30, GIB)
    assert check.errors == []
    check = checker(server('mariadb', (10, 11, 19)), settings_persist=True, settings_restart='always',
                    settings_restart_timeout=0, settings_buffer_pool_floor=True)
    settings.role_inputs(check, server('mariadb', (10, 11, 19)), 'MariaDB 10.11.19')
    assert [m.split(' ')[0] for m in check.errors] == ['settings_restart', 'settings_restart_timeout',
                                                       'settings_buffer_pool_floor', 'settings_persist:']


def test_wanted_names_are_plain_and_owned_by_no_other_role():
    check = checker()
    wanted, left_alone = settings.wanted_names(check, {'Innodb-Lock-Wait-Timeout': 5, 'innodb_io_capacity': None,
                                                       'innodb_flush_neighbors': 0, 'innodb_lock_wait_timeout': 6})
    assert (wanted, left_alone) == (dict(innodb_lock_wait_timeout=5), ['innodb_io_capacity'])
    assert check.errors == [
        'settings_values.innodb_flush_neighbors belongs to the flush_neighbors role: set it with '
        'flush_neighbors_storage_class / flush_neighbors_map (one role owns each setting)',
        'settings_values.innodb_lock_wait_timeout is written twice (spellings of one name)']


def test_of_memory_resolves_a_percentage_of_a_size_only():
    found = dict(memory={}, unresolved=[])
    check = checker()
    memory = dict(bytes=8 * GIB, source='MemTotal')
    assert settings.of_memory(check, 'l', BP, '25%', 'size', (None, values.Limits(None, None, None)), memory,
                              found) == 2 * GIB
    assert found['memory'][BP] == dict(written='25%', bytes=2 * GIB, memory=8 * GIB, source='MemTotal')
    assert settings.of_memory(check, 'l', BP, 4096, 'size', (None, None), memory, found) == 4096
    assert settings.of_memory(check, 'l', BP, '25%', 'size', (None, None), dict(reason='not here'), found) is None
    assert found['unresolved'] == [dict(name=BP, status='unresolved', reason='25% of memory: not here')]
    assert settings.of_memory(check, 'l', 'x', '5%', 'int', (None, values.Limits(None, None, None)), memory,
                              found) is None
    assert check.errors == ['l: a percentage of memory is for sizes; x is a whole number']


BP = 'innodb_buffer_pool_size'


def test_running_value_rounds_the_buffer_pool_to_whole_units():
    no_limits = values.Limits(None, None, None)
    assert settings.running_value(BP, 300 * MIB, 'size', no_limits, (128 * MIB, 1)) == (
        384 * MIB, ['the server rounds 314572800 up to 402653184 (a multiple of innodb_buffer_pool_chunk_size '
                    '134217728 x innodb_buffer_pool_instances 1)'], False)
    runs, notes, restart_only = settings.running_value(BP, 64 * MIB, 'size', no_limits, (128 * MIB, 1))
    assert (runs, restart_only) == (64 * MIB, True) and 'a restart shrinks the chunk' in notes[0]
    assert settings.running_value(BP, 300 * MIB, 'size', no_limits, None) == (300 * MIB, [], False)
    assert settings.running_value('innodb_flush_method', 'O_DIRECT', 'enum', no_limits, None) == ('O_DIRECT', [], False)


def row(name, runs, running, dynamic=True, kind='int', restart_only=False, flag_source='the version table'):
    return dict(name=name, label='settings_values.' + name, kind=kind, choices=None, limits=values.Limits(None, None, None),
                dynamic=dynamic, flag_source=flag_source, runs=runs, running=running, restart_only=restart_only)


def test_cross_checks_the_io_capacity_under_its_maximum_and_the_floor():
    check = checker()
    settings.cross_checks(check, [row('innodb_io_capacity', 3000, '200')], dict(innodb_io_capacity_max=dict(value='2000')),
                          None, {})
    assert check.errors == ['settings_values.innodb_io_capacity (3000) exceeds innodb_io_capacity_max (2000, what the '
                            'server runs): the server would run 2000; raise innodb_io_capacity_max in the map too']
    check = checker()
    settings.cross_checks(check, [row('innodb_io_capacity', 3000, '200'), row('innodb_io_capacity_max', 4000, '2000'),
                                  row(BP, GIB, str(GIB), kind='size')], {}, 2 * GIB, {})
    assert check.errors == ['settings_values.innodb_buffer_pool_size would be %d bytes on this server, below '
                            'settings_buffer_pool_floor (%d): refused' % (GIB, 2 * GIB)]


def test_plan_sets_dynamic_ones_at_runtime_and_leaves_read_only_ones_to_a_restart():
    rows = [row('innodb_lock_wait_timeout', 120, '50'), row('innodb_lru_scan_depth', 1024, '1024'),
            row('innodb_read_io_threads', 6, '4', dynamic=False),
            row('innodb_sort_buffer_size', 65536, '65536', dynamic=False)]
    planned = settings.plan(rows, False, 'MySQL 8.0.33', {})
    assert planned['runtime'] == [dict(innodb_lock_wait_timeout=120)]
    assert planned['restart_settings'] == dict(innodb_read_io_threads=6) and planned['persist_only'] == {}
    assert planned['issues'] == [dict(status='pending_restart', name='innodb_read_io_threads', reason='the server runs '
                                      '4, the drop-in says 6: read-only at runtime on MySQL 8.0.33')]
    assert [line[0] for line in planned['lines']] == [r['name'] for r in rows] == list(planned['settings'])
    persisted = settings.plan(rows, True, 'MySQL 8.0.33', {})
    assert persisted['runtime'] == [dict(innodb_lock_wait_timeout=120), dict(innodb_lru_scan_depth=1024)]
    assert persisted['persist_only'] == dict(innodb_read_io_threads=6, innodb_sort_buffer_size=65536)


def test_resize_plan_and_notes():
    catalog = {BP: dict(value=str(GIB))}
    assert settings.resize_plan([{BP: 2 * GIB}], catalog, 60) == {'from': GIB, 'to': 2 * GIB, 'timeout': 60}
    assert settings.resize_plan([{BP: GIB}, dict(x=1)], catalog, 60) is None
    found = dict(unresolved=[dict(name=BP, reason='50% of memory: unknown')], memory={},
                 predicted=dict(a=dict(notes=['rounded']), b=dict(notes=['shrinks'])))
    assert settings.plan_notes([dict(reason='spelt')], found, dict(b=1)) == [
        'spelt', 'innodb_buffer_pool_size left out: 50% of memory: unknown', 'a: rounded']
