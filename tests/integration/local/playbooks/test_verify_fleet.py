# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/verify.yml in both modes on every lab server: one verify run per host (verify_mode=host)
against one dbfleet.innodb.verify_fleet run on the controller over SQL (verify_mode=controller).

The desired settings drift on some hosts (values other than the servers' defaults); one host has a
value set at runtime only, another one set at runtime and in an option file, which only the per-host
mode can read. The two modes must agree on every host and variable wherever SQL can tell, and where
it cannot, the controller's item must say so. Two more hosts, a wrong password and a closed port, are
errors of their own while the others are audited; no password shows at -vvv. They fail the controller
mode's run after its reports are written (verify_fail_on_error, default true); the other runs turn that off.
The upgrade target, MySQL 8.4, is one the collection has no facts of: whether a host would start is unknown,
and each run warns naming the target and the versions it has facts of.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from dbfleet_testing.servers import INVENTORY, LAB_HOSTS, global_value, host_vars, lab_inventory, sql
from dbfleet_testing.browser import free_port
from dbfleet_testing.runs import playbook_proc

DROPIN = '90-dbfleet-test-verify-fleet.cnf'
# innodb_io_capacity 300 (default 200): on RUNTIME_ONLY set with SET GLOBAL only (drift_config on the host);
# on RUNTIME_AND_FILE set with SET GLOBAL and in a drop-in (ok on the host). Over SQL the files are not
# visible: the controller cannot tell the two apart, and says startup_unknown for both (not drift).
RUNTIME_ONLY = 'mariadb1011'
RUNTIME_AND_FILE = 'mysql80'
SETTINGS = {
    'innodb_io_capacity': 300,
    'innodb_lru_scan_depth': 512,            # default 1024: drift_runtime everywhere
    'innodb_flush_log_at_trx_commit': 2,      # default 1: drift_runtime everywhere
    'innodb_buffer_pool_size': '128M',        # in every lab option file: ok
}
# An Aria table on MariaDB 11.8 blocks a move to MySQL 8.4: both modes list it (information_schema.TABLES).
BLOCKED_HOST = 'mariadb118'
BLOCKER_SCHEMA = 'dbfleet_it_verify_fleet'
BLOCKER_TABLE = BLOCKER_SCHEMA + '.aria_t'
TARGET = 'mysql-8.4'       # no facts of it in flavor_data: only the version table's variables are compared
TARGET_LABEL = 'MySQL 8.4'
BROKEN = {'fleet-bad-password': 'Access denied', 'fleet-closed-port': "Can't connect"}
# What the controller's notes say where SQL cannot tell what a restart brings.
CANNOT_TELL = ('not known', 'not visible over SQL', 'only the running value was checked')


def run_verify(mode, inventories, reports, *extra_args, fail_on_error=False):
    """The report and the run's output; fail_on_error: verify_fail_on_error left at its default (true), so the
    hosts in error fail the run (exit 2) after the reports are written."""
    extra = {'verify_mode': mode, 'verify_extra_settings': SETTINGS, 'verify_report_dir': reports, 'verify_timeout': 5,
             'verify_target_version': TARGET}
    if not fail_on_error:
        extra['verify_fail_on_error'] = False
    proc = playbook_proc(inventories, 'verify.yml', extra,
                         timeout=300, env_extra=dict(ANSIBLE_SHOW_CUSTOM_STATS='1'), args=extra_args)
    assert proc.returncode == (2 if fail_on_error else 0), proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(os.path.join(reports, 'verify.json'), encoding='utf-8') as handle:
        return json.load(handle), proc.stdout + proc.stderr


@pytest.fixture(scope='module')
def both_modes(tmp_path_factory):
    hosts = lab_inventory()
    lab = sorted(h for h in hosts if h in LAB_HOSTS)
    missing = [h for h in (RUNTIME_ONLY, RUNTIME_AND_FILE, BLOCKED_HOST) if h not in lab]
    if missing:
        pytest.fail('lab hosts %s are not up: start the lab with `make lab-up`' % ', '.join(missing), pytrace=False)
    tmp = tmp_path_factory.mktemp('fleet')
    template = dict((k, v) for k, v in hosts[lab[0]].items() if k != 'dbfleet_login_unix_socket')
    extra = {'all': {'hosts': {
        'fleet-bad-password': dict(template, dbfleet_login_password='fleet-wrong-password'),
        'fleet-closed-port': dict(template, dbfleet_login_port=free_port(), dbfleet_option_file='/nonexistent/my.cnf'),
    }}}
    extra_inv = tmp / 'extra.yml'
    extra_inv.write_text(json.dumps(extra))
    inventories = [INVENTORY, str(extra_inv)]
    dropin = os.path.join(host_vars(RUNTIME_AND_FILE)['dbfleet_option_dropin_dir'], DROPIN)
    original = dict((h, global_value(h, 'innodb_io_capacity')) for h in (RUNTIME_ONLY, RUNTIME_AND_FILE))
    assert all(v != '300' for v in original.values()), original   # else nothing drifts
    schema = BLOCKER_SCHEMA
    try:
        sql(BLOCKED_HOST, 'CREATE DATABASE IF NOT EXISTS %s' % schema)
        sql(BLOCKED_HOST, 'CREATE TABLE IF NOT EXISTS %s (id INT PRIMARY KEY) ENGINE=Aria' % BLOCKER_TABLE)
        with open(dropin, 'w', encoding='utf-8') as handle:
            handle.write('[mysqld]\ninnodb_io_capacity = 300\n')
        for host in original:
            sql(host, 'SET GLOBAL innodb_io_capacity = 300')
        per_host, per_host_out = run_verify('host', inventories, str(tmp / 'host'))
        controller, out = run_verify('controller', inventories, str(tmp / 'controller'), '-vvv', fail_on_error=True)
        # The same hosts dealt out over three worker processes (each reads its hosts' inputs and audits them).
        sharded, sharded_out = run_verify('controller', inventories, str(tmp / 'sharded'), '-vvv', '-e', 'verify_workers=3')
    finally:
        sql(BLOCKED_HOST, 'DROP DATABASE IF EXISTS %s' % schema)
        if os.path.exists(dropin):
            os.unlink(dropin)
        for host, value in original.items():
            sql(host, 'SET GLOBAL innodb_io_capacity = %s', [int(value)])
    yield dict(lab=lab, per_host=per_host, controller=controller, out=out, tmp=tmp, hosts=hosts, sharded=sharded,
               sharded_out=sharded_out, per_host_out=per_host_out)


def test_hosts_in_error_fail_the_run_after_the_reports_unless_turned_off(both_modes):
    """The controller run (verify_fail_on_error at its default) wrote its reports, then failed naming each host in
    error and why; the per-host run with verify_fail_on_error false ended green with the same errors reported."""
    failed = ' '.join(both_modes['out'].split())
    assert 'Fail when a host could not be audited' in failed
    message = re.search(r'(\d+) of (\d+) hosts could not be audited \(verify_fail_on_error: false to end green\): (.*?); '
                        r'report: \S+/verify.html', failed)
    assert message, both_modes['out'][-3000:]
    assert int(message.group(1)) == len(BROKEN) and int(message.group(2)) == len(both_modes['lab']) + len(BROKEN)
    for host, fragment in BROKEN.items():
        assert re.search(r'%s: [^;]*%s' % (re.escape(host), re.escape(fragment)), message.group(3)), message.group(3)
    assert sorted(both_modes['controller']['summary']['error_hosts']) == sorted(BROKEN)    # written before the failure
    assert 'hosts could not be audited (verify_fail_on_error' not in both_modes['per_host_out']
    assert both_modes['per_host']['summary']['hosts_error'] == len(BROKEN)


def test_a_target_without_facts_says_the_start_is_unknown_and_warns_in_the_output(both_modes):
    for mode in ('per_host', 'controller'):
        report, out = both_modes[mode], ' '.join(both_modes[mode + '_out' if mode == 'per_host' else 'out'].split())
        warning = re.search(r'\[WARNING\]: upgrade to %s: the collection has no facts of %s \(it has facts of: ([^)]*)\)'
                            r': whether the server would start on it is unknown \((\d+) hosts?: ' % (TARGET_LABEL, TARGET_LABEL), out)
        assert warning, (mode, out[-3000:])
        assert 'mysql 9.7' in warning.group(1) and 'mariadb 11.8' in warning.group(1), warning.group(1)
        fleet = report['summary']['upgrade']
        assert fleet['targets'] == [TARGET_LABEL] and fleet['start_unknown'], fleet
        assert int(warning.group(2)) == len(fleet['start_unknown'])
        for host in both_modes['lab']:
            upgrade = report['hosts'][host]['upgrade']
            assert upgrade['complete'] is False and upgrade['summary']['would_start'] is not True, (host, upgrade['summary'])
            assert 'mysql 9.7' in ' '.join(upgrade['known_versions'])


def test_both_modes_agree_wherever_sql_can_tell(both_modes):
    lab, per_host, controller = both_modes['lab'], both_modes['per_host'], both_modes['controller']
    assert sorted(controller['hosts']) == sorted(per_host['hosts']) == sorted(lab + list(BROKEN))
    # drift_runtime on every host (below), so the same hosts drift; startup_unknown is never drift
    assert controller['summary']['drift_hosts'] == per_host['summary']['drift_hosts']
    assert controller['summary']['error_hosts'] == per_host['summary']['error_hosts'] == sorted(BROKEN)
    compared, cannot_tell = 0, []
    for host in lab:
        mine, theirs = controller['hosts'][host], per_host['hosts'][host]
        assert mine['status'] != 'error' and theirs['status'] != 'error', (mine.get('reason'), theirs.get('reason'))
        assert sorted(mine['variables']) == sorted(theirs['variables']), host
        assert set(SETTINGS) <= set(mine['variables'])
        for name, item in mine['variables'].items():
            compared += 1
            # The controller never reads the host's option files, and says where it took nothing from.
            assert item['configured'] is None and item['command_line'] is None
            if item['status'] == theirs['variables'][name]['status']:
                continue
            assert item['startup']['state'] == 'unavailable', (host, name, item)
            assert any(f in note for note in item['notes'] for f in CANNOT_TELL), (host, name, item['notes'])
            cannot_tell.append((host, name))
        assert mine['server']['local'] is False and mine['option_files']['source'] == 'unavailable'
    assert compared >= len(lab) * len(SETTINGS)
    # The settings drift: drift_runtime on every server for the values that are not the defaults.
    for host in lab:
        for name in ('innodb_lru_scan_depth', 'innodb_flush_log_at_trx_commit'):
            assert per_host['hosts'][host]['variables'][name]['status'] == 'drift_runtime'
            assert controller['hosts'][host]['variables'][name]['status'] == 'drift_runtime'
        assert controller['hosts'][host]['variables']['innodb_buffer_pool_size']['status'] == 'ok'
    # Set at runtime only: drift_config where the files are read; over SQL it cannot be told (startup_unknown).
    assert per_host['hosts'][RUNTIME_ONLY]['variables']['innodb_io_capacity']['status'] == 'drift_config'
    assert controller['hosts'][RUNTIME_ONLY]['variables']['innodb_io_capacity']['status'] == 'startup_unknown'
    # Set at runtime and in a drop-in: ok where the file is read; over SQL it cannot be told, and is said so.
    assert per_host['hosts'][RUNTIME_AND_FILE]['variables']['innodb_io_capacity']['status'] == 'ok'
    item = controller['hosts'][RUNTIME_AND_FILE]['variables']['innodb_io_capacity']
    assert item['status'] == 'startup_unknown' and item['origin'] == 'DYNAMIC'
    assert any('whether a restart keeps it is not known' in n for n in item['notes']), item['notes']
    assert (RUNTIME_AND_FILE, 'innodb_io_capacity') in cannot_tell
    # MySQL 8 tells the option file each running value came from: the controller passes it on.
    pool = controller['hosts'][RUNTIME_AND_FILE]['variables']['innodb_buffer_pool_size']
    assert pool['origin_path'] and pool['origin_path'].endswith('/my.cnf')
    assert any('an option file (%s)' % pool['origin_path'] in n for n in pool['notes']), pool['notes']


def test_both_modes_list_the_same_upgrade_blockers(both_modes):
    lab, per_host, controller = both_modes['lab'], both_modes['per_host'], both_modes['controller']
    for host in lab:
        mine, theirs = controller['hosts'][host], per_host['hosts'][host]
        assert mine['target'] == theirs['target'] and mine['target'], (host, mine.get('target'))
        assert mine['blockers'] == theirs['blockers'], host
    tables = ['%s.%s' % (b['schema'], b['table']) for b in controller['hosts'][BLOCKED_HOST]['blockers']]
    assert BLOCKER_TABLE in tables, controller['hosts'][BLOCKED_HOST]['blockers']
    assert controller['summary']['blockers'] == per_host['summary']['blockers'] >= 1
    assert BLOCKED_HOST in controller['summary']['blocked_hosts']


def test_one_bad_host_is_its_own_error_and_no_password_shows(both_modes):
    controller, out = both_modes['controller'], both_modes['out']
    for host, fragment in BROKEN.items():
        entry = controller['hosts'][host]
        assert entry['status'] == 'error' and fragment in entry['reason'], entry
    assert controller['summary']['hosts_error'] == len(BROKEN)
    assert controller['summary']['hosts'] - controller['summary']['hosts_error'] == len(both_modes['lab'])
    assert 'fleet-wrong-password' not in out
    for host in both_modes['lab']:
        assert both_modes['hosts'][host]['dbfleet_login_password'] not in out
    reports = both_modes['tmp'] / 'controller'
    assert 'fleet-wrong-password' not in (reports / 'verify.json').read_text()
    # The same report files and job stats as the per-host mode.
    for name in ('verify.json', 'verify.html', 'verify-junit.xml'):
        assert (both_modes['tmp'] / 'host' / name).is_file() and (reports / name).is_file()
    stats = out[out.index('CUSTOM STATS'):]
    assert 'verify_summary' in stats and re.search(r'hosts_error\W+%d\b' % len(BROKEN), stats), stats[:2000]
    # One action on the controller: the per-host play matched no host, and no module ran anywhere.
    assert 'TASK [Audit every host over SQL, from the controller]' in out
    assert 'TASK [Audit this host' not in out and 'AnsiballZ' not in out


def test_three_worker_processes_give_the_same_report_and_no_password(both_modes):
    controller, sharded, out = both_modes['controller'], both_modes['sharded'], both_modes['sharded_out']
    assert re.search(r'hosts\s+at\s+once\s+in\s+3\s+worker\s+processes;\s+seconds:\s+audit\s+[0-9.]+,\s+report\s+[0-9.]+', out), out[-2000:]
    assert list(sharded['hosts']) == list(controller['hosts'])
    for key in ('hosts', 'hosts_ok', 'hosts_startup_unknown', 'hosts_drift', 'hosts_error'):
        assert sharded['summary'][key] == controller['summary'][key], key
    for host, entry in controller['hosts'].items():
        mine = sharded['hosts'][host]
        assert mine['status'] == entry['status'], host
        assert sorted(mine.get('variables') or {}) == sorted(entry.get('variables') or {}), host
        for name, item in (entry.get('variables') or {}).items():
            assert dict((k, mine['variables'][name].get(k)) for k in ('status', 'runtime', 'desired')) == \
                dict((k, item.get(k)) for k in ('status', 'runtime', 'desired')), (host, name)
    for host, fragment in BROKEN.items():
        assert sharded['hosts'][host]['status'] == 'error' and fragment in sharded['hosts'][host]['reason']
    assert 'fleet-wrong-password' not in out and '_verify_fleet_login_password' not in out
    for host in both_modes['lab']:
        assert both_modes['hosts'][host]['dbfleet_login_password'] not in out
