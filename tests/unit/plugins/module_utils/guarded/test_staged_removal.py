# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The staged file removal of drop_tables (module_utils/guarded/staged_removal.py): which files a table owns from the
catalog's rows, the staging directory and free-space checks, the shrink schedule, and the files themselves (real
files in a temporary directory standing in for a datadir: links, shrinking, an interrupted run's manifest)."""

from __future__ import annotations

import json
import os
import types

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import staged_removal as s
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.drop_tables import DROP_OPTIONS
from ansible_collections.dbfleet.innodb.plugins.module_utils.option_specs import option_ranges

MIB = s.MIB


# ------------------------------------------------------------------ names and the catalog
def test_filename_encoding_is_the_servers():
    assert s.filename_encode('orders_2019') == 'orders_2019'
    assert s.filename_encode('t$1') == 't@00241'     # what the lab's MySQL 8.0 and MariaDB 10.11 write


def test_catalog_query_per_flavor():
    mysql = capability_facts.capability('tablespace_files_catalog', 'mysql', (8, 0, 33))
    sql, args = s.catalog_query(mysql, 'shop', 'order_x')
    assert 'information_schema.INNODB_DATAFILES d' in sql and 'd.PATH AS path' in sql and 's.SPACE_TYPE' in sql
    assert args == ('shop/order_x', 'shop/order_x', 'shop/order\\_x#%')
    maria = capability_facts.capability('tablespace_files_catalog', 'mariadb', (10, 11, 6))
    sql, _args = s.catalog_query(maria, 'shop', 't$1')
    assert 's.FILENAME AS path' in sql and 'DATAFILES' not in sql and 'NULL AS space_type' in sql
    assert _args[0] == 'shop/t@00241'
    assert capability_facts.capability('tablespace_files_catalog', 'mariadb', (10, 5, 9))['datafiles'].endswith('SYS_DATAFILES')
    assert capability_facts.capability('tablespace_files_catalog', 'mysql', (5, 6, 40)) is None


def _row(name, space, path, space_type=None, space_name=None, size=65536):
    return dict(table_name=name, space=space, path=path, space_type=space_type, space_name=space_name or name,
                file_size=size)


def test_owned_files_mysql8_partitions_and_a_lookalike():
    rows = [_row('shop/orders#p#p0', 3, './shop/orders#p#p0.ibd', 'Single'),
            _row('shop/orders#p#p1', 4, './shop/orders#p#p1.ibd', 'Single'),
            _row('shop/orders_old', 5, './shop/orders_old.ibd', 'Single')]   # LIKE with _ escaped, still filtered
    files, alone = s.owned_files(rows, 'shop', 'orders')
    assert [f['partition'] for f in files] == ['p0', 'p1'] and alone is None
    assert files[0]['path'] == './shop/orders#p#p0.ibd'


def test_owned_files_mariadb_partitions_and_encoded_name():
    rows = [_row('shop/t@00241#P#p0', 6, './shop/t@00241#P#p0.ibd'),
            _row('shop/t@00241#P#p1', 7, './shop/t@00241#P#p1.ibd')]
    files, alone = s.owned_files(rows, 'shop', 't$1')
    assert [f['catalog_name'] for f in files] == ['shop/t@00241#P#p0', 'shop/t@00241#P#p1'] and alone is None


def test_system_and_general_tablespaces_left_alone():
    files, alone = s.owned_files([_row('shop/g', 0, './ibdata1', None, 'innodb_system')], 'shop', 'g')
    assert files == [] and 'the system tablespace' in alone and 'left as it is' in alone
    files, alone = s.owned_files([_row('shop/g', 9, 'gts.ibd', 'General', 'gts')], 'shop', 'g')
    assert files == [] and 'general tablespace gts' in alone


def test_server_path_under_a_chroot():
    assert s.server_path('/', '/var/lib/mysql/', './shop/t.ibd') == '/var/lib/mysql/shop/t.ibd'
    assert s.server_path('/srv/root', '/var/lib/mysql', '/data/x.ibd') == '/srv/root/data/x.ibd'
    assert s.default_staging_dir('/var/lib/mysql/') == '/var/lib/dbfleet-staged-drop'


# ------------------------------------------------------------------ checks
def _st(dev=1, uid=27, mode=0o40700):
    return types.SimpleNamespace(st_dev=dev, st_uid=uid, st_mode=mode)


def test_staging_dir_checks():
    data = _st()
    assert s.staging_dir_problems('/s', _st(), '/d', data) == []
    problems = s.staging_dir_problems('/s', _st(dev=2, uid=0, mode=0o40755), '/d', data)
    assert len(problems) == 3
    assert 'another filesystem' in problems[0] and 'uid 0, not to the server\'s user (uid 27' in problems[1]
    assert 'open to others (mode 0o755)' in problems[2]
    assert 'not a directory' in s.staging_dir_problems('/s', _st(mode=0o120777), '/d', data)[0]


def test_free_space_margin():
    assert s.free_space_problem(10 * MIB, 5 * MIB, 100 * MIB) is None
    text = s.free_space_problem(1 * MIB, 5 * MIB, 100 * MIB)
    assert 'has 1.0 MiB free, less than free_space_margin_mb (5.0 MiB)' in text and '100.0 MiB' in text


def test_shrink_schedule_and_its_bound():
    assert s.shrink_targets(10 * MIB, 4 * MIB) == [6 * MIB, 2 * MIB, 0]
    assert s.shrink_targets(0, MIB) == []
    sch = s.shrink_schedule([10 * MIB, 3 * MIB], 4 * MIB, 0.5, 60)
    assert sch['steps'] == 4 and sch['seconds'] == 1.5 and sch['fits']
    sch = s.shrink_schedule([100 * 1024 * MIB], 256 * MIB, 1.0, 60)
    assert not sch['fits'] and sch['steps'] == 400 and 'raise shrink_step_mb to about' in sch['text']


def test_options_reach_the_drop_with_ranges():
    ranges = option_ranges(DROP_OPTIONS)
    assert ranges['shrink_step_mb'] == (1, 1048576) and ranges['shrink_max_seconds'] == (1, 604800)
    assert ranges['shrink_step_seconds'] == (0.001, 60) and DROP_OPTIONS['shrink_step_seconds']['default'] == 0.05
    assert DROP_OPTIONS['file_removal']['default'] == 'immediate'


def test_leftover_action():
    entry = dict(dev=1, ino=2)
    reg = 0o100600
    assert s.leftover_action(entry, None, False) == 'gone'
    assert s.leftover_action(entry, types.SimpleNamespace(st_mode=reg, st_dev=1, st_ino=2, st_nlink=1), True) == 'busy'
    assert s.leftover_action(entry, types.SimpleNamespace(st_mode=reg, st_dev=1, st_ino=3, st_nlink=1), False) == 'foreign'
    assert s.leftover_action(entry, types.SimpleNamespace(st_mode=reg, st_dev=1, st_ino=2, st_nlink=2), False) == 'release'
    assert s.leftover_action(entry, types.SimpleNamespace(st_mode=reg, st_dev=1, st_ino=2, st_nlink=1), False) == 'shrink'


# ------------------------------------------------------------------ real files
def _write(path, size):
    with open(path, 'wb') as handle:
        handle.write(b'x' * size)
    st = os.stat(path)
    return (st.st_dev, st.st_ino)


class Clock(object):
    def __init__(self):
        self.t = 0.0
        self.sizes = []

    def sleep(self, seconds):
        self.t += seconds

    def __call__(self):
        return self.t


def pacer(clock, step, pause, deadline, step_bound=None):
    return s.StepPacer(step, pause, step_bound, deadline, clock.sleep, clock)


def test_shrink_file_in_steps_only_through_the_last_name(tmp_path):
    clock = Clock()
    f = tmp_path / 'a'
    ident = _write(str(f), 5 * 1024)
    pf = pacer(clock, 2048, 1.0, 100)
    assert s.shrink_file(str(f), ident, pf) == 'removed'
    assert not f.exists() and clock.t == 2.0       # 5 KiB in steps of 2 KiB: 3 truncates, 2 pauses
    assert pf.report()['steps'] == 3 and pf.report()['over_bound'] == 0
    g = tmp_path / 'g'
    ident = _write(str(g), 4096)
    os.link(str(g), str(tmp_path / 'table.ibd'))   # the table's own name is still there
    assert s.shrink_file(str(g), ident, pacer(clock, 1024, 1.0, 100)) == 'released'
    assert not g.exists() and os.path.getsize(str(tmp_path / 'table.ibd')) == 4096   # its data untouched
    h = tmp_path / 'h'
    ident = _write(str(h), 8192)
    clock.t = 0
    assert s.shrink_file(str(h), ident, pacer(clock, 1024, 1.0, 3.0)) == 'removed'
    assert clock.t == 3.0                            # the bound reached: the rest at once
    i = tmp_path / 'i'
    _write(str(i), 10)
    assert s.shrink_file(str(i), (0, 0), pacer(clock, 1024, 0, 3.0)) == 'foreign' and i.exists()


def test_next_step_bytes_keeps_each_truncate_within_the_step_bound():
    top = 256 * MIB
    assert s.next_step_bytes(top, 0.2, top, 0.05) == 128 * MIB          # too slow: halved
    assert s.next_step_bytes(2 * MIB, 0.2, top, 0.05) == MIB
    assert s.next_step_bytes(MIB, 0.2, top, 0.05) == MIB                # never below 1 MiB
    assert s.next_step_bytes(64 * MIB, 0.005, top, 0.05) == 128 * MIB   # well under: doubled back
    assert s.next_step_bytes(top, 0.001, top, 0.05) == top              # never above shrink_step_mb
    assert s.next_step_bytes(64 * MIB, 0.03, top, 0.05) == 64 * MIB     # within: kept
    assert s.next_step_bytes(4096, 0.2, 4096, 0.05) == 4096             # a step below 1 MiB stays what was asked


class ScriptedClock(Clock):
    """A clock whose every truncate (two readings) takes the next of the scripted durations."""

    def __init__(self, durations, reads_per_step=2):
        super().__init__()
        self.durations = list(durations)
        self.reads = 0
        self.per = reads_per_step

    def __call__(self):
        self.reads += 1
        if self.reads % self.per == 0 and self.durations:
            self.t += self.durations.pop(0)
        return self.t


def test_step_pacer_starts_small_and_grows_to_shrink_step_mb():
    clock = ScriptedClock([0.001] * 10)
    pf = s.StepPacer(256 * MIB, 0, 0.05, float('inf'), clock.sleep, clock)
    assert pf.step == 16 * MIB
    steps = []
    for _n in range(6):
        steps.append(pf.step)
        pf.step = s.next_step_bytes(pf.step, 0.001, pf.max_step, pf.step_bound)
    assert steps == [16 * MIB, 32 * MIB, 64 * MIB, 128 * MIB, 256 * MIB, 256 * MIB]


def test_smaller_steps_pause_in_proportion_keeping_the_schedules_pace(tmp_path):
    pf = s.StepPacer(256 * MIB, 0.5, 0.05, float('inf'), Clock().sleep, Clock())
    assert pf.pause_after(256 * MIB) == 0.5 and pf.pause_after(16 * MIB) == 0.5 / 16 and pf.pause_after(0) == 0
    assert pf.pause_after(512 * MIB) == 0.5
    # a 10 MiB file shrunk by at most 4 MiB with 1 s a full step: the pauses add up to what the steps freed before
    # the last one (6 MiB of 4 MiB a second: 1.5 s), whatever sizes the bound made the steps
    clock = ScriptedClock([0.3, 0.001, 0.001], reads_per_step=3)   # shrink_file reads the deadline, then times
    f = tmp_path / 'paced'
    ident = _write(str(f), 10 * MIB)
    assert s.shrink_file(str(f), ident, s.StepPacer(4 * MIB, 1.0, 0.1, float('inf'), clock.sleep, clock)) == 'removed'
    # steps: 4 MiB (0.3 s, over the bound: the next is 2 MiB), 2 MiB (pause 0.5 s), the last 4 MiB (no pause)
    assert abs(clock.t - 0.302 - 1.5) < 1e-9, clock.t


def test_step_pacer_adapts_the_step_to_what_each_truncate_took(tmp_path):
    f = tmp_path / 'big'
    ident = _write(str(f), 10 * MIB)
    clock = ScriptedClock([0.3, 0.3, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001])
    pf = s.StepPacer(4 * MIB, 0, 0.1, float('inf'), clock.sleep, clock)
    fd = os.open(str(f), os.O_WRONLY)
    try:
        sizes = []
        size = 10 * MIB
        while size:
            size = max(size - pf.step, 0)
            pf.truncate(fd, size)
            sizes.append(size)
    finally:
        os.close(fd)
    # 4 MiB took 0.3 s (> 0.1): the next is 2 MiB; it took 0.3 s too: 1 MiB; then fast: doubled back to 2, 4 MiB
    assert sizes == [6 * MIB, 4 * MIB, 3 * MIB, 1 * MIB, 0] and ident
    rep = pf.report()
    assert rep['steps'] == 5 and rep['over_bound'] == 2 and rep['smallest_step_bytes'] == MIB
    assert rep['max_step_seconds'] == 0.3 and rep['step_bound_seconds'] == 0.1


@pytest.fixture
def datadir(tmp_path):
    d = tmp_path / 'data'
    (d / 'shop').mkdir(parents=True)
    _write(str(d / 'shop' / 'big#p#p0.ibd'), 3 * 1024)
    _write(str(d / 'shop' / 'big#p#p1.ibd'), 2 * 1024)
    _write(str(d / 'shop' / 'small.ibd'), 1024)
    return d


ROWS = {
    'shop/big': [_row('shop/big#p#p0', 3, './shop/big#p#p0.ibd', 'Single'),
                 _row('shop/big#p#p1', 4, './shop/big#p#p1.ibd', 'Single')],
    'shop/small': [_row('shop/small', 5, './shop/small.ibd', 'Single')],
}
CATALOG = capability_facts.capability('tablespace_files_catalog', 'mysql', (8, 0, 33))
TABLES = [dict(name='shop.big', schema='shop', table='big', engine='InnoDB'),
          dict(name='shop.small', schema='shop', table='small', engine='InnoDB')]


def _staged(datadir, clock, **params):
    p = dict(shrink_step_mb=1, shrink_pause=0.5, shrink_max_seconds=60, free_space_margin_mb=0)
    p.update(params)
    st = s.StagedRemoval(p, str(datadir), sleep=clock.sleep, clock=clock, run_id='r1')
    st.step_bytes = 1024      # small files: KiB steps
    return st


def _query(sql, args):
    return ROWS[args[0]]


def test_a_staged_drop_links_releases_and_shrinks(datadir, tmp_path):
    clock = Clock()
    st = _staged(datadir, clock)
    assert st.plan_tables(_query, CATALOG, TABLES) == []
    assert st.check_staging() == [] and not os.path.exists(st.staging)   # nothing made before the drop
    assert st.staging == str(tmp_path / 'dbfleet-staged-drop')
    assert st.space['held_bytes'] >= 6 * 1024 and st.schedule['steps'] == 6
    st.link_table('shop.big')
    assert oct(os.stat(st.staging).st_mode & 0o777) == '0o700'
    assert os.stat(str(datadir / 'shop' / 'big#p#p0.ibd')).st_nlink == 2
    manifest = json.load(open(st.manifest_path))
    assert [e['state'] for e in manifest['links']] == ['linked', 'linked'] and manifest['run_id'] == 'r1'
    os.unlink(str(datadir / 'shop' / 'big#p#p0.ibd'))   # "DROP TABLE shop.big"
    os.unlink(str(datadir / 'shop' / 'big#p#p1.ibd'))
    st.dropped_table('shop.big')
    st.link_table('shop.small')
    st.release_table('shop.small')                    # its DROP failed: the link goes at once
    assert os.path.getsize(str(datadir / 'shop' / 'small.ibd')) == 1024
    assert os.stat(str(datadir / 'shop' / 'small.ibd')).st_nlink == 1
    st.shrink_all()
    assert len(st.removed) == 2 and len(st.released) == 1
    assert os.listdir(st.staging) == []               # no link, no manifest left
    assert clock.t == 1.5                             # 3 KiB: 2 pauses, 2 KiB: 1 pause


def test_refusals_before_anything(datadir, tmp_path):
    clock = Clock()
    st = _staged(datadir, clock, free_space_margin_mb=10 ** 9)
    assert st.plan_tables(_query, CATALOG, TABLES) == []
    problems = st.check_staging()
    assert len(problems) == 1 and 'less than free_space_margin_mb' in problems[0]
    st = _staged(datadir, clock, shrink_max_seconds=1, shrink_pause=10)
    st.plan_tables(_query, CATALOG, TABLES)
    assert 'longer than shrink_max_seconds' in st.check_staging()[0]
    os.link(str(datadir / 'shop' / 'small.ibd'), str(tmp_path / 'someone'))
    st = _staged(datadir, clock)
    problems = st.plan_tables(_query, CATALOG, TABLES)
    assert 'already has 2 names' in problems[0]
    assert 'no InnoDB catalog' in _staged(datadir, clock).plan_tables(_query, None, TABLES)[0]
    st = _staged(datadir, clock, server_root=str(tmp_path / 'elsewhere'))
    assert 'is not here' in st.plan_tables(_query, CATALOG, TABLES)[0]


def test_the_next_run_finishes_an_interrupted_runs_links(datadir, tmp_path):
    clock = Clock()
    old = _staged(datadir, clock)
    old.plan_tables(_query, CATALOG, TABLES)
    old.check_staging()
    old.link_table('shop.big')
    old.link_table('shop.small')
    os.unlink(str(datadir / 'shop' / 'big#p#p0.ibd'))   # big dropped, small not: then the run died
    os.unlink(str(datadir / 'shop' / 'big#p#p1.ibd'))
    with open(old.manifest_path) as handle:
        manifest = json.load(handle)
    manifest['pid'] = 999999999                          # a process that is gone
    with open(old.manifest_path, 'w') as handle:
        json.dump(manifest, handle)
    with open(os.path.join(old.staging, 'unrelated.ibd'), 'w') as handle:
        handle.write('x')                                # not in a manifest: never touched
    check = s.StagedRemoval(dict(shrink_step_mb=1, shrink_pause=0), str(datadir), check_mode=True)
    left = check.finish_leftovers()
    assert len(left['actions']) == 3 and check.changed
    assert sum('shrink and remove' in a for a in left['actions']) == 2
    assert any('remove the second name of' in a and 'shop.small' in a for a in left['actions'])
    assert len(os.listdir(old.staging)) == 5             # check mode changed nothing
    nxt = s.StagedRemoval(dict(shrink_step_mb=1, shrink_pause=0), str(datadir), sleep=clock.sleep, clock=clock)
    nxt.finish_leftovers()
    assert len(nxt.removed) == 2 and len(nxt.released) == 1
    assert os.listdir(old.staging) == ['unrelated.ibd']
    assert os.path.getsize(str(datadir / 'shop' / 'small.ibd')) == 1024


def test_a_shrinking_runs_at_the_lowest_cpu_priority():
    """The pacer of a shrinking lowers the process to nice 19 (the kernel's freeing of extents is the caller's CPU
    time); seen in a child process, this one's priority left as it is."""
    before = os.getpriority(os.PRIO_PROCESS, 0)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        try:
            s.yield_to_the_server()
            os.write(write, str(os.getpriority(os.PRIO_PROCESS, 0)).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as handle:
        assert int(handle.read()) == s.LOWEST_PRIORITY
    assert os.getpriority(os.PRIO_PROCESS, 0) == before
