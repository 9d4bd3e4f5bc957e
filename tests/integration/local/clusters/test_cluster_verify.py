"""The fleet audit on the lab's real Galera cluster (galera1-3 + galera_replica): clusters in the report.

The fixture is test_galera.py's (starts galera1-3 and galera_replica when they are not up, stops them at the
end of the module if it started them).

- playbooks/verify.yml (per host) shows each node's cluster (kind, label, state Synced, ready), the replica
  without one, and no disagreement while the members agree;
- one member made to differ on a setting every member must share (``SET GLOBAL wsrep_OSU_method = 'RSU'`` on
  galera2, put back after): the report flags the cluster, naming every member's value, in verify.json,
  verify.html and verify-junit.xml (suite ``clusters``), in host mode and in controller mode (verify_fleet),
  and ``verify_fail_on_drift`` fails the run on it; AHI, a per-member setting, is never flagged.
"""
import json
import os
import subprocess
import xml.etree.ElementTree as ET

import pytest

from dbfleet_testing.clusters import INVENTORY, NODES, REPLICA
from dbfleet_testing.runs import env
from dbfleet_testing.lab import REPO

HOSTS = NODES + (REPLICA,)


def run_verify(tmp_path, mode, **extra):
    out = tmp_path / ('reports-%s' % mode)
    args = dict(verify_hosts='galera', verify_report_dir=str(out), verify_mode=mode)
    args.update(extra)
    proc = subprocess.run([os.path.join(REPO, '.venv', 'bin', 'ansible-playbook'), '-i', INVENTORY,
                           os.path.join(REPO, 'playbooks', 'verify.yml'), '-e', json.dumps(args)],
                          env=env(), capture_output=True, text=True, timeout=600, cwd=REPO, check=False)
    output = proc.stdout + proc.stderr
    report = json.loads((out / 'verify.json').read_text()) if (out / 'verify.json').exists() else None
    return proc.returncode, output, report, out


@pytest.fixture
def osu_method_differs(cluster):  # noqa: F811
    before = cluster.query('galera2', 'SELECT @@GLOBAL.wsrep_OSU_method')[0][0]
    assert before == 'TOI', before
    cluster.query('galera2', "SET GLOBAL wsrep_OSU_method = 'RSU'")
    try:
        yield cluster
    finally:
        cluster.query('galera2', "SET GLOBAL wsrep_OSU_method = '%s'" % before)
    assert cluster.query('galera2', 'SELECT @@GLOBAL.wsrep_OSU_method')[0][0] == before


def test_report_shows_each_members_cluster_and_no_disagreement(cluster, tmp_path):  # noqa: F811
    rc, out, report, _dir = run_verify(tmp_path, 'host')
    assert rc == 0, out[-4000:]
    for node in NODES:
        member = report['hosts'][node]['server']['cluster']
        assert member['kind'] == 'galera' and member['state'] == 'Synced' and member['ready'] is True, member
        assert member['size'] == 3 and member['settings']['wsrep_osu_method'] == 'TOI', member
    assert len(set(report['hosts'][n]['server']['cluster']['name'] for n in NODES)) == 1
    assert report['hosts'][REPLICA]['server']['cluster'] is None
    assert report['summary']['cluster_disagreements'] == []


@pytest.mark.parametrize('mode', ['host', 'controller'])
def test_a_member_that_differs_on_a_must_match_setting_is_flagged(osu_method_differs, tmp_path, mode):
    rc, out, report, where = run_verify(tmp_path, mode)
    assert rc == 0, out[-4000:]
    label = report['hosts']['galera1']['server']['cluster']['label']
    flagged = report['summary']['cluster_disagreements']
    assert [(d['cluster'], d['setting'], d['values']) for d in flagged] == [
        (label, 'wsrep_osu_method', dict(galera1='TOI', galera2='RSU', galera3='TOI'))], flagged
    text = flagged[0]['text']
    assert text == ('Galera cluster %s: wsrep_osu_method differs between members: galera1=TOI, galera2=RSU, galera3=TOI'
                    % label)
    assert all(d['setting'] != 'innodb_adaptive_hash_index' for d in flagged)
    html = (where / 'verify.html').read_text()
    assert 'id="cluster-disagreements"' in html and 'galera2=RSU' in html
    suite = [s for s in ET.parse(str(where / 'verify-junit.xml')).getroot().findall('testsuite')
             if s.get('name') == 'clusters']
    assert len(suite) == 1 and suite[0].get('failures') == '1', ET.tostring(suite[0]) if suite else 'no clusters suite'
    assert text in suite[0].find('testcase/failure').get('message')
    if mode == 'host':
        rc, out, _report, _where = run_verify(tmp_path, 'host-fail', verify_mode='host', verify_fail_on_drift=True)
        assert rc != 0 and 'wsrep_osu_method differs between members' in out, out[-4000:]
