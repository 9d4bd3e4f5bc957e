# -*- coding: utf-8 -*-
"""The fleet report's "upgrade to X" section (verify_report.upgrade_summary, HTML, JUnit), from upgrade results made
by module_utils/versions/upgrade.py on the lab's facts; the page rendered in headless Chromium."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import catalog as flavor_data
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import upgrade
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import build as vr
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import files as vf
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import html_page as vh
from ansible_collections.dbfleet.innodb.plugins.module_utils.report import junit as vj

from test_html_page import chromium_dom

MYSQL80 = flavors.ServerIdentity('mysql', (8, 0, 33), '8.0.33', None)
TARGET = upgrade.Target('mysql', (9, 7, 0), flavor_data)
EVIL = '<!--<script>'


def upgrade_result(entries=(), runtime=None):
    settings = upgrade.option_settings(entries)
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
