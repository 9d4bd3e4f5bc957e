#!/usr/bin/env python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DROP TABLE of an AHI-hashed table under a read workload: plain DROP (A) vs the guarded
sequence of dbfleet.innodb.drop_tables with AHI switched off around it (B), alternated in one run.

Reads the login of HOST from an inventory written by lab/lab.py, then:
  - sets innodb_buffer_pool_size (default 1G) and innodb_adaptive_hash_index=ON for the run and
    puts both back at the end;
  - creates a hot table (PK lookups by worker processes all the time) and, for every drop, a
    large table that is hashed by a self-join of eq_ref lookups (AHI node heap is read before and
    after to prove it);
  - for each round drops one large table with A and one with B (order alternates: AB, BA, ...),
    and measures in the same way: queries per second and worst query latency of the workers
    (100 ms buckets), server CPU seconds (/proc/PID/stat) per 1000 queries, and the duration of
    each step; a baseline of the same length just before each drop is the reference.
Prints per-round numbers and B/A ratios (medians over rounds), and a verdict: which strategy
hurts the workload less on this server. Writes everything as JSON with --json.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import re
import statistics
import sys
import time

import pymysql

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(REPO, '.collections'))
sys.path.insert(0, os.path.join(REPO, 'lab'))

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.drop_tables import Drop  # noqa: E402
from dbfleet_lab.serverload import connect as lab_connect, cpu_seconds as server_cpu, host_vars, query as q, \
    query_value as q1, server_pid  # noqa: E402

SCHEMA = 'dbfleet_bench_drop'
BUCKET = 0.1


# ------------------------------------------------------------------ login
def host_login(inventory, host):
    """The module parameters of drop_tables (login_*) for HOST of the inventory."""
    hv = host_vars(inventory, host)
    return dict(login_unix_socket=hv.get('dbfleet_login_unix_socket'), login_user=hv.get('dbfleet_login_user'),
                login_password=hv.get('dbfleet_login_password'), login_host=hv.get('dbfleet_login_host'),
                login_port=hv.get('dbfleet_login_port'), config_file='')


def connect(login, autocommit=True):
    return lab_connect(login, autocommit=autocommit)


# ------------------------------------------------------------------ server state
def ahi_heap_buffers(conn):
    text = q(conn, 'SHOW ENGINE INNODB STATUS')[0][2]
    bufs = [int(x) for x in re.findall(r'node heap has (\d+) buffer', text)]
    return sum(bufs)


def metric(conn, name):
    return int(q1(conn, 'SELECT `COUNT` FROM information_schema.INNODB_METRICS WHERE NAME = %s', (name,)) or 0)


# ------------------------------------------------------------------ workload
def worker(login, hot_rows, stop, out, seed):
    rnd = random.Random(seed)
    conn = connect(login)
    cur = conn.cursor()
    buckets = {}
    sql = 'SELECT v FROM %s.hot WHERE id = %%s' % SCHEMA
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            cur.execute(sql, (rnd.randint(1, hot_rows),))
            cur.fetchall()
        except pymysql.err.OperationalError:
            time.sleep(0.1)
            conn = connect(login)
            cur = conn.cursor()
            continue
        t1 = time.monotonic()
        b = int(t0 / BUCKET)
        cnt, mx = buckets.get(b, (0, 0.0))
        buckets[b] = (cnt + 1, max(mx, t1 - t0))
    out.put(buckets)


def merge(parts):
    total = {}
    for buckets in parts:
        for b, (cnt, mx) in buckets.items():
            c0, m0 = total.get(b, (0, 0.0))
            total[b] = (c0 + cnt, max(m0, mx))
    return total


def window_stats(buckets, t0, t1):
    lo, hi = int(t0 / BUCKET), int(t1 / BUCKET)
    sel = [buckets.get(b, (0, 0.0)) for b in range(lo, hi)]
    n = sum(c for c, _latency in sel)
    secs = max((hi - lo) * BUCKET, BUCKET)
    per_second = []
    per = int(round(1 / BUCKET))
    for i in range(0, len(sel) - per + 1, per):
        per_second.append(sum(c for c, _latency in sel[i:i + per]))
    return dict(queries=n, seconds=round(secs, 2), qps=round(n / secs, 1),
                min_qps_1s=min(per_second) if per_second else n,
                per_second=per_second,
                max_latency_ms=round(max([m for _count, m in sel] or [0.0]) * 1000, 2))


# ------------------------------------------------------------------ setup
def hex32_sql(n):
    """32 hex characters from n (MD5() and SHA1() do not exist in MySQL 9.7; SHA2() exists everywhere)."""
    return "LEFT(SHA2(%s, 256), 32)" % n


def payload_sql(n):
    return "REPEAT(%s, 3)" % hex32_sql(n)


def setup(conn, rows, hot_rows):
    q(conn, 'DROP DATABASE IF EXISTS %s' % SCHEMA)
    q(conn, 'CREATE DATABASE %s' % SCHEMA)
    q(conn, 'CREATE TABLE %s.hot (id INT PRIMARY KEY, v VARCHAR(64)) ENGINE=InnoDB' % SCHEMA)
    q(conn, 'CREATE TABLE %s.seq (id INT PRIMARY KEY) ENGINE=InnoDB' % SCHEMA)
    q(conn, 'INSERT INTO %s.seq VALUES (1)' % SCHEMA)
    n = 1
    while n < max(rows, hot_rows):
        q(conn, 'INSERT INTO %s.seq SELECT id + %d FROM %s.seq WHERE id + %d <= %d'
          % (SCHEMA, n, SCHEMA, n, max(rows, hot_rows)))
        n *= 2
    q(conn, 'INSERT INTO %s.hot SELECT id, %s FROM %s.seq WHERE id <= %d' % (SCHEMA, hex32_sql('id'), SCHEMA, hot_rows))
    q(conn, 'CREATE TABLE %s.big_tpl (id INT PRIMARY KEY, k INT NOT NULL, pad VARCHAR(120), KEY k (k)) '
            'ENGINE=InnoDB' % SCHEMA)
    q(conn, 'INSERT INTO %s.big_tpl SELECT id, id * 7 %% 1000003, %s FROM %s.seq WHERE id <= %d'
            % (SCHEMA, payload_sql('id'), SCHEMA, rows))


def make_big(conn, name):
    q(conn, 'CREATE TABLE %s.%s LIKE %s.big_tpl' % (SCHEMA, name, SCHEMA))
    q(conn, 'INSERT INTO %s.%s SELECT * FROM %s.big_tpl' % (SCHEMA, name, SCHEMA))


def hash_big(conn, name, passes):
    """eq_ref lookups on every row of the PK and the secondary index: AHI builds for its pages."""
    for _pass in range(passes):
        q(conn, 'SELECT /*+ NO_HASH_JOIN(a, b) */ COUNT(*) FROM %s.%s a STRAIGHT_JOIN %s.%s b '
                'ON b.id = a.id' % (SCHEMA, name, SCHEMA, name))
        q(conn, 'SELECT COUNT(*) FROM %s.%s a STRAIGHT_JOIN %s.%s b FORCE INDEX (k) ON b.k = a.k'
                % (SCHEMA, name, SCHEMA, name))


# ------------------------------------------------------------------ arms
def drop_plain(login, name):
    c = connect(login)
    try:
        t0 = time.monotonic()
        q(c, 'DROP TABLE %s.%s' % (SCHEMA, name))
        return dict(drop_seconds=round(time.monotonic() - t0, 4), ahi_off_seconds=0.0)
    finally:
        c.close()


def run_drop(login, name, drop_class=Drop, **options):
    """The module's guarded drop of SCHEMA.name (Drop, the code the module runs, or a subclass that times it)
    with options; its report."""
    params = dict(login, tables=['%s.%s' % (SCHEMA, name)], confirm=True, ahi_strategy='auto',
                  lock_wait_timeout=2, retries=3, retry_delay=1.0, rename_first=False, disable_binlog=False,
                  lift_super_read_only=False, follow=False, restore_timeout=60, connect_timeout=10)
    params.update(options)
    seq = drop_class(params)
    try:
        seq.run()
    finally:
        if seq.conn is not None:
            seq.conn.close()
    return seq.report()


def drop_guarded(login, name, strategy):
    rep = run_drop(login, name, ahi_strategy=strategy)
    steps = dict((s['step'], s['seconds']) for s in rep['steps'])
    return dict(drop_seconds=rep['tables'][0].get('seconds'), ahi_off_seconds=rep['ahi']['off_seconds'],
                ahi_before=rep['ahi']['before'], ahi_after=rep['ahi']['after'], toggled=rep['ahi']['toggled'],
                switch_off_seconds=steps.get('switch AHI OFF'), restore_seconds=steps.get('restore AHI ON'))


def ratio(b, a):
    if a in (0, None) or b is None:
        return None
    return round(float(b) / float(a), 3)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    ap.add_argument('--inventory', default=None,
                    help='inventory with the host (default: .lab/p-drop/hosts.yml if present, else inventories/lab/hosts.yml)')
    ap.add_argument('--host', default='mysql80')
    ap.add_argument('--rows', type=int, default=1000000, help='rows of each large table (~200 bytes each)')
    ap.add_argument('--hot-rows', type=int, default=100000)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--workers', type=int, default=3)
    ap.add_argument('--buffer-pool', default='1G', help='innodb_buffer_pool_size for the run (restored after)')
    ap.add_argument('--hash-passes', type=int, default=2)
    ap.add_argument('--settle', type=float, default=3.0, help='seconds after each drop inside the window')
    ap.add_argument('--rest', type=float, default=4.0, help='seconds of rest after preparing a table')
    ap.add_argument('--b-strategy', default='toggle', choices=['toggle', 'keep', 'auto'])
    ap.add_argument('--json', default=None, help='write all numbers to this file')
    args = ap.parse_args(argv)
    inventory = args.inventory
    if inventory is None:
        private = os.path.join(REPO, '.lab', 'p-drop', 'hosts.yml')
        inventory = private if os.path.exists(private) else os.path.join(REPO, 'inventories', 'lab', 'hosts.yml')
    login = host_login(inventory, args.host)
    admin = connect(login)
    version = q1(admin, 'SELECT @@version')
    pid = server_pid(admin)
    orig_bp = int(q1(admin, 'SELECT @@innodb_buffer_pool_size'))
    orig_ahi = int(q1(admin, 'SELECT @@innodb_adaptive_hash_index'))
    want_bp = int(args.buffer_pool[:-1]) * {'M': 1 << 20, 'G': 1 << 30}[args.buffer_pool[-1].upper()] \
        if args.buffer_pool[-1].upper() in 'MG' else int(args.buffer_pool)
    print('server %s (%s), pid %d; buffer pool %d MiB -> %d MiB, AHI %s -> ON for the run'
          % (args.host, version, pid, orig_bp >> 20, want_bp >> 20, 'ON' if orig_ahi else 'OFF'))
    stop = multiprocessing.Event()
    out = multiprocessing.Queue()
    procs = []
    results = dict(host=args.host, version=version, args=vars(args), rounds=[])
    try:
        set_bp(admin, want_bp)
        set_ahi_on(admin)
        q(admin, "SET GLOBAL innodb_monitor_enable = 'module_adaptive_hash'")
        t = time.monotonic()
        setup(admin, args.rows, args.hot_rows)
        print('setup: hot table %d rows, large table template %d rows in %.1f s'
              % (args.hot_rows, args.rows, time.monotonic() - t))
        for i in range(args.workers):
            p = multiprocessing.Process(target=worker, args=(login, args.hot_rows, stop, out, i))
            p.start()
            procs.append(p)
        time.sleep(3)
        events = []
        for r in range(args.rounds):
            order = ('A', 'B') if r % 2 == 0 else ('B', 'A')
            for arm in order:
                name = 'big_%d_%s' % (r, arm.lower())
                t = time.monotonic()
                make_big(admin, name)
                heap0 = ahi_heap_buffers(admin)
                added0 = metric(admin, 'adaptive_hash_pages_added')
                hash_big(admin, name, args.hash_passes)
                heap1 = ahi_heap_buffers(admin)
                added1 = metric(admin, 'adaptive_hash_pages_added')
                q(admin, 'ANALYZE TABLE %s.%s' % (SCHEMA, name))
                size = q1(admin, 'SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES '
                                 'WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s', (SCHEMA, name))
                prep = time.monotonic() - t
                time.sleep(args.rest)  # let purge/flushing of the copy calm down
                # baseline: same length as the measured window, right before the drop
                cpu_b0 = server_cpu(pid)
                base_t0 = time.monotonic()
                time.sleep(args.settle + 1.0)
                cpu_b1 = server_cpu(pid)
                t0 = time.monotonic()
                if arm == 'A':
                    info = drop_plain(login, name)
                else:
                    info = drop_guarded(login, name, args.b_strategy)
                t1 = time.monotonic()
                time.sleep(args.settle)
                t2 = time.monotonic()
                cpu_w1 = server_cpu(pid)
                hs = metric(admin, 'adaptive_hash_searches')
                bt = metric(admin, 'adaptive_hash_searches_btree')
                ev = dict(round=r, arm=arm, table=name, table_bytes=int(size or 0), prepare_seconds=round(prep, 1),
                          ahi_heap_buffers_before_hashing=heap0, ahi_heap_buffers_after_hashing=heap1,
                          ahi_pages_added_by_hashing=added1 - added0, statement_seconds=round(t1 - t0, 4),
                          base=(base_t0, t0), window=(t0, t2), cpu_base=cpu_b1 - cpu_b0, cpu_window=cpu_w1 - cpu_b1,
                          hash_searches=hs, btree_searches=bt, hot_ahi_after=ahi_heap_buffers(admin))
                ev.update(info)
                events.append(ev)
                print('round %d %s: %s %.0f MiB, AHI pages added by hashing %d (heap buffers %d -> %d); '
                      'statement %.3f s' % (r, arm, name, (size or 0) / 1048576.0, added1 - added0, heap0, heap1,
                                            t1 - t0))
                sys.stdout.flush()
    finally:
        stop.set()
        parts = []
        for _proc in procs:
            try:
                parts.append(out.get(timeout=30))
            except Exception:
                pass
        for p in procs:
            p.join(timeout=10)
        try:
            q(admin, 'DROP DATABASE IF EXISTS %s' % SCHEMA)
        finally:
            q(admin, 'SET GLOBAL innodb_adaptive_hash_index = %s' % ('ON' if orig_ahi else 'OFF'))
            set_bp(admin, orig_bp)
            pool_mib = int(q1(admin, 'SELECT @@innodb_buffer_pool_size')) >> 20
            ahi_now = 'ON' if q1(admin, 'SELECT @@innodb_adaptive_hash_index') else 'OFF'
            print('restored: buffer pool %d MiB, AHI %s' % (pool_mib, ahi_now))
    buckets = merge(parts)
    print('\n%-5s %-3s %9s %9s %9s %10s %10s %9s %9s %9s' % (
        'round', 'arm', 'stmt s', 'AHIoff s', 'qps base', 'qps drop', 'min1s/base', 'maxlat b', 'maxlat d',
        'cpu/kq d/b'))
    for ev in events:
        base = window_stats(buckets, *ev['base'])
        win = window_stats(buckets, *ev['window'])
        cpu_kq_b = ev['cpu_base'] / max(base['queries'], 1) * 1000
        cpu_kq_w = ev['cpu_window'] / max(win['queries'], 1) * 1000
        ev.update(base_stats=base, window_stats=win, cpu_per_kq_base=round(cpu_kq_b, 4),
                  cpu_per_kq_window=round(cpu_kq_w, 4),
                  qps_ratio=ratio(win['qps'], base['qps']), min_qps_ratio=ratio(win['min_qps_1s'], base['qps']),
                  max_latency_ratio=ratio(win['max_latency_ms'], base['max_latency_ms']),
                  cpu_ratio=ratio(cpu_kq_w, cpu_kq_b))
        print('%-5d %-3s %9.3f %9s %9.0f %10.0f %10.3f %9.1f %9.1f %9.3f' % (
            ev['round'], ev['arm'], ev['statement_seconds'], ev.get('ahi_off_seconds') or 0, base['qps'],
            win['qps'], ev['min_qps_ratio'] or 0, base['max_latency_ms'], win['max_latency_ms'],
            ev['cpu_ratio'] or 0))
        ev['base'] = list(ev['base'])
        ev['window'] = list(ev['window'])
    results['rounds'] = events

    def med(arm, key):
        vals = [ev[key] for ev in events if ev['arm'] == arm and ev.get(key) is not None]
        return round(statistics.median(vals), 3) if vals else None
    summary = {}
    for key in ('statement_seconds', 'qps_ratio', 'min_qps_ratio', 'max_latency_ratio', 'cpu_ratio'):
        summary[key] = dict(A=med('A', key), B=med('B', key), B_over_A=ratio(med('B', key), med('A', key)))
    summary['worst_latency_ms'] = {}
    for arm in 'AB':
        summary['worst_latency_ms'][arm] = round(statistics.median(
            [ev['window_stats']['max_latency_ms'] for ev in events if ev['arm'] == arm]), 2)
    summary['worst_latency_ms']['B_over_A'] = ratio(summary['worst_latency_ms']['B'], summary['worst_latency_ms']['A'])
    results['summary'] = summary
    print('\nmedians over %d rounds (window = drop start .. end + %.0f s; base = same length just before)'
          % (args.rounds, args.settle))
    print('%-34s %10s %10s %10s' % ('', 'A plain', 'B guarded', 'B/A'))
    labels = dict(statement_seconds='drop statement / sequence (s)', qps_ratio='throughput window/base',
                  min_qps_ratio='worst 1 s throughput / base', max_latency_ratio='worst latency window/base',
                  cpu_ratio='server CPU per query window/base', worst_latency_ms='worst latency in window (ms)')
    for key in ('statement_seconds', 'qps_ratio', 'min_qps_ratio', 'worst_latency_ms', 'max_latency_ratio',
                'cpu_ratio'):
        s = summary[key]
        print('%-34s %10s %10s %10s' % (labels[key], s['A'], s['B'], s['B_over_A']))
    # Verdict: toggling pays off only when it clearly lowers the worst latency and does not cost throughput.
    lat = summary['worst_latency_ms']['B_over_A']
    thr = summary['min_qps_ratio']['B_over_A']
    if lat is not None and thr is not None and lat < 0.8 and thr >= 0.95:
        verdict = 'toggle'
    else:
        verdict = 'keep'
    results['verdict'] = verdict
    print('\nverdict for %s %s: %s (worst latency B/A %s, worst 1 s throughput B/A %s; toggle needs < 0.8 and '
          '>= 0.95)' % (args.host, version, verdict, lat, thr))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(results, f, indent=1, default=str)
        print('numbers: %s' % args.json)
    return 0


def set_bp(conn, size):
    """Resize the buffer pool and wait until the resize finished (AHI cannot be switched on during it)."""
    if int(q1(conn, 'SELECT @@innodb_buffer_pool_size')) == size:
        return
    q(conn, 'SET GLOBAL innodb_buffer_pool_size = %d' % size)
    deadline = time.time() + 120
    time.sleep(1.0)
    while time.time() < deadline:
        status = q(conn, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_resize_status'")
        text = status[0][1] if status else ''
        if not text or text.startswith('Completed') or text.startswith('Size did not change'):
            return
        time.sleep(0.5)
    raise SystemExit('buffer pool resize did not finish: %s' % text)


def set_ahi_on(conn):
    deadline = time.time() + 60
    while time.time() < deadline:
        q(conn, 'SET GLOBAL innodb_adaptive_hash_index = ON')
        if int(q1(conn, 'SELECT @@innodb_adaptive_hash_index')):
            return
        time.sleep(0.5)
    raise SystemExit('innodb_adaptive_hash_index stays OFF')


if __name__ == '__main__':
    sys.exit(main())
