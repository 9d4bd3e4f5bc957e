# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one reader of a replication channel: a row of SHOW REPLICA STATUS, SHOW SLAVE STATUS or SHOW ALL SLAVES STATUS
(any version's spelling of each column) as one dict (channel_from_row()). The topology (replication/topology.py, so
topology_facts and the switchover) and server_facts read channels through it."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.values import as_int, pick


def gtid_text(value):
    """GTID sets come with newlines after each comma; make them one line."""
    if value is None:
        return None
    return ''.join(str(value).split()) or None


def channel_from_row(row):
    """One replication channel from a SHOW REPLICA/SLAVE/ALL SLAVES STATUS row (any spelling)."""
    io_state = pick(row, 'Replica_IO_Running', 'Slave_IO_Running')
    sql_state = pick(row, 'Replica_SQL_Running', 'Slave_SQL_Running')
    return dict(
        name=pick(row, 'Channel_Name', 'Channel_name', 'Connection_name') or '',
        source_host=pick(row, 'Source_Host', 'Master_Host'),
        source_port=as_int(pick(row, 'Source_Port', 'Master_Port')),
        source_uuid=pick(row, 'Source_UUID', 'Master_UUID'),
        source_server_id=as_int(pick(row, 'Source_Server_Id', 'Master_Server_Id')),
        io_running=str(io_state) == 'Yes',
        io_state=io_state,
        sql_running=str(sql_state) == 'Yes',
        sql_state=sql_state,
        seconds_behind=as_int(pick(row, 'Seconds_Behind_Source', 'Seconds_Behind_Master')),
        last_io_errno=as_int(pick(row, 'Last_IO_Errno')) or 0,
        last_io_error=pick(row, 'Last_IO_Error') or '',
        last_sql_errno=as_int(pick(row, 'Last_SQL_Errno')) or 0,
        last_sql_error=pick(row, 'Last_SQL_Error') or '',
        retrieved_gtid_set=gtid_text(pick(row, 'Retrieved_Gtid_Set')),
        executed_gtid_set=gtid_text(pick(row, 'Executed_Gtid_Set')),
        gtid_io_pos=gtid_text(pick(row, 'Gtid_IO_Pos')),
        using_gtid=pick(row, 'Using_Gtid', 'Auto_Position'),
        # What a switchover checks of a candidate and of the replicas it repoints (switchover_plan.py).
        sql_delay=as_int(pick(row, 'SQL_Delay')) or 0,
        filters=dict((name, row[name]) for name in REPLICATION_FILTERS if row.get(name) not in (None, '')),
        source_user=pick(row, 'Source_User', 'Master_User'),
        source_ssl=str(pick(row, 'Source_SSL_Allowed', 'Master_SSL_Allowed') or '').lower() == 'yes',
    )


# The replication filter columns of SHOW REPLICA / SLAVE STATUS (the same names on MySQL and MariaDB).
REPLICATION_FILTERS = ('Replicate_Do_DB', 'Replicate_Ignore_DB', 'Replicate_Do_Table', 'Replicate_Ignore_Table',
                       'Replicate_Wild_Do_Table', 'Replicate_Wild_Ignore_Table', 'Replicate_Rewrite_DB',
                       'Replicate_Do_Domain_Ids', 'Replicate_Ignore_Domain_Ids', 'Replicate_Ignore_Server_Ids')
