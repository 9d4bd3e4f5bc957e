#!/usr/bin/env python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bulk insert with random primary keys and the size on disk after it: InnoDB vs MyRocks (and InnoDB
compressed), in one run - the comparison of the collection's TokuDB source report, with MyRocks in
TokuDB's place.

Reads the login of HOST (default mariadb118) from an inventory written by lab/lab.py. MyRocks must be
loaded there (role dbfleet.innodb.myrocks; see bench/engines/README.md). Then, for each round, for each
variant in rotating order (A B C, B C A, ...):
  - creates an empty table of that variant (same columns: BIGINT primary key, two INTs, a DATETIME,
    a VARCHAR(64) and a VARCHAR(255) of log-like text),
  - inserts the same ROWS rows (generated once per round, before any timing) in primary-key order
    that is random, in multi-row INSERTs of 1000 rows committed every 10000 rows, from one client
    connection; variant myrocks_bulk does it with MyRocks' bulk loading on for the session
    (rocksdb_bulk_load, unsorted keys allowed),
  - measures the server's CPU seconds (utime + stime of the server process, /proc/PID/stat) and the
    wall time of the load, then the size on disk: InnoDB - the allocated size of the table's .ibd
    file; MyRocks - DATA_LENGTH + INDEX_LENGTH after a memtable flush and a compaction of the column
    family (the SST files' sizes as RocksDB reports them),
  - drops the table.
The memory is the same for both engines: for the run, rocksdb_block_cache_size is set to the
InnoDB buffer pool size (both put back at the end). Prints per-variant medians and the ratios
MyRocks/InnoDB and InnoDB compressed/InnoDB (CPU seconds, wall seconds, bytes on disk); --json FILE
writes everything.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(REPO, 'lab'))

from dbfleet_lab.serverload import connect, cpu_seconds as server_cpu, host_vars, query as q, \
    query_value as q1, server_pid  # noqa: E402

SCHEMA = 'dbfleet_bench_engines'
COLUMNS = ('id BIGINT UNSIGNED NOT NULL PRIMARY KEY, user_id INT NOT NULL, status INT NOT NULL, '
           'created DATETIME NOT NULL, host VARCHAR(64) NOT NULL, message VARCHAR(255) NOT NULL')
VARIANTS = {
    'innodb': 'ENGINE=InnoDB',
    'innodb_compressed': 'ENGINE=InnoDB ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8',
    'myrocks': 'ENGINE=ROCKSDB',
    'myrocks_bulk': 'ENGINE=ROCKSDB',
}
# Session settings of a variant: MyRocks' bulk loading (what Percona's TokuDB migration guide tells
# users to turn on to import into MyRocks), with unsorted keys allowed since they are random.
SESSION = {
    'myrocks_bulk': ('SET SESSION rocksdb_bulk_load_allow_unsorted = ON', 'SET SESSION rocksdb_bulk_load = ON'),
}
UNSET = {
    'myrocks_bulk': ('SET SESSION rocksdb_bulk_load = OFF', 'SET SESSION rocksdb_bulk_load_allow_unsorted = OFF'),
}
WORDS = ('GET', 'POST', '/api/v1/orders', '/api/v1/users', '/static/app.js', 'status', 'ok', 'error',
         'timeout', 'retry', 'client', 'session', 'cache', 'miss', 'hit', 'upstream', 'latency', 'ms')
BATCH = 1000
COMMIT_EVERY = 10000


def rows_for(seed, count):
    """count rows with distinct random 63-bit keys, the same for every variant of a round."""
    rnd = random.Random(seed)
    keys = set()
    while len(keys) < count:
        keys.add(rnd.getrandbits(63))
    keys = list(keys)
    rnd.shuffle(keys)
    base = 1700000000
    for key in keys:
        words = ' '.join(rnd.choice(WORDS) for _word in range(rnd.randint(6, 14)))
        yield (key, rnd.randint(1, 200000), rnd.choice((200, 200, 200, 304, 404, 500)),
               time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(base + rnd.randint(0, 86400 * 30))),
               'web-%02d.example.net' % rnd.randint(1, 40), '%s %d' % (words, rnd.randint(0, 99999)))


def ibd_bytes(datadir, table):
    path = os.path.join(datadir, SCHEMA, table + '.ibd')
    return os.stat(path).st_blocks * 512


def load(conn, pid, variant, table, rows):
    q(conn, 'DROP TABLE IF EXISTS %s.%s' % (SCHEMA, table))
    q(conn, 'CREATE TABLE %s.%s (%s) %s' % (SCHEMA, table, COLUMNS, VARIANTS[variant]))
    insert = 'INSERT INTO %s.%s VALUES ' % (SCHEMA, table)
    placeholders = '(%s, %s, %s, %s, %s, %s)'
    for statement in SESSION.get(variant, ()):
        q(conn, statement)
    conn.autocommit(False)
    cpu0, wall0 = server_cpu(pid), time.monotonic()
    batch, pending = [], 0
    with conn.cursor() as cur:
        for row in rows:
            batch.append(row)
            if len(batch) == BATCH:
                cur.execute(insert + ', '.join([placeholders] * len(batch)), [v for r in batch for v in r])
                pending += len(batch)
                batch = []
                if pending >= COMMIT_EVERY:
                    conn.commit()
                    pending = 0
        if batch:
            cur.execute(insert + ', '.join([placeholders] * len(batch)), [v for r in batch for v in r])
        conn.commit()
        conn.autocommit(True)
        for statement in UNSET.get(variant, ()):
            cur.execute(statement)      # ends the bulk load: its SST files are ingested here
    wall, cpu = time.monotonic() - wall0, server_cpu(pid) - cpu0
    return dict(variant=variant, rows=len(rows), wall_s=round(wall, 2), server_cpu_s=round(cpu, 2))


def size_after(conn, variant, table, datadir):
    if variant.startswith('myrocks'):
        q(conn, 'SET GLOBAL rocksdb_force_flush_memtable_now = ON')
        q(conn, "SET GLOBAL rocksdb_compact_cf = 'default'")
        q(conn, 'ANALYZE TABLE %s.%s' % (SCHEMA, table))
        row = q(conn, 'SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES '
                      'WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s', (SCHEMA, table))
        return int(row[0][0]), 'DATA_LENGTH+INDEX_LENGTH after flush and compaction'
    return ibd_bytes(datadir, table), 'allocated size of the .ibd file'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    ap.add_argument('--inventory', default=os.path.join(REPO, 'inventories', 'lab', 'hosts.yml'))
    ap.add_argument('--host', default='mariadb118')
    ap.add_argument('--rows', type=int, default=1000000)
    ap.add_argument('--rounds', type=int, default=1)
    ap.add_argument('--variants', default='innodb,myrocks,myrocks_bulk,innodb_compressed')
    ap.add_argument('--json', help='write the results to this file')
    args = ap.parse_args()
    variants = [v.strip() for v in args.variants.split(',') if v.strip()]
    bad = [v for v in variants if v not in VARIANTS]
    if bad or 'innodb' not in variants:
        raise SystemExit('--variants: %s; choose from %s (innodb is the baseline and required)'
                         % (', '.join(bad) or 'innodb missing', ', '.join(VARIANTS)))
    conn = connect(host_vars(args.inventory, args.host), local_infile=False)
    rocks = q(conn, "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'")
    rocks_wanted = any(v.startswith('myrocks') for v in variants)
    if rocks_wanted and not (rocks and rocks[0][0] in ('YES', 'DEFAULT')):
        raise SystemExit('MyRocks is not loaded on %s: enable it first (bench/engines/README.md)' % args.host)
    pid = server_pid(conn)
    datadir = q1(conn, 'SELECT @@datadir')
    version = q1(conn, 'SELECT @@version')
    pool = int(q1(conn, 'SELECT @@innodb_buffer_pool_size'))
    cache_before = int(q1(conn, 'SELECT @@rocksdb_block_cache_size')) if rocks_wanted else None
    q(conn, 'CREATE DATABASE IF NOT EXISTS %s' % SCHEMA)
    results = []
    try:
        if cache_before is not None:
            q(conn, 'SET GLOBAL rocksdb_block_cache_size = %d' % pool)
        for rnd in range(args.rounds):
            order = variants[rnd % len(variants):] + variants[:rnd % len(variants)]
            seed = 20130701 + rnd
            rows = list(rows_for(seed, args.rows))     # generated once, before any timing
            for variant in order:
                table = 't_%s' % variant
                res = load(conn, pid, variant, table, rows)
                res['bytes_on_disk'], res['size_source'] = size_after(conn, variant, table, datadir)
                res.update(round=rnd + 1)
                results.append(res)
                print('round %d %-18s wall %7.1f s  server CPU %7.1f s  on disk %8.1f MiB  (%s)'
                      % (rnd + 1, variant, res['wall_s'], res['server_cpu_s'], res['bytes_on_disk'] / 2**20,
                         res['size_source']), flush=True)
                q(conn, 'DROP TABLE %s.%s' % (SCHEMA, table))
    finally:
        if cache_before is not None:
            q(conn, 'SET GLOBAL rocksdb_block_cache_size = %d' % cache_before)
        q(conn, 'DROP DATABASE IF EXISTS %s' % SCHEMA)
        conn.close()

    def median(variant, key):
        return statistics.median(r[key] for r in results if r['variant'] == variant)

    summary = dict(host=args.host, version=version, rows=args.rows, rounds=args.rounds,
                   memory_bytes=pool, variants={}, ratios={})
    for variant in variants:
        summary['variants'][variant] = dict((k, median(variant, k)) for k in ('wall_s', 'server_cpu_s', 'bytes_on_disk'))
    base = summary['variants']['innodb']
    print('\n%s %s, %d rows with random primary keys, %d round(s), buffer pool = block cache = %d MiB'
          % (args.host, version, args.rows, args.rounds, pool // 2**20))
    for variant in variants:
        if variant == 'innodb':
            continue
        cur = summary['variants'][variant]
        ratios = dict((k, round(cur[k] / base[k], 3) if base[k] else None)
                      for k in ('wall_s', 'server_cpu_s', 'bytes_on_disk'))
        summary['ratios']['%s/innodb' % variant] = ratios
        print('%-28s wall %.2fx  server CPU %.2fx  on disk %.2fx'
              % (variant + ' / innodb:', ratios['wall_s'], ratios['server_cpu_s'], ratios['bytes_on_disk']))
    if args.json:
        with open(args.json, 'w') as handle:
            json.dump(dict(summary=summary, results=results), handle, indent=2)


if __name__ == '__main__':
    main()
