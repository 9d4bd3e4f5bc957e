# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/verify.yml's report keeps secrets, in both modes, on a real server.

mariadb1011 runs with a wsrep_sst_auth set at runtime and another one in a drop-in file; the audit asks for a
third. The report files (written by the one writer, module_utils/report/build.py) must be private (files
0600, the report's directories 0700) and hold none of the three values, while the item keeps its status and
the file it came from. A pool beyond the bound is refused before any host is read.
"""

from __future__ import annotations

import json
import os
import stat

import pytest

from dbfleet_testing.servers import INVENTORY, global_value, host_vars, lab_inventory, sql
from dbfleet_testing.runs import playbook_proc

HOST = 'mariadb1011'
SECRETS = {'runtime': 'sst:Qz8runtime', 'file': 'sst:Qz8file', 'desired': 'sst:Qz8desired'}
DROPIN = '90-dbfleet-test-report-secrets.cnf'


def run_verify(extra, expect_rc=0):
    proc = playbook_proc(INVENTORY, 'verify.yml', extra, timeout=300)
    assert proc.returncode == expect_rc, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


@pytest.fixture(scope='module')
def secret_server():
    if HOST not in lab_inventory():
        pytest.fail('lab host %s is not up: start the lab with `make lab-up`' % HOST, pytrace=False)
    before = global_value(HOST, 'wsrep_sst_auth')
    dropin = os.path.join(host_vars(HOST)['dbfleet_option_dropin_dir'], DROPIN)
    try:
        with open(dropin, 'w', encoding='utf-8') as handle:
            handle.write('[mysqld]\nwsrep_sst_auth = %s\n' % SECRETS['file'])
        sql(HOST, 'SET GLOBAL wsrep_sst_auth = %s', [SECRETS['runtime']])
        yield HOST
    finally:
        if os.path.exists(dropin):
            os.unlink(dropin)
        sql(HOST, 'SET GLOBAL wsrep_sst_auth = %s', [before if before not in (None, '********') else ''])


@pytest.mark.parametrize('mode', ['host', 'controller'])
def test_report_files_are_private_and_hold_no_secret(secret_server, tmp_path, mode):
    reports = tmp_path / 'reports'
    run_verify({'verify_mode': mode, 'verify_hosts': secret_server, 'verify_desired_from': [],
                'verify_extra_settings': {'wsrep_sst_auth': SECRETS['desired'], 'innodb_adaptive_hash_index': 'ON'},
                'verify_report_dir': str(reports)})
    assert stat.S_IMODE(os.stat(reports).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(reports / '.verify-report').st_mode) == 0o700
    for name in ('verify.json', 'verify.html', 'verify-junit.xml'):
        path = reports / name
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, name
        text = path.read_text(encoding='utf-8')
        for where, secret in SECRETS.items():
            assert secret not in text and 'Qz8' not in text, (name, where)
    report = json.loads((reports / 'verify.json').read_text(encoding='utf-8'))
    item = report['hosts'][secret_server]['variables']['wsrep_sst_auth']
    assert item['masked'] is True and item['desired'] == '********'
    assert item['status'] not in ('ok', 'error'), item           # the desired value differs: still reported
    if mode == 'host':
        assert item['configured']['file'].endswith(DROPIN) and item['configured']['text'] == '********'
    # an ordinary value is shown as it is
    assert report['hosts'][secret_server]['variables']['innodb_adaptive_hash_index']['runtime'] in ('ON', 'OFF')


def test_report_mode_is_configurable(secret_server, tmp_path):
    reports = tmp_path / 'reports'
    run_verify({'verify_hosts': secret_server, 'verify_desired_from': [], 'verify_report_dir': str(reports),
                'verify_report_mode': '0640'})
    assert stat.S_IMODE(os.stat(reports / 'verify.json').st_mode) == 0o640
    assert stat.S_IMODE(os.stat(reports / '.verify-report').st_mode) == 0o750


def test_a_pool_beyond_the_bound_is_refused_before_any_host_is_read(tmp_path):
    out = run_verify({'verify_mode': 'controller', 'verify_pool': 100000, 'verify_report_dir': str(tmp_path / 'r')},
                     expect_rc=2)
    assert 'pool must be 1-65536; got 100000' in out
    assert not (tmp_path / 'r').exists()
