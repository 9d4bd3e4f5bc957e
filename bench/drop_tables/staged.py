#!/usr/bin/env python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DROP TABLE of a big written table under a read workload: plain DROP (A) vs the staged file removal of
dbfleet.innodb.drop_tables (B: the table's files hard-linked before the DROP, shrunk in steps after), alternated
in one run.

Reads the login of HOST from an inventory written by lab/lab.py, then:
  - builds one table of --gib GiB (1 MiB blob rows) and, for every drop, a copy of it through its tablespace file
    (FLUSH TABLES ... FOR EXPORT, cp, ALTER TABLE ... IMPORT TABLESPACE): a file written block by block, like a
    table that grew, which is what the filesystem frees on the DROP;
  - runs run.py's workers (PK lookups on a hot table, worst latency and queries per 100 ms);
  - drops each copy with A or B, --rounds times each, the order alternating (AB, BA, AB, BA, ...), and measures
    the DROP statement's time, the time until the filesystem's free space has grown by the table's size again,
    and the workers' worst latency per phase: the 3 s before the drop (baseline), the DROP statement, B's
    shrinking (from the statement's end to the module's return), and the whole window (--window s from the
    drop's start, the same for A and B);
  - prints per drop, then per arm the median and the max over its drops, and the B/A ratios of both.
Writes everything as JSON with --json. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run as base  # noqa: E402  (run.py beside this file: login, workers, window statistics)
from run import BUCKET, SCHEMA, Drop, connect, host_login, merge, q, q1, ratio, run_drop, window_stats, \
    worker  # noqa: E402

MIB = 1 << 20


def fill(conn, gib):
    """The source table: gib GiB of 1 MiB rows, 256 rows a statement from run.py's sequence table (no INSERT ...
    SELECT of a table into itself: MariaDB makes a temporary table in tmpdir for that)."""
    rows = int(gib * 1024)
    q(conn, 'CREATE TABLE %s.src (id INT PRIMARY KEY, b LONGBLOB) ENGINE=InnoDB' % SCHEMA)
    for low in range(0, rows, 256):
        q(conn, "INSERT INTO %s.src SELECT id, REPEAT('x', %d) FROM %s.seq WHERE id > %d AND id <= %d" % (
            SCHEMA, MIB - 64, SCHEMA, low, min(low + 256, rows)))


def copy_table(conn, datadir, name):
    """A copy of src with its own tablespace file, written by cp (no InnoDB page writes)."""
    src = os.path.join(datadir, SCHEMA, 'src')
    dst = os.path.join(datadir, SCHEMA, name)
    q(conn, 'CREATE TABLE %s.%s LIKE %s.src' % (SCHEMA, name, SCHEMA))
    q(conn, 'ALTER TABLE %s.%s DISCARD TABLESPACE' % (SCHEMA, name))
    q(conn, 'FLUSH TABLES %s.src FOR EXPORT' % SCHEMA)
    try:
        shutil.copyfile(src + '.ibd', dst + '.ibd')
        shutil.copyfile(src + '.cfg', dst + '.cfg')
    finally:
        q(conn, 'UNLOCK TABLES')
    st = os.stat(os.path.join(datadir, SCHEMA))
    for ext in ('.ibd', '.cfg'):
        os.chown(dst + ext, st.st_uid, st.st_gid)
    os.sync()
    q(conn, 'ALTER TABLE %s.%s IMPORT TABLESPACE' % (SCHEMA, name))
    try:
        os.unlink(dst + '.cfg')
    except FileNotFoundError:
        pass
    return os.path.getsize(dst + '.ibd')


def free_bytes(path):
    sv = os.statvfs(path)
    return sv.f_bavail * sv.f_frsize


def drop_plain(login, name):
    c = connect(login)
    try:
        t0 = time.monotonic()
        q(c, 'DROP TABLE %s.%s' % (SCHEMA, name))
        return dict(drop_seconds=round(time.monotonic() - t0, 4))
    finally:
        c.close()


STEP_LOG = []   # (start, end) of every truncate step of B's shrinking, read for the phases


def _log_steps():
    """StepPacer.truncate, timed into STEP_LOG (the bench's own instrument; the module keeps only the totals)."""
    from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import shrink  # noqa: E402
    plain = shrink.StepPacer.truncate

    def truncate(self, fd, target):
        t0 = time.monotonic()
        try:
            return plain(self, fd, target)
        finally:
            STEP_LOG.append((t0, time.monotonic()))
    shrink.StepPacer.truncate = truncate


class TimedDrop(Drop):
    """The module's Drop, with the wall-clock bounds of its DROP statement kept (for the phases)."""
    statement = None

    def run_statement(self, entry, sql, verb):
        t0 = time.monotonic()
        try:
            return super().run_statement(entry, sql, verb)
        finally:
            self.statement = [t0, time.monotonic()]


def drop_staged(login, name, args):
    seqs = []

    def timed(params):
        seqs.append(TimedDrop(params))
        return seqs[-1]
    options = dict(shrink_step_mb=args.step_mb, shrink_pause=args.pause, shrink_max_seconds=args.bound)
    if args.step_seconds is not None:
        options['shrink_step_seconds'] = args.step_seconds
    del STEP_LOG[:]
    rep = run_drop(login, name, drop_class=timed, ahi_strategy='keep', file_removal='staged',
                   free_space_margin_mb=1024, state_dir=os.path.join(args.state, 'state'), **options)
    fr = rep['file_removal']
    return dict(drop_seconds=rep['tables'][0].get('seconds'), shrink_seconds=fr['shrink_seconds'],
                shrink_steps=fr.get('shrink_steps'), statement=seqs[0].statement, step_log=list(STEP_LOG),
                schedule=fr['schedule']['text'], removed=len(fr['removed']), staging_dir=fr['staging_dir'],
                left=os.listdir(fr['staging_dir']))


def phase_latency(buckets, t0, t1):
    """The workers' worst latency (ms) in the 100 ms buckets that [t0, t1] touches (a phase shorter than a bucket
    still has one)."""
    lo, hi = int(t0 / BUCKET), int(t1 / BUCKET)
    return round(max([buckets.get(b, (0, 0.0))[1] for b in range(lo, hi + 1)] or [0.0]) * 1000, 2)


def step_attribution(buckets, steps, t0, t1):
    """The shrinking's 100 ms buckets split into those a truncate step touches and the others (the pauses): the
    median and the max of the workers' worst latency per bucket in each (ms). Steps' I/O that hurts the workers
    shows as truncate buckets worse than pause buckets."""
    touched = set()
    for s0, s1 in steps:
        touched.update(range(int(s0 / BUCKET), int(s1 / BUCKET) + 1))
    lo, hi = int(t0 / BUCKET), int(t1 / BUCKET)
    inside = [b for b in range(lo, hi + 1) if b in touched]
    rest = [b for b in range(lo, hi + 1) if b not in touched]

    def stats(sel):
        vals = [buckets.get(b, (0, 0.0))[1] * 1000 for b in sel]
        return dict(buckets=len(vals), median_ms=round(statistics.median(vals), 2) if vals else None,
                    max_ms=round(max(vals), 2) if vals else None)
    return dict(truncate=stats(inside), pause=stats(rest))


def arm_summary(events, arm, get):
    vals = [get(ev) for ev in events if ev['arm'] == arm]
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return dict(median=round(statistics.median(vals), 4), max=round(max(vals), 4), n=len(vals))


def wait_space(path, target, deadline):
    while time.monotonic() < deadline:
        if free_bytes(path) >= target:
            return time.monotonic()
        time.sleep(0.05)
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    ap.add_argument('--inventory', default=os.path.join(base.REPO, 'inventories', 'lab', 'hosts.yml'))
    ap.add_argument('--host', default='mysql80')
    ap.add_argument('--gib', type=float, default=2, help='size of the dropped table in GiB')
    ap.add_argument('--rounds', type=int, default=3, help='drops per arm, alternated (AB, BA, AB, ...)')
    ap.add_argument('--workers', type=int, default=3)
    ap.add_argument('--hot-rows', type=int, default=100000)
    ap.add_argument('--step-mb', type=int, default=256, help='shrink_step_mb of B (the module\'s default)')
    ap.add_argument('--pause', type=float, default=0.5, help='shrink_pause of B')
    ap.add_argument('--step-seconds', type=float, default=None,
                    help='shrink_step_seconds of B (the per-step time bound; default: the module\'s)')
    ap.add_argument('--bound', type=int, default=120, help='shrink_max_seconds of B')
    ap.add_argument('--rest', type=float, default=4.0, help='seconds of rest after each copy')
    ap.add_argument('--window', type=float, default=20.0,
                    help='seconds from the drop\'s start in which the workers are measured, for A and B alike '
                         '(longer when the space takes longer to come back)')
    ap.add_argument('--state', default='/tmp/dbfleet-bench-staged', help='the module\'s state directory')
    ap.add_argument('--json', default=None)
    args = ap.parse_args(argv)
    _log_steps()
    login = host_login(args.inventory, args.host)
    admin = connect(login)
    version = q1(admin, 'SELECT @@version')
    datadir = q1(admin, 'SELECT @@datadir')
    os.makedirs(args.state, mode=0o700, exist_ok=True)
    print('server %s (%s), datadir %s' % (args.host, version, datadir))
    stop = multiprocessing.Event()
    out = multiprocessing.Queue()
    procs, events, parts = [], [], []
    try:
        t = time.monotonic()
        q(admin, 'DROP DATABASE IF EXISTS %s' % SCHEMA)
        q(admin, 'CREATE DATABASE %s' % SCHEMA)
        base.setup(admin, 1, args.hot_rows)
        fill(admin, args.gib)
        print('setup: %s GiB source table in %.1f s' % (args.gib, time.monotonic() - t))
        for i in range(args.workers):
            p = multiprocessing.Process(target=worker, args=(login, args.hot_rows, stop, out, i))
            p.start()
            procs.append(p)
        time.sleep(3)
        for r in range(args.rounds):
            for arm in (('A', 'B') if r % 2 == 0 else ('B', 'A')):
                name = 'big_%d_%s' % (r, arm.lower())
                t = time.monotonic()
                size = copy_table(admin, datadir, name)
                prep = time.monotonic() - t
                time.sleep(args.rest)
                base_t0 = time.monotonic()
                time.sleep(3)
                before = free_bytes(datadir)
                t0 = time.monotonic()
                info = drop_plain(login, name) if arm == 'A' else drop_staged(login, name, args)
                t1 = time.monotonic()
                back = wait_space(datadir, before + int(size * 0.95), t1 + 20)   # None: other writers took the space
                t2 = max(time.monotonic() + 1, t0 + args.window)   # the same window for A and B (when it suffices)
                time.sleep(max(t2 - time.monotonic(), 0))
                ev = dict(round=r, arm=arm, table=name, table_bytes=size, prepare_seconds=round(prep, 1),
                          call_seconds=round(t1 - t0, 4),
                          space_back_seconds=round(back - t0, 3) if back else None,
                          base=[base_t0, base_t0 + 3], window=[t0, t2])
                ev.update(info)
                if arm == 'A':
                    ev['phases'] = dict(statement=[t0, t1])
                else:
                    ev['phases'] = dict(statement=info['statement'], shrink=[info['statement'][1], t1])
                events.append(ev)
                print('round %d %s: %s %.0f MiB (copied in %.1f s); DROP %.3f s, call %.3f s, space back after %s s%s'
                      % (r, arm, name, size / MIB, prep, info['drop_seconds'], t1 - t0, ev['space_back_seconds'],
                         (', shrink steps %s' % json.dumps(info['shrink_steps'])) if info.get('shrink_steps') else ''))
                sys.stdout.flush()
    finally:
        stop.set()
        for _proc in procs:
            try:
                parts.append(out.get(timeout=30))
            except Exception:  # pylint: disable=broad-except
                pass
        for p in procs:
            p.join(timeout=10)
        q(admin, 'DROP DATABASE IF EXISTS %s' % SCHEMA)
        staging = os.path.join(os.path.dirname(os.path.normpath(datadir)), 'dbfleet-staged-drop')
        if os.path.isdir(staging) and not os.listdir(staging):
            os.rmdir(staging)
    buckets = merge(parts)
    print('\nworst latency of the workers in ms per phase: base (3 s before), stmt (the DROP statement), shrink '
          '(B: statement end .. return), window (%.0f s from the start)' % args.window)
    print('%-5s %-3s %9s %9s %9s %9s %9s %9s %9s' % (
        'round', 'arm', 'DROP s', 'space s', 'min1s', 'base ms', 'stmt ms', 'shrink ms', 'window ms'))
    for ev in events:
        b = window_stats(buckets, *ev['base'])
        w = window_stats(buckets, *ev['window'])
        ev.update(base_stats=b, window_stats=w)
        ev['phase_latency_ms'] = dict((k, phase_latency(buckets, *v)) for k, v in ev['phases'].items())
        if ev['arm'] == 'B':
            ev['step_attribution'] = step_attribution(buckets, ev['step_log'], *ev['phases']['shrink'])
        print('%-5d %-3s %9.3f %9s %9d %9.1f %9.1f %9s %9.1f' % (
            ev['round'], ev['arm'], ev['drop_seconds'], ev['space_back_seconds'], w['min_qps_1s'],
            b['max_latency_ms'], ev['phase_latency_ms']['statement'], ev['phase_latency_ms'].get('shrink', '-'),
            w['max_latency_ms']))

    getters = dict(
        drop_seconds=lambda ev: ev['drop_seconds'],
        space_back_seconds=lambda ev: ev['space_back_seconds'],
        worst_second_qps=lambda ev: ev['window_stats']['min_qps_1s'],
        base_latency_ms=lambda ev: ev['base_stats']['max_latency_ms'],
        statement_latency_ms=lambda ev: ev['phase_latency_ms']['statement'],
        shrink_latency_ms=lambda ev: ev['phase_latency_ms'].get('shrink'),
        window_latency_ms=lambda ev: ev['window_stats']['max_latency_ms'],
        shrink_truncate_bucket_median_ms=lambda ev: ev.get('step_attribution', {}).get('truncate', {}).get('median_ms'),
        shrink_pause_bucket_median_ms=lambda ev: ev.get('step_attribution', {}).get('pause', {}).get('median_ms'),
        shrink_truncate_bucket_max_ms=lambda ev: ev.get('step_attribution', {}).get('truncate', {}).get('max_ms'),
        shrink_pause_bucket_max_ms=lambda ev: ev.get('step_attribution', {}).get('pause', {}).get('max_ms'),
        shrink_step_max_seconds=lambda ev: (ev.get('shrink_steps') or {}).get('max_step_seconds'))
    summary = {}
    print('\n%-34s %-23s %-23s %s' % ('per arm', 'A median / max', 'B median / max', 'B/A of median / of max'))
    for key, get in getters.items():
        a, b = arm_summary(events, 'A', get), arm_summary(events, 'B', get)
        row = dict(A=a, B=b)
        if a and b:
            row['B/A'] = dict(median=ratio(b['median'], a['median']), max=ratio(b['max'], a['max']))
        summary[key] = row

        def cell(x):
            return '%s / %s' % (x['median'], x['max']) if x else '-'
        print('%-34s %-23s %-23s %s' % (key, cell(a), cell(b), cell(row.get('B/A'))))
    print('staged files left behind: %s' % [ev.get('left') for ev in events if ev['arm'] == 'B'])
    if args.json:
        with open(args.json, 'w', encoding='utf-8') as handle:
            json.dump(dict(host=args.host, version=version, args=vars(args), events=events, summary=summary),
                      handle, indent=1)


if __name__ == '__main__':
    main()
