# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drain of a cluster member before its stop (cluster_drain.drain_problems, run_drain) over a fake server."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import cluster_drain
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity

UUID = '7e1b0a2c-ca6f-11f0-8d2e-1f4c2b6a9d10'
GALERA = dict(version='10.11.19-MariaDB-0+deb12u1-log', version_comment='Debian 12', wsrep_on='ON',
              wsrep_provider='/usr/lib/galera/libgalera_smm.so', wsrep_cluster_name='dbfleet_galera',
              wsrep_node_name='galera3', wsrep_reject_queries='NONE')
STATUS = dict(wsrep_cluster_state_uuid=UUID, wsrep_cluster_size='3', wsrep_cluster_status='Primary',
              wsrep_local_state_comment='Synced', wsrep_ready='ON', wsrep_connected='ON', wsrep_local_recv_queue='0',
              threads_connected='5')
MYSQL = dict(version='8.0.33', version_comment='MySQL Community Server - GPL', offline_mode='OFF')


class Server:
    """A fake server: GLOBAL variables and status, and the statements run on it."""

    def __init__(self, variables, status=None):
        self.variables = dict(variables)
        self.status = dict(status or STATUS)
        self.statements = []

    def global_variables(self, _conn, names=None):
        return dict((k, v) for k, v in self.variables.items() if names is None or k in names)

    def global_status(self, _conn, names=None):
        return dict((k, v) for k, v in self.status.items() if names is None or k in names)

    def query(self, _conn, _sql, _args=None):
        return []

    def execute(self, _conn, sql, args=None):
        self.statements.append((sql, args))
        name = sql.split()[2]
        self.variables[name] = args[0]

    def drain(self, method, state='drained', restore_value=None, seconds=0, expect_cluster=None, check_mode=False):
        slept = []
        result = cluster_drain.run_drain(None, self.query, self.execute, self.global_variables, self.global_status, method,
                                         state, restore_value, seconds, expect_cluster, check_mode, sleep=slept.append)
        result['slept'] = slept
        return result


def identity(variables):
    return server_identity.identity_from_variables(variables)


def test_reject_queries_drains_a_galera_node_and_waits():
    server = Server(GALERA)
    result = server.drain('reject_queries', seconds=10)
    assert not result['failed'] and result['changed']
    assert server.statements == [('SET GLOBAL wsrep_reject_queries = %s', ('ALL',))]
    assert result['before'] == 'NONE' and result['after'] == 'ALL' and result['slept'] == [10]
    assert result['clients_before'] == 4
    assert result['msg'].startswith('set wsrep_reject_queries=ALL (was NONE), waited ')


def test_restore_puts_back_the_value_read_before_the_drain():
    server = Server(dict(GALERA, wsrep_reject_queries='ALL'))
    result = server.drain('reject_queries', state='restored', restore_value='NONE')
    assert result['changed'] and server.variables['wsrep_reject_queries'] == 'NONE' and result['slept'] == []
    # A node its owner kept out of view before the run (the drain found ALL) stays out.
    server = Server(dict(GALERA, wsrep_reject_queries='ALL'))
    result = server.drain('reject_queries', state='restored', restore_value='ALL')
    assert not result['changed'] and server.statements == []


def test_a_drained_node_is_not_drained_again_nor_waited_for():
    server = Server(dict(GALERA, wsrep_reject_queries='ALL'))
    result = server.drain('reject_queries', seconds=10)
    assert not result['failed'] and not result['changed'] and server.statements == [] and result['slept'] == []
    assert result['msg'] == 'wsrep_reject_queries=ALL already: nothing to change'


def test_check_mode_says_what_it_would_set_and_sets_nothing():
    server = Server(GALERA)
    result = server.drain('reject_queries', seconds=3, check_mode=True)
    assert result['changed'] and server.statements == [] and result['slept'] == []
    assert result['msg'] == 'would set wsrep_reject_queries=ALL (now NONE), then wait 3 s for clients to move away'


def test_offline_mode_on_mysql_reads_1_as_on():
    server = Server(dict(MYSQL, offline_mode='1'))
    result = server.drain('offline_mode')
    assert not result['changed'] and result['before'] == 'ON'
    server = Server(MYSQL)
    result = server.drain('offline_mode')
    assert result['changed'] and server.statements == [('SET GLOBAL offline_mode = %s', ('ON',))]


def test_a_method_the_server_lacks_is_refused_before_any_change():
    server = Server(GALERA)
    result = server.drain('offline_mode')
    assert result['failed'] and server.statements == []
    assert result['msg'] == ('drain offline_mode needs offline_mode (MySQL/Percona Server 5.7.5 and later); this server '
                             'runs MariaDB 10.11.19; nothing was changed')
    server = Server(MYSQL)
    result = server.drain('reject_queries')
    assert result['failed'] and server.statements == []
    assert 'drain reject_queries needs wsrep_reject_queries (MariaDB 10.1.17 and later); this server runs MySQL 8.0.33' \
        in result['msg']


def test_reject_queries_needs_a_galera_provider():
    problems = cluster_drain.drain_problems('reject_queries', identity(GALERA), dict(GALERA, wsrep_provider='none'))
    assert problems == ['drain reject_queries works on Galera nodes only: this server (MariaDB 10.11.19) runs no '
                        'Galera provider (wsrep_on=ON, wsrep_provider=none)']
    assert cluster_drain.drain_problems('reject_queries', identity(dict(GALERA, version='10.1.16-MariaDB')), GALERA) == [
        'drain reject_queries needs wsrep_reject_queries (MariaDB 10.1.17 and later); this server runs MariaDB 10.1.16']
    assert cluster_drain.drain_problems('haproxy', identity(GALERA), GALERA) == [
        "unknown drain method 'haproxy' (one of: offline_mode, reject_queries)"]


def test_another_cluster_is_refused():
    server = Server(GALERA)
    server.query = lambda _c, _s, _a=None: []
    result = server.drain('reject_queries', expect_cluster='another-uuid')
    assert result['failed'] and server.statements == []
    assert 'not a member of another-uuid' in result['msg']


def test_a_set_the_server_does_not_keep_fails():
    server = Server(GALERA)
    server.execute = lambda _c, _s, _a=None: None
    result = server.drain('reject_queries')
    assert result['failed'] and result['msg'] == 'SET GLOBAL wsrep_reject_queries=ALL returned, but the server reports NONE'


def test_a_drained_peer_does_not_serve():
    cluster = clusters.galera_from(dict(GALERA, wsrep_reject_queries='ALL'), STATUS, [])
    assert cluster['reject_queries'] == 'ALL'
    assert clusters.member_problems(cluster) == ['wsrep_reject_queries=ALL: refuses client queries (drained)']
    assert clusters.member_problems(clusters.galera_from(GALERA, STATUS, [])) == []
