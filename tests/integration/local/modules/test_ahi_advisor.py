"""dbfleet.innodb.ahi_advisor against every lab server, run the way users run it (ansible CLI).

A small PK IN-list load runs during each sample. The tests check the counters the module reports
against counters read directly, that counters it turned on are off again afterwards (and counters
that were on stay on), check mode, and bad input.
"""
import json
import os
import random
import signal
import subprocess
import time

import pymysql
import pytest
from dbfleet_testing.background import Background
from dbfleet_testing.runs import BIN, adhoc, ansible, descendants, env
from dbfleet_testing.servers import socket_connect, socket_login, socket_sql
from dbfleet_testing.lab import require_lab_hosts

from dbfleet_testing.lab import REPO as ROOT
INVENTORY = os.path.join(ROOT, 'inventories', 'lab', 'hosts.yml')
MAINT = ('adaptive_hash_pages_added', 'adaptive_hash_pages_removed', 'adaptive_hash_rows_added',
         'adaptive_hash_rows_removed')
DB = 'dbfleet_it_ahi_advisor'


def lab_hosts():
    return require_lab_hosts(INVENTORY)


HOSTS = lab_hosts()


def monitor_state(hv):
    cols = [r[0].upper() for r in socket_sql(hv, 'SHOW COLUMNS FROM INFORMATION_SCHEMA.INNODB_METRICS')]
    col = 'STATUS' if 'STATUS' in cols else 'ENABLED'
    rows = socket_sql(hv, "SELECT NAME, %s FROM INFORMATION_SCHEMA.INNODB_METRICS WHERE NAME LIKE 'adaptive_hash%%'" % col)
    return dict((r[0], str(r[1]).lower() in ('enabled', '1')) for r in rows)


def run_advisor(host, args, check=False):
    return adhoc(host, INVENTORY, 'dbfleet.innodb.ahi_advisor', dict(socket_login(HOSTS[host]), **args), check=check)


@pytest.fixture(scope='module', autouse=True)
def drop_test_database():
    yield
    for hv in HOSTS.values():
        try:
            socket_sql(hv, 'DROP DATABASE IF EXISTS ' + DB)
        except pymysql.err.MySQLError:
            pass


class Load(Background):
    """One client sending PK IN-lists of 30 ids from a small table until stopped."""

    def __init__(self, hv):
        self.hv = hv
        self.count = 0
        conn = socket_connect(hv)
        with conn.cursor() as cur:
            cur.execute('CREATE DATABASE IF NOT EXISTS ' + DB)
            cur.execute('CREATE TABLE IF NOT EXISTS %s.t (i INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, '
                        'j INT UNSIGNED NOT NULL, v TEXT, KEY ix_j (j)) ENGINE=InnoDB' % DB)
            cur.execute('SELECT COUNT(*) FROM %s.t' % DB)
            if cur.fetchone()[0] < 5000:
                for _i in range(5):
                    cur.execute('INSERT INTO %s.t (j, v) VALUES %s'
                                % (DB, ', '.join("(%d, REPEAT('x', 100))" % random.randint(0, 99999)
                                                 for _i in range(1000))))
        conn.close()
        super().__init__()

    def loop(self):
        conn = socket_connect(self.hv, DB)
        with conn.cursor() as cur:
            while not self.stop.is_set():
                ids = ', '.join(str(random.randint(1, 5000)) for _i in range(30))
                cur.execute('SELECT LEFT(v, 1) FROM t WHERE i IN (%s)' % ids)
                cur.fetchall()
                self.count += 1
        conn.close()


@pytest.mark.parametrize('host', sorted(HOSTS))
def test_advisor_samples_and_restores_monitors(host):
    hv = HOSTS[host]
    before = monitor_state(hv)
    with Load(hv) as load:
        time.sleep(1)
        result, proc = run_advisor(host, dict(sample_seconds=4, min_lookups=1000))
    assert not result.get('failed'), proc.stdout + proc.stderr
    # Turning counters on (and off again) is a change, and the task says so.
    assert result['changed'] is bool(result['monitors_enabled'])
    assert result['changed'] is (not all(before[n] for n in MAINT))
    # Counters it turned on are exactly the ones that were off, and they are off again.
    assert sorted(result['monitors_enabled']) == sorted(n for n in before if n in result['monitors_enabled'])
    for name in MAINT:
        if not before[name]:
            assert name in result['monitors_enabled']
    assert monitor_state(hv) == before
    ahi_on = str(socket_sql(hv, 'SELECT @@GLOBAL.innodb_adaptive_hash_index')[0][0]) in ('1', 'ON')
    assert result['ahi_enabled'] is ahi_on
    assert result['partition_variable'] == 'innodb_adaptive_hash_index_parts'
    assert result['partitions'] == int(socket_sql(hv, 'SELECT @@GLOBAL.innodb_adaptive_hash_index_parts')[0][0])
    advice = result['advice']
    assert advice['recommendation'] in ('keep_on', 'turn_off', 'try_on', 'insufficient_data')
    assert advice['reasons'] and all(isinstance(r, str) and r for r in advice['reasons'])
    # ~30 index lookups per statement ran during the sample.
    assert load.count > 50
    assert advice['counters']['index_lookups'] >= 1000
    if ahi_on:
        c = advice['counters']
        assert c['hash_searches'] + c['btree_searches'] > 0
        assert advice['hit_ratio'] == pytest.approx(
            c['hash_searches'] / float(c['hash_searches'] + c['btree_searches']), abs=1e-3)
        assert advice['maintenance_per_hit'] is not None
        # A small hot table read by PK: the hash answers most lookups.
        assert advice['recommendation'] == 'keep_on', advice
    else:
        assert advice['hit_ratio'] is None
        assert advice['recommendation'] == 'try_on', advice


@pytest.mark.parametrize('host', sorted(HOSTS))
def test_advisor_leaves_counters_that_were_on(host):
    hv = HOSTS[host]
    before = monitor_state(hv)
    was_on = before['adaptive_hash_rows_added']
    if not was_on:
        socket_sql(hv, "SET GLOBAL innodb_monitor_enable = 'adaptive_hash_rows_added'")
    try:
        result, proc = run_advisor(host, dict(sample_seconds=1))
        assert not result.get('failed'), proc.stdout + proc.stderr
        assert 'adaptive_hash_rows_added' not in result['monitors_enabled']
        assert monitor_state(hv)['adaptive_hash_rows_added'] is True
    finally:
        if not was_on:
            socket_sql(hv, "SET GLOBAL innodb_monitor_disable = 'adaptive_hash_rows_added'")
    assert monitor_state(hv) == before


def test_unchanged_when_every_counter_was_on_already():
    host = sorted(HOSTS)[0]
    hv = HOSTS[host]
    before = monitor_state(hv)
    off = [n for n, on in before.items() if not on]
    for name in off:
        socket_sql(hv, 'SET GLOBAL innodb_monitor_enable = %s', (name,))
    try:
        result, proc = run_advisor(host, dict(sample_seconds=1))
        assert not result.get('failed'), proc.stdout + proc.stderr
        assert result['monitors_enabled'] == [] and result['changed'] is False
        assert all(monitor_state(hv).values())
    finally:
        for name in off:
            socket_sql(hv, 'SET GLOBAL innodb_monitor_disable = %s', (name,))
    assert monitor_state(hv) == before


def test_check_mode_turns_nothing_on():
    host = sorted(HOSTS)[0]
    hv = HOSTS[host]
    before = monitor_state(hv)
    result, proc = run_advisor(host, dict(sample_seconds=1), check=True)
    assert not result.get('failed'), proc.stdout + proc.stderr
    assert result['monitors_enabled'] == []
    # Check mode says what a real run would change.
    assert result['changed'] is (not all(before[n] for n in MAINT))
    if not all(before[n] for n in MAINT):
        assert result['advice']['maintenance_per_hit'] is None
        # The warning goes to the display (not shown by the one-line output): run once more without -o.
        margs = dict(socket_login(hv), sample_seconds=1)
        _rc, shown = ansible('ansible', host, '-i', INVENTORY, '--check', '-m', 'dbfleet.innodb.ahi_advisor', '-a',
                             json.dumps(margs), timeout=120)
        assert 'left off (check mode)' in shown
    assert monitor_state(hv) == before


@pytest.mark.parametrize('args,needle', [
    (dict(sample_seconds=0), 'sample_seconds'),
    (dict(sample_seconds=3601), 'sample_seconds'),
    (dict(min_hit_ratio=1.5), 'min_hit_ratio'),
    (dict(max_write_share=-0.1), 'max_write_share'),
    (dict(sample_seconds='ten'), 'sample_seconds'),
])
def test_bad_input_is_refused_before_sampling(args, needle):
    host = sorted(HOSTS)[0]
    before = monitor_state(HOSTS[host])
    started = time.time()
    result, proc = run_advisor(host, args)
    assert result.get('failed') is True
    assert needle in result['msg']
    assert 'Traceback (most recent call last)' not in proc.stdout + proc.stderr
    assert time.time() - started < 30
    assert monitor_state(HOSTS[host]) == before


def test_password_never_in_output():
    host = sorted(HOSTS)[0]
    result, proc = run_advisor(host, dict(sample_seconds=1))
    assert HOSTS[host]['dbfleet_login_password'] not in proc.stdout + proc.stderr


def _module_processes(pid):
    """The module's own process: the python processes under the ansible process that have no child."""
    found = []
    for child in descendants(pid):
        try:
            with open('/proc/%d/cmdline' % child, 'rb') as f:
                cmdline = f.read().replace(b'\0', b' ').decode('utf-8', 'replace')
        except OSError:
            continue
        if 'python' in cmdline and not descendants(child):
            found.append(child)
    return found


@pytest.mark.parametrize('signame', ['SIGTERM', 'SIGHUP'])
def test_signal_mid_sample_turns_the_monitors_off_again(signame):
    host = 'mysql80' if 'mysql80' in HOSTS else sorted(HOSTS)[0]
    hv = HOSTS[host]
    before = monitor_state(hv)
    off = sorted(n for n, on in before.items() if not on)
    assert off, 'every adaptive_hash counter is on already on %s: %s' % (host, before)
    margs = dict(socket_login(hv), sample_seconds=120)
    cmd = [os.path.join(BIN, 'ansible'), host, '-i', INVENTORY, '-o', '-m', 'dbfleet.innodb.ahi_advisor', '-a',
           json.dumps(margs)]
    proc = subprocess.Popen(cmd, env=env(ANSIBLE_CALLBACK_RESULT_FORMAT='json'), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    try:
        deadline = time.time() + 90
        while not any(monitor_state(hv)[n] for n in off):
            assert time.time() < deadline and proc.poll() is None, 'the advisor never turned %s on' % off
            time.sleep(0.3)
        time.sleep(0.5)   # well inside the 120 s sample
        targets = _module_processes(proc.pid)
        assert targets, 'no module process under ansible (pid %d)' % proc.pid
        for pid in targets:
            os.kill(pid, getattr(signal, signame))
        out, _err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert monitor_state(hv) == before, out
    line = [x for x in out.splitlines() if x.startswith(host + ' | ')][-1]
    assert ' | FAILED' in line, out
    result = json.loads(line[line.index('{'):])
    assert 'interrupted by %s during the sample' % signame in result['msg'], result
    assert result['monitors_enabled'] and set(result['monitors_enabled']) <= set(off), result
    assert result['interrupted'] is True
    assert hv['dbfleet_login_password'] not in out
