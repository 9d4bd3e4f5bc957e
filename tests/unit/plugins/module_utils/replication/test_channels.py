"""The one replication-channel reader: every version's spelling of SHOW REPLICA / SLAVE / ALL SLAVES STATUS, read the
same by the topology and by server_facts."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import membership
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication.channels import channel_from_row
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity

from fake_db import Conn, rows_for

# One channel as each server spells it: MySQL 8.0.22 and later, MySQL 5.7 / 8.0 before 8.0.22 (Channel_name in
# SHOW SLAVE STATUS of some 5.7 builds), MariaDB's SHOW ALL SLAVES STATUS.
ROWS = {
    'replica': dict(Channel_Name='', Source_Host='db1', Source_Port=3306, Replica_IO_Running='Yes',
                    Replica_SQL_Running='No', Seconds_Behind_Source=None, Last_SQL_Errno=1062,
                    Executed_Gtid_Set='uuid:1-5,\nuuid2:1-3', Replicate_Do_DB='app'),
    'slave': dict(Channel_name='east', Master_Host='db1', Master_Port='3306', Slave_IO_Running='Connecting',
                  Slave_SQL_Running='Yes', Seconds_Behind_Master='12'),
    'mariadb': dict(Connection_name='west', Master_Host='db1', Master_Port=3306, Slave_IO_Running='Yes',
                    Slave_SQL_Running='Yes', Seconds_Behind_Master=0, Using_Gtid='Slave_Pos', Gtid_IO_Pos='0-1-5'),
}


@pytest.mark.parametrize('spelling, name, io, io_state, sql, lag', [
    ('replica', '', True, 'Yes', False, None),
    ('slave', 'east', False, 'Connecting', True, 12),
    ('mariadb', 'west', True, 'Yes', True, 0),
])
def test_every_spelling_reads_the_same(spelling, name, io, io_state, sql, lag):
    channel = channel_from_row(ROWS[spelling])
    assert (channel['name'], channel['io_running'], channel['io_state'], channel['sql_running'],
            channel['seconds_behind']) == (name, io, io_state, sql, lag)
    assert channel['source_host'] == 'db1' and channel['source_port'] == 3306


def test_gtid_sets_errors_and_filters():
    channel = channel_from_row(ROWS['replica'])
    assert channel['executed_gtid_set'] == 'uuid:1-5,uuid2:1-3' and channel['last_sql_errno'] == 1062
    assert channel['filters'] == dict(Replicate_Do_DB='app') and channel['last_io_errno'] == 0
    assert channel_from_row(ROWS['mariadb'])['gtid_io_pos'] == '0-1-5'


def replica_status(rows):
    """A server whose SHOW REPLICA STATUS gives rows."""
    return Conn(rows_for('SHOW REPLICA', rows))


def test_server_facts_reads_the_channels_through_the_one_reader():
    """server_facts shows the threads' states as the server writes them ("Yes", "Connecting"), from the same reader:
    the channel name of every spelling included."""
    identity = server_identity.identity_from_variables(dict(version='8.0.36', version_comment='MySQL Community Server - GPL'))
    info = membership.replication_info(replica_status([ROWS['slave'], ROWS['replica']]), identity, dict(read_only='ON'))
    assert info['statement'] == 'SHOW REPLICA STATUS' and info['role'] == 'replica' and info['read_only'] is True
    assert info['channels'] == [
        dict(name='east', source_host='db1', source_port=3306, io_running='Connecting', sql_running='Yes',
             seconds_behind=12),
        dict(name='', source_host='db1', source_port=3306, io_running='Yes', sql_running='No', seconds_behind=None)]
    assert membership.replication_info(replica_status([]), identity, {})['role'] == 'primary'
