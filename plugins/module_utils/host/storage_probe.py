# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The optional read-only latency probe of the storage under a path (O_DIRECT 4 KiB reads of existing files:
probe_latency()), its pure halves (classify_latency(), probe_skip_reason()) and the probe's verdict merged into the
sysfs verdict of host/storage.py (combine_probe()).
"""

from __future__ import annotations

import errno
import math
import mmap
import os
import random
import stat
import time

from ansible_collections.dbfleet.innodb.plugins.module_utils.host.storage import HDD, HIGH, LOW, MIXED, SSD, UNKNOWN

# Latency probe thresholds (median of 4 KiB random O_DIRECT reads, milliseconds). A 7200 rpm
# disk averages ~4 ms rotational latency alone, plus seek; SSDs answer in ~0.05-0.3 ms, network
# SSD volumes in ~0.5-1.5 ms.
PROBE_SSD_MAX_MS = 2.0
PROBE_HDD_MIN_MS = 4.0
PROBE_MIN_READS = 20
PROBE_MIN_SPAN = 64 << 20
PROBE_BLOCK = 4096
PROBE_MAX_ENTRIES = 20000


def percentile(values, pct):
    ordered = sorted(values)
    if not ordered:
        return None
    k = (len(ordered) - 1) * pct / 100.0
    lo, hi = int(math.floor(k)), int(math.ceil(k))
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def classify_latency(latencies_ms, span_bytes=None):
    """(storage_class, reason) from read latencies in milliseconds (pure)."""
    n = len(latencies_ms)
    if n < PROBE_MIN_READS:
        return UNKNOWN, 'only %d reads completed (need %d): no verdict' % (n, PROBE_MIN_READS)
    median = percentile(latencies_ms, 50)
    if median <= PROBE_SSD_MAX_MS:
        verdict, words = SSD, 'SSD-like (<= %.1f ms)' % PROBE_SSD_MAX_MS
    elif median >= PROBE_HDD_MIN_MS:
        verdict, words = HDD, 'HDD-like (>= %.1f ms)' % PROBE_HDD_MIN_MS
    else:
        verdict, words = UNKNOWN, ('between SSD and HDD latencies (%.1f-%.1f ms): network or '
                                   'busy storage' % (PROBE_SSD_MAX_MS, PROBE_HDD_MIN_MS))
    reason = 'probe: %d random 4 KiB O_DIRECT reads, median %.3f ms, p90 %.3f ms: %s' % (
        n, median, percentile(latencies_ms, 90), words)
    if span_bytes is not None and span_bytes < PROBE_MIN_SPAN and verdict == SSD:
        reason += ('; the files read span only %d MiB, so device or host caches may have answered'
                   % (span_bytes >> 20))
    return verdict, reason


def probe_skip_reason(result):
    """Why the probe must not run for a sysfs result, or None (pure). Without a block device under
    the path a probe would time memory (tmpfs accepts O_DIRECT since Linux 6.6) or a remote server."""
    mount = result.get('mount')
    if not mount:
        return 'probe: not run, the path has no mount with a block device'
    if str(mount.get('maj_min', '')).startswith('0:'):
        return ('probe: not run, %s (%s) has no block device under it; read latencies would '
                'measure memory or a remote server, not a disk' % (mount.get('mount_point'), mount.get('fstype')))
    return None


def combine_probe(result, probe):
    """Merge a probe verdict into a sysfs result (pure). Returns the new result dict."""
    out = dict(result)
    out['reasons'] = list(result.get('reasons', []))
    out['probe'] = probe
    verdict = probe.get('storage_class', UNKNOWN)
    out['reasons'].append(probe.get('reason', 'probe: no verdict'))
    sysfs_class = result.get('storage_class')
    if verdict == UNKNOWN:
        return out
    if sysfs_class == UNKNOWN:
        out['storage_class'] = verdict
        out['confidence'] = LOW
        out['reasons'].append('sysfs gave no answer; the probe\'s verdict (%s) is used, with low '
                              'confidence (caches in a hypervisor or controller can make slow '
                              'storage look fast)' % verdict)
        return out
    if sysfs_class == MIXED:
        out['reasons'].append('the probe cannot tell which device of a mixed stack it reached; '
                              'the sysfs verdict (mixed) stands')
        return out
    if verdict == sysfs_class:
        if result.get('confidence') != HIGH:
            out['reasons'].append('the probe agrees with sysfs (%s): confidence raised to high' % verdict)
        out['confidence'] = HIGH
        return out
    probe['contradicts_sysfs'] = True
    if result.get('confidence') == HIGH:
        out['reasons'].append('the probe (%s) contradicts sysfs (%s); sysfs evidence is strong here, '
                              'so its verdict stands' % (verdict, sysfs_class))
        return out
    out['storage_class'] = UNKNOWN
    out['confidence'] = LOW
    out['reasons'].append('the probe (%s) contradicts sysfs (%s), whose evidence is weak: '
                          'storage class unknown, set the override' % (verdict, sysfs_class))
    return out


def _candidate_files(path, st_dev, max_entries=PROBE_MAX_ENTRIES):
    """[(file, size)] of regular files >= one block under path on device st_dev (bounded walk)."""
    found = []
    seen = 0
    if os.path.isfile(path):
        walk = [(os.path.dirname(path), [], [os.path.basename(path)])]
    else:
        walk = os.walk(path)
    for dirpath, dirnames, filenames in walk:
        dirnames.sort()
        for fname in sorted(filenames):
            seen += 1
            if seen > max_entries:
                return found
            full = os.path.join(dirpath, fname)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_dev == st_dev and st.st_size >= PROBE_BLOCK:
                found.append((full, st.st_size))
        # do not cross into other filesystems
        kept = []
        for d in dirnames:
            try:
                if os.lstat(os.path.join(dirpath, d)).st_dev == st_dev:
                    kept.append(d)
            except OSError:
                pass
        dirnames[:] = kept
    return found


def probe_latency(path, max_reads=200, max_seconds=2.0, seed=None):
    """Random 4 KiB O_DIRECT reads of existing files under path. Never writes (O_NOATIME when
    allowed, so not even atime changes). Returns a dict with storage_class and reason."""
    rng = random.Random(seed)
    out = dict(reads=0, storage_class=UNKNOWN)
    if not hasattr(os, 'O_DIRECT') or not hasattr(os, 'preadv'):
        out['reason'] = 'probe: O_DIRECT reads are not available on this platform'
        return out
    try:
        st_dev = os.stat(path).st_dev
    except OSError as e:
        out['reason'] = 'probe: cannot stat %s: %s' % (path, e.strerror)
        return out
    files = _candidate_files(path, st_dev)
    if not files:
        out['reason'] = 'probe: no readable file of at least 4 KiB under %s on its filesystem' % path
        return out
    total = sum(entry[1] for entry in files)
    out.update(files=len(files), span_bytes=total)
    buf = mmap.mmap(-1, PROBE_BLOCK)
    fds = {}
    latencies = []
    done = set()
    errors = []
    deadline = time.monotonic() + max_seconds
    flags = os.O_RDONLY | os.O_DIRECT | getattr(os, 'O_NOATIME', 0)
    try:
        attempts = 0
        while len(latencies) < max_reads and time.monotonic() < deadline and attempts < max_reads * 3:
            attempts += 1
            fname, size = rng.choices(files, weights=[entry[1] for entry in files])[0]
            offset = rng.randrange(size // PROBE_BLOCK) * PROBE_BLOCK
            if (fname, offset) in done:
                continue
            done.add((fname, offset))
            fd = fds.get(fname)
            if fd is None:
                try:
                    fd = os.open(fname, flags)
                except OSError as e:
                    if e.errno == errno.EPERM and flags & getattr(os, 'O_NOATIME', 0):
                        flags &= ~os.O_NOATIME
                        continue
                    if e.errno == errno.EINVAL:
                        out['reason'] = ('probe: the filesystem under %s does not support O_DIRECT '
                                         '(tmpfs, some overlay setups): no verdict' % path)
                        return out
                    errors.append('%s: %s' % (fname, e.strerror))
                    files = [f for f in files if f[0] != fname]
                    if not files:
                        break
                    continue
                fds[fname] = fd
            t0 = time.perf_counter()
            try:
                n = os.preadv(fd, [buf], offset)
            except OSError as e:
                if e.errno == errno.EINVAL:
                    out['reason'] = 'probe: O_DIRECT reads are refused under %s: no verdict' % path
                    return out
                errors.append('%s: %s' % (fname, e.strerror))
                continue
            elapsed = (time.perf_counter() - t0) * 1000.0
            if n > 0:
                latencies.append(elapsed)
    finally:
        for fd in fds.values():
            os.close(fd)
        buf.close()
    out['reads'] = len(latencies)
    if latencies:
        out.update(median_ms=round(percentile(latencies, 50), 4), p90_ms=round(percentile(latencies, 90), 4),
                   min_ms=round(min(latencies), 4), max_ms=round(max(latencies), 4))
    if errors:
        out['errors'] = errors[:5]
    out['storage_class'], out['reason'] = classify_latency(latencies, total)
    return out
