"""dbfleet.innodb.ahi_advisor against every lab server, run the way users run it (ansible-playbook; ansible for the
signal tests).

A small PK IN-list load runs on each server during its sample (one run samples all servers at once). The tests check
the counters the module reports against counters read directly, that counters it turned on are off again afterwards
(and counters that were on stay on), check mode, and bad input: the cases without a load are the tasks of a second
run (dbfleet_testing.task_runs), which reads the counters between them with the tests' own connection.
"""
import json
import os
import random
import signal
import time

import pymysql
import pytest
from dbfleet_testing.background import Background
from dbfleet_testing.runs import descendants
from dbfleet_testing.servers import socket_connect, socket_sql
from dbfleet_testing.lab import require_lab_hosts
from dbfleet_testing.task_runs import start_task_run, task_run

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


@pytest.fixture(scope='module', autouse=True)
def drop_test_database():
    yield
    for hv in HOSTS.values():
        try:
            socket_sql(hv, 'DROP DATABASE IF EXISTS ' + DB)
        except pymysql.err.MySQLError:
            pass


# A pause after each statement: at most 50 statements (1,500 index lookups) a second per server, several times what
# the sample needs (min_lookups 1000 in 4 s), at a small part of the CPU of a client and a server in a tight loop.
PAUSE = 0.02


class Load(Background):
    """One client sending PK IN-lists of 30 ids from a small table until stopped, PAUSE seconds apart."""

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
                self.stop.wait(PAUSE)
        conn.close()


SAMPLE_BOOK = r"""
- name: A 4-second sample on each lab server under the tests' load
  hosts: all
  gather_facts: false
  tasks:
    - name: sample
      dbfleet.innodb.ahi_advisor:
        login_unix_socket: "{{ dbfleet_login_unix_socket }}"
        login_user: "{{ dbfleet_login_user }}"
        login_password: "{{ dbfleet_login_password }}"
        sample_seconds: 4
        min_lookups: 1000
      ignore_errors: true
"""

# The cases without a load, in their order: on each host, a counter that was on stays on (`case.rows_added_off`:
# the test turns adaptive_hash_rows_added on first, and off again after); on the first host, every counter on
# (`case.enable` / `case.disable`: the statements that turn the ones that are off on and off again), check mode, and
# bad input (BAD_INPUT, a task each). `monitors` is the adaptive_hash counters' rows, read with the tests' own connection.
CASES_BOOK = r"""
- name: The advisor leaves a counter that was on
  hosts: all
  gather_facts: false
  vars: &vars
    case: "{{ cases[inventory_hostname] }}"
    login: &login
      login_unix_socket: "{{ dbfleet_login_unix_socket }}"
      login_user: "{{ dbfleet_login_user }}"
      login_password: "{{ dbfleet_login_password }}"
    monitors: "{{ query('lab_sql', \"SELECT * FROM INFORMATION_SCHEMA.INNODB_METRICS WHERE NAME LIKE 'adaptive_hash%'\") }}"
  tasks:
    - name: turn adaptive_hash_rows_added on
      ansible.builtin.debug:
        msg: "{{ query('lab_sql', \"SET GLOBAL innodb_monitor_enable = 'adaptive_hash_rows_added'\") }}"
      when: case.rows_added_off

    - name: sample with adaptive_hash_rows_added on
      dbfleet.innodb.ahi_advisor:
        <<: *login
        sample_seconds: 1
      ignore_errors: true

    - name: monitors after the sample with adaptive_hash_rows_added on
      ansible.builtin.debug: {msg: "{{ monitors }}"}

    - name: turn adaptive_hash_rows_added off again
      ansible.builtin.debug:
        msg: "{{ query('lab_sql', \"SET GLOBAL innodb_monitor_disable = 'adaptive_hash_rows_added'\") }}"
      when: case.rows_added_off

    - name: monitors after adaptive_hash_rows_added
      ansible.builtin.debug: {msg: "{{ monitors }}"}

- name: Every counter on, check mode and bad input, on the first host
  hosts: "{{ first }}"
  gather_facts: false
  vars: *vars
  tasks:
    - name: monitors before every counter on
      ansible.builtin.debug: {msg: "{{ monitors }}"}

    - name: turn every counter on
      ansible.builtin.debug: {msg: "{{ query('lab_sql', *case.enable) }}"}

    - name: sample with every counter on
      dbfleet.innodb.ahi_advisor:
        <<: *login
        sample_seconds: 1
      ignore_errors: true

    - name: monitors with every counter on
      ansible.builtin.debug: {msg: "{{ monitors }}"}

    - name: turn the counters off again
      ansible.builtin.debug: {msg: "{{ query('lab_sql', *case.disable) }}"}

    - name: monitors before check mode
      ansible.builtin.debug: {msg: "{{ monitors }}"}

    - name: sample in check mode
      dbfleet.innodb.ahi_advisor:
        <<: *login
        sample_seconds: 1
      check_mode: true
      ignore_errors: true

    - name: monitors after check mode
      ansible.builtin.debug: {msg: "{{ monitors }}"}
"""

BAD_INPUT = [
    (dict(sample_seconds=0), 'sample_seconds'),
    (dict(sample_seconds=3601), 'sample_seconds'),
    (dict(min_hit_ratio=1.5), 'min_hit_ratio'),
    (dict(max_write_share=-0.1), 'max_write_share'),
    (dict(sample_seconds='ten'), 'sample_seconds'),
]
CASES_BOOK += ''.join('''
    - name: bad input %d
      dbfleet.innodb.ahi_advisor: {<<: *login, %s}
      ignore_errors: true

    - name: monitors after bad input %d
      ansible.builtin.debug: {msg: "{{ monitors }}"}
''' % (i, json.dumps(args)[1:-1], i) for i, (args, _needle) in enumerate(BAD_INPUT))


def monitors_of(rows):
    """monitor_state() of the rows of INFORMATION_SCHEMA.INNODB_METRICS that a run read (lookup lab_sql)."""
    return dict((r['NAME'], str(r['STATUS'] if 'STATUS' in r else r['ENABLED']).lower() in ('enabled', '1'))
                for r in rows)


@pytest.fixture(scope='module')
def sampled(tmp_path_factory):
    """The 4-second sample on every host at once, a load on each, with each host's counters before and after."""
    before = dict((host, monitor_state(hv)) for host, hv in HOSTS.items())
    loads = dict((host, Load(hv)) for host, hv in HOSTS.items())
    for load in loads.values():
        load.__enter__()
    try:
        time.sleep(1)
        run = task_run(INVENTORY, SAMPLE_BOOK, tmp_path_factory.mktemp('ahi_sample'))
    finally:
        for load in loads.values():
            load.__exit__(None, None, None)
    after = dict((host, monitor_state(hv)) for host, hv in HOSTS.items())
    return run, before, after, dict((host, load.count) for host, load in loads.items())


@pytest.fixture(scope='module')
def cases(tmp_path_factory, sampled):
    """The cases without a load in one run (after the sample's), with each host's counters before it."""
    del sampled     # the sample runs first, on the counters as the lab has them
    first = sorted(HOSTS)[0]
    before = dict((host, monitor_state(hv)) for host, hv in HOSTS.items())
    off = sorted(n for n, on in before[first].items() if not on)
    cases_by_host = dict((host, dict(rows_added_off=not state['adaptive_hash_rows_added'])) for host, state in before.items())
    cases_by_host[first].update(
        enable=["SET GLOBAL innodb_monitor_enable = '%s'" % name for name in off] or ['DO 0'],
        disable=["SET GLOBAL innodb_monitor_disable = '%s'" % name for name in off] or ['DO 0'])
    extra = dict(first=first, cases=cases_by_host)
    run = task_run(INVENTORY, CASES_BOOK, tmp_path_factory.mktemp('ahi_cases'), extra)
    return run, first, before


@pytest.mark.parametrize('host', sorted(HOSTS))
def test_advisor_samples_and_restores_monitors(host, sampled):
    hv = HOSTS[host]
    run, before_all, after_all, counts = sampled
    before = before_all[host]
    result = run('sample', host)
    assert not result.get('failed'), run.output[-4000:]
    # Turning counters on (and off again) is a change, and the task says so.
    assert result['changed'] is bool(result['monitors_enabled'])
    assert result['changed'] is (not all(before[n] for n in MAINT))
    # Counters it turned on are exactly the ones that were off, and they are off again.
    assert sorted(result['monitors_enabled']) == sorted(n for n in before if n in result['monitors_enabled'])
    for name in MAINT:
        if not before[name]:
            assert name in result['monitors_enabled']
    assert after_all[host] == before
    ahi_on = str(socket_sql(hv, 'SELECT @@GLOBAL.innodb_adaptive_hash_index')[0][0]) in ('1', 'ON')
    assert result['ahi_enabled'] is ahi_on
    assert result['partition_variable'] == 'innodb_adaptive_hash_index_parts'
    assert result['partitions'] == int(socket_sql(hv, 'SELECT @@GLOBAL.innodb_adaptive_hash_index_parts')[0][0])
    advice = result['advice']
    assert advice['recommendation'] in ('keep_on', 'turn_off', 'try_on', 'insufficient_data')
    assert advice['reasons'] and all(isinstance(r, str) and r for r in advice['reasons'])
    # ~30 index lookups per statement ran during the sample.
    assert counts[host] > 50
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
def test_advisor_leaves_counters_that_were_on(host, cases):
    run, _first, before_all = cases
    before = before_all[host]
    result = run('sample with adaptive_hash_rows_added on', host)
    assert not result.get('failed'), run.output[-4000:]
    assert 'adaptive_hash_rows_added' not in result['monitors_enabled']
    assert monitors_of(run('monitors after the sample with adaptive_hash_rows_added on', host)['msg'])[
        'adaptive_hash_rows_added'] is True
    assert monitors_of(run('monitors after adaptive_hash_rows_added', host)['msg']) == before
    assert monitor_state(HOSTS[host]) == before


def test_unchanged_when_every_counter_was_on_already(cases):
    run, host, _before_all = cases
    before = monitors_of(run('monitors before every counter on', host)['msg'])
    result = run('sample with every counter on', host)
    assert not result.get('failed'), run.output[-4000:]
    assert result['monitors_enabled'] == [] and result['changed'] is False
    assert all(monitors_of(run('monitors with every counter on', host)['msg']).values())
    assert monitors_of(run('monitors before check mode', host)['msg']) == before


def test_check_mode_turns_nothing_on(cases):
    run, host, _before_all = cases
    before = monitors_of(run('monitors before check mode', host)['msg'])
    result = run('sample in check mode', host)
    assert not result.get('failed'), run.output[-4000:]
    assert result['monitors_enabled'] == []
    # Check mode says what a real run would change.
    assert result['changed'] is (not all(before[n] for n in MAINT))
    if not all(before[n] for n in MAINT):
        assert result['advice']['maintenance_per_hit'] is None
        # The warning goes to the display (the only task of the run in check mode).
        assert 'left off (check mode)' in ' '.join(run.output.split())
    assert monitors_of(run('monitors after check mode', host)['msg']) == before


@pytest.mark.parametrize('args,needle', BAD_INPUT)
def test_bad_input_is_refused_before_sampling(args, needle, cases):
    run, host, _before_all = cases
    case = BAD_INPUT.index((args, needle))
    previous = 'monitors after bad input %d' % (case - 1) if case else 'monitors after check mode'
    before = monitors_of(run(previous, host)['msg'])
    result = run('bad input %d' % case, host)
    assert result.get('failed') is True
    assert needle in result['msg']
    assert 'Traceback (most recent call last)' not in run.output
    assert run.time('bad input %d' % case, host) - run.time(previous, host) < 30
    assert monitors_of(run('monitors after bad input %d' % case, host)['msg']) == before


def test_password_never_in_output(sampled, cases):
    host = sorted(HOSTS)[0]
    assert 'advice' in sampled[0]('sample', host) and 'advice' in cases[0]('sample in check mode', host)
    for hv in HOSTS.values():
        assert hv['dbfleet_login_password'] not in sampled[0].output + cases[0].output


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


SIGNALS = ('SIGTERM', 'SIGHUP')
# A 120-second sample per signal on one host, one after the other; the test signals each sample's module process.
SIGNAL_BOOK = r"""
- name: Samples the test interrupts
  hosts: "{{ host }}"
  gather_facts: false
  vars:
    metrics: "SELECT * FROM INFORMATION_SCHEMA.INNODB_METRICS WHERE NAME LIKE 'adaptive_hash%'"
  tasks:
""" + ''.join('''
    - name: sample interrupted by %s
      dbfleet.innodb.ahi_advisor:
        login_unix_socket: "{{ dbfleet_login_unix_socket }}"
        login_user: "{{ dbfleet_login_user }}"
        login_password: "{{ dbfleet_login_password }}"
        sample_seconds: 120
      ignore_errors: true

    - name: monitors after %s
      ansible.builtin.debug:
        msg: "{{ query('lab_sql', metrics) }}"
''' % (signame, signame) for signame in SIGNALS)


@pytest.fixture(scope='module')
def interrupted(tmp_path_factory):
    """(host, counters before, the ones off, TaskRun) of SIGNAL_BOOK: each sample's module process gets its signal
    once the sample turned the counters on, well inside its 120 s."""
    host = 'mysql80' if 'mysql80' in HOSTS else sorted(HOSTS)[0]
    hv = HOSTS[host]
    before = monitor_state(hv)
    off = sorted(n for n, on in before.items() if not on)
    assert off, 'every adaptive_hash counter is on already on %s: %s' % (host, before)
    proc, finish = start_task_run(INVENTORY, SIGNAL_BOOK, tmp_path_factory.mktemp('ahi_signals'), dict(host=host))
    signalled = []
    try:
        for signame in SIGNALS:
            deadline = time.time() + 90
            # the next sample's module process (not one signalled already) has turned the counters on
            while not (any(monitor_state(hv)[n] for n in off)
                       and set(_module_processes(proc.pid)) - set(signalled)):
                if proc.poll() is not None or time.time() > deadline:
                    raise AssertionError('the advisor never turned %s on (%s): %s' % (
                        off, signame, proc.communicate(timeout=60)[0][-3000:] if proc.poll() is not None else ''))
                time.sleep(0.3)
            time.sleep(0.5)   # well inside the 120 s sample
            targets = sorted(set(_module_processes(proc.pid)) - set(signalled))
            assert targets, 'no module process under ansible-playbook (pid %d)' % proc.pid
            for pid in targets:
                os.kill(pid, getattr(signal, signame))
            signalled += targets
        run = finish(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return host, before, off, run


@pytest.mark.parametrize('signame', SIGNALS)
def test_signal_mid_sample_turns_the_monitors_off_again(signame, interrupted):
    host, before, off, run = interrupted
    hv = HOSTS[host]
    assert monitors_of(run('monitors after %s' % signame, host)['msg']) == before, run.output
    assert monitor_state(hv) == before, run.output
    result = run('sample interrupted by %s' % signame, host)
    assert result['failed'] is True, run.output
    assert 'interrupted by %s during the sample' % signame in result['msg'], result
    assert result['monitors_enabled'] and set(result['monitors_enabled']) <= set(off), result
    assert result['interrupted'] is True
    assert hv['dbfleet_login_password'] not in run.output
