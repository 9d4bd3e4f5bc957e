# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report shows each host's cluster, state and role."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ansible_collections.dbfleet.innodb.plugins.filter.verify_report import verify_report, verify_report_html, verify_report_junit
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import membership

from fake_db import variables_server

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


def test_server_facts_cluster_info_of_a_galera_node_and_of_a_standalone_server():
    identity = server_identity.identity_from_variables(dict(version='10.11.19-MariaDB-0+deb12u1-log', version_comment='Debian 12'))
    conn = variables_server(
        dict(wsrep_on='ON', wsrep_provider='/usr/lib/galera/libgalera_smm.so', wsrep_cluster_name='dbfleet_galera'),
        dict(wsrep_cluster_state_uuid=CLUSTER['name'], wsrep_cluster_size='3', wsrep_cluster_status='Primary',
             wsrep_local_state_comment='Synced', wsrep_ready='ON', wsrep_connected='ON', wsrep_local_recv_queue='0'))
    info = membership.cluster_info(conn, identity)
    # the settings every Galera member must share that the server reports (here only the cluster name)
    assert info == dict(CLUSTER, state='Synced', ready=True, settings=dict(wsrep_cluster_name='dbfleet_galera'))
    assert membership.cluster_info(variables_server(dict(wsrep_on='OFF'), {}), identity) is None


def member(name, osu, ahi='ON'):
    cluster = dict(CLUSTER, state='Synced', ready=True, settings=dict(wsrep_cluster_name='dbfleet_galera',
                                                                      wsrep_osu_method=osu, binlog_format='ROW'))
    out = outcome(cluster)
    out['variables']['innodb_adaptive_hash_index'] = dict(desired=None, runtime=ahi, status='ok', notes=[])
    return out


def test_members_that_disagree_on_a_setting_that_must_match_reach_the_report_html_and_junit():
    report = verify_report({'galera1': member('galera1', 'TOI'), 'galera2': member('galera2', 'RSU', ahi='OFF'),
                            'galera3': member('galera3', 'TOI'), 'solo': outcome(None)},
                           generated='2026-01-01T00:00:00+00:00')
    flagged = report['summary']['cluster_disagreements']
    assert [(d['setting'], d['values']) for d in flagged] == [
        ('wsrep_osu_method', dict(galera1='TOI', galera2='RSU', galera3='TOI'))]
    assert flagged[0]['text'] == ('Galera cluster dbfleet_galera: wsrep_osu_method differs between members: '
                                  'galera1=TOI, galera2=RSU, galera3=TOI')
    # AHI is each member's own: shown, not flagged
    assert [d['setting'] for d in report['summary']['per_member_settings']] == ['innodb_adaptive_hash_index']
    html = verify_report_html(report)
    assert 'id="cluster-disagreements"' in html and 'wsrep_osu_method differs between members' in html
    junit = ET.fromstring(verify_report_junit(report))
    suite = [s for s in junit.findall('testsuite') if s.get('name') == 'clusters']
    assert len(suite) == 1 and suite[0].get('tests') == '1' and suite[0].get('failures') == '1'
    assert 'galera2=RSU' in suite[0].find('testcase/failure').get('message')
    assert int(junit.get('failures')) == 1


def test_members_that_agree_pass_and_a_fleet_without_clusters_has_no_cluster_suite():
    report = verify_report({'galera1': member('galera1', 'TOI'), 'galera2': member('galera2', 'TOI')},
                           generated='2026-01-01T00:00:00+00:00')
    assert report['summary']['cluster_disagreements'] == []
    assert 'id="cluster-disagreements"' not in verify_report_html(report)
    suite = [s for s in ET.fromstring(verify_report_junit(report)).findall('testsuite') if s.get('name') == 'clusters']
    assert suite[0].get('tests') == '1' and suite[0].get('failures') == '0'
    alone = ET.fromstring(verify_report_junit(verify_report({'solo': outcome(None)}, generated='2026-01-01T00:00:00+00:00')))
    assert [s.get('name') for s in alone.findall('testsuite')] == ['solo']
