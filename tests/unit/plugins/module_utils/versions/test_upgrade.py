# -*- coding: utf-8 -*-
"""Unit tests for module_utils/versions/upgrade.py: a host's settings against an upgrade target's facts (flavor_data)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import catalog as flavor_data
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import upgrade
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.upgrade_settings import (
    option_settings, origin_settings, persisted_settings)
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.facts import Variable

MYSQL80 = server_identity.ServerIdentity('mysql', (8, 0, 33), '8.0.33', None)
MARIADB1011 = server_identity.ServerIdentity('mariadb', (10, 11, 19), '10.11.19-MariaDB', None)
TO_97 = upgrade.Target('mysql', (9, 7, 0), flavor_data)
TO_118 = upgrade.Target('mariadb', (11, 8, 0), flavor_data)
DROPIN = '/etc/mysql/conf.d/90-app.cnf'


def entry(name, value, line, group='mysqld', text=None):
    return optionfiles.Entry(optionfiles.normalize_name(name), value, DROPIN, line, group,
                             text or ('%s = %s' % (name, value) if value is not None else name))


def run(target, identity, entries=(), runtime=None, origins=None, persisted=None, uses=None, **kwargs):
    settings = option_settings(entries) + persisted_settings(persisted or {})
    return upgrade.findings(target, identity, settings, runtime or {}, origins or {}, uses, **kwargs)


def kinds(items):
    return [(i['kind'], i['setting']) for i in items]


def test_the_target_facts_come_from_the_lab_servers():
    assert TO_97.complete and TO_97.facts.version[:2] == (9, 7)
    assert 'mysql97' == TO_97.facts.source['host']
    assert TO_97.accepts('innodb_redo_log_capacity') and TO_97.accepts('skip_name_resolve')
    assert TO_97.accepts('skip_innodb_adaptive_hash_index')       # a boolean's skip- form
    assert TO_97.accepts('innodb_log_files_in_group') is False
    assert upgrade.Target('mysql', (8, 4, 0), flavor_data).accepts('anything') is None     # no facts: not known


def test_a_removed_variable_would_not_start_with_its_line_and_successor():
    items = run(TO_97, MYSQL80, [entry('innodb_log_files_in_group', '2', 3), entry('innodb_buffer_pool_size', '1G', 4)])
    assert kinds(items) == [('would_not_start', 'innodb_log_files_in_group')]
    item = items[0]
    assert item['stops_start'] and item['line'] == 3 and item['file'] == DROPIN
    assert item['target_name'] == 'innodb_redo_log_capacity'
    assert '%s:3 [mysqld]' % DROPIN in item['message'] and 'would not start' in item['message']


def test_loose_and_persisted_removed_variables_are_ignored_not_fatal():
    loose = entry('innodb_log_file_size', '1G', 5, text='loose-innodb_log_file_size = 1G')
    items = run(TO_97, MYSQL80, [loose], persisted={'default_authentication_plugin': 'caching_sha2_password'})
    assert kinds(items) == [('ignored', 'default_authentication_plugin'), ('ignored', 'innodb_log_file_size')]
    assert not any(i['stops_start'] for i in items)
    assert items[0]['target_name'] == 'authentication_policy'
    assert upgrade.summary(items)['would_start']


def test_ahi_left_at_its_default_turns_off_on_mysql_97_and_names_its_role():
    items = run(TO_97, MYSQL80, runtime={'innodb_adaptive_hash_index': 'ON'},
                origins={'innodb_adaptive_hash_index': 'COMPILED'})
    assert kinds(items) == [('default_changes', 'innodb_adaptive_hash_index')]
    item = items[0]
    assert (item['now'], item['after'], item['machine']) == ('ON', 'OFF', None)
    assert item['pin'] == dict(role='dbfleet.innodb.adaptive_hash', variable='adaptive_hash_enabled', value=True)
    assert 'innodb_adaptive_hash_index ON -> OFF' in item['message']
    assert upgrade.summary(items)['role_inputs'] == {'dbfleet.innodb.adaptive_hash': {'adaptive_hash_enabled': True}}


def test_a_pinned_or_runtime_set_value_is_no_silent_change():
    runtime = {'innodb_adaptive_hash_index': 'ON', 'innodb_io_capacity': '300'}
    assert run(TO_97, MYSQL80, [entry('innodb_adaptive_hash_index', 'ON', 2)], runtime=runtime,
               origins={'innodb_adaptive_hash_index': 'EXPLICIT', 'innodb_io_capacity': 'DYNAMIC'}) == []


def test_a_value_set_at_run_time_to_its_default_still_relies_on_it():
    items = run(TO_97, MYSQL80, runtime={'innodb_io_capacity': '200'}, origins={'innodb_io_capacity': 'DYNAMIC'})
    assert kinds(items) == [('default_changes', 'innodb_io_capacity')]
    assert (items[0]['now'], items[0]['after']) == ('200', '10000')


def test_a_new_flag_of_a_flag_set_is_no_change_and_server_sizes_are_not_pinned():
    before = upgrade.Target('mysql', (8, 0, 33), flavor_data).variable('optimizer_switch').default
    runtime = {'optimizer_switch': before, 'performance_schema_max_memory_classes': '450'}
    items = run(TO_97, MYSQL80, runtime=runtime, origins=dict.fromkeys(runtime, 'COMPILED'))
    assert kinds(items) == [('default_changes', 'performance_schema_max_memory_classes')]
    assert items[0]['pin'] is None and upgrade.summary(items)['settings_values'] == {}


def test_the_rest_is_pinned_by_the_settings_role_in_one_run():
    runtime = {'innodb_use_fdatasync': 'OFF', 'innodb_buffer_pool_in_core_file': 'ON', 'datadir': '/var/lib/mysql/'}
    items = run(TO_97, MYSQL80, runtime=runtime, origins=dict.fromkeys(runtime, 'COMPILED'))
    assert kinds(items) == [('default_changes', 'innodb_buffer_pool_in_core_file'),
                            ('default_changes', 'innodb_use_fdatasync')]       # datadir is the instance's
    assert upgrade.summary(items)['settings_values'] == {'innodb_use_fdatasync': 'OFF',
                                                         'innodb_buffer_pool_in_core_file': 'ON'}
    assert items[0]['pin'] == dict(role=upgrade.SETTINGS_ROLE, variable='settings_values',
                                   value={'innodb_buffer_pool_in_core_file': 'ON'})


def test_a_machine_dependent_default_says_so():
    items = run(TO_97, MYSQL80, runtime={'innodb_flush_method': 'fsync'}, origins={'innodb_flush_method': 'COMPILED'})
    assert kinds(items) == [('default_changes', 'innodb_flush_method')]
    assert items[0]['after'] == 'O_DIRECT' and 'O_DIRECT' in items[0]['machine']
    assert "on the lab's machine (depends:" in items[0]['message']


def test_a_target_without_facts_compares_the_version_table_spans_only():
    target = upgrade.Target('mysql', (8, 4, 0), flavor_data)
    items = run(target, MYSQL80, [entry('innodb_log_files_in_group', '2', 3)],
                runtime={'innodb_adaptive_hash_index': 'ON'}, origins={'innodb_adaptive_hash_index': 'COMPILED'})
    assert kinds(items) == [('default_changes', 'innodb_adaptive_hash_index')]
    assert not target.complete and 'no facts of every variable of MySQL 8.4' in target.source()


def test_values_the_target_refuses_or_adjusts():
    enum = Variable('x', 'enum', 'a', True, None, None, ('a', 'b'), None)
    assert upgrade.value_problem(enum, 'B') is None and upgrade.value_problem(enum, '1') is None
    assert upgrade.value_problem(enum, 'c')[0] == upgrade.VALUE_REFUSED
    number = Variable('y', 'int', '5', True, 1, 100, None, None)
    assert upgrade.value_problem(number, '1K')[0] == upgrade.VALUE_ADJUSTED
    assert upgrade.value_problem(number, '100') is None
    flags = Variable('z', 'set', '', True, None, None, ('mrr', 'default'), None)
    assert upgrade.value_problem(flags, 'mrr=on,gone=off') == (upgrade.VALUE_REFUSED, 'gone: not a flag of it (mrr, default)')
    boolean = Variable('w', 'bool', 'ON', True, None, None, None, None)
    assert upgrade.value_problem(boolean, 'yes')[0] == upgrade.VALUE_ADJUSTED


def test_a_value_the_current_version_treats_alike_is_no_finding():
    # innodb_flush_log_at_trx_commit = 7 is out of range (0-3) on MariaDB 10.11 and on 11.8 alike
    assert run(TO_118, MARIADB1011, [entry('innodb_flush_log_at_trx_commit', '7', 2)]) == []


def test_mariadb_1011_to_118_removed_options_and_defaults():
    items = run(TO_118, MARIADB1011, [entry('innodb_change_buffering', 'none', 2), entry('old_alter_table', 'ON', 3)],
                runtime={'innodb_snapshot_isolation': 'OFF'}, origins={'innodb_snapshot_isolation': 'COMPILE-TIME'})
    assert kinds(items) == [('would_not_start', 'old_alter_table'), ('ignored', 'innodb_change_buffering'),
                            ('default_changes', 'innodb_snapshot_isolation')]
    assert items[0]['target_name'] == 'alter_algorithm'
    assert 'mariadbd refuses to start' in items[0]['message']
    # MariaDB keeps a removed InnoDB option as a no-op: what 11.8's own binary says of it (flavor_data REMOVED_ACCEPTED)
    assert "'innodb-change-buffering' was removed. It does nothing now" in items[1]['message']


def test_lines_in_a_group_only_the_current_version_reads_are_lost():
    current = [entry('innodb_io_capacity', '2000', 7, group='mysqld-8.0')]
    items = run(TO_97, MYSQL80, current_entries=current, target_entries=[])
    assert kinds(items) == [('not_read', 'innodb_io_capacity')]
    assert '[mysqld-8.0]' in items[0]['where']


def test_features_the_target_drops():
    uses = dict(memcached_plugin=True, native_password_accounts=['app@%', 'dbfleet@127.0.0.1'])
    items = run(TO_97, MYSQL80, uses=uses)
    assert kinds(items) == [('feature_removed', 'daemon_memcached'), ('feature_removed', 'mysql_native_password')]
    assert items[0]['pin']['variable'] == 'memcached_state'
    assert 'app@%' in items[1]['message']
    assert run(upgrade.Target('mysql', (8, 0, 40), flavor_data), MYSQL80, uses=uses) == []


def test_origin_settings_when_the_files_cannot_be_read():
    table = {'innodb_log_files_in_group': dict(origin='EXPLICIT', path='/etc/my.cnf', value='2'),
             'innodb_io_capacity': dict(origin='COMPILED', path=None), 'expire_logs_days': dict(origin='PERSISTED')}
    settings = origin_settings(table)
    items = upgrade.findings(TO_97, MYSQL80, settings, {}, {})
    assert kinds(items) == [('would_not_start', 'innodb_log_files_in_group'), ('ignored', 'expire_logs_days')]
    assert 'unless the line is written loose-' in items[0]['message'] and '/etc/my.cnf' in items[0]['message']


def test_result_shape():
    out = upgrade.result(TO_97, [], ['a note'])
    assert out['target'] == dict(flavor='mysql', version='9.7.0', label='MySQL 9.7')
    assert out['complete'] and 'mysql 9.7.4' in out['facts'] and out['summary']['would_start']
    assert out['summary']['by_kind'] == dict.fromkeys(upgrade.KINDS, 0)


def test_a_secret_value_never_shows():
    target = upgrade.Target('mariadb', (11, 8, 0), flavor_data)
    secret = entry('wsrep_sst_auth', 'sst:Hunter2pw', 4)
    item = upgrade.setting_findings(target, option_settings([secret._replace(name='wsrep_sst_auth_old')]))[0]
    item = upgrade.masked(dict(item, setting='wsrep_sst_auth', message=item['message'] + ' sst:Hunter2pw'))
    assert 'Hunter2pw' not in str(item) and item['masked']
    plain = upgrade.masked(upgrade._finding(upgrade.VALUE_ADJUSTED, 'x_options', 'bad: password=abc;', value='password=abc'))
    assert 'abc' not in plain['message'] and 'abc' not in plain['value']


def test_without_the_targets_facts_only_a_stop_is_certain():
    stop = dict(kind='would_not_start', stops_start=True)
    silent = dict(kind='default_changes', stops_start=False)
    assert upgrade.summary([silent])['would_start'] is True
    assert upgrade.summary([silent], complete=False)['would_start'] is None
    assert upgrade.summary([], complete=False)['would_start'] is None
    assert upgrade.summary([stop, silent], complete=False)['would_start'] is False
