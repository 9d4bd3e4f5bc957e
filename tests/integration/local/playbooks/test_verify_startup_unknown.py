# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Honest verdicts of the controller-side audit, after a normal site.yml run on the lab.

site.yml changes settings the way the roles do (SET GLOBAL and a drop-in file), so the servers say the
running values were set at runtime. The per-host mode reads the drop-ins and finds the hosts in order; the
controller cannot read them, and must not call that drift: `startup_unknown`, counted apart, skipped in
JUnit, and `verify_fail_on_drift` passes. With `verify_startup_cache`, the per-host run's option-file state
comes through Ansible's fact cache (jsonfile) and the controller says `ok` with the time it was read - or
finds the one real drift (a value set at runtime only) that it could not tell before; beyond
`verify_startup_cache_max_age` it is unknown again. MariaDB's GLOBAL_VALUE_PATH names the option file of a
value set at startup.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from dbfleet_testing.servers import INVENTORY, LAB_HOSTS, ROLE_VARIABLES, lab_inventory, role_state_kept, sql
from dbfleet_testing.runs import PLAYBOOKS, playbook_proc

# Role inputs that change every lab server (none of them is every server's default): the adaptive hash index
# on (OFF by default on MySQL 8.4+/9.x and MariaDB 10.5+), innodb_flush_neighbors 1 for disks (0 by default on
# MySQL 8.0+).
ROLE_VARS = {'adaptive_hash_enabled': True, 'flush_neighbors_storage_class': 'hdd'}
RUNTIME_ONLY = 'mariadb1011'     # innodb_io_capacity 300 with SET GLOBAL only: drift_config, lost at a restart
WATCHED = ROLE_VARIABLES + ('innodb_io_capacity',)
RUNTIME_ORIGINS = ('SQL', 'DYNAMIC')


def playbook(name, inventories, extra, env_extra=None, expect_rc=0):
    proc = playbook_proc(inventories, name, extra, timeout=300, env_extra=env_extra)
    assert proc.returncode == expect_rc, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


# The controller-mode audits of the fixture, in this order, each verify.yml with its own inputs: without the cache
# (verify_fail_on_drift: the run passes), with it, and with it beyond its bound. The per-host run is older than a
# second by the time the last one starts: stale.
CONTROLLER_RUNS = (
    ('controller', dict(verify_fail_on_drift=True)),
    ('cached', dict(verify_startup_cache=True)),
    ('stale', dict(verify_startup_cache=True, verify_startup_cache_max_age=1)),
)
# The first play of verify.yml: where each audit's output begins.
VERIFY_FIRST_PLAY = 'PLAY [Check the inputs, and audit every host from the controller in controller mode]'


def controller_runs(tmp):
    """A playbook that imports verify.yml once for each of CONTROLLER_RUNS (controller mode, reports under tmp)."""
    path = tmp / 'controller-runs.yml'
    path.write_text(json.dumps([
        {'name': 'The controller-mode audit: %s' % name,
         'ansible.builtin.import_playbook': os.path.join(PLAYBOOKS, 'verify.yml'),
         'vars': dict(inputs, verify_mode='controller', verify_report_dir=str(tmp / name))}
        for name, inputs in CONTROLLER_RUNS]))
    return str(path)


def split_controller_runs(output):
    """The output of controller_runs() cut into each audit's part, in CONTROLLER_RUNS's order."""
    parts = output.split(VERIFY_FIRST_PLAY)[1:]
    assert len(parts) == len(CONTROLLER_RUNS), output[-3000:]
    return parts


def report(directory):
    with open(os.path.join(directory, 'verify.json'), encoding='utf-8') as handle:
        return json.load(handle)


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    hosts = lab_inventory()
    lab = sorted(h for h in hosts if h in LAB_HOSTS)
    if RUNTIME_ONLY not in lab or len(lab) < 2:
        pytest.fail('the lab is not up: start it with `make lab-up`', pytrace=False)
    tmp = tmp_path_factory.mktemp('honest')
    # innodb_buffer_pool_size is in every lab option file (origin CONFIG, MariaDB: GLOBAL_VALUE_PATH);
    # innodb_io_capacity 300 is audited on RUNTIME_ONLY only.
    extra_inv = tmp / 'settings.yml'
    runtime_only = {'verify_extra_settings': {'innodb_buffer_pool_size': '128M', 'innodb_io_capacity': 300}}
    extra_inv.write_text(json.dumps({'all': {'vars': {'verify_extra_settings': {'innodb_buffer_pool_size': '128M'}},
                                             'hosts': {RUNTIME_ONLY: runtime_only}}}))
    inventories = [INVENTORY, str(extra_inv)]
    cache = {'ANSIBLE_CACHE_PLUGIN': 'jsonfile', 'ANSIBLE_CACHE_PLUGIN_CONNECTION': str(tmp / 'facts'),
             'ANSIBLE_CACHE_PLUGIN_TIMEOUT': '86400'}
    out = {}
    # The roles' drop-ins and the watched values are put back as they were afterwards.
    with role_state_kept(lab, WATCHED) as original:
        assert original[RUNTIME_ONLY]['innodb_io_capacity'] != '300'
        out['site'] = playbook('site.yml', [INVENTORY], ROLE_VARS)
        sql(RUNTIME_ONLY, 'SET GLOBAL innodb_io_capacity = 300')
        common = dict(ROLE_VARS, verify_desired_from=['flush_neighbors', 'adaptive_hash'], verify_timeout=5)
        out['host'] = playbook('verify.yml', inventories, dict(common, verify_mode='host', verify_startup_cache=True,
                                                               verify_report_dir=str(tmp / 'host')), cache)
        # The three controller-mode audits in one run (verify.yml imported once for each, its inputs as the play's
        # variables); the fact cache is read when that run starts, as a later run reads it.
        controller = playbook(controller_runs(tmp), inventories, common, cache)
        out['controller'], out['cached'], out['stale'] = split_controller_runs(controller)
    yield dict(lab=lab, tmp=tmp, out=out, **dict((k, report(str(tmp / k))) for k in ('host', 'controller', 'cached',
                                                                                     'stale')))


def test_site_changed_values_at_runtime_and_the_per_host_mode_finds_them_in_order(runs):
    per_host = runs['host']
    assert per_host['summary']['hosts_error'] == 0, per_host['summary']['error_hosts']
    # Only the value set at runtime alone drifts; everything site.yml set is ok where the files are read.
    assert per_host['summary']['drift_hosts'] == [RUNTIME_ONLY]
    assert per_host['hosts'][RUNTIME_ONLY]['variables']['innodb_io_capacity']['status'] == 'drift_config'
    runtime_set = [(h, n) for h in runs['lab'] for n, i in per_host['hosts'][h]['variables'].items()
                   if str(i['origin']).upper() in RUNTIME_ORIGINS and n != 'innodb_io_capacity']
    # site.yml really changed values at runtime on every server (else nothing here could fail)
    assert sorted(set(h for h, _n in runtime_set)) == runs['lab'], runtime_set
    for host, name in runtime_set:
        assert per_host['hosts'][host]['variables'][name]['status'] == 'ok', (host, name)


def test_controller_reports_no_drift_where_the_per_host_mode_reports_none(runs):
    per_host, controller = runs['host'], runs['controller']
    assert controller['summary']['hosts_error'] == 0
    assert set(controller['summary']['drift_hosts']) <= set(per_host['summary']['drift_hosts'])
    unknown = 0
    for host in runs['lab']:
        for name, item in controller['hosts'][host]['variables'].items():
            theirs = per_host['hosts'][host]['variables'][name]
            if theirs['status'] == 'ok':
                assert item['status'] in ('ok', 'startup_unknown'), (host, name, item)
            if item['status'] == 'startup_unknown':
                unknown += 1
                assert item['startup']['state'] == 'unavailable' and item['runtime'] == theirs['runtime']
                assert any('not known' in n or 'only the running value' in n for n in item['notes']), item['notes']
            if str(item['origin']).upper() in RUNTIME_ORIGINS and item['status'] != 'drift_runtime':
                assert item['status'] == 'startup_unknown', (host, name, item)
    assert unknown >= len(runs['lab'])
    summary = controller['summary']
    assert summary['variables']['startup_unknown'] == unknown
    assert summary['hosts_startup_unknown'] == len(summary['startup_unknown_hosts']) >= len(runs['lab']) - 1
    assert summary['hosts_drift'] == 0 and summary['variables']['drift_config'] == 0
    # The runtime-only value is the one thing the controller cannot tell apart without the files.
    assert controller['hosts'][RUNTIME_ONLY]['variables']['innodb_io_capacity']['status'] == 'startup_unknown'
    # verify_fail_on_drift=true passed (the fixture checks the exit code); the JUnit file skips, never fails.
    junit = (runs['tmp'] / 'controller' / 'verify-junit.xml').read_text(encoding='utf-8')
    head = re.search(r'<testsuites [^>]*>', junit).group(0)
    assert 'failures="0"' in head and 'errors="0"' in head
    assert int(re.search(r'skipped="(\d+)"', head).group(1)) >= unknown
    assert 'message="startup_unknown: ' in junit
    assert re.search(r'\d+ running the desired values with what a restart brings\s+unknown', runs['out']['controller'])


def test_the_fact_cache_gives_the_per_host_state_with_its_age(runs):
    per_host, cached = runs['host'], runs['cached']
    # Same verdicts as the per-host mode, the real drift included.
    assert cached['summary']['drift_hosts'] == per_host['summary']['drift_hosts'] == [RUNTIME_ONLY]
    assert cached['summary']['hosts_startup_unknown'] == 0
    used = 0
    for host in runs['lab']:
        for name, item in cached['hosts'][host]['variables'].items():
            assert item['status'] == per_host['hosts'][host]['variables'][name]['status'], (host, name, item)
            startup = item['startup']
            if startup.get('read_at'):
                used += 1
                assert re.match(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$', startup['read_at'])
                assert 0 <= startup['age_seconds'] < 600
                assert 'as the per-host run read it at %s' % startup['read_at'] in startup['source']
    assert used >= len(runs['lab'])
    io = cached['hosts'][RUNTIME_ONLY]['variables']['innodb_io_capacity']
    assert io['status'] == 'drift_config' and io['startup']['read_at'], io


def test_a_stale_cache_is_unknown_again(runs):
    stale = runs['stale']
    assert stale['summary']['drift_hosts'] == []
    item = stale['hosts'][RUNTIME_ONLY]['variables']['innodb_io_capacity']
    assert item['status'] == 'startup_unknown' and not item['startup'].get('read_at')
    assert any('beyond the bound of 1s: not used' in n for n in item['notes']), item['notes']


def test_mariadb_names_the_option_file_of_a_value_set_at_startup(runs):
    mariadb = [h for h in runs['lab'] if h.startswith('mariadb')]
    assert mariadb
    for host in mariadb:
        item = runs['controller']['hosts'][host]['variables']['innodb_buffer_pool_size']
        assert item['origin'] == 'CONFIG' and item['status'] == 'ok', item
        assert item['origin_path'] and item['origin_path'].endswith('/my.cnf'), item
        assert any('an option file (%s)' % item['origin_path'] in n for n in item['notes']), item['notes']
