# -*- coding: utf-8 -*-
"""The fleet report's "upgrade to X" section (verify_report.upgrade_summary, HTML, JUnit), from upgrade results made
by module_utils/versions/upgrade.py on the lab's facts; the page rendered in headless Chromium."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import catalog as flavor_data
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import upgrade
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.upgrade_settings import option_settings
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import build as vr
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import files as vf
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import html_page as vh
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import junit as vj

from test_html_page import chromium_dom

MYSQL80 = server_identity.ServerIdentity('mysql', (8, 0, 33), '8.0.33', None)
TARGET = upgrade.Target('mysql', (9, 7, 0), flavor_data)
EVIL = '<!--<script>'


def upgrade_result(entries=(), runtime=None):
    settings = option_settings(entries)
    runtime = runtime or {}
    items = upgrade.findings(TARGET, MYSQL80, settings, runtime, dict.fromkeys(runtime, 'COMPILED'))
    return upgrade.result(TARGET, items)


def outcomes():
    removed = optionfiles.Entry('innodb_log_files_in_group', '2', '/etc/mysql/conf.d/9%s.cnf' % EVIL, 3, 'mysqld',
                                'innodb_log_files_in_group = 2')
    ahi = {'innodb_adaptive_hash_index': 'ON'}
    return {
        'db1': dict(variables={}, server=dict(flavor='mysql'), target=dict(flavor='mysql', version='9.7.0'),
                    upgrade=upgrade_result([removed], ahi)),
        'db2': dict(variables={}, server=dict(flavor='mysql'), target=dict(flavor='mysql', version='9.7.0'),
                    upgrade=upgrade_result((), ahi)),
        'db3': dict(variables={}, server=dict(flavor='mysql'), target=dict(flavor='mysql', version='9.7.0'),
                    upgrade=upgrade_result()),
    }


def test_the_fleet_summary_names_hosts_that_would_not_start_and_silent_changes_by_setting():
    report = vr.verify_report(outcomes(), generated='2026-01-01T00:00:00+00:00')
    fleet = report['summary']['upgrade']
    assert fleet['targets'] == ['MySQL 9.7'] and fleet['hosts'] == ['db1', 'db2', 'db3']
    assert fleet['would_not_start'] == ['db1'] and fleet['silent_changes'] == ['db1', 'db2']
    first, second = fleet['by_setting'][:2]
    assert (first['setting'], first['kind'], first['hosts']) == ('innodb_log_files_in_group', 'would_not_start', ['db1'])
    assert (second['setting'], second['kind'], second['hosts']) == ('innodb_adaptive_hash_index', 'default_changes',
                                                                    ['db1', 'db2'])
    assert second['changes'] == {'ON -> OFF': 2}
    assert second['pin'] == dict(role='dbfleet.innodb.adaptive_hash', variable='adaptive_hash_enabled', value=True)
    assert vr.verify_report({'x': dict(variables={})})['summary']['upgrade'] is None      # no target, no section
    assert json.loads(vf.render_json(report))['hosts']['db1']['upgrade']['summary']['would_start'] is False


def test_junit_fails_the_host_that_would_not_start():
    root = ET.fromstring(vj.verify_report_junit(vr.verify_report(outcomes())))
    cases = dict(((c.get('classname'), c.get('name')), c) for c in root.iter('testcase'))
    stop = cases[('db1', 'upgrade to MySQL 9.7: the server starts')].find('failure')
    assert stop is not None and stop.get('type') == 'upgrade_would_not_start'
    assert 'innodb_log_files_in_group' in stop.get('message') and ':3 [mysqld]' in stop.text
    assert cases[('db2', 'upgrade to MySQL 9.7: the server starts')].find('failure') is None
    silent = cases[('db2', 'upgrade to MySQL 9.7: silent changes (1)')].find('system-out').text
    assert 'innodb_adaptive_hash_index ON -> OFF' in silent


def test_the_html_section_escapes_and_renders_in_a_browser(tmp_path):
    page = vh.verify_report_html(vr.verify_report(outcomes()))
    assert EVIL not in page.split('<script id="verify-data"', maxsplit=1)[0]
    assert 'id="upgrade-title"' in page and 'Upgrade to MySQL 9.7' in page
    dom = chromium_dom(page, tmp_path)
    assert 'id="upgrade-would-not-start" data-count="1"' in dom and 'id="upgrade-silent" data-count="2"' in dom
    assert dom.count('class="upgrade-finding"') == 3 and dom.count('class="upgrade-none"') == 1
    assert 'dbfleet.innodb.adaptive_hash: adaptive_hash_enabled: true' in dom


def unknown_target_outcomes():
    """db1 and db2 on a target the collection has no facts of (MySQL 99.1), db2 with a line of a variable MySQL 9.7
    no longer has (which options a target takes is not known either)."""
    unknown = upgrade.Target('mysql', (99, 1, 0), flavor_data)
    removed = optionfiles.Entry('innodb_log_files_in_group', '2', '/etc/mysql/conf.d/90.cnf', 3, 'mysqld',
                                'innodb_log_files_in_group = 2')
    out = {}
    for host, entries in (('db1', ()), ('db2', [removed])):
        items = upgrade.findings(unknown, MYSQL80, option_settings(entries), {}, {})
        out[host] = dict(variables={}, server=dict(flavor='mysql'), target=dict(flavor='mysql', version='99.1.0'),
                         upgrade=upgrade.result(unknown, items))
    return out


def test_a_target_without_facts_says_the_start_is_unknown_and_warns_naming_what_the_collection_knows():
    hosts = unknown_target_outcomes()
    db1, db2 = hosts['db1']['upgrade'], hosts['db2']['upgrade']
    assert not db1['complete'] and db1['summary']['would_start'] is None       # not True: nothing is known
    assert db1['known_versions'] == flavor_data.known_versions()
    assert 'MySQL 99.1' in db1['start_unknown'] and 'mysql 9.7.4' in db1['start_unknown']
    assert db2['summary']['would_start'] is None and db2['start_unknown'] == db1['start_unknown']
    report = vr.verify_report(hosts)
    fleet = report['summary']['upgrade']
    assert fleet['start_unknown'] == ['db1', 'db2'] and fleet['would_not_start'] == []
    warnings = vr.upgrade_warnings(report['hosts'])
    assert len(warnings) == 1 and warnings[0].startswith('upgrade to MySQL 99.1: the collection has no facts of MySQL 99.1')
    assert all(v in warnings[0] for v in flavor_data.known_versions()) and warnings[0].endswith('(2 hosts: db1, db2)')
    assert vr.upgrade_warnings(vr.verify_report(outcomes())['hosts']) == []     # a known target: no warning
    root = ET.fromstring(vj.verify_report_junit(report))
    cases = dict(((c.get('classname'), c.get('name')), c) for c in root.iter('testcase'))
    skipped = cases[('db1', 'upgrade to MySQL 99.1: the server starts')].find('skipped')
    assert skipped is not None and 'no facts of MySQL 99.1' in skipped.get('message')
    assert 'id="upgrade-start-unknown"' in vh.verify_report_html(report)
