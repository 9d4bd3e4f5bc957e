# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""drop_tables with file_removal=staged against the lab's real servers (MySQL 8.0 and MariaDB 10.11): the files a
table owns read from the server's catalog (a partitioned table, a name the server encodes on disk, a table in a
shared tablespace left alone), linked before the DROP, shrunk and removed after, nothing left behind; a refused
and a failed drop link nothing / release at once; an interrupted run's links finished by the next run; the playbook
in check mode and for real. Small tables, one run read by several assertions."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest

from dbfleet_testing.runs import YAML_RESULTS, host_output, module_process, module_process_start, playbook_proc
from dbfleet_testing.windows import window_around_now

from dbfleet_testing.drops import Blocker, Server

STAGED_HOSTS = ('mysql80', 'mariadb1011')


@pytest.fixture(scope='module', params=STAGED_HOSTS)
def staged(request, lab):
    """(server, schema, staging directory): a schema of its own and a staging directory beside the server's datadir
    (its filesystem, the server's user); both removed after, and the directory must then be empty."""
    lab.require_up(request.param)
    srv = Server(lab, request.param)
    name = 'dbfleet_test_staged_%d' % (os.getpid() % 100000)
    datadir = srv.value('SELECT @@datadir')
    staging = os.path.join(os.path.dirname(os.path.normpath(datadir)), 'dbfleet-staged-test-%d' % os.getpid())
    srv.sql('DROP DATABASE IF EXISTS %s' % name)
    srv.sql('CREATE DATABASE %s' % name)
    yield srv, name, staging
    srv.sql('DROP DATABASE IF EXISTS %s' % name)
    left = removed_staging(staging)
    assert left == [], 'files left behind in %s: %s' % (staging, left)


def removed_staging(staging):
    """Remove a test's staging directory (when there is one); the files that were left in it."""
    left = os.listdir(staging) if os.path.isdir(staging) else []
    if os.path.isdir(staging):
        for f in left:
            os.unlink(os.path.join(staging, f))
        os.rmdir(staging)
    return left


def module(server, check=False, **args):
    """dbfleet.innodb.drop_tables as Ansible runs it on a host (a real module process, runs.module_process; the
    playbook test below runs it through ansible-playbook): (rc, result)."""
    return module_process('dbfleet.innodb.drop_tables', dict(server.login(), **args), check=check, timeout=180)


def make_tables(server, schema):
    """p: 3 partitions of ~2 MiB each; t$1 (its file is t@00241.ibd); s: in the system tablespace (MariaDB) or a
    general tablespace (MySQL): no file of its own."""
    server.sql('CREATE TABLE %s.p (id INT PRIMARY KEY, b LONGBLOB) ENGINE=InnoDB PARTITION BY HASH(id) PARTITIONS 3'
               % schema)
    server.sql("INSERT INTO %s.p VALUES %s" % (schema, ', '.join(
        "(%d, REPEAT('x', 1000000))" % i for i in range(1, 7))))
    server.sql('CREATE TABLE %s.`t$1` (id INT PRIMARY KEY) ENGINE=InnoDB' % schema)
    if server.identity().flavor == 'mysql':
        server.sql("CREATE TABLESPACE %s_gts ADD DATAFILE '%s_gts.ibd' ENGINE=InnoDB" % (schema, schema))
        server.sql('CREATE TABLE %s.s (id INT PRIMARY KEY) TABLESPACE %s_gts' % (schema, schema))
        return 'general tablespace %s_gts' % schema
    server.sql('SET GLOBAL innodb_file_per_table = OFF')
    try:
        server.sql('CREATE TABLE %s.s (id INT PRIMARY KEY) ENGINE=InnoDB' % schema)
    finally:
        server.sql('SET GLOBAL innodb_file_per_table = ON')
    return 'the system tablespace'


def drop_general_tablespace(server, schema):
    if server.identity().flavor == 'mysql':
        server.sql('DROP TABLESPACE %s_gts' % schema)


def staged_args(schema, staging, **extra):
    args = dict(tables=['%s.p' % schema, '%s.t$1' % schema, '%s.s' % schema], confirm=True, ahi_strategy='keep',
                file_removal='staged', staging_dir=staging, shrink_step_mb=1, shrink_pause=0.05,
                shrink_max_seconds=60, free_space_margin_mb=1)
    args.update(extra)
    return args


def test_staged_drop_links_shrinks_and_leaves_nothing(staged):
    server, schema, staging = staged
    shared = make_tables(server, schema)
    datadir = server.value('SELECT @@datadir')
    # refused (free-space margin beyond the disk): nothing linked, nothing dropped, no staging directory made
    rc, res = module(server, **staged_args(schema, staging, free_space_margin_mb=1 << 30))
    assert rc != 0 and 'less than free_space_margin_mb' in res['msg'], res.get('msg')
    assert not os.path.exists(staging) and server.exists(schema, 'p')
    # check mode: which files, what the links hold, how long the shrinking takes
    rc, res = module(server, check=True, **staged_args(schema, staging))
    assert rc == 0, res.get('msg')
    fr = res['file_removal']
    names = sorted(os.path.basename(f['source']) for f in fr['files'])
    part = '#p#' if server.identity().flavor == 'mysql' else '#P#'
    assert names == ['p%sp0.ibd' % part, 'p%sp1.ibd' % part, 'p%sp2.ibd' % part, 't@00241.ibd'], names
    assert all(f['source'].startswith(os.path.join(datadir, schema)) for f in fr['files'])
    assert len(fr['left_alone']) == 1 and shared in fr['left_alone'][0] and '%s.s' % schema in fr['left_alone'][0]
    assert fr['space']['held_bytes'] >= 6 * 1000000 and fr['schedule']['fits'] and fr['schedule']['steps'] >= 6
    assert any(line.startswith('link %s' % os.path.join(datadir, schema, 'p')) for line in res['plan'])
    assert any('after the DROP: shrink' in line for line in res['plan'])
    assert not os.path.exists(staging) and server.exists(schema, 'p')
    # the drop
    started = time.monotonic()
    rc, res = module(server, **staged_args(schema, staging))
    took = time.monotonic() - started
    assert rc == 0, res.get('msg')
    fr = res['file_removal']
    assert not any(server.exists(schema, t) for t in ('p', 't$1', 's'))
    assert len(fr['removed']) == 4 and fr['released'] == [] and {f['state'] for f in fr['files']} == {'removed'}
    assert fr['shrink_seconds'] < 60 and took < 60
    # every step timed: 1 MiB steps (shrink_step_mb=1 is also the smallest), one per started MiB of each file
    steps = fr['shrink_steps']
    assert steps['steps'] == sum(-(-f['bytes'] // (1 << 20)) for f in fr['files']), (steps, fr['files'])
    assert steps['step_bound_seconds'] == 0.05 and steps['smallest_step_bytes'] == 1 << 20
    assert 0 < steps['max_step_seconds'] <= steps['truncate_seconds'] < fr['shrink_seconds'], steps
    assert os.listdir(staging) == []                        # no link and no manifest left
    assert stat_mode(staging) == 0o700 and os.stat(staging).st_uid == os.stat(datadir).st_uid
    assert 'shrink and remove the staged files' in [s['step'] for s in res['steps']]
    drop_general_tablespace(server, schema)


def stat_mode(path):
    return os.stat(path).st_mode & 0o777


def test_failed_drop_releases_and_an_interrupted_run_is_finished_by_the_next(staged, tmp_path):
    server, schema, staging = staged
    server.sql('CREATE TABLE %s.f (id INT PRIMARY KEY, b LONGBLOB) ENGINE=InnoDB' % schema)
    server.sql("INSERT INTO %s.f VALUES (1, REPEAT('y', 3000000)), (2, REPEAT('y', 3000000))" % schema)
    server.sql('CREATE TABLE %s.t1 (id INT PRIMARY KEY) ENGINE=InnoDB' % schema)
    # a DROP that fails (DDL blocked): its links go at once, the table keeps its file
    blocker = Blocker(server, schema, 'f')
    try:
        rc, res = module(server, **staged_args(schema, staging, tables=['%s.f' % schema], lock_wait_timeout=1,
                                               retries=0))
    finally:
        blocker.release()
    assert rc != 0 and server.exists(schema, 'f'), res.get('msg')
    fr = res['file_removal']
    assert len(fr['released']) == 1 and fr['removed'] == [] and os.listdir(staging) == []
    # a run killed while it shrinks: the link and its manifest stay
    args = staged_args(schema, staging, tables=['%s.f' % schema], shrink_pause=30, shrink_max_seconds=600,
                       state_dir=str(tmp_path / 'st'))
    proc = module_process_start('dbfleet.innodb.drop_tables', dict(server.login(), **args))
    try:
        pid = proc.pid  # the module's own process
        deadline = time.monotonic() + 60
        while server.exists(schema, 'f') and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1)
        assert proc.poll() is None, 'the module ended before it was killed: %s' % (proc.communicate()[0][-2000:],)
        os.kill(pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not server.exists(schema, 'f')
    left = sorted(os.listdir(staging), key=lambda name: not name.endswith('.json'))   # the manifest, the link
    assert len(left) == 2 and left[0].startswith('dbfleet-staged-') and left[0].endswith('.json'), left
    with open(os.path.join(staging, left[0]), encoding='utf-8') as handle:
        manifest = json.load(handle)
    assert manifest['links'][0]['link'] == os.path.join(staging, left[1]) and manifest['links'][0]['table'] == '%s.f' % schema
    assert os.path.getsize(os.path.join(staging, left[1])) == manifest['links'][0]['bytes'] - 1024 * 1024  # one step
    # the next run: check mode says what it would finish, then the staged drop of t1 finishes it first
    rc, res = module(server, check=True, **staged_args(schema, staging, tables=['%s.t1' % schema]))
    assert rc == 0 and res['changed'], res.get('msg')
    actions = res['file_removal']['leftovers']['actions']
    assert len(actions) == 1 and actions[0].startswith('shrink and remove %s' % os.path.join(staging, left[1]))
    assert sorted(os.listdir(staging)) == sorted(left)
    rc, res = module(server, **staged_args(schema, staging, tables=['%s.t1' % schema]))
    assert rc == 0, res.get('msg')
    fr = res['file_removal']
    assert os.path.join(staging, left[1]) in fr['removed'] and len(fr['removed']) == 2
    assert os.listdir(staging) == [] and not server.exists(schema, 't1')


@pytest.fixture(scope='module')
def staged_playbook_runs(lab):
    """drop_tables.yml with file_removal=staged over both servers at once (one host at a time within the run):
    check mode, the drop, then drop_tables_finish_staged.yml; each server's table pb (2 partitions of ~2 MB) in a
    schema of its own, and one staging directory for the run (the playbook takes one drop_tables_staging_dir) on the
    servers' filesystem, the servers' user's, beside their lab directories. What each run left (the table there or
    not, the staging directory's files) is read right after it. ({step: CompletedProcess}, {host: {step: what it
    left}}, the staging directory)."""
    servers = {}
    for host in STAGED_HOSTS:
        lab.require_up(host)
        servers[host] = Server(lab, host)
    # <lab>/<host>/data: the directory of the lab's servers holds the staging directory.
    parents = set(os.path.dirname(os.path.dirname(os.path.normpath(srv.value('SELECT @@datadir'))))
                  for srv in servers.values())
    assert len(parents) == 1, 'the servers %s do not share one lab directory: %s' % (STAGED_HOSTS, parents)
    staging = os.path.join(parents.pop(), 'dbfleet-staged-pb-test-%d' % os.getpid())
    schema = 'dbfleet_test_staged_pb_%d' % (os.getpid() % 100000)
    runs, left = {}, dict((host, {}) for host in STAGED_HOSTS)

    def read(step):
        for host, srv in servers.items():
            left[host][step] = dict(exists=srv.exists(schema, 'pb'),
                                    staged=sorted(os.listdir(staging)) if os.path.isdir(staging) else None)

    extra = dict(drop_tables_hosts=':'.join(STAGED_HOSTS), drop_tables_tables=['%s.pb' % schema],
                 drop_tables_window=window_around_now(True), drop_tables_confirm=True, drop_tables_file_removal='staged',
                 drop_tables_staging_dir=staging, drop_tables_shrink_step_mb=1, drop_tables_shrink_pause=0.05,
                 drop_tables_free_space_margin_mb=1)
    try:
        for srv in servers.values():
            srv.sql('DROP DATABASE IF EXISTS %s' % schema)
            srv.sql('CREATE DATABASE %s' % schema)
            srv.sql('CREATE TABLE %s.pb (id INT PRIMARY KEY, b LONGBLOB) ENGINE=InnoDB PARTITION BY HASH(id) '
                    'PARTITIONS 2' % schema)
            srv.sql("INSERT INTO %s.pb VALUES (1, REPEAT('z', 2000000)), (2, REPEAT('z', 2000000))" % schema)
        runs['check'] = playbook_proc(lab.inventory, 'drop_tables.yml', extra, check=True, env_extra=YAML_RESULTS)
        read('check')
        runs['drop'] = playbook_proc(lab.inventory, 'drop_tables.yml', extra, env_extra=YAML_RESULTS)
        read('drop')
        runs['finish'] = playbook_proc(lab.inventory, 'drop_tables_finish_staged.yml',
                                       dict(drop_tables_hosts=':'.join(STAGED_HOSTS), drop_tables_staging_dir=staging),
                                       env_extra=YAML_RESULTS)
        read('finish')
    finally:
        for srv in servers.values():
            srv.sql('DROP DATABASE IF EXISTS %s' % schema)
        rest = removed_staging(staging)
    assert rest == [], 'files left behind in %s: %s' % (staging, rest)
    return runs, left, staging


@pytest.mark.parametrize('host', STAGED_HOSTS)
def test_playbook_staged_check_mode_and_drop(staged_playbook_runs, host):
    """The playbook, over both servers in one run per step: check mode names the links and the shrinking and
    changes nothing; the drop links, drops, shrinks and removes (nothing left); a finishing run then finds
    nothing of earlier runs."""
    runs, left, staging = staged_playbook_runs
    proc = runs['check']
    assert proc.returncode == 0, proc.stdout[-3000:]
    shown = host_output(proc.stdout, 'Show what will happen on each host', host)
    assert 'file removal: staged, the links hold' in shown and 'truncate step(s) of 1.0 MiB' in shown, shown
    assert left[host]['check']['exists'] and left[host]['check']['staged'] in (None, [])
    proc = runs['drop']
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert not left[host]['drop']['exists'] and left[host]['drop']['staged'] == []
    report = host_output(proc.stdout, 'Report per host', host)
    assert 'mode: staged' in report and report.count('%s/' % staging) >= 2, report
    proc = runs['finish']
    said = host_output(proc.stdout, 'Report', host)
    assert proc.returncode == 0 and 'staged files of earlier runs: 0 removed, 0 released' in said, proc.stdout[-3000:]
    assert left[host]['finish']['staged'] == []


def test_follower_links_its_own_copy_and_frees_it_once_the_drop_arrives(staged, tmp_path):
    """The replica side: the follower links the table's files before it waits, and shrinks them once the drop has
    arrived (here a DROP in another session, what replication would apply); a follower whose drop never arrives
    (cancelled) releases its links."""
    server, schema, staging = staged
    server.sql('CREATE TABLE %s.r (id INT PRIMARY KEY, b LONGBLOB) ENGINE=InnoDB' % schema)
    server.sql("INSERT INTO %s.r VALUES (1, REPEAT('r', 3000000))" % schema)
    private = tmp_path / 'private'
    private.mkdir(mode=0o700)
    cancel = str(private / 'cancel')
    box = {}

    def follower(table):
        box['res'] = module(server, **staged_args(schema, staging, tables=['%s.%s' % (schema, table)], follow=True,
                                                  follow_timeout=60, cancel_file=cancel))
    t = threading.Thread(target=follower, args=('r',))
    t.start()
    deadline = time.monotonic() + 60
    while not [f for f in (os.listdir(staging) if os.path.isdir(staging) else []) if f.endswith('.ibd')] \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    linked = [f for f in os.listdir(staging) if f.endswith('.ibd')]
    assert len(linked) == 1 and server.exists(schema, 'r')     # linked before the drop arrives
    server.sql('DROP TABLE %s.r' % schema)
    t.join(90)
    rc, res = box['res']
    assert rc == 0, res.get('msg')
    assert res['follow']['outcome'] == 'applied' and res['tables'][0]['result'] == 'dropped_by_replication'
    assert res['file_removal']['removed'] == [os.path.join(staging, linked[0])] and os.listdir(staging) == []
    server.sql('CREATE TABLE %s.r2 (id INT PRIMARY KEY) ENGINE=InnoDB' % schema)
    with open(cancel, 'w'):
        pass
    try:
        follower('r2')
    finally:
        os.unlink(cancel)
    rc, res = box['res']
    assert rc == 0 and res['follow']['outcome'] == 'cancelled', res.get('msg')
    assert len(res['file_removal']['released']) == 1 and res['file_removal']['removed'] == []
    assert server.exists(schema, 'r2') and os.listdir(staging) == []
