# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report shows each host's cluster, state and role."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.filter.verify_report import verify_report, verify_report_html
from ansible_collections.dbfleet.innodb.plugins.module_utils import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts

CLUSTER = dict(kind='galera', name='24b97d40-e8cf-11f1-b24a-c7da101eb7b5', label='dbfleet_galera', size=3,
               state='Donor/Desynced', status='Primary', ready=False, quorum=True, role=None, queue=0)


def outcome(cluster):
    return dict(changed=False, errors=[], variables={'innodb_flush_neighbors': dict(
        desired=0, resolved_name='innodb_flush_neighbors', runtime='0', status='ok', notes=[], configured=None,
        persisted=None, origin=None)}, server={'flavor': 'mariadb', 'version_text': '10.11.19',
                                               'replication': {'role': 'primary', 'cluster': cluster}})


def test_cluster_state_per_host_in_the_report_and_the_html():
    report = verify_report({'galera2': outcome(CLUSTER), 'solo': outcome(None)}, generated='2026-01-01T00:00:00+00:00')
    assert report['hosts']['galera2']['server']['cluster'] == CLUSTER
    assert report['hosts']['solo']['server']['cluster'] is None
    html = verify_report_html(report)
    assert 'galera dbfleet_galera Donor/Desynced' in html


class Cursor:
    def __init__(self, rows):
        self.rows = rows

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql, args=None):
        self.sql = sql

    def fetchall(self):
        return self.rows(self.sql)


class Conn:
    def __init__(self, variables, status):
        self.variables, self.status = variables, status

    def cursor(self, *args):
        def rows(sql):
            if 'GLOBAL VARIABLES' in sql:
                return [dict(Variable_name=k, Value=v) for k, v in self.variables.items()]
            if 'GLOBAL STATUS' in sql:
                return [dict(Variable_name=k, Value=v) for k, v in self.status.items()]
            return []
        return Cursor(rows)


def test_server_facts_cluster_info_of_a_galera_node_and_of_a_standalone_server():
    identity = flavors.identity_from_variables(dict(version='10.11.19-MariaDB-0+deb12u1-log', version_comment='Debian 12'))
    conn = Conn(dict(wsrep_on='ON', wsrep_provider='/usr/lib/galera/libgalera_smm.so', wsrep_cluster_name='dbfleet_galera'),
                dict(wsrep_cluster_state_uuid=CLUSTER['name'], wsrep_cluster_size='3', wsrep_cluster_status='Primary',
                     wsrep_local_state_comment='Synced', wsrep_ready='ON', wsrep_connected='ON', wsrep_local_recv_queue='0'))
    info = server_facts.cluster_info(conn, identity)
    assert info == dict(CLUSTER, state='Synced', ready=True)
    assert server_facts.cluster_info(Conn(dict(wsrep_on='OFF'), {}), identity) is None
