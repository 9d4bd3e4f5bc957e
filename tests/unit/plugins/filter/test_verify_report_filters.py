# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report filters: verify_report, verify_report_html, verify_report_junit."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.dbfleet.innodb.plugins.filter.verify_report import (
    FilterModule, verify_report, verify_report_html, verify_report_junit)


def item(status, runtime='1', **extra):
    base = dict(desired=1, resolved_name='innodb_flush_neighbors', runtime=runtime, status=status,
                notes=['note for %s' % status], configured=None, persisted=None, origin=None)
    base.update(extra)
    return base


OUTCOMES = {
    'db1': dict(changed=False, invocation={'module_args': {'login_password': 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'}},
                variables={'innodb_flush_neighbors': item('ok'),
                           'innodb_adaptive_hash_index': item('unsupported', runtime=None)},
                server={'flavor': 'mysql', 'version_text': '8.0.33', 'replication': {'role': 'primary'}},
                errors=[]),
    'db2': dict(changed=False, variables={
        'innodb_flush_neighbors': item('drift_runtime', runtime='2',
                                       configured=dict(value='0', file='/etc/my.cnf', line=3, group='mysqld')),
        'innodb_adaptive_hash_index': item('pending_restart', runtime='<script>alert(1)</script>')},
        server={'flavor': 'mariadb', 'version_text': '10.11.19', 'replication': {'role': 'replica'}}, errors=[]),
    'db3': dict(unreachable=True, msg='Failed to connect to the host via ssh: Connection refused', changed=False),
    'db4': dict(failed=True, msg="cannot connect to dbfleet@10.0.0.4:3306: (2003) Can't connect"),
    'db5': None,
}


@pytest.fixture
def report():
    return verify_report(OUTCOMES, generated='2026-01-01T00:00:00+00:00')


def test_report_structure(report):
    assert sorted(report['hosts']) == ['db1', 'db2', 'db3', 'db4', 'db5']
    assert report['variables'] == ['innodb_adaptive_hash_index', 'innodb_flush_neighbors']
    assert report['hosts']['db1']['status'] == 'ok'
    assert report['hosts']['db2']['status'] == 'drift'
    assert report['hosts']['db2']['server']['role'] == 'replica'
    assert report['hosts']['db3']['status'] == 'error'
    assert report['hosts']['db3']['reason'].startswith('unreachable: Failed to connect')
    assert "Can't connect" in report['hosts']['db4']['reason']
    assert 'not audited' in report['hosts']['db5']['reason']
    summary = report['summary']
    assert (summary['hosts'], summary['hosts_ok'], summary['hosts_drift'], summary['hosts_error']) == (5, 1, 1, 3)
    assert summary['variables']['ok'] == 1 and summary['variables']['drift_runtime'] == 1
    assert summary['variables']['pending_restart'] == 1 and summary['variables']['unsupported'] == 1
    assert 'invocation' not in json.dumps(report)


def test_report_from_hostvars():
    hostvars = {'a': {'__verify_result': OUTCOMES['db1']}, 'b': {}}
    got = verify_report(['a', 'b'], hostvars)
    assert got['hosts']['a']['status'] == 'ok'
    assert got['hosts']['b']['status'] == 'error'


def test_report_refuses_garbage():
    with pytest.raises(AnsibleFilterError):
        verify_report('nope')
    with pytest.raises(AnsibleFilterError):
        verify_report(['a'])
    with pytest.raises(AnsibleFilterError):
        verify_report_html({'x': 1})
    with pytest.raises(AnsibleFilterError):
        verify_report_junit([])


def test_html_is_self_contained_and_escaped(report):
    page = verify_report_html(report)
    assert page.startswith('<!DOCTYPE html>')
    assert 'http://' not in page and 'https://' not in page and '<link' not in page
    assert '<script>alert(1)</script>' not in page          # server values are escaped
    assert 'id="count-drift_runtime" data-count="1"' in page
    # the embedded data (the page makes its cells from it): one row per host, one status letter per variable
    data = json.loads(page.split('<script id="verify-data" type="application/json">')[1].split('</script>')[0])
    rows = dict((row[0], row) for row in data['hosts'])
    assert rows['db2'][1] == 'drift'
    flush = data['variables'].index('innodb_flush_neighbors')
    assert rows['db2'][5][flush] == 'r' and data['items'][rows['db2'][6][flush]]['status'] == 'drift_runtime'
    assert data['items'][rows['db2'][6][flush]]['configured']['file'] == '/etc/my.cnf'
    assert rows['db3'][1] == 'error' and rows['db3'][6] == [] and 'unreachable' in data['strings'][rows['db3'][4]]


def test_junit(report):
    root = ET.fromstring(verify_report_junit(report))
    assert (root.get('tests'), root.get('failures'), root.get('errors'), root.get('skipped')) == ('7', '2', '3', '1')
    suites = dict((s.get('name'), s) for s in root.findall('testsuite'))
    assert suites['db2'].find("testcase[@name='innodb_flush_neighbors']/failure").get('type') == 'drift_runtime'
    assert suites['db1'].find("testcase[@name='innodb_adaptive_hash_index']/skipped") is not None
    assert 'unreachable' in suites['db3'].find('testcase/error').get('message')


def test_filters_are_registered():
    assert sorted(FilterModule().filters()) == ['verify_errors', 'verify_report', 'verify_report_html', 'verify_report_junit']


# ---------------------------------------------------------------- upgrade blockers
BLOCKER = dict(schema='shop', table='sessions', engine='Aria', rows_estimate=300, total_bytes=49152, status='never',
               where=['target'], version='mysql 8.4.0', gone_in=None, source='MariaDB KB "Aria" (MariaDB only)',
               reason='shop.sessions uses Aria, which mysql 8.4.0 does not have: mysql never shipped the Aria engine')
TARGET = {'flavor': 'mysql', 'version': '8.4.0'}


@pytest.fixture
def blocked():
    outcomes = dict(OUTCOMES)
    outcomes['db1'] = dict(OUTCOMES['db1'], target=TARGET, blockers=[BLOCKER], engine_notes=[])
    outcomes['db2'] = dict(OUTCOMES['db2'], target=TARGET, blockers=[], engine_notes=[])
    return verify_report(outcomes, generated='2026-01-01T00:00:00+00:00')


def test_report_lists_blockers_per_host(blocked, report):
    assert blocked['hosts']['db1']['blockers'] == [BLOCKER]
    assert blocked['hosts']['db1']['target'] == TARGET
    assert blocked['hosts']['db2']['blockers'] == []
    assert blocked['summary']['blockers'] == 1 and blocked['summary']['blocked_hosts'] == ['db1']
    # Without a target (the variable unset): empty, and the rest of the report as before.
    assert report['summary']['blockers'] == 0 and report['hosts']['db1']['blockers'] == []
    assert report['hosts']['db1']['target'] is None


def test_html_has_a_blocker_row_and_a_clean_row(blocked, report):
    page = verify_report_html(blocked)
    assert 'id="blockers"' in page and 'data-table="shop.sessions"' in page
    assert 'mysql never shipped the Aria engine' in page and '49152' in page
    assert 'no table stops a move to mysql 8.4.0' in page
    assert 'id="blockers"' not in verify_report_html(report)


def test_junit_fails_a_case_per_blocker(blocked, report):
    root = ET.fromstring(verify_report_junit(blocked))
    db1 = next(s for s in root if s.get('name') == 'db1')
    case = next(c for c in db1 if c.get('name') == 'upgrade blocker: shop.sessions')
    assert case.find('failure').get('type') == 'upgrade_blocker'
    assert 'source: MariaDB KB' in case.find('failure').text
    db2 = next(s for s in root if s.get('name') == 'db2')
    assert any(c.get('name') == 'upgrade blockers: mysql 8.4.0' and c.find('failure') is None for c in db2)
    assert int(db1.get('failures')) == 1
    plain = ET.fromstring(verify_report_junit(report))
    assert not any('upgrade' in (c.get('name') or '') for s in plain for c in s)
