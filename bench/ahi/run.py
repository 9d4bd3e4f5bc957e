#!/usr/bin/env python
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""AHI ON vs OFF on the source report's workload, driven by a compiled load generator (sysbench).

Workload (the source: 13M rows, IN-lists of ~30 primary keys, 300 threads sleeping 5 ms):
`SELECT LEFT(v, 1) FROM ahi_test WHERE i IN (<--in-size uniform random ids>)` from --threads
sysbench threads (bench/ahi/inlist.lua, text protocol), at a fixed --rate (same for both arms;
0 = as fast as the threads go), on a table of --rows rows (i INT PK, j INT with a secondary key,
v TEXT of --text-len characters) held entirely in a buffer pool of --buffer-pool for the run.

AHI is switched ON and OFF in rotating order (ON OFF, OFF ON, ...) in one run. Before an ON arm,
sweeps of every id in IN-lists of consecutive ids (inlist.lua hashwarm, until 95% of a sweep's
searches are hashed, at most 4) build the hash index the way a long-running server has it
(--no-hashwarm measures while it is built). Each arm runs sysbench for --warmup + --seconds and
measures over the last --seconds: queries (Com_select),
server CPU seconds (utime + stime of mysqld, /proc/PID/stat), sysbench's own CPU, buffer pool reads
from disk, and the INNODB_METRICS counters adaptive_hash_searches (rows found through the hash
index) and adaptive_hash_searches_btree (B-tree searches). Those counters, the buffer pool size and
innodb_adaptive_hash_index are set for the run and put back as they were.

    .venv/bin/python bench/ahi/run.py --inventory .lab/bench/hosts.yml --host mysql80
    .venv/bin/python bench/ahi/run.py --host mysql80 --rows 4000000 --threads 128 --rate 0 --rounds 3
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, 'lab'))

from dbfleet_lab.serverload import connect, cpu_seconds, host_vars, query, query_value, server_pid, \
    write_sysbench_config  # noqa: E402

SEARCH_COUNTERS = ('adaptive_hash_searches', 'adaptive_hash_searches_btree')
STATUS = ('Com_select', 'Innodb_buffer_pool_reads', 'Innodb_buffer_pool_read_requests', 'Innodb_rows_read')


def size_bytes(text):
    """'1G', '512M', '1048576' -> bytes; SystemExit naming --buffer-pool otherwise."""
    units = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
    try:
        if text[-1].upper() in units:
            return int(text[:-1]) * units[text[-1].upper()]
        return int(text)
    except (ValueError, IndexError):
        raise SystemExit('--buffer-pool: a size such as 1G or 768M, not %r' % text) from None


def fill(conn, database, table, rows, text_len):
    """ahi_test with ids 1..rows (server-side doubling); refilled when its row count differs."""
    query(conn, 'CREATE DATABASE IF NOT EXISTS `%s`' % database)
    query(conn, 'CREATE TABLE IF NOT EXISTS `%s`.`%s` (i INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, '
                'j INT UNSIGNED NOT NULL, v TEXT, KEY ix_j (j)) ENGINE=InnoDB' % (database, table))
    have = query_value(conn, 'SELECT MAX(i) FROM `%s`.`%s`' % (database, table))
    length = query_value(conn, 'SELECT LENGTH(v) FROM `%s`.`%s` WHERE i = 1' % (database, table))
    if have == rows and length == text_len:
        return False
    query(conn, 'TRUNCATE TABLE `%s`.`%s`' % (database, table))
    query(conn, "INSERT INTO `%s`.`%s` VALUES (1, FLOOR(RAND() * 1073741824), REPEAT('x', %d))"
          % (database, table, text_len))
    n = 1
    while n < rows:
        query(conn, 'INSERT INTO `{d}`.`{t}` SELECT i + {n}, FLOOR(RAND() * 1073741824), v FROM `{d}`.`{t}` '
                    'WHERE i + {n} <= {r}'.format(d=database, t=table, n=n, r=rows))
        n *= 2
    query(conn, 'ANALYZE TABLE `%s`.`%s`' % (database, table))
    return True


def set_buffer_pool(conn, size):
    query(conn, 'SET GLOBAL innodb_buffer_pool_size = %d' % size)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        status = query(conn, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_resize_status'")
        text = status[0][1] if status else ''
        if not text or 'ompleted' in text or 'not started' in text.lower():
            break
        time.sleep(1)
    return int(query_value(conn, 'SELECT @@innodb_buffer_pool_size'))


def counters_state(conn):
    rows = query(conn, 'SELECT NAME, STATUS FROM information_schema.INNODB_METRICS WHERE NAME IN (%s)'
                 % ', '.join(['%s'] * len(SEARCH_COUNTERS)), SEARCH_COUNTERS)
    return dict((name, str(state).lower() == 'enabled') for name, state in rows)


def read_counters(conn):
    rows = query(conn, 'SELECT NAME, `COUNT` FROM information_schema.INNODB_METRICS WHERE NAME IN (%s)'
                 % ', '.join(['%s'] * len(SEARCH_COUNTERS)), SEARCH_COUNTERS)
    out = dict((name, int(count)) for name, count in rows)
    rows = query(conn, 'SHOW GLOBAL STATUS WHERE Variable_name IN (%s)' % ', '.join(['%s'] * len(STATUS)), STATUS)
    out.update((name, int(value)) for name, value in rows)
    return out


def set_ahi(conn, on):
    query(conn, 'SET GLOBAL innodb_adaptive_hash_index = %s' % ('ON' if on else 'OFF'))
    if int(query_value(conn, 'SELECT @@innodb_adaptive_hash_index')) != int(on):
        raise SystemExit('SET GLOBAL innodb_adaptive_hash_index = %s did not take effect' % on)


def sysbench_cmd(args, seconds):
    # The login (TCP) is in args.sysbench_config, a 0600 file, not on the command line.
    return ['sysbench', os.path.join(HERE, 'inlist.lua'), '--config-file=%s' % args.sysbench_config,
            '--table=%s' % args.table, '--rows=%d' % args.rows,
            '--in_size=%d' % args.in_size, '--sleep_ms=%d' % args.sleep_ms, '--threads=%d' % args.threads,
            '--rate=%d' % args.rate, '--time=%d' % seconds, 'run']


def hashwarm(args, conn):
    """Sweeps of every id in IN-lists of consecutive ids (inlist.lua hashwarm) until InnoDB answers at
    least 95% of a sweep's searches from the hash (at most 4 sweeps); (sweeps, seconds, last share)."""
    cmd = ['sysbench', os.path.join(HERE, 'inlist.lua'), '--config-file=%s' % args.sysbench_config,
           '--table=%s' % args.table, '--rows=%d' % args.rows, '--in_size=%d' % args.in_size, '--threads=4', 'hashwarm']
    t = time.monotonic()
    for sweep in range(1, 5):
        c0 = read_counters(conn)
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise SystemExit('sysbench hashwarm failed (%d): %s' % (proc.returncode, (proc.stderr or proc.stdout)[-2000:]))
        c1 = read_counters(conn)
        hs = c1['adaptive_hash_searches'] - c0['adaptive_hash_searches']
        bt = c1['adaptive_hash_searches_btree'] - c0['adaptive_hash_searches_btree']
        share = hs / float(max(hs + bt, 1))
        if share >= 0.95:
            break
    return sweep, round(time.monotonic() - t, 1), round(share, 3)


def arm(args, conn, pid, on):
    set_ahi(conn, on)
    warm = hashwarm(args, conn) if on and args.hashwarm else (0, 0.0, None)
    proc = subprocess.Popen(sysbench_cmd(args, int(args.warmup + args.seconds + 1)),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(args.warmup)
        c0, s0, k0, t0 = read_counters(conn), cpu_seconds(pid), cpu_seconds(proc.pid), time.monotonic()
        time.sleep(args.seconds)
        c1, s1, k1, t1 = read_counters(conn), cpu_seconds(pid), cpu_seconds(proc.pid), time.monotonic()
    finally:
        out = proc.communicate()[0]
    if proc.returncode != 0:
        raise SystemExit('sysbench failed (%d): %s' % (proc.returncode, out[-2000:]))
    d = dict((k, c1.get(k, 0) - c0.get(k, 0)) for k in c1)
    queries = d['Com_select'] - 1     # the second read of the INNODB_METRICS counters is a SELECT itself
    searches = d['adaptive_hash_searches'] + d['adaptive_hash_searches_btree']
    wall, cpu = t1 - t0, s1 - s0
    return dict(ahi='ON' if on else 'OFF', hashwarm_sweeps=warm[0], hashwarm_s=warm[1], hashwarm_last_share=warm[2],
                seconds=round(wall, 2), queries=queries, qps=round(queries / wall, 1),
                server_cpu_s=round(cpu, 3), server_cpu_pct=round(100 * cpu / wall, 1),
                server_cpu_us_per_query=round(1e6 * cpu / max(queries, 1), 1),
                client_cpu_pct=round(100 * (k1 - k0) / wall, 1),
                hash_searches=d['adaptive_hash_searches'], btree_searches=d['adaptive_hash_searches_btree'],
                hash_share=round(d['adaptive_hash_searches'] / float(max(searches, 1)), 3),
                rows_read_per_query=round(d['Innodb_rows_read'] / float(max(queries, 1)), 1),
                pool_reads=d['Innodb_buffer_pool_reads'], pool_read_requests=d['Innodb_buffer_pool_read_requests'])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--inventory', default=os.path.join(REPO, 'inventories', 'lab', 'hosts.yml'))
    ap.add_argument('--host', default='mysql80')
    ap.add_argument('--database', default='dbfleet_bench_ahi')
    ap.add_argument('--table', default='ahi_src')
    ap.add_argument('--rows', type=int, default=2000000, help='table rows (default 2000000)')
    ap.add_argument('--text-len', type=int, default=100, help='characters of v (default 100)')
    ap.add_argument('--buffer-pool', default='1G', help='innodb_buffer_pool_size for the run (default 1G)')
    ap.add_argument('--threads', type=int, default=64, help='sysbench threads (default 64)')
    ap.add_argument('--rate', type=int, default=800, help='queries/s for both arms; 0 = unlimited (default 800)')
    ap.add_argument('--sleep-ms', type=int, default=0, help='sleep of each thread after a query (default 0)')
    ap.add_argument('--in-size', type=int, default=30, help='ids per IN-list (default 30)')
    ap.add_argument('--rounds', type=int, default=2, help='rounds of ON and OFF, order rotating (default 2)')
    ap.add_argument('--seconds', type=float, default=25, help='measured seconds per arm (default 25)')
    ap.add_argument('--warmup', type=float, default=5, help='seconds per arm before measuring (default 5)')
    ap.add_argument('--no-hashwarm', dest='hashwarm', action='store_false',
                    help='measure ON arms while the hash index is still being built (no sweep before them)')
    ap.add_argument('--json', help='also write the results to this file')
    args = ap.parse_args()
    if not shutil.which('sysbench'):
        raise SystemExit('sysbench is not installed: apt-get install sysbench (bindep.txt, profile bench)')
    for name in ('rows', 'threads', 'in_size', 'rounds', 'seconds'):
        if getattr(args, name) <= 0:
            raise SystemExit('--%s must be positive' % name.replace('_', '-'))
    want_pool = size_bytes(args.buffer_pool)
    hv = host_vars(args.inventory, args.host)
    conn = connect(hv)
    version = query_value(conn, 'SELECT @@version')
    if 'mariadb' in version.lower():
        raise SystemExit('%s is MariaDB %s: it stops counting B-tree searches while AHI is OFF; run on MySQL'
                         % (args.host, version))
    pid = server_pid(conn)
    orig_pool = int(query_value(conn, 'SELECT @@innodb_buffer_pool_size'))
    orig_ahi = int(query_value(conn, 'SELECT @@innodb_adaptive_hash_index'))
    orig_counters = counters_state(conn)
    rounds = []
    workdir = tempfile.mkdtemp(prefix='dbfleet-ahi-')
    args.sysbench_config = write_sysbench_config(os.path.join(workdir, 'sysbench.cfg'), hv, args.database, tcp=True)
    try:
        pool = set_buffer_pool(conn, want_pool)
        t = time.monotonic()
        if fill(conn, args.database, args.table, args.rows, args.text_len):
            print('filled %s.%s with %d rows in %.0f s' % (args.database, args.table, args.rows, time.monotonic() - t))
        query(conn, 'ANALYZE TABLE `%s`.`%s`' % (args.database, args.table))
        data, index = query(conn, 'SELECT DATA_LENGTH, INDEX_LENGTH FROM information_schema.TABLES '
                                  'WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s', (args.database, args.table))[0]
        # Read the whole table once so the arms measure lookups in memory, not I/O.
        query(conn, 'SELECT COUNT(*), SUM(LENGTH(v)) FROM `%s`.`%s`' % (args.database, args.table))
        query(conn, 'SELECT COUNT(*) FROM `%s`.`%s` FORCE INDEX (ix_j) WHERE j >= 0' % (args.database, args.table))
        for name in SEARCH_COUNTERS:
            if not orig_counters.get(name):
                query(conn, 'SET GLOBAL innodb_monitor_enable = %s', (name,))
        print('%s %s pid %d; buffer pool %d MiB for the run (was %d MiB); %s.%s %d rows, data %d MiB + '
              'secondary index %d MiB; %d threads, rate %s, IN-lists of %d, %d s per arm after %d s warm-up%s'
              % (args.host, version, pid, pool >> 20, orig_pool >> 20, args.database, args.table, args.rows,
                 data >> 20, index >> 20, args.threads, '%d q/s' % args.rate if args.rate else 'unlimited',
                 args.in_size, args.seconds, args.warmup,
                 ' (ON arms: after sweeps of every id until the hash answers 95% of a sweep)' if args.hashwarm else
                 ' (no sweep: ON arms measure the hash index while it is built)'), flush=True)
        print('%-5s %-4s %8s %8s %9s %11s %9s %10s %10s %7s %10s %7s' % (
            'round', 'AHI', 'q/s', 'srv CPU', 'srv CPU %', 'us/query', 'sysbench %', 'hash', 'btree', 'share',
            'disk reads', 'sweeps'))
        for rnd in range(args.rounds):
            for on in ((True, False) if rnd % 2 == 0 else (False, True)):
                res = arm(args, conn, pid, on)
                res['round'] = rnd + 1
                rounds.append(res)
                print('%-5d %-4s %8.0f %7.2fs %8.1f%% %11.1f %9.1f%% %10d %10d %7.3f %10d %7d' % (
                    rnd + 1, res['ahi'], res['qps'], res['server_cpu_s'], res['server_cpu_pct'],
                    res['server_cpu_us_per_query'], res['client_cpu_pct'], res['hash_searches'],
                    res['btree_searches'], res['hash_share'], res['pool_reads'], res['hashwarm_sweeps']), flush=True)
    finally:
        for name in SEARCH_COUNTERS:
            if name in orig_counters and not orig_counters[name]:
                query(conn, 'SET GLOBAL innodb_monitor_disable = %s', (name,))
        query(conn, 'SET GLOBAL innodb_adaptive_hash_index = %s' % ('ON' if orig_ahi else 'OFF'))
        restored = set_buffer_pool(conn, orig_pool)
        print('put back: innodb_adaptive_hash_index %s, buffer pool %d MiB, counters %s'
              % ('ON' if orig_ahi else 'OFF', restored >> 20,
                 ', '.join('%s %s' % (k, 'enabled' if v else 'disabled') for k, v in counters_state(conn).items())))
        conn.close()
        shutil.rmtree(workdir, ignore_errors=True)

    def total(state):
        rs = [r for r in rounds if r['ahi'] == state]
        cpu, n, wall = sum(r['server_cpu_s'] for r in rs), sum(r['queries'] for r in rs), sum(r['seconds'] for r in rs)
        hs, bt = sum(r['hash_searches'] for r in rs), sum(r['btree_searches'] for r in rs)
        return dict(qps=n / wall, server_cpu_pct=100 * cpu / wall, us_per_query=1e6 * cpu / max(n, 1),
                    hash_share=hs / float(max(hs + bt, 1)), btree_per_query=bt / float(max(n, 1)),
                    hash_per_query=hs / float(max(n, 1)),
                    client_cpu_pct=statistics.mean(r['client_cpu_pct'] for r in rs),
                    pool_reads=sum(r['pool_reads'] for r in rs))
    on, off = total('ON'), total('OFF')
    pairs = []
    for rnd in range(args.rounds):
        a = dict((r['ahi'], r) for r in rounds if r['round'] == rnd + 1)
        pairs.append(a['ON']['server_cpu_us_per_query'] / a['OFF']['server_cpu_us_per_query'])
    print()
    print('%-32s %10s %10s %8s' % ('', 'AHI ON', 'AHI OFF', 'ON/OFF'))
    for key, label in (('us_per_query', 'server CPU us / query'), ('server_cpu_pct', 'server CPU % of a core'),
                       ('qps', 'queries/s'), ('hash_per_query', 'hash searches / query'),
                       ('btree_per_query', 'B-tree searches / query'), ('client_cpu_pct', 'sysbench CPU % of a core')):
        print('%-32s %10.2f %10.2f %8.3f' % (label, on[key], off[key], on[key] / off[key] if off[key] else float('nan')))
    print('%-32s %10.3f %10.3f' % ('hash share of searches', on['hash_share'], off['hash_share']))
    print('%-32s %10d %10d' % ('buffer pool reads from disk', on['pool_reads'], off['pool_reads']))
    print('server CPU per query ON/OFF: %.3f (rounds %s); source: CPU 100%% -> ~60%% and 20,000 -> 37,000 q/s'
          % (on['us_per_query'] / off['us_per_query'], ' '.join('%.3f' % p for p in pairs)))
    if args.json:
        with open(args.json, 'w') as handle:
            json.dump(dict(server=version, args=vars(args), rounds=rounds, on=on, off=off, pairs=pairs), handle,
                      indent=1)


if __name__ == '__main__':
    main()
