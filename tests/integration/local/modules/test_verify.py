# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dbfleet.innodb.verify against the real lab servers (every flavor).

Each test changes one thing (a runtime value, a test drop-in file, a persisted value), runs the
module as Ansible does (a subprocess with ANSIBLE_MODULE_ARGS) and puts everything back.
"""

from __future__ import annotations

import json
import sys

import pytest
from dbfleet_testing.lab import require_lab_hosts
from dbfleet_testing.servers import (INVENTORY, LAB_HOSTS, dropin, global_value, login, persisted_aside,
                                     persisted_put_back, persisted_value, run_module, sql, verify)
from dbfleet_testing.runs import playbook_proc

# A variable each lab version lacks (tables know it elsewhere, the server has no such variable).
ABSENT = {'mysql80': 'innodb_adaptive_hash_index_cells', 'mysql57': 'innodb_dedicated_server',
          'mariadb1011': 'innodb_dedicated_server', 'mysql97': 'innodb_log_file_size',
          'mariadb118': 'innodb_redo_log_capacity'}


# ---------------------------------------------------------------- the three kinds of drift
@pytest.mark.parametrize('host', LAB_HOSTS)
def test_runtime_only_change_is_drift_runtime(host):
    original = global_value(host, 'innodb_lru_scan_depth')
    changed = int(original) + 128
    sql(host, 'SET GLOBAL innodb_lru_scan_depth = %s', [changed])
    try:
        result = verify(host, {'innodb_lru_scan_depth': int(original)})
        item = result['variables']['innodb_lru_scan_depth']
        assert item['status'] == 'drift_runtime', item
        assert item['runtime'] == str(changed)
        assert result['drift'] is True and result['summary']['drift_runtime'] == 1
        # and the same running value, wanted, is lost at restart: drift_config
        item = verify(host, {'innodb_lru_scan_depth': changed})['variables']['innodb_lru_scan_depth']
        assert item['status'] == 'drift_config', item
    finally:
        sql(host, 'SET GLOBAL innodb_lru_scan_depth = %s', [int(original)])
    assert global_value(host, 'innodb_lru_scan_depth') == original


@pytest.mark.parametrize('host', LAB_HOSTS)
def test_option_file_only_change_is_drift_config(host):
    original = global_value(host, 'innodb_lru_scan_depth')
    with persisted_aside(host, 'innodb_lru_scan_depth'), \
            dropin(host, 'innodb-lru-scan-depth = %d\n' % (int(original) + 256)) as path:
        result = verify(host, {'innodb_lru_scan_depth': original})
    item = result['variables']['innodb_lru_scan_depth']
    assert item['status'] == 'drift_config', item
    assert item['configured']['file'] == path and item['configured']['line'] == 3
    assert item['configured']['value'] == str(int(original) + 256)
    assert path in result['option_files']['files_read']


@pytest.mark.parametrize('host', LAB_HOSTS)
def test_read_only_variable_in_file_only_is_pending_restart(host):
    original = int(global_value(host, 'innodb_sort_buffer_size'))
    wanted = '%dK' % (original // 1024 * 2)
    with persisted_aside(host, 'innodb_sort_buffer_size'), dropin(host, 'innodb_sort_buffer_size = %s\n' % wanted):
        result = verify(host, {'innodb_sort_buffer_size': wanted})
    item = result['variables']['innodb_sort_buffer_size']
    assert item['status'] == 'pending_restart', item
    assert item['runtime'] == str(original)
    if host.startswith('mariadb'):
        assert item['dynamic'] is False     # from information_schema.SYSTEM_VARIABLES


@pytest.mark.parametrize('host', LAB_HOSTS)
def test_variable_absent_on_this_version_is_unsupported(host):
    result = verify(host, {ABSENT[host]: 1, 'innodb_lru_scan_depth': None})
    assert result['variables'][ABSENT[host]]['status'] == 'unsupported'
    assert result['skipped_variables'] == ['innodb_lru_scan_depth']
    assert result['drift'] is False


@pytest.mark.parametrize('host', LAB_HOSTS)
def test_ok_with_any_spelling(host):
    ahi = global_value(host, 'innodb_adaptive_hash_index')
    bp = int(global_value(host, 'innodb_buffer_pool_size'))
    settings = {
        'innodb_adaptive_hash_index': ahi == 'ON',                   # YAML boolean
        'innodb_adaptive_hash_index_partitions': int(global_value(host, 'innodb_adaptive_hash_index_parts')),
        'innodb_buffer_pool_size': '%dM' % (bp >> 20),              # size with a suffix
    }
    result = verify(host, settings)
    statuses = dict((k, v['status']) for k, v in result['variables'].items())
    # AHI is not configured anywhere in the lab: ok, since it runs the compiled default
    assert statuses['innodb_buffer_pool_size'] == 'ok', result['variables']['innodb_buffer_pool_size']
    assert statuses['innodb_adaptive_hash_index_partitions'] == 'ok'
    assert result['variables']['innodb_adaptive_hash_index_partitions']['resolved_name'] == \
        'innodb_adaptive_hash_index_parts'
    assert statuses['innodb_adaptive_hash_index'] == 'ok'


def test_persisted_value_overrides_the_files_on_mysql8():
    host = 'mysql80'
    original = global_value(host, 'innodb_lru_scan_depth')
    was = persisted_value(host, 'innodb_lru_scan_depth')
    sql(host, 'SET PERSIST_ONLY innodb_lru_scan_depth = %s', [int(original) + 64])
    try:
        item = verify(host, {'innodb_lru_scan_depth': original})['variables']['innodb_lru_scan_depth']
    finally:
        sql(host, *persisted_put_back('innodb_lru_scan_depth', was))
    assert persisted_value(host, 'innodb_lru_scan_depth') == was
    assert item['status'] == 'drift_config', item
    assert item['persisted'] == str(int(original) + 64)
    assert 'persisted' in item['startup']['source']


@pytest.mark.parametrize('host', ['mysql80', 'mysql97'])
def test_persisted_ahi_disagreeing_with_desired_is_drift(host):
    """MySQL Bug #39157211 (fixed in 9.7.2): a buffer pool resize persisted AHI OFF in mysqld-auto.cnf.
    Whatever wrote it, a persisted value that disagrees with the desired one is drift on every
    version with SET PERSIST, even while the running value is right."""
    running = global_value(host, 'innodb_adaptive_hash_index')
    other = 'OFF' if running == 'ON' else 'ON'
    was = persisted_value(host, 'innodb_adaptive_hash_index')
    sql(host, 'SET PERSIST_ONLY innodb_adaptive_hash_index = %s' % other)
    try:
        result = verify(host, {'innodb_adaptive_hash_index': running})
    finally:
        sql(host, *persisted_put_back('innodb_adaptive_hash_index', was))
    item = result['variables']['innodb_adaptive_hash_index']
    assert item['runtime'] == running
    assert item['status'] == 'drift_config', item
    assert item['persisted'] == other and 'persisted' in item['startup']['source']
    assert result['drift'] is True
    # What the server had persisted before (a used server's own value, or nothing) is there again.
    assert persisted_value(host, 'innodb_adaptive_hash_index') == was


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize('host', LAB_HOSTS)
def test_bad_names_and_values_are_per_variable_errors(host):
    result = verify(host, {'innodb_flush_neighbours': 1, 'innodb_buffer_pool_size': '12Q',
                           'bad name;': 1, 'innodb_lru_scan_depth': [1, 2]})
    items = result['variables']
    assert items['innodb_flush_neighbours']['status'] == 'error'
    assert 'did you mean innodb_flush_neighbors' in items['innodb_flush_neighbours']['notes'][0]
    assert items['innodb_buffer_pool_size']['status'] == 'error'
    assert "'12Q' is not a size" in items['innodb_buffer_pool_size']['notes'][0]
    assert items['bad name;']['status'] == 'error'
    assert items['innodb_lru_scan_depth']['status'] == 'error'
    assert result['summary']['error'] == 4


@pytest.mark.parametrize('settings', [[1, 2], 'not a mapping', 5])
def test_settings_that_are_not_a_dict_fail_cleanly(settings):
    result, rc = run_module('verify', dict(login('mysql80'), settings=settings))
    assert rc != 0
    assert 'settings' in result['msg']
    assert 'exception' not in result


def test_unreadable_option_files_are_reported_not_raised(tmp_path):
    host = 'mariadb1011'
    missing = str(tmp_path / 'absent.cnf')
    result = verify(host, {'innodb_io_capacity': global_value(host, 'innodb_io_capacity'),
                           'innodb_lru_scan_depth': int(global_value(host, 'innodb_lru_scan_depth')) + 64},
                    option_files=[str(tmp_path), missing])
    assert any('is a directory' in e for e in result['errors'])
    assert any('absent.cnf: no such file' in e for e in result['errors'])
    io = result['variables']['innodb_io_capacity']
    assert io['status'] == 'error' and 'what a restart brings is unknown' in ' '.join(io['notes'])
    # a value that is wrong right now is drift whatever the files say
    assert result['variables']['innodb_lru_scan_depth']['status'] == 'drift_runtime'


def test_wrong_password_fails_with_the_target_named_and_no_secret():
    args = dict(login('mysql97'), login_password='definitely-wrong', settings={'innodb_lru_scan_depth': 1})
    result, rc = run_module('verify', args)
    assert rc != 0
    assert 'cannot connect to dbfleet@127.0.0.1:' in result['msg'] and '1045' in result['msg']
    assert 'definitely-wrong' not in json.dumps(result)


def test_fail_on_drift_fails_but_returns_the_evidence():
    host = 'mysql97'
    current = global_value(host, 'innodb_lru_scan_depth')
    result, rc = run_module('verify', dict(login(host), settings={'innodb_lru_scan_depth': int(current) + 1},
                                           fail_on_drift=True))
    assert rc != 0 and result['failed'] is True
    assert result['msg'] == 'drift on innodb_lru_scan_depth: drift_runtime'
    assert result['variables']['innodb_lru_scan_depth']['runtime'] == current


@pytest.mark.parametrize('host', LAB_HOSTS)
def test_check_mode_is_the_same(host):
    settings = {'innodb_lru_scan_depth': global_value(host, 'innodb_lru_scan_depth')}
    args = dict(login(host), settings=settings, _ansible_check_mode=True)
    result, rc = run_module('verify', args)
    assert rc == 0 and result['changed'] is False
    assert result['variables']['innodb_lru_scan_depth']['status'] in ('ok', 'drift_config')


if __name__ == '__main__':
    sys.exit(pytest.main([__file__, '-v']))


@pytest.mark.parametrize('mode', ['host', 'controller'])
def test_a_misspelt_role_variable_warns_in_both_audit_modes(mode, tmp_path):
    """The one desired-state route names a misspelt <role>_* variable in the per-host and the controller mode."""
    require_lab_hosts(INVENTORY, ['mysql80'])
    extra = dict(verify_mode=mode, verify_hosts='mysql80', verify_report_dir=str(tmp_path / 'r'),
                 verify_desired_from=['adaptive_hash', 'myrocks'], adaptive_hash_part=3, myrocks_enable=True)
    proc = playbook_proc(INVENTORY, 'verify.yml', extra, timeout=300)
    out = ' '.join((proc.stdout + proc.stderr).split())
    assert proc.returncode == 0, out[-4000:]
    for name in ('adaptive_hash_part', 'myrocks_enable'):
        assert '%s is not a variable of its role (misspelt?)' % name in out, out[-4000:]
    report = json.loads((tmp_path / 'r' / 'verify.json').read_text())
    assert report['hosts']['mysql80']['status'] in ('ok', 'startup_unknown', 'drift'), report['hosts']['mysql80']
