# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller audit reads only the global variables it needs (verify.audit(read_named=True)) and answers as
the read of every variable does."""

from __future__ import annotations

import re

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import membership
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import NamedGlobalVariables
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify

from fake_db import Conn

MYSQL84 = {
    'version': '8.4.3', 'version_comment': 'MySQL Community Server - GPL', 'innodb_read_only': 'OFF',
    'datadir': '/var/lib/mysql/', 'basedir': '/usr/', 'plugin_dir': '/usr/lib/mysql/plugin/',
    'pid_file': '/run/mysqld/mysqld.pid', 'socket': '/run/mysqld/mysqld.sock', 'log_error': '/var/log/mysql/error.log',
    'hostname': 'db1', 'port': '3306', 'server_id': '11', 'read_only': 'OFF', 'super_read_only': 'OFF',
    'persisted_globals_load': 'ON', 'innodb_buffer_pool_chunk_size': '134217728',
    'innodb_buffer_pool_instances': '1', 'innodb_buffer_pool_size': '134217728', 'innodb_flush_neighbors': '0',
    'innodb_io_capacity': '200', 'innodb_io_capacity_max': '2000', 'innodb_adaptive_hash_index': 'OFF',
    'innodb_adaptive_hash_index_parts': '8', 'innodb_log_file_size': '50331648', 'max_connections': '151',
    'innodb_redo_log_capacity': '104857600', 'sort_buffer_size': '262144',
}
# What a server has beyond what an audit reads (the ~650 rows of a real server).
MYSQL84.update(('unread_variable_%03d' % i, str(i)) for i in range(40))

_SHOW = re.compile(r'^SHOW GLOBAL VARIABLES(?: WHERE Variable_name IN \((.*)\))?$')


def fake_server(variables):
    """A server that knows its global variables and answers every other statement with no rows."""
    def answer(sql, args):
        m = _SHOW.match(sql)
        if m is None:
            return []
        names = None if m.group(1) is None else set(a.lower() for a in args)
        return [dict(Variable_name=k, Value=v) for k, v in sorted(variables.items()) if names is None or k in names]
    return Conn(answer)


def _reads(server):
    return [s for s in server.statements if s.startswith('SHOW GLOBAL VARIABLES')]


def test_named_variables_answer_from_one_statement_and_absence_is_the_truth():
    server = fake_server(MYSQL84)
    variables = NamedGlobalVariables(server, ['VERSION', 'innodb_redo_log_capacity', 'no_such_one'])
    assert variables.get('version') == '8.4.3'
    assert variables['innodb_redo_log_capacity'] == '104857600'
    assert 'no_such_one' not in variables and variables.get('no_such_one') is None
    assert len(_reads(server)) == 1 and 'WHERE Variable_name IN' in _reads(server)[0]
    assert not variables.complete


def test_a_name_not_asked_for_or_iterating_reads_every_variable_once():
    server = fake_server(MYSQL84)
    variables = NamedGlobalVariables(server, ['version'])
    assert variables.get('max_connections') == '151'
    assert variables.complete
    assert sorted(variables) == sorted(MYSQL84) and len(variables) == len(MYSQL84)
    assert 'not_a_variable' not in variables
    assert _reads(server) == ['SHOW GLOBAL VARIABLES WHERE Variable_name IN (%s)', 'SHOW GLOBAL VARIABLES']


def test_named_variables_need_a_name():
    with pytest.raises(ValueError):
        NamedGlobalVariables(fake_server(MYSQL84), [])


def test_audit_variable_names_hold_every_spelling_the_roles_and_what_the_audit_reads():
    alias = sorted(flavors.ALIASES)[0]
    names = verify.audit_variable_names({'innodb-log-file-size': '1G', 'Max_Connections': 300, alias.upper(): 1},
                                        ['adaptive_hash', 'flush_neighbors', 'myrocks'])
    assert names == sorted(set(names))
    assert set(verify.AUDIT_VARIABLES) <= set(names)
    assert set(server_identity.DETECT_VARIABLES) <= set(names)
    assert {'innodb_log_file_size', 'max_connections', 'innodb_adaptive_hash_index', 'innodb_io_capacity_max',
            'rocksdb_block_cache_size', 'rocksdb_default_cf_options'} <= set(names)
    assert set(flavors.ALIASES[alias]) <= set(names)
    assert set(membership.CLUSTER_VARIABLES) <= set(names)


SETTINGS = [
    # known and equal, drifted, and a setting another version knows that this server lacks
    {'innodb_buffer_pool_size': '128M', 'max_connections': 300},
    {'innodb_log_file_size': '48M', 'innodb_io_capacity': 200, 'sort_buffer_size': None},
    # a name the collection does not know: the hint lists close names of every variable
    {'unread_variable_01': 1, 'innodb_io_capacity': 200},
]


@pytest.mark.parametrize('settings, reads', list(zip(SETTINGS, (1, 1, 2))))
def test_the_audit_reading_named_variables_answers_as_reading_every_one(settings, reads):
    full, named = fake_server(MYSQL84), fake_server(MYSQL84)
    expected = verify.audit(full, settings, proc_root=None, desired_from=['adaptive_hash', 'flush_neighbors'],
                            role_variables={}, detect_storage=lambda datadir, probe: dict(
                                storage_class='ssd', confidence='high', reasons=[]), now=_NOW)
    got = verify.audit(named, settings, proc_root=None, desired_from=['adaptive_hash', 'flush_neighbors'],
                       role_variables={}, detect_storage=lambda datadir, probe: dict(
                           storage_class='ssd', confidence='high', reasons=[]), now=_NOW, read_named=True)
    assert got == expected
    assert _reads(full)[0] == 'SHOW GLOBAL VARIABLES' and len(_reads(full)) == 2  # and the cluster's variables
    assert _reads(named)[0].startswith('SHOW GLOBAL VARIABLES WHERE Variable_name IN')
    assert len(_reads(named)) == reads  # the close-name hint of an unknown name reads every variable


def test_the_audit_of_known_names_reads_no_variable_it_does_not_need():
    server = fake_server(MYSQL84)
    verify.audit(server, SETTINGS[0], proc_root=None, now=_NOW, read_named=True)
    assert len(_reads(server)) == 1 and 'WHERE' in _reads(server)[0]


_NOW = __import__('datetime').datetime(2026, 11, 25, 20, 0, tzinfo=__import__('datetime').timezone.utc)


MYSQL80_MEMCACHED = dict(MYSQL84, version='8.0.33', daemon_memcached_option='-p11211', daemon_memcached_r_batch_size='1',
                         daemon_memcached_w_batch_size='1', innodb_api_enable_binlog='OFF', innodb_api_enable_mdl='OFF',
                         innodb_api_trx_level='0')
MEMCACHED_INPUTS = dict(memcached_containers=[dict(name='token', schema='s', table='t', key_column='id', value_columns=['v'],
                                                   unique_index='PRIMARY')],
                        memcached_r_batch_size=5, memcached_api_enable_mdl=True, memcached_api_trx_level=1)


def test_the_memcached_roles_audit_reads_its_settings_by_name():
    """The memcached role's settings (daemon_memcached_*, innodb_api_*) are in the name set: one read, the same answer."""
    full, named = fake_server(MYSQL80_MEMCACHED), fake_server(MYSQL80_MEMCACHED)
    expected = verify.audit(full, {}, proc_root=None, desired_from=['memcached'], role_variables=MEMCACHED_INPUTS, now=_NOW)
    got = verify.audit(named, {}, proc_root=None, desired_from=['memcached'], role_variables=MEMCACHED_INPUTS, now=_NOW,
                       read_named=True)
    assert got == expected
    assert got['variables']['innodb_api_trx_level']['runtime'] == '0'
    assert got['variables']['daemon_memcached_r_batch_size']['status'] == 'drift_runtime'
    assert len(_reads(named)) == 1 and 'WHERE' in _reads(named)[0]


def test_pending_restart_holds_the_settings_that_wait_for_a_restart_with_their_desired_values(tmp_path):
    # A read-only variable configured right and running the old value waits for a restart; one in place or drifted
    # at run time does not (rolling_restart.yml hands pending_restart to the restart role as it is).
    cnf = tmp_path / 'my.cnf'
    cnf.write_text('[mysqld]\ninnodb_adaptive_hash_index_parts = 16\ninnodb_flush_neighbors = 0\n')
    result = verify.audit(fake_server(MYSQL84), {'innodb_adaptive_hash_index_parts': 16, 'innodb_flush_neighbors': 0,
                                                 'max_connections': 300},
                          option_files=[str(cnf)], proc_root=None, now=_NOW)
    assert result['variables']['max_connections']['status'] == 'drift_runtime'
    assert result['pending_restart'] == {'innodb_adaptive_hash_index_parts': 16}


def test_step_read_variables_reads_only_the_named_ones_when_asked():
    server = fake_server(MYSQL84)
    named, server_names = verify._read_variables(server, {'sort_buffer_size': '1M'}, (), True)  # pylint: disable=protected-access
    assert named is server_names and isinstance(named, NamedGlobalVariables) and not named.complete
    assert named['sort_buffer_size'] == '262144' and len(_reads(server)) == 1
    every, server_names = verify._read_variables(server, {}, (), False)  # pylint: disable=protected-access
    assert every == MYSQL84 and server_names == frozenset(MYSQL84)
