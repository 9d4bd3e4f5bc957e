# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTML page's style and script are static files shipped beside the renderer (verify_report_assets/), put into
the page as they are; the rest of the page is tested in test_verify_report.py."""

from __future__ import annotations

import os

from ansible_collections.dbfleet.innodb.plugins.module_utils import verify_report as vr
from ansible_collections.dbfleet.innodb.plugins.module_utils import verify_report_html as vh


def test_the_assets_are_files_beside_the_renderer_and_go_into_the_page_verbatim():
    for name in ('report.css', 'report.js'):
        path = os.path.join(os.path.dirname(vh.__file__), 'verify_report_assets', name)
        with open(path, encoding='utf-8', newline='') as handle:
            text = handle.read()
        assert text.strip() and vh.asset(name) == text
    page = vh.verify_report_html(vr.verify_report({'db1': dict(variables={}, summary={})}, generated='now'))
    assert '<style>%s</style>' % vh.asset('report.css') in page
    assert '<script>%s</script></body></html>' % vh.asset('report.js') in page
    assert 'getElementById(\'verify-data\')' in vh.asset('report.js')
