# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/host/storage.py on recorded sysfs trees (tests/unit/fixtures/sysfs/<case>.json, written out
as real trees by sysfs_trees.py)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import storage as s
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.host import sysfs_trees

DATADIR = '/var/lib/mysql'

# case, path, storage_class, confidence, physical devices, a phrase the reasons must contain
CASES = [
    ('sata_ssd', DATADIR, 'ssd', 'high', ['sda'], 'sda2 is a partition'),
    ('sata_hdd', DATADIR, 'hdd', 'high', ['sda'], 'ST4000NM0035'),
    ('nvme_partitions', DATADIR, 'ssd', 'high', ['nvme0n1'], 'nvme0n1p3 is a partition'),
    ('nvme_partitions', '/var/lib/mysql/tmp', 'unknown', 'low', [], 'tmpfs'),
    ('nvme_partitions', '/boot/efi/EFI', 'ssd', 'high', ['nvme0n1'], 'nvme0n1p1'),
    ('virtio_blk', DATADIR, 'unknown', 'low', ['vda'], 'virtio-blk always reports rotational=1'),
    ('lvm_hdd', DATADIR, 'hdd', 'high', ['sdb', 'sdc'], 'LVM logical volume'),
    ('lvm_hdd', '/etc', 'ssd', 'high', ['sda'], 'INTEL'),
    ('dmcrypt_nvme', DATADIR, 'ssd', 'high', ['nvme0n1'], 'dm-crypt mapping'),
    ('md_raid1_ssd', DATADIR, 'ssd', 'high', ['sda', 'sdb'], 'md raid1 over sda1, sdb1'),
    ('md_raid1_ssd_degraded', DATADIR, 'ssd', 'high', ['sda'], 'degraded (1 of 2 members missing'),
    ('loop_nvme', DATADIR, 'ssd', 'high', ['nvme0n1'], 'loop device over /srv/images/mysql.img'),
    ('loop_tmpfs', DATADIR, 'unknown', 'low', ['loop3'], 'tmpfs'),
    ('zram', DATADIR, 'ssd', 'high', ['zram0'], 'compressed RAM'),
    ('virtio_scsi_qemu', DATADIR, 'unknown', 'low', ['sda'], 'virtual disk'),
    ('hwraid_perc', DATADIR, 'hdd', 'low', ['sda'], 'hardware RAID'),
    ('lvm_mixed', DATADIR, 'mixed', 'high', ['sda', 'sdb'], 'mixed: SSD sda, HDD sdb'),
    ('ebs_nvme', DATADIR, 'ssd', 'low', ['nvme1n1'], 'Amazon EBS'),
    ('btrfs', DATADIR, 'unknown', 'low', [], 'device=nvme0n1p2'),
    ('overlay_tmpfs', DATADIR, 'unknown', 'low', [], 'tmpfs'),
    ('overlay_tmpfs', '/usr/lib', 'unknown', 'low', [], 'overlay'),
]


@pytest.fixture(scope='session')
def trees(tmp_path_factory):
    return sysfs_trees.Trees(tmp_path_factory.mktemp('sysfs'))


def inspector(trees, case):
    return s.Inspector(trees.sys(case), trees.proc(case))


@pytest.mark.parametrize('case, path, verdict, confidence, devices, phrase', CASES,
                         ids=['%s:%s' % (c[0], c[1]) for c in CASES])
def test_recorded_tree(trees, case, path, verdict, confidence, devices, phrase):
    result = inspector(trees, case).inspect_path(path)
    assert result['storage_class'] == verdict, result['reasons']
    assert result['confidence'] == confidence
    assert [d['name'] for d in result['devices']] == devices
    assert any(phrase in r for r in result['reasons']), result['reasons']


@pytest.mark.parametrize('case, device, verdict, leaves', [
    ('md_raid1_ssd', 'md0', 'ssd', ['sda', 'sdb']),
    ('md_raid1_ssd', '9:0', 'ssd', ['sda', 'sdb']),
    ('dmcrypt_nvme', 'dm-1', 'ssd', ['nvme0n1']),
    ('dmcrypt_nvme', 'nvme0n1p2', 'ssd', ['nvme0n1']),
    ('lvm_hdd', 'sdb1', 'hdd', ['sdb']),
    ('btrfs', 'nvme0n1p2', 'ssd', ['nvme0n1']),
    ('virtio_blk', '254:0', 'unknown', ['vda']),
])
def test_recorded_device(trees, case, device, verdict, leaves):
    insp = inspector(trees, case)
    ddir = insp.device_dir(device)
    assert ddir is not None
    result = insp.inspect_device(device, ddir)
    assert result['storage_class'] == verdict
    assert [d['name'] for d in result['devices']] == leaves


def test_unknown_device_is_none(trees):
    assert inspector(trees, 'sata_ssd').device_dir('sdz') is None
    assert inspector(trees, 'sata_ssd').device_dir('8:99') is None
    assert inspector(trees, 'sata_ssd').device_dir('../../etc') is None


def test_device_entries_carry_the_evidence(trees):
    result = inspector(trees, 'md_raid1_ssd_degraded').inspect_path(DATADIR)
    sda = result['devices'][0]
    assert sda['kind'] == 'scsi' and sda['transport'] == 'sata'
    assert sda['model'] == 'Micron_5300_MTFD' and sda['vendor'] == 'ATA'
    assert sda['rotational'] == 0 and sda['discard'] is True
    assert sda['maj_min'] == '8:0' and sda['via'] == ['md0', 'sda1']
    assert result['mount']['maj_min'] == '9:0'
    md0 = result['layers'][0]
    assert (md0['kind'], md0['degraded'], md0['array_state'], md0['rotational']) == ('md', 1, 'clean', 1)


def test_dm_layers_name_and_uuid(trees):
    result = inspector(trees, 'lvm_hdd').inspect_path(DATADIR)
    dm0 = [layer for layer in result['layers'] if layer['name'] == 'dm-0'][0]
    assert dm0['dm_name'] == 'vg_data-lv_mysql' and dm0['dm_uuid'].startswith('LVM-') and dm0['target'] == 'lvm'


def test_loop_layer_names_backing_file(trees):
    result = inspector(trees, 'loop_nvme').inspect_path(DATADIR)
    assert result['layers'][0]['backing_file'] == '/srv/images/mysql.img'
    assert result['devices'][0]['via'] == ['loop0', 'nvme0n1p1']


CASE_NAMES = sysfs_trees.case_names()


def test_every_case_has_a_manifest():
    assert len(CASE_NAMES) >= 17 and set(c[0] for c in CASES) <= set(CASE_NAMES)


@pytest.mark.parametrize('case', CASE_NAMES)
def test_manifest_round_trips(trees, case):
    """The manifest is in its canonical form, names only sys/ and proc/ paths, and the tree written
    from it reads back as exactly the manifest (every file, link target and empty directory)."""
    manifest = sysfs_trees.load_manifest(case)
    with open(sysfs_trees.manifest_path(case), encoding='utf-8') as f:
        assert f.read() == sysfs_trees.serialize(manifest)
    assert sorted(manifest) == ['dirs', 'files', 'links']
    assert manifest['files'] and all(p.split('/')[0] in ('sys', 'proc') for p in
                                     list(manifest['files']) + list(manifest['links']) + manifest['dirs'])
    assert sysfs_trees.dump_tree(trees.root(case)) == manifest


@pytest.mark.parametrize('case', CASE_NAMES)
def test_fixture_trees_are_minimal(trees, case):
    """Every file in a recorded tree is one the module reads, for the datadir or for one of the
    tree's devices (no dead weight in the fixtures)."""
    insp = inspector(trees, case)
    paths = [c[1] for c in CASES if c[0] == case] or [DATADIR]
    for path in paths:
        insp.inspect_path(path)
    class_block = os.path.join(trees.sys(case), 'class', 'block')
    for name in (os.listdir(class_block) if os.path.isdir(class_block) else []):
        insp.inspect_device(name, insp.device_dir(name))
    read = set(os.path.realpath(p) for p in insp.sysfs.read_paths)
    for dirpath, dummy, files in os.walk(trees.sys(case)):
        for name in files:
            full = os.path.realpath(os.path.join(dirpath, name))
            assert full in read, 'unread fixture file %s' % full


@pytest.mark.parametrize('case', CASE_NAMES)
def test_fixture_trees_have_kernel_links(trees, case):
    """class/block, block/ and dev/block/ entries are links into devices/, as on a real kernel."""
    sys_root = trees.sys(case)
    for sub in ('class/block', 'dev/block', 'block'):
        d = os.path.join(sys_root, sub)
        for name in (os.listdir(d) if os.path.isdir(d) else []):
            link = os.path.join(d, name)
            assert os.path.islink(link)
            assert '/devices/' in os.path.realpath(link)
            assert os.path.exists(os.path.join(os.path.realpath(link), 'dev'))
