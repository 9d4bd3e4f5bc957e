# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An independent check: Percona Toolkit's pt-config-diff and dbfleet.innodb.verify agree.

pt-config-diff compares an option file ([mysqld] only) with a running server. For every variable
both see, verify (desired = the file's value, reading the same file) must say `ok` exactly where
pt-config-diff sees no difference, and report drift exactly where it sees one.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from dbfleet_testing.servers import LAB_HOSTS, global_value, host_vars, login, verify

PT = shutil.which('pt-config-diff')
if PT is None:
    pytest.fail('pt-config-diff (Debian package percona-toolkit) is not installed: run `make deps`', pytrace=False)
# Options whose option-file value is not the variable's value (log-bin=NAME sets the binlog base
# name; the log_bin variable says ON): pt-config-diff skips them, and so does this comparison.
OPTION_IS_NOT_THE_VALUE = frozenset(['log_bin'])


def pt_config_diff(host, path):
    """{variable: (file value, server value)} for the differences pt-config-diff reports."""
    params = login(host)
    dsn = 'h=%s,P=%d,u=%s,p=%s' % (params['login_host'], params['login_port'], params['login_user'],
                                   params['login_password'])
    proc = subprocess.run([PT, '--report-width', '300', path, dsn], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode in (0, 1), proc.stderr
    diffs = {}
    table = False
    for line in proc.stdout.splitlines():
        if line.startswith('====='):
            table = True
            continue
        if table and line.strip():
            parts = line.split()
            diffs[parts[0]] = tuple(parts[1:])
    return proc.returncode, diffs


def file_settings(path):
    """name -> value of the [mysqld] options of a flat file (what pt-config-diff compares)."""
    out = {}
    group = None
    for raw in open(path):
        line = raw.strip()
        if not line or line[0] in '#;!':
            continue
        if line.startswith('['):
            group = line.strip('[]').strip()
            continue
        if group != 'mysqld':
            continue
        name, equals, value = line.partition('=')
        out[name.strip().replace('-', '_')] = value.strip() if equals else 'ON'
    return out


def check_agreement(host, path):
    rc, diffs = pt_config_diff(host, path)
    settings = file_settings(path)
    result = verify(host, settings, option_files=[path])
    # Options that are no server variable (mysqlx, plugin-load, ...) are seen by neither.
    compared = [n for n, item in result['variables'].items()
                if item['resolved_name'] and item['status'] != 'unsupported'
                and n not in OPTION_IS_NOT_THE_VALUE]
    assert compared, result
    for name in compared:
        status = result['variables'][name]['status']
        if name in diffs:
            assert status in ('drift_runtime', 'pending_restart'), (name, diffs[name], result['variables'][name])
        else:
            assert status == 'ok', (name, result['variables'][name])
    assert (rc == 1) is bool(set(diffs) & set(compared))
    return diffs, result


@pytest.mark.parametrize('host', LAB_HOSTS)
def test_agrees_on_a_file_with_equal_and_different_values(host, tmp_path):
    io = int(global_value(host, 'innodb_io_capacity'))
    lru = global_value(host, 'innodb_lru_scan_depth')
    bp = int(global_value(host, 'innodb_buffer_pool_size'))
    ahi = global_value(host, 'innodb_adaptive_hash_index')
    path = tmp_path / 'compare.cnf'
    path.write_text('\n'.join([
        '[mysqld]',
        'innodb_io_capacity = %d' % (io + 1),                      # differs
        'innodb-lru-scan-depth = %s' % lru,                       # same
        'innodb_buffer_pool_size = %dM' % (bp >> 20),             # same, with a suffix
        'innodb_adaptive_hash_index = %s' % ('OFF' if ahi == 'ON' else 'ON'),   # differs (boolean)
        '',
    ]))
    diffs, result = check_agreement(host, str(path))
    assert set(diffs) == {'innodb_io_capacity', 'innodb_adaptive_hash_index'}
    assert result['variables']['innodb_io_capacity']['status'] == 'drift_runtime'
    assert result['variables']['innodb_buffer_pool_size']['status'] == 'ok'


@pytest.mark.parametrize('host', LAB_HOSTS)
def test_agrees_on_the_lab_option_file(host):
    path = host_vars(host)['dbfleet_option_file']
    settings = file_settings(path)
    assert 'innodb_buffer_pool_size' in settings
    check_agreement(host, path)
