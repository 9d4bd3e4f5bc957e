# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The storage_facts module end to end on recorded sysfs trees and on this host."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.dbfleet.innodb.plugins.modules import storage_facts
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.host import sysfs_trees
from ansible_collections.dbfleet.innodb.tests.unit.plugins.modules.module_result import module_result


@pytest.fixture(scope='session')
def trees(tmp_path_factory):
    return sysfs_trees.Trees(tmp_path_factory.mktemp('sysfs'))


def run(capsys, **args):
    return module_result(capsys, storage_facts.main, args)


def recorded(trees, case):
    return dict(sysfs_root=trees.sys(case), proc_root=trees.proc(case))


def test_recorded_path(trees, capsys):
    out = run(capsys, path='/var/lib/mysql', **recorded(trees, 'md_raid1_ssd_degraded'))
    assert out['_rc'] == 0 and out['changed'] is False
    assert (out['storage_class'], out['confidence']) == ('ssd', 'high')
    assert out['path_source'] == 'path'
    assert out['resolved_path'] == '/var/lib/mysql'
    assert 'owner' not in out  # no file attributes mixed into the result


def test_recorded_device(trees, capsys):
    out = run(capsys, device='dm-1', **recorded(trees, 'dmcrypt_nvme'))
    assert out['storage_class'] == 'ssd' and out['device'] == 'dm-1'
    assert [d['name'] for d in out['devices']] == ['nvme0n1']


def test_missing_device_fails_naming_it(trees, capsys):
    out = run(capsys, device='sdq', **recorded(trees, 'sata_ssd'))
    assert out['failed'] and 'sdq' in out['msg']


def test_bad_device_name_fails(capsys):
    out = run(capsys, device='../../etc/passwd')
    assert out['failed'] and '../../etc/passwd' in out['msg']


def test_path_and_device_exclusive(capsys):
    out = run(capsys, device='vda', path='/')
    assert out['failed'] and 'mutually exclusive' in out['msg']


def test_probe_bounds_checked(capsys):
    out = run(capsys, path='/', probe=True, probe_max_reads=100000)
    assert out['failed'] and 'probe_max_reads' in out['msg']
    out = run(capsys, path='/', probe=True, probe_max_seconds=60)
    assert out['failed'] and 'probe_max_seconds' in out['msg']


def test_probe_with_device_refused(capsys):
    out = run(capsys, device='vda', probe=True)
    assert out['failed'] and 'probe needs a path' in out['msg']


def test_bad_sysfs_root(capsys):
    out = run(capsys, path='/', sysfs_root='/nonexistent/sys')
    assert out['failed'] and 'sysfs_root' in out['msg']


def test_missing_path_is_unknown_not_failure(capsys):
    out = run(capsys, path='/nonexistent/datadir')
    assert out['_rc'] == 0
    assert out['storage_class'] == 'unknown' and 'does not exist' in out['reasons'][0]


def test_tmpfs_is_unknown_and_probe_not_run(capsys):
    if not os.path.isdir('/dev/shm'):
        pytest.skip('no /dev/shm')
    out = run(capsys, path='/dev/shm', probe=True)
    assert out['storage_class'] == 'unknown'
    assert out['probe']['reads'] == 0 and 'no block device' in out['probe']['reason']


@pytest.mark.skipif(not os.path.exists('/sys/class/block'), reason='needs a Linux sysfs')
def test_live_root_with_probe(capsys):
    out = run(capsys, path=os.path.dirname(__file__), probe=True, probe_max_reads=50, probe_max_seconds=1.0)
    assert out['_rc'] == 0
    assert out['mount']['maj_min'] and not out['mount']['maj_min'].startswith('0:')
    assert out['devices'], out['reasons']
    assert 0 < out['probe']['reads'] <= 50
    assert out['storage_class'] in ('ssd', 'hdd', 'mixed', 'unknown')


def test_datadir_from_server_when_no_path(trees, capsys, monkeypatch):
    monkeypatch.setattr(storage_facts, '_server_datadir', lambda module: '/var/lib/mysql/')
    out = run(capsys, **recorded(trees, 'nvme_partitions'))
    assert out['path_source'] == 'server'
    assert out['storage_class'] == 'ssd'
    assert out['mount']['mount_point'] == '/var/lib/mysql'


def test_server_unreachable_fails_cleanly(capsys):
    out = run(capsys, login_host='127.0.0.1', login_port=1, login_user='nobody', login_password='secret-pw',
              connect_timeout=2, config_file='')
    assert out['failed'] and 'cannot connect' in out['msg']
    assert 'secret-pw' not in json.dumps(out)
