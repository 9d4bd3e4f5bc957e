# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure parts of module_utils/host/storage.py: mountinfo, the judgement of each device, aggregation,
the probe's verdict and how it combines with sysfs. No file I/O except the probe tests at the end."""

from __future__ import annotations

import errno
import os

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import storage as s

MOUNTINFO = '\n'.join([
    '22 27 0:21 / /proc rw,relatime - proc proc rw',
    '27 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw',
    '40 27 259:3 / /var/lib/mysql rw,noatime shared:20 master:3 - xfs /dev/nvme0n1p3 rw',
    '41 27 8:1 / /var/lib/mysql\\040data rw - ext4 /dev/sda1 rw',
    '42 40 0:45 / /var/lib/mysql/tmp rw - tmpfs tmpfs rw',
    'garbage line',
    '43 27 8:17 / /srv rw - ext4 /dev/sdb1 rw',
    '44 27 8:33 / /srv rw - ext4 /dev/sdc1 rw',
])


def test_parse_mountinfo_fields_optional_fields_and_escapes():
    mounts = s.parse_mountinfo(MOUNTINFO)
    assert len(mounts) == 7  # the garbage line is skipped
    data = [m for m in mounts if m['mount_id'] == '40'][0]
    assert (data['major'], data['minor'], data['fstype'], data['source']) == (259, 3, 'xfs', '/dev/nvme0n1p3')
    spaced = [m for m in mounts if m['mount_id'] == '41'][0]
    assert spaced['mount_point'] == '/var/lib/mysql data'


@pytest.mark.parametrize('path, mount_id', [
    ('/var/lib/mysql', '40'),
    ('/var/lib/mysql/', '40'),
    ('/var/lib/mysql/ibdata1', '40'),
    ('/var/lib/mysql2', '27'),          # a prefix that is not a path component
    ('/var/lib/mysql data/x', '41'),
    ('/var/lib/mysql/tmp/x', '42'),     # the longest mount point wins
    ('/var/lib', '27'),
    ('/', '27'),
    ('/srv/a', '44'),                   # overmounted: the later mount wins
])
def test_find_mount_longest_prefix(path, mount_id):
    assert s.find_mount(s.parse_mountinfo(MOUNTINFO), path)['mount_id'] == mount_id


def test_find_mount_none_without_root():
    assert s.find_mount(s.parse_mountinfo('40 27 259:3 / /data rw - xfs /dev/x rw'), '/var') is None


@pytest.mark.parametrize('name, ok', [
    ('sda', True), ('nvme0n1p2', True), ('dm-3', True), ('md0', True), ('259:2', True),
    ('cciss!c0d0', True), ('../etc', False), ('sda/..', False), ('', False), ('a b', False),
])
def test_valid_device_name(name, ok):
    assert s.valid_device_name(name) is ok


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


# ---------------------------------------------------------------- probe verdicts
@pytest.mark.parametrize('latencies, verdict', [
    ([0.1] * 50, 'ssd'),
    ([1.9] * 50, 'ssd'),
    ([3.0] * 50, 'unknown'),
    ([8.0] * 50, 'hdd'),
    ([0.1] * 10, 'unknown'),           # too few reads
    ([0.1] * 30 + [9.0] * 20, 'ssd'),  # the median, not the mean
])
def test_classify_latency(latencies, verdict):
    assert s.classify_latency(latencies)[0] == verdict


def test_classify_latency_warns_about_small_span():
    assert 'caches' in s.classify_latency([0.1] * 50, span_bytes=1 << 20)[1]


def sysfs_result(cls, conf):
    return dict(storage_class=cls, confidence=conf, reasons=['r'], devices=[], layers=[])


@pytest.mark.parametrize('sysfs_class, sysfs_conf, probe_class, out_class, out_conf, contradicts', [
    ('unknown', 'low', 'ssd', 'ssd', 'low', False),
    ('unknown', 'low', 'unknown', 'unknown', 'low', False),
    ('ssd', 'low', 'ssd', 'ssd', 'high', False),
    ('ssd', 'high', 'hdd', 'ssd', 'high', True),
    ('hdd', 'low', 'ssd', 'unknown', 'low', True),
    ('mixed', 'high', 'ssd', 'mixed', 'high', False),
])
def test_combine_probe(sysfs_class, sysfs_conf, probe_class, out_class, out_conf, contradicts):
    probe = dict(storage_class=probe_class, reason='probe: x')
    out = s.combine_probe(sysfs_result(sysfs_class, sysfs_conf), probe)
    assert (out['storage_class'], out['confidence']) == (out_class, out_conf)
    assert bool(out['probe'].get('contradicts_sysfs')) is contradicts
    assert 'probe: x' in out['reasons']


def test_probe_skip_reason():
    assert s.probe_skip_reason(dict()) is not None
    tmpfs = dict(mount=dict(maj_min='0:27', mount_point='/dev/shm', fstype='tmpfs'))
    assert 'no block device' in s.probe_skip_reason(tmpfs)
    assert s.probe_skip_reason(dict(mount=dict(maj_min='254:0'))) is None


# ---------------------------------------------------------------- the probe itself (real reads)
def _make_files(tmp_path, count=3, size=1 << 20):
    for i in range(count):
        (tmp_path / ('f%d.ibd' % i)).write_bytes(os.urandom(size))
    (tmp_path / 'small').write_bytes(b'x' * 100)  # below one block: never read
    return dict((p.name, (p.stat().st_mtime_ns, p.stat().st_atime_ns, p.read_bytes())) for p in tmp_path.iterdir())


def test_probe_reads_only_and_is_bounded(tmp_path):
    before = _make_files(tmp_path)
    out = s.probe_latency(str(tmp_path), max_reads=30, max_seconds=2.0, seed=1)
    if 'O_DIRECT' in out.get('reason', '') and out['reads'] == 0:
        pytest.skip('O_DIRECT unsupported under %s' % tmp_path)
    assert 0 < out['reads'] <= 30
    assert out['files'] == 3
    assert out['median_ms'] > 0
    after = dict((p.name, (p.stat().st_mtime_ns, p.stat().st_atime_ns, p.read_bytes())) for p in tmp_path.iterdir())
    # content and mtime unchanged; atime unchanged too (O_NOATIME) except where read_bytes() above set it
    assert dict((k, (v[0], v[2])) for k, v in after.items()) == dict((k, (v[0], v[2])) for k, v in before.items())


def test_probe_time_bound(tmp_path):
    _make_files(tmp_path, count=1)
    out = s.probe_latency(str(tmp_path), max_reads=1000, max_seconds=0.2, seed=2)
    assert out['reads'] < 1000 or out.get('median_ms', 1) < 0.2


def test_probe_no_files(tmp_path):
    out = s.probe_latency(str(tmp_path))
    assert out['storage_class'] == 'unknown' and 'no readable file' in out['reason']


def test_probe_degrades_when_o_direct_refused(tmp_path, monkeypatch):
    _make_files(tmp_path, count=1)
    real_open = os.open

    def refusing_open(path, flags, *args):
        if flags & os.O_DIRECT:
            raise OSError(errno.EINVAL, 'Invalid argument')
        return real_open(path, flags, *args)

    monkeypatch.setattr(s.os, 'open', refusing_open)
    out = s.probe_latency(str(tmp_path))
    assert out['storage_class'] == 'unknown'
    assert 'does not support O_DIRECT' in out['reason']
