# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The staged file removal of drop_tables (module_utils/guarded/staged_removal.py): the staging directory and
free-space checks, the options, and the files themselves (real files in a temporary directory standing in for a
datadir: links, shrinking, an interrupted run's manifest)."""

from __future__ import annotations

import json
import os
import types

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import staged_removal as s
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.drop_rules import DROP_OPTIONS
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.shrink import MIB
from ansible_collections.dbfleet.innodb.plugins.module_utils.option_specs import option_ranges
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.guarded.staged_fakes import (
    Clock, catalog_row as _row, write_file as _write)


# ------------------------------------------------------------------ checks
def test_the_staging_directory_is_beside_the_datadir():
    assert s.default_staging_dir('/var/lib/mysql/') == '/var/lib/dbfleet-staged-drop'


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
