# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure parts of module_utils/host/storage.py: the judgement of each device, aggregation, the device tree classified.
No file I/O."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import storage as s


@pytest.mark.parametrize('name, kind', [
    ('nvme0n1', 'nvme'), ('nvme1c1n1', 'nvme'), ('vda', 'virtio'), ('xvdb', 'xen'), ('sdaa', 'scsi'),
    ('md127', 'md'), ('dm-12', 'dm'), ('loop7', 'loop'), ('zram0', 'zram'), ('mmcblk0', 'mmc'),
    ('nbd0', 'nbd'), ('rbd3', 'rbd'), ('zd16', 'zvol'), ('weird0', 'other'),
])
def test_device_kind(name, kind):
    assert s.device_kind(dict(name=name)) == kind


def test_partition_kind_wins_over_name():
    assert s.device_kind(dict(name='nvme0n1p2', partition=True)) == 'partition'


def leaf(name, rot, **kw):
    facts = dict(name=name, rotational=rot, partition=False)
    facts.update(kw)
    return facts


ATA_PATH = 'devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda'
VIRTIO_SCSI_PATH = 'devices/pci0000:00/0000:00:03.0/virtio2/host0/target0:0:0/0:0:0:0/block/sda'


@pytest.mark.parametrize('facts, verdict, confidence, words', [
    (leaf('nvme0n1', 0, model='Samsung SSD 970'), 'ssd', 'high', 'NVMe namespace'),
    (leaf('nvme0n1', 0, transport='tcp'), 'ssd', 'low', 'NVMe over tcp'),
    (leaf('nvme1n1', 0, model='Amazon Elastic Block Store'), 'ssd', 'low', 'st1 and sc1'),
    (leaf('vda', 1), 'unknown', 'low', 'virtio-blk always reports rotational=1'),
    (leaf('vda', 0), 'ssd', 'low', 'hypervisor'),
    (leaf('xvda', 1), 'unknown', 'low', 'Xen'),
    (leaf('sda', 0, vendor='ATA', model='Samsung SSD 850', sys_path=ATA_PATH, discard_max_bytes=1),
     'ssd', 'high', 'supports discard'),
    (leaf('sda', 1, vendor='ATA', model='ST4000NM0035-1V4', sys_path=ATA_PATH), 'hdd', 'high', 'sata'),
    (leaf('sda', 1, vendor='ATA', model='Samsung SSD 860', sys_path=ATA_PATH), 'ssd', 'low', 'model names an SSD'),
    (leaf('sda', 1, vendor='QEMU', model='QEMU HARDDISK', sys_path=VIRTIO_SCSI_PATH), 'unknown', 'low',
     'virtual disk'),
    (leaf('sda', 0, vendor='QEMU', model='QEMU HARDDISK', sys_path=VIRTIO_SCSI_PATH), 'ssd', 'low', 'virtual disk'),
    (leaf('sdb', 1, vendor='VMware', model='Virtual disk'), 'unknown', 'low', 'virtual disk'),
    (leaf('sda', 1, vendor='DELL', model='PERC H730P Mini'), 'hdd', 'low', 'hardware RAID'),
    (leaf('sda', 0, vendor='HP', model='LOGICAL VOLUME'), 'ssd', 'low', 'hardware RAID'),
    (leaf('sdc', 1, vendor='WD', model='Elements', sys_path='devices/pci0000:00/usb2/2-1/block/sdc'),
     'hdd', 'low', 'usb'),
    (leaf('zram0', 0), 'ssd', 'high', 'compressed RAM'),
    (leaf('mmcblk0', 1), 'ssd', 'high', 'flash'),
    (leaf('loop0', 0, loop_backing_file='/x.img', backing_note='no mount holds the backing file'),
     'unknown', 'low', 'no mount holds'),
    (leaf('loop1', 0), 'unknown', 'low', 'no backing file'),
    (leaf('nbd0', 0), 'unknown', 'low', 'network block device'),
    (leaf('dm-4', 0), 'unknown', 'low', 'without underlying devices'),
    (leaf('sda', None), 'unknown', 'low', 'no readable queue/rotational'),
    (leaf('zd0', 0), 'ssd', 'low', 'zvol'),
])
def test_judge_leaf(facts, verdict, confidence, words):
    got_class, got_conf, reasons = s.judge_leaf(facts)
    assert (got_class, got_conf) == (verdict, confidence)
    assert any(words in r for r in reasons), reasons


def dev(name, cls, conf='high'):
    return dict(name=name, storage_class=cls, confidence=conf)


@pytest.mark.parametrize('devices, verdict, confidence', [
    ([], 'unknown', 'low'),
    ([dev('a', 'ssd'), dev('b', 'ssd')], 'ssd', 'high'),
    ([dev('a', 'ssd'), dev('b', 'ssd', 'low')], 'ssd', 'low'),
    ([dev('a', 'hdd'), dev('b', 'hdd')], 'hdd', 'high'),
    ([dev('a', 'ssd'), dev('b', 'hdd')], 'mixed', 'high'),
    ([dev('a', 'ssd'), dev('b', 'unknown', 'low')], 'unknown', 'low'),
    ([dev('a', 'hdd'), dev('b', 'unknown', 'low')], 'unknown', 'low'),
])
def test_aggregate(devices, verdict, confidence):
    got = s.aggregate(devices)
    assert got[:2] == (verdict, confidence)


def node(name, children=(), **kw):
    n = dict(name=name, partition=False, children=list(children), sys_path='devices/x/' + name)
    n.update(kw)
    return n


def test_classify_degraded_md_over_ssd_partitions_ignores_md_flag():
    sda = node('sda', rotational=0, vendor='ATA', model='Micron_5300', sys_path=ATA_PATH)
    tree = node('md0', [node('sda1', [sda], partition=True)], rotational=1, md_level='raid1',
                md_degraded=1, md_raid_disks=2, md_array_state='clean')
    result = s.classify(tree)
    assert (result['storage_class'], result['confidence']) == ('ssd', 'high')
    assert [d['name'] for d in result['devices']] == ['sda']
    assert result['devices'][0]['via'] == ['md0', 'sda1']
    assert any('degraded (1 of 2 members missing' in r for r in result['reasons'])
    md = [layer for layer in result['layers'] if layer['name'] == 'md0'][0]
    assert md['degraded'] == 1 and md['level'] == 'raid1'


def test_classify_lvm_over_crypt_reports_targets_and_dedupes_leaves():
    nvme = node('nvme0n1', rotational=0)
    p1 = node('nvme0n1p1', [nvme], partition=True)
    p2 = node('nvme0n1p2', [dict(nvme)], partition=True)
    crypt = node('dm-0', [p2], rotational=0, dm_uuid='CRYPT-LUKS2-abc', dm_name='luks-abc')
    lvm = node('dm-1', [crypt, p1], rotational=0, dm_uuid='LVM-xyz', dm_name='vg-lv')
    result = s.classify(lvm)
    assert result['storage_class'] == 'ssd'
    assert [d['name'] for d in result['devices']] == ['nvme0n1']  # one entry per physical device
    targets = dict((layer['name'], layer.get('target')) for layer in result['layers'])
    assert targets['dm-1'] == 'lvm' and targets['dm-0'] == 'crypt'
    assert any('dm-crypt mapping' in r for r in result['reasons'])


def test_classify_mixed_lvm():
    tree = node('dm-0', [node('sda', rotational=0, sys_path=ATA_PATH),
                         node('sdb', rotational=1, sys_path=ATA_PATH.replace('sda', 'sdb'))],
                dm_uuid='LVM-x')
    assert s.classify(tree)['storage_class'] == 'mixed'


def test_classify_cycle_is_reported_not_looped():
    tree = node('dm-0', [node('dm-1', cycle=True)])
    result = s.classify(tree)
    assert result['storage_class'] == 'unknown'
    assert any('loops' in r for r in result['reasons'])
