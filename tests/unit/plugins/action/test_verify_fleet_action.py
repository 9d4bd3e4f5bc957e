# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""verify_fleet's report files: one writer (module_utils/report/build.py) for both modes of verify.yml."""

from __future__ import annotations

import json
import os
import stat

from ansible.plugins.filter.core import to_nice_json

from ansible_collections.dbfleet.innodb.plugins.action import verify_fleet
from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import build as rf
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import files as vf

OUTCOMES = {
    'db1': dict(variables=dict(innodb_io_capacity=dict(status='drift_runtime', desired=300, runtime='200',
                                                       notes=['the server runs 200'])),
                drift=True, errors=[], server=dict(flavor='mysql')),
    'db2': dict(failed=True, msg='cannot connect to u@10.0.0.2:3306: (2003) timed out'),
}


def test_report_files_match_the_playbooks_and_the_outline_is_small(tmp_path):
    report = rf.verify_report(OUTCOMES, generated='2026-01-01T00:00:00+00:00')
    directory = str(tmp_path / 'reports')
    written = vf.write_report_set(report, directory)
    assert [os.path.basename(p) for p in written] == ['verify.json', 'verify.html', 'verify-junit.xml']
    with open(written[0], encoding='utf-8') as handle:
        assert handle.read() == to_nice_json(report, indent=2) + '\n'
    for path in written:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sorted(os.listdir(directory)) == ['.verify-report', 'verify-junit.xml', 'verify.html', 'verify.json']
    outline = vf.report_outline(report)
    assert outline['summary'] == report['summary']
    assert outline['summary']['error_hosts'] == ['db2'] and outline['summary']['drift_hosts'] == ['db1']
    assert outline['hosts']['db2'] == dict(status='error', reason=OUTCOMES['db2']['msg'])
    assert 'variables' not in outline['hosts']['db1']
    json.dumps(outline)


def test_a_quoted_password_is_masked_in_that_hosts_result_only():
    results = {'db1': dict(failed=True, msg="server said: bad 's3cret-pw'"), 'db2': dict(failed=False, drift=False)}
    masked = masking.mask_login_secrets(results, {'s3cret-pw'})
    assert 's3cret-pw' not in json.dumps(masked)
    assert masked['db2'] is results['db2']


def test_the_action_imports_no_filter_plugin():
    with open(verify_fleet.__file__, encoding='utf-8') as handle:
        source = handle.read()
    assert 'plugins.filter' not in source and 'plugins/filter' not in source
