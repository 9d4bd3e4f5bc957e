# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dbfleet.innodb.server_facts against the real lab servers."""

from __future__ import annotations

import os

import pytest

from dbfleet_testing.servers import LAB_HOSTS, global_value, host_vars, login, read_only_result, run_module, sql


def facts(host, **extra):
    return read_only_result('server_facts', host, **extra)['server_facts']


@pytest.mark.parametrize('host', LAB_HOSTS)
def test_identity_paths_and_option_files(host):
    hv = host_vars(host)
    got = facts(host)
    assert got['flavor'] == hv['dbfleet_lab_expected_flavor']
    assert got['version_text'] == hv['dbfleet_lab_expected_version']
    assert got['version'] == [int(x) for x in hv['dbfleet_lab_expected_version'].split('.')]
    # the lab starts every server with --defaults-file=<its my.cnf>
    assert got['local'] is True
    assert got['option_files'] == [hv['dbfleet_option_file']]
    assert '--defaults-file' in got['option_files_source']
    assert got['process']['argv'][1] == '--defaults-file=%s' % hv['dbfleet_option_file']
    assert got['datadir'].rstrip('/') == global_value(host, 'datadir').rstrip('/')
    assert got['plugin_dir'] == global_value(host, 'plugin_dir')
    assert got['port'] == int(hv['dbfleet_login_port'])
    # the lab runs its servers as root (user=root in my.cnf)
    with open('/proc/%d/status' % got['process']['pid']) as handle:
        uid = [line.split()[2] for line in handle if line.startswith('Uid:')][0]
    assert got['runs_as_root'] is (uid == '0')
    assert got['replication']['role'] == 'primary'
    assert got['replication']['read_only'] is (global_value(host, 'read_only') == 'ON')
    assert got['capabilities']['set_persist'] is (host in ('mysql80', 'mysql97'))
    versioned = {'mysql80': 'mysqld-8.0', 'mysql57': 'mysqld-5.7', 'mariadb1011': 'mariadbd-10.11',
                 'mysql97': 'mysqld-9.7', 'mariadb118': 'mariadbd-11.8'}[host]
    assert versioned in got['option_groups']


@pytest.mark.parametrize('host', LAB_HOSTS)
def test_per_variable_facts(host):
    got = facts(host, variables=['innodb_adaptive_hash_index_partitions', 'innodb_lru_scan_depth',
                                 'innodb_dedicated_server'])
    parts = got['variables']['innodb_adaptive_hash_index_partitions']
    assert parts['resolved_name'] == 'innodb_adaptive_hash_index_parts'
    assert parts['dynamic'] is False and parts['exists'] is True
    assert parts['runtime'] == global_value(host, 'innodb_adaptive_hash_index_parts')
    assert got['variables']['innodb_lru_scan_depth']['dynamic'] is True
    assert got['variables']['innodb_dedicated_server']['exists'] is (host in ('mysql80', 'mysql97'))


def test_read_only_replica_flags_are_reported():
    host = 'mariadb118'
    sql(host, 'SET GLOBAL read_only = ON')
    try:
        got = facts(host)
    finally:
        sql(host, 'SET GLOBAL read_only = OFF')
    assert got['replication']['read_only'] is True
    assert global_value(host, 'read_only') == 'OFF'


def test_wrong_port_fails_cleanly():
    args = dict(login('mysql80'), login_port=42999, connect_timeout=3)
    result, rc = run_module('server_facts', args)
    assert rc != 0 and 'cannot connect to dbfleet@127.0.0.1:42999' in result['msg']
    assert 'exception' not in result or 'Traceback' not in result.get('exception', '')


def test_the_mysqld_process_is_the_one_from_the_pid_file():
    got = facts('mysql80')
    with open(got['pid_file']) as handle:
        assert int(handle.read().split()[0]) == got['process']['pid']
    assert os.path.basename(got['process']['argv'][0]) == 'mysqld'
