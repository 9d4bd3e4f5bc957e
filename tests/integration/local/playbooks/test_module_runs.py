# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/verify.yml at one module run per host, the roles' desired state included, and the upgrade
blockers of verify_target_version in the JSON, HTML and JUnit reports.

Module runs are counted by tests/integration/callback_plugins/module_runs.py. One verify.yml run (an
Aria table on mariadb118, target mysql-8.4) is asserted for the counts and the three reports; one run of
tests/integration/playbooks/desired_one_run.yml compares the desired state worked out inside verify with
the roles' `tasks_from: desired` on every lab host; a bad target fails before any module runs.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest

from dbfleet_testing.servers import (INVENTORY, LAB_HOSTS, ROLE_DROPINS, ROOT, host_vars, lab_inventory,
                                     role_state_kept, sql)
from dbfleet_testing.runs import CALLBACKS, playbook_proc

BLOCKER_HOST = 'mariadb118'
SCHEMA = 'dbfleet_upgrade_check'
TARGET = 'mysql-8.4'


def playbook(path, extra, tmp_path, check=True):
    """Run a playbook on the lab with the module_runs callback; returns (proc, {host: module runs})."""
    counts = tmp_path / ('runs-%s' % os.path.basename(path))
    proc = playbook_proc(INVENTORY, path, extra, env_extra=dict(
        ANSIBLE_CALLBACK_PLUGINS=CALLBACKS, ANSIBLE_CALLBACKS_ENABLED='module_runs', DBFLEET_MODULE_RUNS_FILE=str(counts)))
    if check:
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    runs = json.loads(counts.read_text())['hosts'] if counts.exists() else {}
    return proc, runs


@pytest.fixture(scope='module')
def lab_hosts():
    """The lab's hosts of this test that are up (a list; the session's `lab` fixture is the lab itself)."""
    hosts = sorted(h for h in lab_inventory() if h in LAB_HOSTS)
    if BLOCKER_HOST not in hosts:
        pytest.fail('%s is not up: start the lab with `make lab-up`' % BLOCKER_HOST, pytrace=False)
    return hosts


@pytest.fixture(scope='module')
def aria_table(lab_hosts):
    """An Aria table on mariadb118 (MySQL never had Aria), dropped afterwards."""
    sql(BLOCKER_HOST, 'DROP DATABASE IF EXISTS %s' % SCHEMA)
    sql(BLOCKER_HOST, 'CREATE DATABASE %s' % SCHEMA)
    try:
        sql(BLOCKER_HOST, 'CREATE TABLE %s.sessions (id INT PRIMARY KEY, data VARCHAR(200)) ENGINE=Aria' % SCHEMA)
        sql(BLOCKER_HOST, 'CREATE TABLE %s.orders (id INT PRIMARY KEY) ENGINE=InnoDB' % SCHEMA)
        sql(BLOCKER_HOST, 'INSERT INTO %s.sessions SELECT seq, REPEAT(\'x\', 100) FROM %s.seq_1_to_300' % (SCHEMA, SCHEMA))
        yield '%s.sessions' % SCHEMA
    finally:
        sql(BLOCKER_HOST, 'DROP DATABASE IF EXISTS %s' % SCHEMA)


@pytest.fixture(scope='module')
def audit(lab_hosts, aria_table, tmp_path_factory):
    tmp = tmp_path_factory.mktemp('one-run')
    reports = tmp / 'reports'
    proc, runs = playbook(os.path.join(ROOT, 'playbooks', 'verify.yml'),
                          {'verify_report_dir': str(reports), 'verify_target_version': TARGET}, tmp)
    return reports, runs, proc


def test_one_module_run_per_host_with_the_roles_desired_state(lab_hosts, audit):
    reports, runs, _proc = audit
    report = json.loads((reports / 'verify.json').read_text())
    for host in lab_hosts:
        assert runs.get(host) == 1, runs
        entry = report['hosts'][host]
        assert entry['status'] in ('ok', 'drift'), entry
        # The lab's group_vars: flush_neighbors_storage_class ssd (-> 0), adaptive_hash_enabled true.
        assert entry['variables']['innodb_flush_neighbors']['desired'] == 0, entry['variables']
        assert entry['variables']['innodb_adaptive_hash_index']['desired'] is True, entry['variables']


def test_the_aria_table_is_a_blocker_in_json_html_and_junit(lab_hosts, audit, aria_table):
    reports, _runs, _proc = audit
    report = json.loads((reports / 'verify.json').read_text())
    entry = report['hosts'][BLOCKER_HOST]
    assert entry['target'] == {'flavor': 'mysql', 'version': '8.4.0'}
    found = [b for b in entry['blockers'] if '%s.%s' % (b['schema'], b['table']) == aria_table]
    assert len(found) == 1, entry['blockers']
    blocker = found[0]
    assert blocker['engine'] == 'Aria' and blocker['status'] == 'never' and blocker['where'] == ['target']
    assert blocker['rows_estimate'] == 300 and blocker['total_bytes'] > 0
    assert 'mysql never shipped the Aria engine' in blocker['reason'] and 'ENGINE=InnoDB' in blocker['reason']
    assert blocker['source'] and blocker['version'] == 'mysql 8.4.0'
    assert not any(b['table'] == 'orders' for b in entry['blockers'])
    assert BLOCKER_HOST in report['summary']['blocked_hosts']
    # Hosts without blockers still get a full report.
    clean = [h for h in lab_hosts if not report['hosts'][h]['blockers']]
    assert clean, 'every lab host has blockers: %s' % report['summary']['blocked_hosts']
    for host in clean:
        assert report['hosts'][host]['variables'] and report['hosts'][host]['target']['flavor'] == 'mysql'

    page = (reports / 'verify.html').read_text()
    assert 'id="blockers"' in page and 'data-table="%s"' % aria_table in page
    assert 'mysql never shipped the Aria engine' in page

    suites = ET.parse(str(reports / 'verify-junit.xml')).getroot()
    suite = next(s for s in suites if s.get('name') == BLOCKER_HOST)
    case = next(c for c in suite if c.get('name') == 'upgrade blocker: %s' % aria_table)
    failure = case.find('failure')
    assert failure is not None and failure.get('type') == 'upgrade_blocker'
    assert 'Aria' in failure.get('message')
    for host in clean:
        suite = next(s for s in suites if s.get('name') == host)
        assert any(c.get('name') == 'upgrade blockers: mysql 8.4.0' and c.find('failure') is None for c in suite)


def test_desired_state_in_one_run_equals_tasks_from_desired(lab_hosts, tmp_path):
    """Role variables off their defaults (and the rest at the defaults) give the same desired state in
    both paths on every lab host (the playbook asserts it per host and role)."""
    extra = {'adaptive_hash_parts': 16, 'flush_neighbors_io_profile': True, 'flush_neighbors_map': {'ssd': 2},
             'memcached_r_batch_size': 7, 'memcached_api_trx_level': 2,
             'expect_flush_neighbors': {'innodb_flush_neighbors': 2, 'innodb_io_capacity': 2000,
                                        'innodb_io_capacity_max': 4000},
             'expect_ahi_parts': 16}
    proc, runs = playbook(os.path.join(ROOT, 'tests', 'integration', 'playbooks', 'desired_one_run.yml'),
                          extra, tmp_path)
    for host in lab_hosts:
        assert runs.get(host) == 4, runs      # three desired_settings runs and one verify run
        assert 'failed=0' in next(line for line in proc.stdout.splitlines() if line.startswith(host + ' '))


def test_a_bad_target_fails_before_any_module_runs(lab_hosts, tmp_path):
    proc, runs = playbook(os.path.join(ROOT, 'playbooks', 'verify.yml'),
                          {'verify_report_dir': str(tmp_path / 'r'), 'verify_target_version': 'mysql-eight'},
                          tmp_path, check=False)
    assert proc.returncode != 0
    assert "verify_target_version=mysql-eight: value 'mysql-eight' is not an upgrade target" in ' '.join(
        (proc.stdout + proc.stderr).split()), proc.stdout
    assert not any(runs.get(host) for host in lab_hosts), runs
    assert not (tmp_path / 'r' / 'verify.json').exists()


# playbooks/site.yml on one host where both roles of its first play have work to do (no drop-in, each runtime value
# the other way round): the desired state of both roles in one desired_settings run, each role's drop-in (template)
# and runtime change (global_variables), and flush_neighbors' closing verify. docs/development.md has the counts before
# and after (a second run writes no drop-in and sets nothing: the template and global_variables runs are skipped).
SITE_RUNS = {'dbfleet.innodb.desired_settings': 1, 'ansible.builtin.template': 2,
             'dbfleet.innodb.global_variables': 2, 'dbfleet.innodb.verify': 1}
SITE_HOST = 'mariadb1011'


def test_site_module_runs_per_host(lab_hosts, tmp_path):
    if SITE_HOST not in lab_hosts:
        pytest.fail('%s is not up: start the lab with `make lab-up`' % SITE_HOST, pytrace=False)
    counts = tmp_path / 'runs-site.yml'
    # site.yml's drop-ins and runtime changes are put back, so later tests find the lab as it was.
    with role_state_kept([SITE_HOST]):
        directory = host_vars(SITE_HOST)['dbfleet_option_dropin_dir']
        for name in ROLE_DROPINS:
            if os.path.exists(os.path.join(directory, name)):
                os.unlink(os.path.join(directory, name))
        # The lab's group_vars ask for innodb_flush_neighbors 0 and the adaptive hash index on.
        sql(SITE_HOST, 'SET GLOBAL innodb_flush_neighbors = 1')
        sql(SITE_HOST, 'SET GLOBAL innodb_adaptive_hash_index = OFF')
        proc, runs = playbook(os.path.join(ROOT, 'playbooks', 'site.yml'), {'site_hosts': SITE_HOST}, tmp_path)
    actions = json.loads(counts.read_text())['actions'][SITE_HOST]
    assert actions == SITE_RUNS, actions
    assert runs == {SITE_HOST: sum(SITE_RUNS.values())}, runs
