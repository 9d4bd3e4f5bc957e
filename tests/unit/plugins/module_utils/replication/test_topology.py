# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""topology.py: reading one server's replication state (fake connection); the plan is test_topology_plan.py's."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology

MYSQL_VARS = dict(version='8.0.33', version_comment='MySQL Community Server - GPL', server_uuid='uuid-1',
                  server_id='1', read_only='OFF', super_read_only='OFF', gtid_mode='ON',
                  gtid_executed='uuid-1:1-10,\nuuid-9:1-3', log_bin='ON')
MARIADB_VARS = dict(version='10.11.6-MariaDB-0+deb12u1', version_comment='Debian 12', server_id='3',
                    read_only='ON', gtid_binlog_pos='0-3-7', gtid_slave_pos='0-3-7', gtid_current_pos='0-3-7',
                    gtid_domain_id='0', log_bin='ON')


class FakeError(Exception):
    pass


def reader(variables, rows=None, error=None):
    seen = []

    def query(conn, sql):
        seen.append(sql)
        if error:
            raise FakeError(1227, error)
        return rows or []

    def global_variables(conn, names):
        return dict((k, v) for k, v in variables.items() if k in names)
    return query, global_variables, seen


def test_primary_mysql80_reads_uuid_gtid_and_uses_show_replica_status():
    query, gv, seen = reader(MYSQL_VARS)
    facts = topology.read_server(None, query, gv)
    assert seen == ['SHOW REPLICA STATUS']
    assert facts['role'] == 'primary' and facts['error'] is None
    assert facts['server_uuid'] == 'uuid-1' and facts['server_id'] == 1
    assert facts['super_read_only'] is False
    assert facts['gtid'] == dict(model='mysql', mode='ON', executed='uuid-1:1-10,uuid-9:1-3', binlog_pos=None,
                                 slave_pos=None, current_pos=None, domain_id=None,
                                 position='uuid-1:1-10,uuid-9:1-3')


def test_privilege_error_is_unknown_never_primary():
    query, gv = reader(MYSQL_VARS, error='Access denied; you need the REPLICATION CLIENT privilege')[:2]
    facts = topology.read_server(None, query, gv)
    assert facts['role'] == 'unknown'
    assert 'SHOW REPLICA STATUS failed: (1227) Access denied' in facts['error']


def test_mariadb_replica_all_slaves_status_and_no_super_read_only():
    row = dict(Connection_name='', Master_Host='10.23.0.13', Master_Port=3306, Master_Server_Id=3,
               Slave_IO_Running='Yes', Slave_SQL_Running='No', Seconds_Behind_Master=None,
               Last_SQL_Errno=1051, Last_SQL_Error="Unknown table 't'", Gtid_IO_Pos='0-3-7', Using_Gtid='Slave_Pos')
    query, gv, seen = reader(dict(MARIADB_VARS, read_only='ON'), rows=[row])
    facts = topology.read_server(None, query, gv)
    assert seen == ['SHOW ALL SLAVES STATUS']
    assert facts['role'] == 'replica' and facts['replicating'] is False
    assert facts['super_read_only'] is None and facts['server_uuid'] is None
    assert facts['gtid']['model'] == 'mariadb' and facts['gtid']['binlog_pos'] == '0-3-7'
    problems = topology.channel_problems(facts['channels'][0], 60)
    assert problems == ["replication: SQL thread No (error 1051: Unknown table 't')"]


@pytest.mark.parametrize('flavor,version,model', [
    ('mysql', (5, 6, 4), None), ('mysql', (5, 7, 22), 'mysql'), ('mariadb', (10, 11, 6), 'mariadb'),
    ('mariadb', (10, 0, 1), None), ('percona', (8, 0, 36), 'mysql')])
def test_gtid_model_is_version_data(flavor, version, model):
    assert capability_facts.capability('gtid_model', flavor, version) == model


def test_mysql57_uses_show_slave_status_with_old_column_names():
    row = dict(Master_Host='db1', Master_Port='3306', Master_UUID='uuid-1', Slave_IO_Running='Yes',
               Slave_SQL_Running='Yes', Seconds_Behind_Master='3', Channel_Name='')
    query, gv, seen = reader(dict(MYSQL_VARS, version='5.7.22'), rows=[row])
    facts = topology.read_server(None, query, gv)
    assert seen == ['SHOW SLAVE STATUS']
    ch = facts['channels'][0]
    assert (ch['source_uuid'], ch['source_port'], ch['seconds_behind'], ch['io_running']) == ('uuid-1', 3306, 3, True)


# ---------------------------------------------------------------- the plan


def test_group_replication_channels_make_no_replica():
    # A Group Replication member in distributed recovery: its recovery channel points at the donor member,
    # and the applier channel has no source. Neither is async replication from a source.
    rows = [dict(Channel_Name='group_replication_recovery', Source_Host='127.0.0.1', Source_Port=37351,
                 Replica_IO_Running='Yes', Replica_SQL_Running='Yes'),
            dict(Channel_Name='group_replication_applier', Source_Host='<NULL>', Source_Port=0,
                 Replica_IO_Running='No', Replica_SQL_Running='Yes')]
    query, gv, _seen = reader(MYSQL_VARS, rows)
    facts = topology.read_server(None, query, gv)
    assert facts['role'] == 'primary' and facts['channels'] == [] and facts['replicating'] is None
    assert facts['group_replication_channels'] == ['group_replication_recovery', 'group_replication_applier']
    # an async channel beside them still makes a replica
    async_channel = dict(Channel_Name='', Source_Host='db1', Source_Port=3306, Replica_IO_Running='Yes',
                         Replica_SQL_Running='Yes')
    query, gv, _seen = reader(MYSQL_VARS, rows + [async_channel])
    facts = topology.read_server(None, query, gv)
    assert facts['role'] == 'replica' and [c['source_host'] for c in facts['channels']] == ['db1']


# ---------------------------------------------------------------- build_plan's steps, each on its own
