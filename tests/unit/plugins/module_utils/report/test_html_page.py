# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's HTML page (report/html_page.py): data escaped for any string (parsed, and rendered in headless
Chromium); its style and script are static files shipped beside the renderer (assets/), put into the
page as they are."""

from __future__ import annotations

import json
import os
import subprocess
from html.parser import HTMLParser

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.report import build as vr
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import html_page as vh

from test_build import EVIL, evil_report

CHROMIUM = '/usr/bin/chromium'


class _Scripts(HTMLParser):
    def __init__(self):
        HTMLParser.__init__(self)
        self.scripts, self._in, self.cells = [], None, 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == 'script':
            self._in = dict(id=attrs.get('id'), text='')
        if tag == 'td' and 'cell' in (attrs.get('class') or '').split():
            self.cells += 1

    def handle_data(self, data):
        if self._in is not None:
            self._in['text'] += data

    def handle_endtag(self, tag):
        if tag == 'script' and self._in is not None:
            self.scripts.append(self._in)
            self._in = None


def test_embedded_data_is_escaped_for_any_string_parsed():
    report = evil_report()
    page = vh.verify_report_html(report)
    data = page.split('<script id="verify-data" type="application/json">')[1].split('</script>')[0]
    assert '<' not in data and '>' not in data and '&' not in data
    parser = _Scripts()
    parser.feed(page)
    parser.close()
    assert [s['id'] for s in parser.scripts] == ['verify-data', None]        # the data, then the page's script
    data = json.loads(parser.scripts[0]['text'])
    assert data == json.loads(json.dumps(vh.page_data(report)))
    # every string comes back as it was: the notes of the drifting cell, the host names
    notes = data['items'][data['hosts'][0][6][0]]['notes']
    assert notes == ['</script><script>document.title="pwned"</script>', EVIL, ']]><!-- & \u2028']
    assert [h[0] for h in data['hosts']] == ['db1', 'db2'] and data['hosts'][0][5] == 'r'
    # the upgrade blocker's table name is text of the page, escaped
    assert '&lt;!--&lt;script&gt;' in page and parser.cells == 0     # cells are made by the page's script


def chromium_dom(html_text, tmp_path):
    """The DOM headless Chromium makes of the page html_text once its script ran (it marks <body data-ready>)."""
    if not os.path.exists(CHROMIUM):
        pytest.fail('chromium (Debian package chromium) is not installed: run `make deps`', pytrace=False)
    page = tmp_path / 'verify.html'
    page.write_text(html_text, encoding='utf-8')
    proc = subprocess.run([CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
                           '--disable-background-networking', '--disable-component-update', '--disable-sync',
                           '--user-data-dir=%s' % (tmp_path / 'profile'), '--dump-dom', page.as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)
    dom = proc.stdout
    assert 'data-ready="true"' in dom, (proc.returncode, proc.stderr[-2000:], dom[-2000:])
    return dom


def test_the_page_renders_in_headless_chromium(tmp_path):
    """Chromium's own parser runs the page's script (it marks <body data-ready>) and keeps every row: a table
    named <!--<script> does not swallow the page."""
    dom = chromium_dom(vh.verify_report_html(evil_report()), tmp_path)
    assert dom.count('class="hostrow"') == 2 and 'id="details"' in dom and 'class="legend"' in dom
    assert dom.count('class="cell st-') == 2 and 'data-status="drift_runtime"' in dom
    assert '<title>InnoDB fleet verification</title>' in dom


def test_the_assets_are_files_beside_the_renderer_and_go_into_the_page_verbatim():
    for name in ('report.css', 'report.js'):
        path = os.path.join(os.path.dirname(vh.__file__), 'assets', name)
        with open(path, encoding='utf-8', newline='') as handle:
            text = handle.read()
        assert text.strip() and vh.asset(name) == text
    page = vh.verify_report_html(vr.verify_report({'db1': dict(variables={}, summary={})}, generated='now'))
    assert '<style>%s</style>' % vh.asset('report.css') in page
    assert '<script>%s</script></body></html>' % vh.asset('report.js') in page
    assert 'getElementById(\'verify-data\')' in vh.asset('report.js')
