# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/host/storage_probe.py: the probe's verdict, how it combines with sysfs, and the probe itself (real reads)."""

from __future__ import annotations

import errno
import os

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import storage_probe


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
    assert storage_probe.classify_latency(latencies)[0] == verdict


def test_classify_latency_warns_about_small_span():
    assert 'caches' in storage_probe.classify_latency([0.1] * 50, span_bytes=1 << 20)[1]


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
    out = storage_probe.combine_probe(sysfs_result(sysfs_class, sysfs_conf), probe)
    assert (out['storage_class'], out['confidence']) == (out_class, out_conf)
    assert bool(out['probe'].get('contradicts_sysfs')) is contradicts
    assert 'probe: x' in out['reasons']


def test_probe_skip_reason():
    assert storage_probe.probe_skip_reason(dict()) is not None
    tmpfs = dict(mount=dict(maj_min='0:27', mount_point='/dev/shm', fstype='tmpfs'))
    assert 'no block device' in storage_probe.probe_skip_reason(tmpfs)
    assert storage_probe.probe_skip_reason(dict(mount=dict(maj_min='254:0'))) is None


# ---------------------------------------------------------------- the probe itself (real reads)
def _make_files(tmp_path, count=3, size=1 << 20):
    for i in range(count):
        (tmp_path / ('f%d.ibd' % i)).write_bytes(os.urandom(size))
    (tmp_path / 'small').write_bytes(b'x' * 100)  # below one block: never read
    return dict((p.name, (p.stat().st_mtime_ns, p.stat().st_atime_ns, p.read_bytes())) for p in tmp_path.iterdir())


def test_probe_reads_only_and_is_bounded(tmp_path):
    before = _make_files(tmp_path)
    out = storage_probe.probe_latency(str(tmp_path), max_reads=30, max_seconds=2.0, seed=1)
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
    out = storage_probe.probe_latency(str(tmp_path), max_reads=1000, max_seconds=0.2, seed=2)
    assert out['reads'] < 1000 or out.get('median_ms', 1) < 0.2


def test_probe_no_files(tmp_path):
    out = storage_probe.probe_latency(str(tmp_path))
    assert out['storage_class'] == 'unknown' and 'no readable file' in out['reason']


def test_probe_degrades_when_o_direct_refused(tmp_path, monkeypatch):
    _make_files(tmp_path, count=1)
    real_open = os.open

    def refusing_open(path, flags, *args):
        if flags & os.O_DIRECT:
            raise OSError(errno.EINVAL, 'Invalid argument')
        return real_open(path, flags, *args)

    monkeypatch.setattr(storage_probe.os, 'open', refusing_open)
    out = storage_probe.probe_latency(str(tmp_path))
    assert out['storage_class'] == 'unknown'
    assert 'does not support O_DIRECT' in out['reason']
