# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""verify's upgrade findings (verify_target_version) checked against the target binaries themselves.

A private lab of this module (lab.py --lab-dir .lab/p-upgrade, port base DBFLEET_LAB_PORT_BASE + 3900) runs a fresh
MySQL 8.0.33 and a fresh MariaDB 10.11, each given a drop-in with settings their next version removed (and one
written loose-, one in a group only the current version reads) and relying on their defaults. Then:

- verify (as Ansible runs it on the host) with target_version mysql-9.7 / mariadb-11.8 reports each removed setting
  as "would not start" with its file:line, the loose- and no-op ones as ignored, the versioned group's line as lost,
  and AHI left at its default as ON -> OFF on MySQL 9.7 with the role input that pins it;
- the target's own binary, from the lab's chroot (MySQL 9.7: mysqld --validate-config; MariaDB 11.8, which has no
  such option: mariadbd --verbose --help, which reads the options first), is given copies of the same option files
  again and again, each refused line commented out in the copy, until it takes them: the lines it refused are
  exactly the findings that say the server would not start (nothing it refuses is missed, nothing more is said).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import catalog as flavor_data
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import facts as version_facts
from dbfleet_testing.lab import lab_py, require_lab_hosts
from dbfleet_lab.servers import MARIADB118, MYSQL97
from dbfleet_testing.runs import playbook, recap
from dbfleet_testing.servers import ROOT, run_module

# Its own lab (or none): run beside the shared lab's tests (conftest.py, marker own_lab).
pytestmark = pytest.mark.own_lab

PRIVATE_DIR = os.path.join(ROOT, '.lab', 'p-upgrade')
PRIVATE_INV = os.path.join(PRIVATE_DIR, 'hosts.yml')
PORT_BASE = int(os.environ.get('DBFLEET_LAB_PORT_BASE') or 33000) + 3900
PRIVATE_ARGS = ['--lab-dir', PRIVATE_DIR, '--port-base', str(PORT_BASE), '--inventory', PRIVATE_INV]
CACHE = os.path.abspath(os.environ.get('DBFLEET_LAB_CACHE') or os.path.expanduser('~/.cache/dbfleet-lab'))
DROPIN = '90-dbfleet-test-upgrade.cnf'
REFUSAL = re.compile(r"unknown (?:variable|option) '([^'=]+)")

CASES = {
    'mysql80': dict(target='mysql-9.7', kind=MYSQL97, check=['--validate-config'], text=(
        '# written by tests/integration/local/modules/test_upgrade.py\n'
        '[mysqld]\n'
        'innodb_log_files_in_group = 2\n'                            # 3: removed (innodb_redo_log_capacity)
        'default_authentication_plugin = caching_sha2_password\n'    # 4: removed in 9.0 (authentication_policy)
        'loose-expire_logs_days = 7\n'                               # 5: removed, written loose-
        '[mysqld-8.0]\n'
        'innodb_io_capacity = 400\n'),                               # 7: a group 9.7 does not read
        would_not_start={3: 'innodb_redo_log_capacity', 4: 'authentication_policy'}, ignored=[5], not_read=[7]),
    'mariadb1011': dict(target='mariadb-11.8', kind=MARIADB118, check=['--verbose', '--help'], text=(
        '# written by tests/integration/local/modules/test_upgrade.py\n'
        '[mysqld]\n'
        'old_alter_table = ON\n'                                     # 3: removed (alter_algorithm)
        'innodb_change_buffer_max_size = 10\n'                       # 4: removed with the change buffer
        'innodb_change_buffering = none\n'                           # 5: removed, still taken as a no-op
        'loose-innodb_defragment = 1\n'                              # 6: removed, loose- and a no-op
        'innodb_log_files_in_group = 1\n'                            # 7: removed before 10.11, still a no-op
        'innodb_thread_concurrency = 0\n'                            # 8: removed before 10.11, still a no-op
        '[mariadb-10.11]\n'
        'innodb_io_capacity = 400\n'),                               # 10: a group 11.8 does not read
        would_not_start={3: 'alter_algorithm', 4: None}, ignored=[5, 6, 7, 8], not_read=[10]),
}


@pytest.fixture(scope='module')
def private_lab():
    lab_py(*(PRIVATE_ARGS + ['up'] + sorted(CASES)))
    hosts = require_lab_hosts(PRIVATE_INV, sorted(CASES))
    try:
        for host, case in CASES.items():
            with open(os.path.join(hosts[host]['dbfleet_option_dropin_dir'], DROPIN), 'w', encoding='utf-8') as handle:
                handle.write(case['text'])
        yield hosts
    finally:
        lab_py(*(PRIVATE_ARGS + ['down', '--purge']), check=False)
        shutil.rmtree(PRIVATE_DIR, ignore_errors=True)


def verify_upgrade(hv, target):
    """verify's result (upgrade part) for the private host hv, run on this machine as Ansible runs it."""
    result, rc = run_module('verify', dict(login_unix_socket=hv['dbfleet_login_unix_socket'],
                                           login_user=hv['dbfleet_login_user'],
                                           login_password=hv['dbfleet_login_password'], config_file='',
                                           target_version=target,
                                           # as the action plugin passes them (version_facts.catalog_data)
                                           target_facts=version_facts.catalog_data(flavor_data)))
    assert rc == 0 and result['changed'] is False, result
    return result['upgrade']


def copy_option_files(hv, where):
    """Copies of the host's option file and drop-in directory under where (the !includedir pointed at the copy);
    returns (copied my.cnf, {copy path: original path})."""
    original_cnf = hv['dbfleet_option_file']
    original_dir = hv['dbfleet_option_dropin_dir']
    os.makedirs(os.path.join(where, 'conf.d'))
    with open(original_cnf, encoding='utf-8') as handle:
        text = handle.read().replace(original_dir, os.path.join(where, 'conf.d'))
    cnf = os.path.join(where, 'my.cnf')
    with open(cnf, 'w', encoding='utf-8') as handle:
        handle.write(text)
    back = {cnf: original_cnf}
    for name in os.listdir(original_dir):
        shutil.copy(os.path.join(original_dir, name), os.path.join(where, 'conf.d', name))
        back[os.path.join(where, 'conf.d', name)] = os.path.join(original_dir, name)
    return cnf, back


def refused_by_the_binary(kind, check, cnf, back, target):
    """[(file, line, name)] of the lines the target binary refuses, found one at a time: each refused line is
    commented out in the copy and the binary asked again, until it takes the files."""
    basedir = kind.basedir(CACHE)
    flavor, version = target
    groups = capability_facts.option_groups_for(flavor, version)
    refused = []
    for _round in range(20):
        proc = subprocess.run(kind.command(basedir, ['--defaults-file=' + cnf] + check, [os.path.dirname(cnf)]),
                              capture_output=True, text=True, timeout=120, check=False)
        match = REFUSAL.search(proc.stderr + proc.stdout)
        if not match:
            assert proc.returncode == 0, proc.stderr[-3000:]
            return refused
        name = optionfiles.normalize_name(match.group(1))
        parsed = optionfiles.read_option_files([cnf], groups)
        entry = next((e for e in parsed.entries if e.name == name and not e.text.lower().startswith('loose')), None)
        assert entry is not None, 'the binary refuses %r, which no line of the copies sets: %s' % (name, match.group(0))
        refused.append((back[entry.file], entry.line, name))
        with open(entry.file, encoding='utf-8') as handle:
            lines = handle.read().split('\n')
        lines[entry.line - 1] = '# refused: ' + lines[entry.line - 1]
        with open(entry.file, 'w', encoding='utf-8') as handle:
            handle.write('\n'.join(lines))
    raise AssertionError('the binary still refused lines after 20 rounds: %s' % refused)


@pytest.mark.parametrize('host', sorted(CASES))
def test_findings_agree_with_the_target_binary(private_lab, host, tmp_path):
    case = CASES[host]
    hv = private_lab[host]
    dropin = os.path.join(hv['dbfleet_option_dropin_dir'], DROPIN)
    upgrade = verify_upgrade(hv, case['target'])
    assert upgrade['complete'] and upgrade['summary']['would_start'] is False, upgrade
    by_line = dict(((f['kind'], f['line']), f) for f in upgrade['findings'] if f['file'] == dropin)
    for line, successor in case['would_not_start'].items():
        finding = by_line[('would_not_start', line)]
        assert '%s:%d [' % (dropin, line) in finding['message'] and finding['target_name'] == successor, finding
    for line in case['ignored']:
        assert ('ignored', line) in by_line, upgrade['findings']
    for line in case['not_read']:
        assert by_line[('not_read', line)]['setting'] == 'innodb_io_capacity'

    # the target binary on copies of the same files refuses exactly the lines said to stop it
    where = os.path.join(PRIVATE_DIR, host, 'validate')     # inside the instance directory the chroot sees
    shutil.rmtree(where, ignore_errors=True)
    cnf, back = copy_option_files(hv, where)
    target = upgrade['target']
    refused = refused_by_the_binary(case['kind'], case['check'], cnf, back,
                                    (target['flavor'], server_identity.parse_version(target['version'])))
    said = sorted((f['file'], f['line'], f['setting']) for f in upgrade['findings'] if f['stops_start'])
    assert sorted(refused) == said, 'refused by the %s binary: %s\npredicted: %s' % (target['label'], refused, said)


def test_ahi_left_at_its_default_is_reported_on_to_off(private_lab):
    upgrade = verify_upgrade(private_lab['mysql80'], 'mysql-9.7')
    ahi = [f for f in upgrade['findings'] if f['setting'] == 'innodb_adaptive_hash_index']
    assert len(ahi) == 1 and (ahi[0]['kind'], ahi[0]['now'], ahi[0]['after']) == ('default_changes', 'ON', 'OFF'), ahi
    assert ahi[0]['pin'] == dict(role='dbfleet.innodb.adaptive_hash', variable='adaptive_hash_enabled', value=True)
    assert upgrade['summary']['role_inputs']['dbfleet.innodb.adaptive_hash'] == {'adaptive_hash_enabled': True}
    # and the rest of the silent changes are pinned by the settings role in one run
    assert upgrade['summary']['settings_values']['innodb_use_fdatasync'] == 'OFF'


# ---------------------------------------------------------------- a real in-place upgrade: MariaDB 10.11 -> 11.8
UPGRADED_DROPIN = ('# written by tests/integration/local/modules/test_upgrade.py\n'
                   '[mysqld]\n'
                   'innodb_buffer_pool_size = 192M\n'                       # pinned: the same after
                   'innodb_change_buffering = none\n'                       # removed, taken as a no-op by 11.8
                   '[mariadb-10.11]\n'
                   'innodb_io_capacity = 400\n')                            # a group 11.8 does not read


def _variables(conn):
    with conn.cursor() as cur:
        cur.execute('SHOW GLOBAL VARIABLES')
        return {name.lower(): value for name, value in cur.fetchall()}


def test_mariadb_1011_datadir_upgraded_in_place_to_118_changes_what_was_predicted(private_lab):
    import pymysql  # pylint: disable=import-outside-toplevel
    from dbfleet_lab.chroots import wrap  # pylint: disable=import-outside-toplevel
    from dbfleet_lab.servers import terminate  # pylint: disable=import-outside-toplevel
    hv = private_lab['mariadb1011']
    instance_dir = os.path.dirname(hv['dbfleet_option_file'])
    with open(os.path.join(hv['dbfleet_option_dropin_dir'], DROPIN), 'w', encoding='utf-8') as handle:
        handle.write(UPGRADED_DROPIN)
    lab_py(*(PRIVATE_ARGS + ['restart', 'mariadb1011']))       # it runs what its files say
    upgrade = verify_upgrade(hv, 'mariadb-11.8')
    assert upgrade['summary']['would_start'] is True, upgrade['findings']
    before_conn = pymysql.connect(unix_socket=hv['dbfleet_login_unix_socket'], user=hv['dbfleet_login_user'],
                                  password=hv['dbfleet_login_password'])
    try:
        before = _variables(before_conn)
    finally:
        before_conn.close()
    lab_py(*(PRIVATE_ARGS + ['stop', 'mariadb1011']))

    # the datadir and option files, paths moved to a copy beside it, started by 11.8's mariadbd, then mariadb-upgrade
    copy = os.path.join(PRIVATE_DIR, 'up118')
    shutil.rmtree(copy, ignore_errors=True)
    os.makedirs(copy)
    shutil.copytree(os.path.join(instance_dir, 'data'), os.path.join(copy, 'data'), symlinks=True)
    shutil.copytree(hv['dbfleet_option_dropin_dir'], os.path.join(copy, 'conf.d'))
    with open(hv['dbfleet_option_file'], encoding='utf-8') as handle:
        text = handle.read().replace(instance_dir, copy)
    text = re.sub(r'(?m)^port = \d+$', 'port = %d' % (PORT_BASE + 600), text)
    with open(os.path.join(copy, 'my.cnf'), 'w', encoding='utf-8') as handle:
        handle.write(text)
    basedir = MARIADB118.basedir(CACHE)
    socket = os.path.join(copy, 'mysqld.sock')
    server = subprocess.Popen(MARIADB118.command(basedir, ['--defaults-file=%s/my.cnf' % copy], [copy]),
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        conn = None
        for _attempt in range(300):
            assert server.poll() is None, open(os.path.join(copy, 'error.log'), encoding='utf-8').read()[-3000:]
            try:
                conn = pymysql.connect(unix_socket=socket, user='root', password='')
                break
            except pymysql.err.MySQLError:
                subprocess.run(['sleep', '0.2'], check=True)
        assert conn is not None, 'MariaDB 11.8 did not answer on the upgraded copy'
        proc = subprocess.run(wrap(basedir, [copy], ['mariadb-upgrade', '--socket=%s' % socket, '--user=root']),
                              capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        after = _variables(conn)
        conn.close()
    finally:
        terminate(server.pid, 'MariaDB 11.8 on the upgraded copy')
        shutil.rmtree(copy, ignore_errors=True)
    assert after['version'].startswith('11.8'), after['version']

    predicted = dict((f['setting'], f) for f in upgrade['findings'] if f['kind'] == 'default_changes')
    lost = set(f['setting'] for f in upgrade['findings'] if f['kind'] in ('not_read', 'ignored'))
    # every predicted change of an InnoDB default happened (a machine-dependent one: to what the lab's 11.8 runs)
    for name, finding in sorted(predicted.items()):
        if name.startswith('innodb_'):
            assert str(after.get(name)).upper() == str(finding['after']).upper(), (name, before.get(name), after.get(name), finding)
    # and no InnoDB value changed that was not predicted (paths are the copy's own)
    unpredicted = ['%s: %s -> %s' % (n, before[n], after[n]) for n in sorted(set(before) & set(after))
                   if n.startswith('innodb_') and str(before[n]) != str(after[n]) and n not in predicted and n not in lost
                   and instance_dir not in str(before[n])]
    assert not unpredicted, 'InnoDB values that changed in the real upgrade without a finding: %s' % unpredicted
    assert after['innodb_io_capacity'] == '200' and 'innodb_io_capacity' in lost       # the [mariadb-10.11] line
    assert after['innodb_buffer_pool_size'] == str(192 * 1024 * 1024)                    # pinned, kept
    assert 'innodb_snapshot_isolation' in predicted and after['innodb_snapshot_isolation'] == 'ON'


# ---------------------------------------------------------------- pinned in one run of the settings role
def test_the_settings_role_pins_the_silent_changes_in_one_run(private_lab):
    """upgrade.summary.settings_values, applied as it is by playbooks/settings.yml, pins every silent change it names:
    the next verify reports none of them as a default change, the pins stop nothing from starting on the target, and
    a second run of the role changes nothing."""
    hv = private_lab['mysql80']
    dropin = os.path.join(hv['dbfleet_option_dropin_dir'], '60-dbfleet-settings.cnf')
    before = verify_upgrade(hv, 'mysql-9.7')
    pins = before['summary']['settings_values']
    silent = set(f['setting'] for f in before['findings'] if f['kind'] == 'default_changes')
    assert 'innodb_use_fdatasync' in pins and set(pins) <= silent, (pins, silent)
    extra = dict(settings_values=pins, dbfleet_settings_hosts=['mysql80'])
    try:
        rc, out = playbook(PRIVATE_INV, 'settings.yml', extra, timeout=900)
        assert rc == 0 and recap(out)['mysql80']['changed'] >= 1, out[-4000:]
        rc, out = playbook(PRIVATE_INV, 'settings.yml', extra, timeout=900)
        assert rc == 0 and recap(out)['mysql80']['changed'] == 0, out[-4000:]
        after = verify_upgrade(hv, 'mysql-9.7')
        still = sorted(f['setting'] for f in after['findings'] if f['kind'] == 'default_changes' and f['setting'] in pins)
        assert still == [], after['findings']
        assert after['summary']['settings_values'] == {} and after['summary']['stops_start'] == \
            before['summary']['stops_start'], after['summary']
    finally:
        if os.path.exists(dropin):
            os.remove(dropin)
