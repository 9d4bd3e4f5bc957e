# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dbfleet.innodb.drop_tables and playbooks/drop_tables.yml against the lab's real servers.

Every test creates its own dbfleet_test_drop_* schema and puts AHI back to what it was (the playbook tests: their
shared runs, one per step over the four servers, playbook_runs).
A "real failure mid-drop" is a lock the drop has to wait for and that the pre-check does not
look at (it only looks at metadata locks on the tables themselves): LOCK INSTANCE FOR BACKUP on
MySQL 8 and BACKUP STAGE BLOCK_DDL on MariaDB (both block DDL only, not other users'
DML), and a reading transaction on MySQL 5.7 (whose mdl instrument is off by default).
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pymysql
import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from dbfleet_testing.drops import Blocker, Server
from dbfleet_testing.runs import (YAML_RESULTS, host_output, module_process, module_process_result, module_process_start,
                                  playbook_proc)
from dbfleet_testing.servers import LAB_HOSTS
from dbfleet_testing.windows import window_around_now

HOSTS = LAB_HOSTS
# The refusals of the module's pure_checks (names, window, time zone, confirmation, option pairs, the cancel file's
# directory) come before it reads any server: the same on every server, so one server's run is the proof (each of
# these tests also asserts that the module failed before its first step on the server). On the others they would
# prove the same fact again.
PURE = pytest.mark.parametrize('server', [HOSTS[0]], indirect=True)


# ------------------------------------------------------------------ helpers
def module(server, check=False, timeout=180, **args):
    """Run dbfleet.innodb.drop_tables as Ansible runs it on a host (a real module process, runs.module_process; the
    playbook tests below run it through ansible-playbook); returns (rc, result)."""
    return module_process('dbfleet.innodb.drop_tables', dict(server.login(), **args), check=check, timeout=timeout)


@pytest.fixture(scope='module', params=HOSTS)
def server(request, lab):
    lab.require_up(request.param)
    srv = Server(lab, request.param)
    original = srv.ahi()
    yield srv
    srv.set_ahi(original)
    assert srv.ahi() == original


@pytest.fixture
def schema(server):
    name = 'dbfleet_test_drop_%d' % (os.getpid() % 100000)
    server.sql('DROP DATABASE IF EXISTS %s' % name)
    server.sql('CREATE DATABASE %s' % name)
    yield name
    server.sql('DROP DATABASE IF EXISTS %s' % name)
    server.sql('DROP DATABASE IF EXISTS dbfleet_test_drop_holding')


def make_table(server, schema, table, rows=200):
    server.sql('CREATE TABLE %s.%s (id INT PRIMARY KEY, k INT, v VARCHAR(64), KEY (k)) ENGINE=InnoDB' % (schema, table))
    server.sql('INSERT INTO %s.%s VALUES %s' % (schema, table, ', '.join(
        "(%d, %d, LEFT(SHA2(%d, 256), 32))" % (i, i % 17, i) for i in range(1, rows + 1))))   # MySQL 9.7: no MD5()


def assert_refused_before_the_server(result):
    """The module failed in its pure checks: no step on the server (no connection, nothing read)."""
    assert result['failed'] is True and 'steps' not in result and 'server' not in result, result


def assert_ahi_reported(result, before):
    assert result['ahi']['before'] == before
    assert result['ahi']['after'] == before


# ------------------------------------------------------------------ tests
def test_check_mode_drops_nothing_and_says_what_would_happen(server, schema):
    make_table(server, schema, 't1')
    server.set_ahi('ON')
    rc, res = module(server, check=True, tables=['%s.t1' % schema], confirm=True, ahi_strategy='toggle')
    assert rc == 0, res
    assert res['changed'] is True
    assert server.exists(schema, 't1')
    assert res['tables'][0]['result'] == 'would_drop'
    assert res['tables'][0]['size_bytes'] > 0
    assert 'SET GLOBAL innodb_adaptive_hash_index = OFF (it is ON)' in res['plan']
    assert any(p.startswith('DROP TABLE %s.t1' % schema) for p in res['plan'])
    assert res['ahi']['toggled'] is False
    assert server.ahi() == 'ON'


def test_check_mode_without_confirm_says_a_real_run_refuses(server, schema):
    make_table(server, schema, 't1')
    rc, res = module(server, check=True, tables=['%s.t1' % schema])
    assert rc == 0, res
    assert res['changed'] is False
    assert '(a real run refuses: confirm is not set)' in res['plan']


def test_drop_with_toggle_puts_ahi_back(server, schema):
    make_table(server, schema, 't1', rows=2000)
    make_table(server, schema, 't2')
    server.set_ahi('ON')
    rc, res = module(server, tables=['%s.t1' % schema, '%s.t2' % schema], confirm=True, ahi_strategy='toggle')
    assert rc == 0, res
    assert res['changed'] is True
    assert res['dropped'] == ['%s.t1' % schema, '%s.t2' % schema]
    assert not server.exists(schema, 't1') and not server.exists(schema, 't2')
    assert_ahi_reported(res, 'ON')
    assert res['ahi']['toggled'] is True
    assert res['ahi']['off_seconds'] > 0
    names = [s['step'] for s in res['steps']]
    assert names.index('switch AHI OFF') < names.index('drop attempt 1') < names.index('restore AHI ON')
    assert all(s['seconds'] >= 0 for s in res['steps'])
    assert server.ahi() == 'ON'


def test_auto_uses_the_flavor_data(server, schema):
    make_table(server, schema, 't1')
    server.set_ahi('ON')
    ident = server.identity()
    want = capability_facts.capability('drop_table_ahi_strategy', ident.flavor, ident.version)
    rc, res = module(server, tables=['%s.t1' % schema], confirm=True)
    assert rc == 0, res
    assert res['ahi']['strategy'] == want
    assert res['ahi']['toggled'] is (want == 'toggle')
    assert_ahi_reported(res, 'ON')
    assert server.ahi() == 'ON'


def test_keep_and_ahi_off_touch_nothing(server, schema):
    make_table(server, schema, 't1')
    make_table(server, schema, 't2')
    server.set_ahi('OFF')
    rc, res = module(server, tables=['%s.t1' % schema], confirm=True, ahi_strategy='toggle')
    assert rc == 0 and res['ahi']['toggled'] is False and server.ahi() == 'OFF'
    server.set_ahi('ON')
    rc, res = module(server, tables=['%s.t2' % schema], confirm=True, ahi_strategy='keep')
    assert rc == 0 and res['ahi']['toggled'] is False and server.ahi() == 'ON'
    assert not any(s['step'] == 'switch AHI OFF' for s in res['steps'])


def test_failure_mid_drop_still_restores_ahi(server, schema):
    make_table(server, schema, 't1')
    for attempt in range(3):  # the lab may be shared: someone else may flip AHI in between
        server.set_ahi('ON')
        blocker = Blocker(server, schema, 't1')
        try:
            started = time.monotonic()
            rc, res = module(server, tables=['%s.t1' % schema], confirm=True, ahi_strategy='toggle',
                             lock_wait_timeout=1, retries=2, retry_delay=0.2)
            took = time.monotonic() - started
        finally:
            blocker.release()
        if res.get('ahi', {}).get('before') == 'ON':
            break
    assert rc != 0, res
    assert 'gave up after 3 attempts of lock_wait_timeout=1s each' in res['msg'], res['msg']
    assert 'AHI is ON (was ON before)' in res['msg']
    attempts = [s for s in res['steps'] if s['step'].startswith('drop attempt')]
    assert len(attempts) == 3 and not any(s['ok'] for s in attempts)
    assert all(0.8 <= s['seconds'] < 5 for s in attempts), attempts  # the short lock wait, not forever
    assert res['ahi']['toggled'] is True
    assert_ahi_reported(res, 'ON')
    assert res['tables'][0]['result'] == 'failed'
    assert server.ahi() == 'ON'
    assert server.exists(schema, 't1')
    assert took < 60


def _start_drop(server, schema, **extra):
    """drop_tables of schema.t1 (AHI toggled, a long lock wait, no retry) run as Ansible runs it on a host, started
    (runs.module_process_start: the module's own process, its pid the Popen's), so that a test can signal it."""
    args = dict(server.login(), tables=['%s.t1' % schema], confirm=True, ahi_strategy='toggle',
                lock_wait_timeout=30, retries=0, **extra)
    return module_process_start('dbfleet.innodb.drop_tables', args)


def _waitingmodule_pid(server, proc):
    """The pid of _start_drop()'s module once it has switched AHI off and waits for the blocked DROP."""
    pid = proc.pid
    deadline = time.monotonic() + 30
    while server.ahi() != 'OFF' and time.monotonic() < deadline:  # it switched AHI off and waits
        time.sleep(0.05)
    assert server.ahi() == 'OFF'
    time.sleep(0.5)
    return pid


@pytest.mark.parametrize('signame', ['SIGTERM', 'SIGINT'])
def test_interrupted_module_restores_ahi_and_kills_the_waiting_drop(server, schema, signame):
    make_table(server, schema, 't1')
    server.set_ahi('ON')
    blocker = Blocker(server, schema, 't1')
    proc = _start_drop(server, schema)
    try:
        pid = _waitingmodule_pid(server, proc)
        try:
            os.kill(pid, getattr(signal, signame))
        except ProcessLookupError:
            out, err = proc.communicate(timeout=60)
            pytest.fail('the module ended before %s reached it (the %s should have held its DROP): table still '
                        'there: %s; its output: %s %s' % (signame, blocker.kind, server.exists(schema, 't1'),
                                                          out[-2000:], err[-2000:]))
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        blocker.release()
    res = module_process_result('dbfleet.innodb.drop_tables', out, err)
    assert 'interrupted by %s' % signame in res['msg'], res
    assert_ahi_reported(res, 'ON')
    assert server.ahi() == 'ON'
    time.sleep(1.5)  # the DROP that waited was killed: releasing the lock must not let it run
    assert server.exists(schema, 't1')


@PURE
def test_lift_super_read_only_needs_the_binlog_off(server, schema):
    make_table(server, schema, 't1')
    rc, res = module(server, tables=['%s.t1' % schema], confirm=True, lift_super_read_only=True)
    assert rc != 0 and 'lift_super_read_only needs disable_binlog=true' in res['msg'] and 'errant GTID' in res['msg']
    assert server.exists(schema, 't1')
    assert_refused_before_the_server(res)


@PURE
def test_cancel_file_in_a_shared_directory_refused(server, schema):
    make_table(server, schema, 't1')
    server.set_ahi('ON')
    rc, res = module(server, tables=['%s.t1' % schema], follow=True, ahi_strategy='toggle',
                     cancel_file='/tmp/dbfleet-drop-tables.cancel')
    assert rc != 0 and 'writable by others' in res['msg'] and 'private directory' in res['msg'], res
    assert server.ahi() == 'ON'
    assert_refused_before_the_server(res)


@pytest.fixture(params=['mysql80', 'mariadb1011'])
def killed_server(request, lab):
    """One server of each flavor (the marker logic is the same everywhere; MySQL and MariaDB differ in what
    happens to the killed client's waiting DROP)."""
    lab.require_up(request.param)
    srv = Server(lab, request.param)
    original = srv.ahi()
    name = 'dbfleet_test_drop_kill_%d' % (os.getpid() % 100000)
    srv.sql('DROP DATABASE IF EXISTS %s' % name)
    srv.sql('CREATE DATABASE %s' % name)
    yield srv, name
    srv.sql('DROP DATABASE IF EXISTS %s' % name)
    srv.set_ahi(original)


def test_module_killed_outright_is_undone_by_the_next_run(killed_server, tmp_path):
    """SIGKILL cannot be caught: AHI stays OFF and the DROP session may live on. The next run finds the
    marker, kills the old session, puts AHI back and then drops."""
    server, schema = killed_server
    make_table(server, schema, 't1')
    server.set_ahi('ON')
    state = str(tmp_path / 'state')
    blocker = Blocker(server, schema, 't1')
    proc = _start_drop(server, schema, state_dir=state)
    try:
        pid = _waitingmodule_pid(server, proc)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            out, err = proc.communicate(timeout=60)
            pytest.fail('the module ended before SIGKILL reached it (the %s should have held its DROP): table still '
                        'there: %s; AHI %s; its output: %s %s' % (blocker.kind, server.exists(schema, 't1'), server.ahi(),
                                                                  out[-2000:], err[-2000:]))
        proc.communicate(timeout=60)
        assert server.ahi() == 'OFF'  # nothing could put it back
        rc, res = module(server, check=True, tables=['%s.t1' % schema], confirm=True, ahi_strategy='toggle',
                         state_dir=state)
        assert rc == 0 and res['interrupted_run']['outcome'] == 'would_undo', res
        assert server.ahi() == 'OFF'
        with open(os.path.join(state, os.listdir(state)[0]), encoding='utf-8') as handle:
            old = json.load(handle)['connection_id']
        # MySQL keeps the killed module's DROP waiting in the server (MariaDB notices the client is gone):
        # the next run kills it and puts AHI back, then meets the same lock and gives up (AHI back again).
        rc, res = module(server, tables=['%s.t1' % schema], confirm=True, ahi_strategy='toggle', state_dir=state,
                         lock_wait_timeout=1, retries=0)
        assert rc != 0 and 'Lock wait timeout' in res['msg'], res.get('msg')
        assert res['interrupted_run']['outcome'] == 'undone' and res['interrupted_run']['process_alive'] is False
        assert not server.sql('SELECT ID FROM information_schema.PROCESSLIST WHERE ID = %s', (old,))
        if server.identity().flavor == 'mysql':
            assert 'KILL %s (the interrupted run\'s session)' % old in res['interrupted_run']['actions']
        assert any('innodb_adaptive_hash_index = ON' in a for a in res['interrupted_run']['actions'])
        assert server.ahi() == 'ON'
        blocker.release()
        time.sleep(1.5)
        assert server.exists(schema, 't1')  # the old DROP did not run when the lock went away
        rc, res = module(server, tables=['%s.t1' % schema], confirm=True, ahi_strategy='toggle', state_dir=state)
    finally:
        if proc.poll() is None:
            proc.kill()
        blocker.release()
    assert rc == 0, res.get('msg')
    assert res['interrupted_run'] is None
    assert_ahi_reported(res, 'ON')
    assert server.ahi() == 'ON' and not server.exists(schema, 't1')
    # the same drop again: recorded as done, nothing left to do, nothing changed
    rc, res = module(server, tables=['%s.t1' % schema], confirm=True, ahi_strategy='toggle', state_dir=state)
    assert rc == 0 and res['changed'] is False and res['tables'][0]['result'] == 'already_dropped', res


@pytest.mark.parametrize('tables, words', [
    (["dbfleet_test_drop_x.t1`; DROP DATABASE mysql; --"], 'not a plain identifier'),
    (["dbfleet_test_drop_x.t1' OR '1'='1"], 'not a plain identifier'),
    (['dbfleet_test_drop_x.%'], 'not a plain identifier'),
    (['dbfleet_test_drop_x.*'], 'not a plain identifier'),
    (['mysql.user'], 'system schema'),
    (['performance_schema.threads'], 'system schema'),
    (['innodb_memcache.containers'], 'system schema'),
    (['dbfleet_test_drop_x'], 'exactly "db.table"'),
])
@PURE
def test_bad_names_refused_before_anything(server, schema, tables, words):
    make_table(server, schema, 'sentinel')
    server.set_ahi('ON')
    rc, res = module(server, tables=['%s.sentinel' % schema] + tables, confirm=True, ahi_strategy='toggle')
    assert rc != 0
    assert words in res['msg']
    assert server.exists(schema, 'sentinel')
    assert server.ahi() == 'ON'
    assert_refused_before_the_server(res)


def test_missing_table_refuses_all(server, schema):
    make_table(server, schema, 'sentinel')
    server.set_ahi('ON')
    rc, res = module(server, tables=['%s.sentinel' % schema, '%s.nope' % schema], confirm=True, ahi_strategy='toggle')
    assert rc != 0
    assert '%s.nope does not exist' % schema in res['msg']
    assert server.exists(schema, 'sentinel')
    assert server.ahi() == 'ON'
    assert not any(s['step'] == 'switch AHI OFF' for s in res['steps'])


def test_views_and_referenced_tables_refused(server, schema):
    make_table(server, schema, 'parent')
    server.sql('CREATE TABLE %s.child (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES %s.parent (id)) '
               'ENGINE=InnoDB' % (schema, schema))
    server.sql('CREATE VIEW %s.v AS SELECT id FROM %s.parent' % (schema, schema))
    rc, res = module(server, tables=['%s.parent' % schema], confirm=True)
    assert rc != 0 and 'referenced by foreign key' in res['msg'] and server.exists(schema, 'parent')
    rc, res = module(server, tables=['%s.v' % schema], confirm=True)
    assert rc != 0 and 'not a base table' in res['msg'] and server.exists(schema, 'v')
    rc, res = module(server, tables=['%s.child' % schema, '%s.parent' % schema], confirm=True)
    assert rc == 0, res  # both go: the reference goes with them
    assert not server.exists(schema, 'parent')


@pytest.mark.parametrize('window, words', [('25:00-03:00', 'start 25:00'), ('02:00', 'HH:MM-HH:MM'),
                                           ('02:00-02:00', 'empty'), ('abc', 'HH:MM-HH:MM')])
@PURE
def test_malformed_window_refused(server, schema, window, words):
    make_table(server, schema, 'sentinel')
    rc, res = module(server, tables=['%s.sentinel' % schema], confirm=True, window=window)
    assert rc != 0 and words in res['msg']
    assert server.exists(schema, 'sentinel')
    assert_refused_before_the_server(res)


@PURE
def test_unknown_timezone_refused(server, schema):
    make_table(server, schema, 'sentinel')
    rc, res = module(server, tables=['%s.sentinel' % schema], confirm=True, window='02:00-03:00',
                     timezone='Mars/Olympus')
    assert rc != 0 and 'time zone' in res['msg'] and server.exists(schema, 'sentinel')
    assert_refused_before_the_server(res)


@PURE
def test_missing_confirmation_refused(server, schema):
    make_table(server, schema, 'sentinel')
    server.set_ahi('ON')
    rc, res = module(server, tables=['%s.sentinel' % schema], ahi_strategy='toggle')
    assert rc != 0 and 'confirm is not set' in res['msg']
    assert server.exists(schema, 'sentinel') and server.ahi() == 'ON'
    assert_refused_before_the_server(res)


def test_outside_window_says_when_it_opens_and_force_overrides(server, schema):
    make_table(server, schema, 't1')
    window = window_around_now(inside=False)
    rc, res = module(server, tables=['%s.t1' % schema], confirm=True, window=window, timezone='UTC')
    assert rc != 0
    assert 'outside the window %s (UTC)' % window in res['msg'] and 'the next window opens at' in res['msg']
    assert server.exists(schema, 't1')
    rc, res = module(server, tables=['%s.t1' % schema], confirm=True, window=window, timezone='UTC', force_window=True)
    assert rc == 0, res
    assert not server.exists(schema, 't1')


def test_inside_window_drops(server, schema):
    make_table(server, schema, 't1')
    rc, res = module(server, tables=['%s.t1' % schema], confirm=True, window=window_around_now(), timezone='UTC')
    assert rc == 0, res
    assert res['window']['inside'] is True
    assert not server.exists(schema, 't1')


def test_rename_first_moves_to_holding_schema(server, schema):
    make_table(server, schema, 't1')
    rc, res = module(server, tables=['%s.t1' % schema], confirm=True, rename_first=True,
                     holding_schema='dbfleet_test_drop_holding')
    assert rc == 0, res
    target = res['renamed']['%s.t1' % schema]
    hdb, htbl = target.split('.')
    assert hdb == 'dbfleet_test_drop_holding' and htbl.startswith('%s__t1__' % schema)
    assert not server.exists(schema, 't1') and server.exists(hdb, htbl)
    assert server.value('SELECT COUNT(*) FROM %s.%s' % (hdb, htbl)) == 200
    assert res['ahi']['toggled'] is False
    # the later purge is an ordinary drop from the holding schema
    rc, res = module(server, tables=[target], confirm=True)
    assert rc == 0 and not server.exists(hdb, htbl)


def _binlog_position(server):
    if server.value('SELECT @@GLOBAL.log_bin') in (0, '0', 'OFF'):
        return None
    ident = server.identity()
    row = server.sql(capability_facts.capability('binlog_status_statement', ident.flavor, ident.version))[0]
    return row['File'], int(row['Position'])


def _binlog_drops(server, pos, table):
    events = server.sql('SHOW BINLOG EVENTS IN %%s FROM %d' % pos[1], (pos[0],))
    return [e['Info'] for e in events if 'DROP TABLE' in (e['Info'] or '').upper() and table in (e['Info'] or '')]


def test_rolling_mode_writes_no_binlog_event(server, schema):
    make_table(server, schema, 'rolled')
    make_table(server, schema, 'logged')
    pos = _binlog_position(server)
    rc, res = module(server, tables=['%s.rolled' % schema], confirm=True, disable_binlog=True)
    assert rc == 0, res
    assert res['binlog_disabled'] is True
    assert not server.exists(schema, 'rolled')
    if pos is None:  # this server writes no binary log: the session setting above is all there is to see
        return
    assert _binlog_drops(server, pos, 'rolled') == []
    # the same check sees the event when binary logging stays on
    rc, res = module(server, tables=['%s.logged' % schema], confirm=True)
    assert rc == 0 and res['binlog_disabled'] is False
    assert len(_binlog_drops(server, pos, 'logged')) == 1


def test_follow_waits_for_the_drop_and_restores_ahi(server, schema, tmp_path):
    make_table(server, schema, 't1')
    server.set_ahi('ON')
    private = tmp_path / 'private'
    private.mkdir(mode=0o700)
    cancel = str(private / 'cancel')
    box = {}

    def follower():
        box['res'] = module(server, tables=['%s.t1' % schema], follow=True, ahi_strategy='toggle', follow_timeout=60,
                            cancel_file=cancel)
    t = threading.Thread(target=follower)
    t.start()
    deadline = time.monotonic() + 60
    while server.ahi() != 'OFF' and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.ahi() == 'OFF'  # the follower switched it off and waits
    server.sql('DROP TABLE %s.t1' % schema)  # what replication would apply
    t.join(90)
    rc, res = box['res']
    assert rc == 0, res
    assert res['follow']['outcome'] == 'applied'
    assert res['tables'][0]['result'] == 'dropped_by_replication'
    assert_ahi_reported(res, 'ON')
    assert server.ahi() == 'ON'
    # a cancel file ends the wait (the primary failed): AHI back, nothing dropped
    make_table(server, schema, 't2')
    with open(cancel, 'w'):
        pass
    try:
        rc, res = module(server, tables=['%s.t2' % schema], follow=True, ahi_strategy='toggle', follow_timeout=60,
                         cancel_file=cancel)
    finally:
        os.unlink(cancel)
    assert rc == 0 and res['follow']['outcome'] == 'cancelled'
    assert server.exists(schema, 't2') and server.ahi() == 'ON'


# ------------------------------------------------------------------ the playbook
PLAYBOOK_SCHEMA = 'dbfleet_test_drop_pb_%d' % (os.getpid() % 100000)


def playbook(inventory, check=False, **extra):
    """drop_tables.yml on the four lab servers at once (drop_tables_hosts) with extra; the CompletedProcess, its output
    as the default callback prints it with YAML results."""
    return playbook_proc(inventory, 'drop_tables.yml', dict(extra, drop_tables_hosts=':'.join(HOSTS)), check=check,
                         env_extra=YAML_RESULTS)


@pytest.fixture(scope='module')
def playbook_runs(lab):
    """drop_tables.yml over the four lab servers (standalone primaries: each drops, one host at a time), one run per
    step, each read by the tests of every server: outside the window (confirmed), inside it without the
    confirmation, check mode, the drop with AHI toggled (t1), then the rolling mode's drop (r1). What each step left
    on each server (its table there or not, AHI) is read right after the step, and the binary log's DROP events of r1
    after the rolling run; AHI and the schema are put back before the tests read them. ({step: CompletedProcess},
    {host: {step: what it left}})."""
    servers = {}
    for host in HOSTS:
        lab.require_up(host)
        servers[host] = Server(lab, host)
    schema = PLAYBOOK_SCHEMA
    runs, left, original = {}, dict((host, {}) for host in HOSTS), {}

    def read(step, table):
        for host, srv in servers.items():
            left[host][step] = dict(exists=srv.exists(schema, table), ahi=srv.ahi())

    try:
        for host, srv in servers.items():
            original[host] = srv.ahi()
            srv.sql('DROP DATABASE IF EXISTS %s' % schema)
            srv.sql('CREATE DATABASE %s' % schema)
            make_table(srv, schema, 't1')
            make_table(srv, schema, 'r1')
            srv.set_ahi('ON')
        tables = ['%s.t1' % schema]
        runs['outside'] = playbook(lab.inventory, drop_tables_tables=tables, drop_tables_window=window_around_now(False),
                                   drop_tables_confirm=True)
        read('outside', 't1')
        runs['unconfirmed'] = playbook(lab.inventory, drop_tables_tables=tables,
                                       drop_tables_window=window_around_now(True))
        read('unconfirmed', 't1')
        runs['check'] = playbook(lab.inventory, check=True, drop_tables_tables=tables,
                                 drop_tables_window=window_around_now(True))
        read('check', 't1')
        runs['drop'] = playbook(lab.inventory, drop_tables_tables=tables, drop_tables_window=window_around_now(True),
                                drop_tables_confirm=True, drop_tables_ahi_strategy='toggle')
        read('drop', 't1')
        positions = dict((host, _binlog_position(srv)) for host, srv in servers.items())
        runs['rolling'] = playbook(lab.inventory, drop_tables_tables=['%s.r1' % schema],
                                   drop_tables_window=window_around_now(True), drop_tables_confirm=True,
                                   drop_tables_mode='rolling')
        read('rolling', 'r1')
        for host, srv in servers.items():
            left[host]['rolling']['binlog_drops'] = (None if positions[host] is None
                                                     else _binlog_drops(srv, positions[host], 'r1'))
    finally:
        for host, srv in servers.items():
            srv.sql('DROP DATABASE IF EXISTS %s' % schema)
            if host in original:
                srv.set_ahi(original[host])
    return runs, left


@pytest.mark.parametrize('host', HOSTS)
def test_playbook_outside_window_check_mode_and_drop(playbook_runs, host):
    """Outside the window the run is refused and nothing is dropped; inside it without drop_tables_confirm it is
    refused; check mode shows this host's DROP and drops nothing; the confirmed run drops with AHI toggled and put
    back ON (one run over all four servers per step: playbook_runs)."""
    runs, left = playbook_runs
    schema = PLAYBOOK_SCHEMA
    proc = runs['outside']
    assert proc.returncode != 0
    assert 'the next window opens at' in proc.stdout
    assert left[host]['outside']['exists']
    proc = runs['unconfirmed']
    assert proc.returncode != 0 and 'drop_tables_confirm is not set to true' in proc.stdout
    assert left[host]['unconfirmed']['exists']
    proc = runs['check']
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert 'DROP TABLE %s.t1' % schema in host_output(proc.stdout, 'Show what will happen on each host', host)
    assert left[host]['check']['exists']
    proc = runs['drop']
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert not left[host]['drop']['exists']
    report = host_output(proc.stdout, 'Report per host', host)
    assert "ahi_before: 'ON'" in report and "ahi_after: 'ON'" in report, report
    assert left[host]['drop']['ahi'] == 'ON'


@pytest.mark.parametrize('host', HOSTS)
def test_playbook_rolling_mode_no_binlog_event(playbook_runs, host):
    """drop_tables_mode=rolling on a standalone server: dropped with binary logging off for the drop session, no
    DROP event of the table in its binary log (where it writes one; the rolling run of playbook_runs)."""
    runs, left = playbook_runs
    proc = runs['rolling']
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert not left[host]['rolling']['exists']
    said = ' '.join(host_output(proc.stdout, task, host) for task in ('Show what will happen on each host',
                                                                      'Report per host'))
    assert 'binlog_disabled: true' in said or 'SET SESSION sql_log_bin = 0' in said, proc.stdout[-3000:]
    if left[host]['rolling']['binlog_drops'] is not None:
        assert left[host]['rolling']['binlog_drops'] == []


def test_stale_marker_of_a_restarted_server_is_checked_not_replayed(killed_server, tmp_path):
    """issue 23: a marker left by a run killed before the server restarted names a connection id that belongs to
    another session now, and an AHI value someone has chosen since. The next run kills nothing, leaves AHI and
    reports what it found (on main it KILLed the id and switched AHI back on)."""
    from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import marker as guarded_marker  # pylint: disable=import-outside-toplevel
    server, schema = killed_server
    make_table(server, schema, 't1')
    app = server.lab.connect(server.name, via='socket')  # the application session that got the id after a restart
    try:
        with app.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute('SELECT ID, USER, HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()')
            me = cur.fetchone()
        variables = dict((k, str(server.value('SELECT @@GLOBAL.%s' % k) or '')) for k in (
            'hostname', 'port', 'datadir', 'server_id'))
        if server.identity().flavor == 'mysql':
            variables['server_uuid'] = server.value('SELECT @@GLOBAL.server_uuid')
        started = int(server.value('SELECT UNIX_TIMESTAMP()')) - int(server.sql(
            "SHOW GLOBAL STATUS LIKE 'Uptime'")[0]['Value'])
        state = tmp_path / 'state'
        marker = guarded_marker.Marker(str(state), guarded_marker.marker_key(variables))
        marker.write(dict(
            version=guarded_marker.MARKER_VERSION, state='running', mode='drop', module='drop_tables', run_id='old',
            pid=2 ** 22 + 4321, pid_start=1, started='20240101020304', tables=['%s.t0' % schema], done=[],
            server=dict(uuid=variables.get('server_uuid') or None, started=started - 86400),  # a day before: restarted
            session=dict(id=me['ID'], user=me['USER'], host=me['HOST'], started=started - 86400 + 60),
            connection_id=me['ID'], ahi_before='ON', ahi_toggled=True, ahi_set='OFF', ahi_set_info=None,
            super_read_only_lifted=False))
        server.set_ahi('OFF')  # switched off on purpose since
        rc, res = module(server, tables=['%s.t1' % schema], confirm=True, ahi_strategy='keep', state_dir=str(state))
        assert rc == 0, res.get('msg')
        found = res['interrupted_run']
        assert found['outcome'] == 'left' and found['actions'] == [], found
        assert any('session %s not killed' % me['ID'] in f for f in found['findings']), found
        assert any('AHI left OFF' in f for f in found['findings']), found
        assert server.ahi() == 'OFF'
        app.ping(reconnect=False)  # the application's session is alive
        assert not server.exists(schema, 't1') and marker.read()['state'] == 'done'
    finally:
        app.close()
