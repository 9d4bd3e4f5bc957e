# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report at 10,000 hosts, in headless Chromium (chromedriver, as tests/integration/local/playbooks/test_verify_report.py).

A generated fleet (report_fleet.py: real verify result shapes, Galera clusters and Group Replication groups,
statuses spread as on a large fleet) goes through the real code path - verify_report(), write_report_set() -
and the page must be ready in under 2 s (the page's own performance.now() when its script has rendered the
first rows, and the navigation's loadEventEnd), render only what is in view, filter by status, cluster /
topology and variable, and show a cell's evidence on click. Set DBFLEET_REPORT_SCREENSHOT to a path to keep
a screenshot (docs/images/verify-report-10000.png was made so).
"""

from __future__ import annotations

import base64
import json
import os
import time

import pytest

from dbfleet_testing.report_fleet import fleet_outcomes

from ansible_collections.dbfleet.innodb.plugins.module_utils.report import build as vr
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import files as vf

# Its own lab (or none): run beside the shared lab's tests (conftest.py, marker own_lab).
pytestmark = pytest.mark.own_lab

HOSTS = 10000
READY_MS = 2000


@pytest.fixture(scope='module')
def big_report(tmp_path_factory):
    directory = tmp_path_factory.mktemp('report10k')
    start = time.monotonic()
    report = vr.verify_report(fleet_outcomes(HOSTS), generated='2026-11-25T16:00:00+00:00')
    vf.write_report_set(report, str(directory))
    seconds = time.monotonic() - start
    return dict(report=report, directory=directory, seconds=seconds)


def metrics(browser):
    found = browser.call('POST', browser.s('/goog/cdp/execute'), {'cmd': 'Performance.getMetrics', 'params': {}})
    return dict((m['name'], m['value']) for m in found['metrics'])


def select(browser, element_id, value):
    browser.script("var s = document.getElementById('%s'); s.value = %s; s.dispatchEvent(new Event('change'));"
                   % (element_id, json.dumps(value)))


def rendered(browser):
    return browser.script("return Array.from(document.querySelectorAll('#matrix tbody tr.hostrow'))"
                          ".map(function(r){return [r.getAttribute('data-host'), r.getAttribute('data-status')]})")


def test_the_report_of_10000_hosts_opens_in_under_2_s_and_filters(big_report, browser):
    report, directory = big_report['report'], big_report['directory']
    assert report['summary']['hosts'] == HOSTS
    page = directory / 'verify.html'
    size = os.path.getsize(page)
    assert size < 8 * 1024 * 1024, size                  # compact: not every item of every host
    browser.call('POST', browser.s('/window/rect'), {'width': 1500, 'height': 1000})
    # Best of three loads, each in a new tab (a renderer of its own). The CPU time the page costs the browser (that
    # renderer's ProcessTime, its startup included, and its main thread's ThreadTime, Chrome's
    # Performance.getMetrics) must stay under 2 s whatever else runs on the machine;
    # the wall time (the page's own ready mark, the load event) too, unless the machine is overloaded (more than
    # two runnable tasks per core: the test runs beside the rest of `make test`), and then it is printed only.
    loads = []
    for _attempt in range(3):
        handle = browser.call('POST', browser.s('/window/new'), {'type': 'tab'})['handle']
        browser.call('POST', browser.s('/window'), {'handle': handle})
        browser.call('POST', browser.s('/goog/cdp/execute'), {'cmd': 'Performance.enable', 'params': {}})
        browser.get(page.as_uri())
        assert browser.script("return document.body.getAttribute('data-ready')") == 'true'
        ready = int(browser.script("return document.body.getAttribute('data-ready-ms')"))
        loaded = browser.script("return performance.getEntriesByType('navigation')[0].loadEventEnd")
        cpu = metrics(browser)
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
        loads.append((max(ready, loaded), ready, loaded, cpu['ProcessTime'], cpu['ThreadTime'], load))
        print('10000 hosts: %d bytes of HTML; ready %d ms, load event %d ms; renderer CPU %.3f s, main thread CPU '
              '%.3f s; load average per core %.1f; report built and written in %.1f s'
              % ((size,) + loads[-1][1:] + (big_report['seconds'],)))
        if loads[-1][0] < READY_MS:
            break
    best = min(loads)
    assert min(entry[3] for entry in loads) < READY_MS / 1000.0, loads      # CPU seconds
    assert best[0] < READY_MS or best[5] > 2, loads
    # Only what is in view is made: one page of rows, not 10,000.
    rows = rendered(browser)
    assert 100 <= len(rows) <= 400, len(rows)
    assert browser.script("return document.getElementById('shown').getAttribute('data-matching')") == str(HOSTS)
    if os.environ.get('DBFLEET_REPORT_SCREENSHOT'):
        png = base64.b64decode(browser.call('GET', browser.s('/screenshot')))
        with open(os.environ['DBFLEET_REPORT_SCREENSHOT'], 'wb') as handle:
            handle.write(png)

    # status: hosts with drift only
    select(browser, 'filter-status', 'h:drift')
    drift = report['summary']['drift_hosts']
    assert browser.script("return document.getElementById('shown').getAttribute('data-matching')") == str(len(drift))
    rows = rendered(browser)
    assert rows and all(s == 'drift' for _h, s in rows) and [h for h, _s in rows] == drift[:len(rows)]

    # cluster / topology: one Galera cluster's members
    label = 'cluster label: galera-0005'
    members = sorted(h for h, e in report['hosts'].items()
                     if ((e.get('server') or {}).get('cluster') or {}).get('label') == 'galera-0005')
    assert members
    value = browser.script("var o = Array.from(document.getElementById('filter-group').options).filter(function(o){"
                           "return o.textContent.indexOf(%s) === 0}); return o.length ? o[0].value : null"
                           % json.dumps(label))
    select(browser, 'filter-status', '')
    select(browser, 'filter-group', value)
    assert [h for h, _s in rendered(browser)] == members

    # variable: one column, and the hosts whose value of it is startup_unknown
    select(browser, 'filter-group', '')
    name = 'innodb_io_capacity'
    select(browser, 'filter-var', str(report['variables'].index(name)))
    select(browser, 'filter-status', 'v:startup_unknown')
    want = sorted(h for h, e in report['hosts'].items()
                  if ((e.get('variables') or {}).get(name) or {}).get('status') == 'startup_unknown')
    assert browser.script("return document.getElementById('shown').getAttribute('data-matching')") == str(len(want))
    heads = browser.script("return Array.from(document.querySelectorAll('#matrix thead th.var'))"
                           ".map(function(t){return t.getAttribute('data-var')})")
    assert heads == [name]
    rows = rendered(browser)
    assert [h for h, _s in rows] == want[:len(rows)]

    # the evidence of a cell, on demand
    host = rows[0][0]
    cell = browser.find('td.cell[data-host="%s"][data-var="%s"]' % (host, name))
    browser.click(cell)
    details = browser.text(browser.find('#details'))
    assert '%s on %s: startup_unknown' % (name, host) in details
    assert 'whether a restart keeps it is not known' in details
    assert 'a restart brings: not known here' in details

    # scrolling down makes the next rows
    select(browser, 'filter-var', '')
    select(browser, 'filter-status', '')
    before = len(rendered(browser))
    browser.script("document.getElementById('more').scrollIntoView()")
    deadline = time.monotonic() + 10
    while len(rendered(browser)) <= before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(rendered(browser)) > before

    # no secret in any file of the set
    for name in vf.REPORT_FILES:
        assert 'Secret-1' not in (directory / name).read_text(encoding='utf-8'), name
