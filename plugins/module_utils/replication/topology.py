# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The replication state of one server, read from the server itself (module dbfleet.innodb.topology_facts).

read_server(conn) runs on each host: server UUID and id, read_only / super_read_only, the GTID state and every
replication channel, with the statement the flavor and version need, and the server's cluster when asked. Anything
it cannot read makes the host's role ``unknown``: a host whose role is unknown is never taken for a primary.
channel_problems() says why a channel is not healthy. The plan over many hosts' facts is
replication/topology_plan.py's (on the controller), the gate after a restart replication/restart_gate.py's.

facts_from() is pure logic over what was read, so that it can be unit-tested without a server.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters as cluster_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import gtid_sets
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication.channels import channel_from_row, gtid_text
from ansible_collections.dbfleet.innodb.plugins.module_utils.values import as_int, onoff

PRIMARY = 'primary'
REPLICA = 'replica'
UNKNOWN = 'unknown'
ROLES = (PRIMARY, REPLICA, UNKNOWN)

DEFAULT_MAX_LAG = 60


# ---------------------------------------------------------------- reading one server
def channel_problems(channel, max_lag=None):
    """Why a replication channel is not healthy (empty list: IO and SQL run, lag under max_lag)."""
    problems = []
    label = 'channel %r' % channel['name'] if channel.get('name') else 'replication'
    if not channel.get('io_running'):
        text = '%s: IO thread %s' % (label, channel.get('io_state') or 'not running')
        if channel.get('last_io_errno'):
            text += ' (error %s: %s)' % (channel['last_io_errno'], channel.get('last_io_error'))
        problems.append(text)
    if not channel.get('sql_running'):
        text = '%s: SQL thread %s' % (label, channel.get('sql_state') or 'not running')
        if channel.get('last_sql_errno'):
            text += ' (error %s: %s)' % (channel['last_sql_errno'], channel.get('last_sql_error'))
        problems.append(text)
    if channel.get('io_running') and channel.get('sql_running') and max_lag is not None:
        lag = channel.get('seconds_behind')
        if lag is None:
            problems.append('%s: lag unknown (Seconds_Behind_Source is NULL)' % label)
        elif lag > max_lag:
            problems.append('%s: %d s behind its source (limit %d s)' % (label, lag, max_lag))
    return problems


SERVER_VARIABLES = ('server_uuid', 'server_id', 'read_only', 'super_read_only', 'gtid_mode',
                    'gtid_executed', 'gtid_binlog_pos', 'gtid_slave_pos', 'gtid_current_pos',
                    'gtid_domain_id', 'log_bin', 'log_replica_updates', 'log_slave_updates')


def facts_from(identity, variables, rows, statement, error=None, cluster=None):
    """The topology facts of one server from what was read (pure; see read_server).
    cluster: the cluster dict of replication/clusters.py when the server is a cluster member (else None)."""
    gtid_model = capability_facts.capability('gtid_model', identity.flavor, identity.version)
    has_sro = flavors.variable_facts('super_read_only', identity.flavor, identity.version) is not None
    facts = dict(
        role=UNKNOWN,
        error=error,
        server=identity.to_dict(),
        server_uuid=variables.get('server_uuid') or None,
        server_id=as_int(variables.get('server_id')),
        read_only=onoff(variables.get('read_only')),
        super_read_only=onoff(variables.get('super_read_only')) if has_sro else None,
        log_bin=onoff(variables.get('log_bin')),
        log_replica_updates=onoff(variables.get(capability_facts.capability('log_replica_updates_variable', identity.flavor,
                                                                            identity.version))),
        gtid=dict(model=gtid_model, mode=None, executed=None, binlog_pos=None, slave_pos=None,
                  current_pos=None, domain_id=None),
        statement=statement,
        channels=[],
        group_replication_channels=[],
        replicating=None,
        cluster=cluster,
    )
    if gtid_model == 'mysql':
        facts['gtid'].update(mode=variables.get('gtid_mode'), executed=gtid_text(variables.get('gtid_executed')))
    elif gtid_model == 'mariadb':
        facts['gtid'].update(binlog_pos=gtid_text(variables.get('gtid_binlog_pos')),
                             slave_pos=gtid_text(variables.get('gtid_slave_pos')),
                             current_pos=gtid_text(variables.get('gtid_current_pos')),
                             domain_id=as_int(variables.get('gtid_domain_id')))
    facts['gtid']['position'] = gtid_sets.source_position(facts)
    if error:
        return facts
    if rows is None:
        facts['error'] = '%s returned nothing readable' % statement
        return facts
    # Group Replication's own channels (group_replication_applier / _recovery) are the group's, not an
    # async source: a group member is no replica because of them (cluster_utils reads the group).
    channels = [channel_from_row(r) for r in rows]
    facts['channels'] = [c for c in channels if not cluster_utils.is_group_replication_channel(c['name'])]
    facts['group_replication_channels'] = [c['name'] for c in channels if cluster_utils.is_group_replication_channel(c['name'])]
    facts['role'] = REPLICA if facts['channels'] else PRIMARY
    if facts['channels']:
        facts['replicating'] = all(c['io_running'] and c['sql_running'] for c in facts['channels'])
    return facts


def read_server(conn, query, global_variables, global_status=None):
    """Topology facts of the server behind conn.

    query(conn, sql) -> rows (dicts); global_variables(conn, names) -> {name: value}.
    global_status(conn, names) -> {name: value}: with it, the server's cluster membership is read too
    (clusters.read_cluster); without it, ``cluster`` is None.
    A failure to read anything makes the role ``unknown`` with the reason in ``error``;
    the caller decides how to report it (the module fails closed)."""
    variables = global_variables(conn, server_identity.DETECT_VARIABLES + SERVER_VARIABLES)
    identity = server_identity.identity_from_variables(variables)
    statement = capability_facts.capability('replica_status_statement', identity.flavor, identity.version)
    cluster = None
    if global_status is not None:
        cluster = cluster_utils.read_cluster(conn, identity.flavor, query, global_variables, global_status)
    try:
        rows = query(conn, statement)
    except Exception as e:  # pylint: disable=broad-except
        args = getattr(e, 'args', ())
        text = '(%s) %s' % (args[0], args[1]) if len(args) >= 2 else str(e)
        return facts_from(identity, variables, None, statement,
                          error='%s failed: %s; the role of this server cannot be read' % (statement, text),
                          cluster=cluster)
    return facts_from(identity, variables, rows, statement, cluster=cluster)
