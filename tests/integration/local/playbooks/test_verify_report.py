# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/verify.yml across the lab plus three broken hosts, and what the report shows.

The HTML page is opened in headless Chromium through chromedriver (W3C WebDriver over HTTP,
spoken with urllib): the summary counts, the cell statuses, and the evidence shown on click.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from dbfleet_testing.browser import free_port
from dbfleet_testing.servers import INVENTORY, LAB_HOSTS, global_value, lab_inventory, sql
from dbfleet_testing.runs import playbook_proc

# The host with a known drift (it also lacks innodb_dedicated_server: MariaDB).
DRIFT_HOST = 'mariadb118'
BROKEN = {
    'broken-password': 'Access denied',
    'server-down': "Can't connect",
    'unreachable-ssh': 'unreachable',
}


@pytest.fixture(scope='module')
def audit(tmp_path_factory):
    """Run the fleet audit once with a known drift on DRIFT_HOST; yields (report dir, lab hosts, proc). The roles'
    desired state is memcached's alone, and no host is one of its hosts (the lab has no `memcached` group): every host
    is audited for the four extra settings only (test_memcached_settings_only_where_the_role_applies reads this run
    for that case)."""
    hosts = lab_inventory()
    lab = sorted(h for h in hosts if h in LAB_HOSTS)
    if not lab:
        pytest.fail('the lab is not up: start it with `make lab-up`', pytrace=False)
    tmp = tmp_path_factory.mktemp('audit')
    template = hosts[lab[0]]
    extra = {'all': {'hosts': {
        'broken-password': dict(template, dbfleet_login_password='wrong-password', dbfleet_login_unix_socket=None),
        'server-down': dict(template, dbfleet_login_port=free_port(), dbfleet_login_unix_socket=None,
                            dbfleet_option_file='/nonexistent/my.cnf'),
        'unreachable-ssh': {'ansible_connection': 'ssh', 'ansible_host': '127.0.0.1',
                            'ansible_port': free_port(), 'ansible_user': 'nobody'},
    }}}
    for host in ('broken-password', 'server-down'):
        extra['all']['hosts'][host] = dict((k, v) for k, v in extra['all']['hosts'][host].items() if v is not None)
    extra_inv = tmp / 'extra.yml'
    extra_inv.write_text(json.dumps(extra))
    reports = tmp / 'reports'
    original = global_value(DRIFT_HOST, 'innodb_lru_scan_depth') if DRIFT_HOST in lab else None
    settings = {'innodb_lru_scan_depth': int(original) if original else 1024,
                'innodb_buffer_pool_size': '128M',
                'innodb_adaptive_hash_index_parts': 8,
                'innodb_dedicated_server': 'OFF'}
    if original:
        sql(DRIFT_HOST, 'SET GLOBAL innodb_lru_scan_depth = %s', [int(original) + 100])
    try:
        proc = playbook_proc([INVENTORY, str(extra_inv)], 'verify.yml', {
            'verify_desired_from': ['memcached'], 'verify_extra_settings': settings, 'verify_report_dir': str(reports)},
            env_extra=dict(ANSIBLE_SSH_ARGS='-o ConnectTimeout=3 -o BatchMode=yes', ANSIBLE_TIMEOUT='5'))
    finally:
        if original:
            sql(DRIFT_HOST, 'SET GLOBAL innodb_lru_scan_depth = %s', [int(original)])
    # Hosts in error fail the run once the reports are written (verify_fail_on_error's default): exit 2, as a failed task.
    assert proc.returncode == 2 and 'could not be audited' in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
    yield reports, lab, proc


def load_report(reports):
    with open(str(reports / 'verify.json')) as handle:
        return json.load(handle)


def test_every_host_is_reported(audit):
    reports, lab, proc = audit
    report = load_report(reports)
    assert sorted(report['hosts']) == sorted(lab + list(BROKEN))
    for host in lab:
        entry = report['hosts'][host]
        assert entry['status'] in ('ok', 'drift'), entry
        assert set(entry['variables']) == {'innodb_lru_scan_depth', 'innodb_buffer_pool_size',
                                           'innodb_adaptive_hash_index_parts', 'innodb_dedicated_server'}
    for host, fragment in BROKEN.items():
        entry = report['hosts'][host]
        assert entry['status'] == 'error', entry
        assert fragment in entry['reason'], entry['reason']
    assert report['summary']['hosts_error'] == len(BROKEN)
    assert 'wrong-password' not in json.dumps(report)
    assert 'wrong-password' not in proc.stdout
    for host in lab:
        assert lab_inventory()[host]['dbfleet_login_password'] not in proc.stdout


def test_the_known_drift_is_in_the_report(audit):
    reports, lab, _proc = audit
    if DRIFT_HOST not in lab:
        pytest.fail('%s is not up: start it with `make lab-up`' % DRIFT_HOST, pytrace=False)
    report = load_report(reports)
    item = report['hosts'][DRIFT_HOST]['variables']['innodb_lru_scan_depth']
    assert item['status'] == 'drift_runtime'
    assert report['hosts'][DRIFT_HOST]['variables']['innodb_dedicated_server']['status'] == 'unsupported'
    assert DRIFT_HOST in report['summary']['drift_hosts']


def test_junit(audit):
    reports, lab, _proc = audit
    report = load_report(reports)
    root = ET.parse(str(reports / 'verify-junit.xml')).getroot()
    assert root.tag == 'testsuites'
    suites = dict((s.get('name'), s) for s in root.findall('testsuite'))
    assert sorted(suites) == sorted(report['hosts'])
    for host in BROKEN:
        assert suites[host].get('errors') == '1'
        assert BROKEN[host] in suites[host].find('testcase/error').get('message')
    failures = sum(int(s.get('failures')) for s in suites.values())
    drift_cells = sum(v for k, v in report['summary']['variables'].items()
                      if k not in ('ok', 'unsupported', 'not_settable', 'error'))
    assert failures == drift_cells
    assert int(root.get('tests')) == sum(len(e.get('variables') or {}) or 1 for e in report['hosts'].values())


# ---------------------------------------------------------------- the page in a real browser
def test_html_page_in_headless_chromium(audit, browser):
    reports, lab, _proc = audit
    report = load_report(reports)
    browser.get('file://%s' % (reports / 'verify.html'))
    assert browser.script("return document.body.getAttribute('data-ready')") == 'true'

    # summary at the top: the counts shown are the report's
    for status, count in report['summary']['variables'].items():
        assert browser.text(browser.find('#count-%s .n' % status)) == str(count), status
    assert browser.text(browser.find('#hosts-error .n')) == str(len(BROKEN))
    assert browser.text(browser.find('#hosts-error')) == '%d hosts in error' % len(BROKEN)

    # the matrix: one row per host, each cell coloured by its status
    rows = browser.find_all('tr.hostrow')
    assert sorted(browser.attr(r, 'data-host') for r in rows) == sorted(report['hosts'])
    for host, entry in report['hosts'].items():
        for name, item in (entry.get('variables') or {}).items():
            cell = browser.find('td.cell[data-host="%s"][data-var="%s"]' % (host, name))
            assert browser.attr(cell, 'data-status') == item['status']
            assert 'st-%s' % item['status'] in browser.attr(cell, 'class')
            assert '%s on %s: %s' % (name, host, item['status']) in browser.attr(cell, 'title')
    down = browser.find('td.cell[data-host="server-down"]')
    assert "Can't connect" in browser.text(down)

    # the evidence on click
    if DRIFT_HOST in lab:
        cell = browser.find('td.cell[data-host="%s"][data-var="innodb_lru_scan_depth"]' % DRIFT_HOST)
        browser.click(cell)
        details = browser.text(browser.find('#details'))
        item = report['hosts'][DRIFT_HOST]['variables']['innodb_lru_scan_depth']
        assert 'innodb_lru_scan_depth on %s: drift_runtime' % DRIFT_HOST in details
        assert 'running (GLOBAL): %s' % item['runtime'] in details
        assert 'selected' in browser.attr(cell, 'class')

    # "only hosts with drift or errors" hides the hosts that are ok
    browser.click(browser.find('#only-problems'))
    hidden = browser.script("return Array.from(document.querySelectorAll('tr.hostrow.hidden'))"
                            ".map(function(r){return r.getAttribute('data-host')})")
    assert sorted(hidden) == sorted(h for h, e in report['hosts'].items() if e['status'] == 'ok')


@pytest.mark.parametrize('memcached_hosts, expected', [
    (None, set()),                     # no `memcached` group in the lab: nobody is audited for it (the audit's run)
    ('mysql80', {'mysql80'}),          # a host name
    ('mysql*:!mysql97', {'mysql80'}),  # a pattern
])
def test_memcached_settings_only_where_the_role_applies(tmp_path, request, memcached_hosts, expected):
    """The role defaults feed verify; daemon_memcached_option is wanted only on the memcached hosts."""
    lab = sorted(h for h in lab_inventory() if h in LAB_HOSTS)
    if not lab:
        pytest.fail('the lab is not up: start it with `make lab-up`', pytrace=False)
    if memcached_hosts is None:
        # The audit's run: verify_desired_from [memcached] without verify_memcached_hosts. Its exit code 2 is its three
        # broken hosts' (the fixture checks it); every lab host was audited.
        reports, _lab, proc = request.getfixturevalue('audit')
        report = load_report(reports)
        assert all(report['hosts'][h]['status'] in ('ok', 'drift') for h in lab), report['summary']
    else:
        extra = {'verify_desired_from': ['memcached'], 'verify_report_dir': str(tmp_path),
                 'verify_memcached_hosts': memcached_hosts}
        proc = playbook_proc(INVENTORY, 'verify.yml', extra, timeout=300)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        report = load_report(tmp_path)
    assert 'Could not match supplied host pattern' not in proc.stderr
    audited = {h for h in lab if 'daemon_memcached_option' in report['hosts'][h]['variables']}
    # MariaDB can never have the plugin: the role wants nothing there even when it is named.
    assert audited == expected & set(lab)
