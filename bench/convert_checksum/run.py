#!/usr/bin/env python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the content checksum of dbfleet.innodb.convert_tables costs, as ratios in one run.

On one lab server (login from the lab inventory), a table of --rows rows (INT key, two VARCHARs, a nullable
INT, a DATETIME) in --engine; then, alternating in each round, and timing each statement:
  A  CHECKSUM TABLE (what a user would otherwise run; engine-dependent, see docs/convert_tables.md)
  B  the module's content checksum (content_checksum_sql: two CRC32 lanes over each row's values)
  C  an MD5 per row cut into four 32-bit lanes with CONV (the stronger hash the module does not use)
  D  ALTER TABLE ... ENGINE=<same engine> (a rebuild: what the conversion itself costs)
Prints the medians and the ratios B/A, C/B and 2B/D (the two checksums of a conversion against its ALTER).
Server CPU time is not separated from the client's: both run on this machine; the ratios are what counts.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(REPO, '.collections'))
sys.path.insert(0, os.path.join(REPO, 'lab'))

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.content_checksum import content_checksum_sql  # noqa: E402
from dbfleet_lab.serverload import connect, host_vars  # noqa: E402

SCHEMA = 'dbfleet_bench_convert'
COLUMNS = ['id', 'v', 'w', 'n', 'd']


def md5_sql():
    row = "CONCAT_WS('#', %s, CONCAT(%s))" % (', '.join('CAST(`%s` AS BINARY)' % c for c in COLUMNS),
                                              ', '.join('ISNULL(`%s`)' % c for c in COLUMNS))
    lanes = ', '.join('SUM(CAST(CONV(SUBSTRING(h, %d, 8), 16, 10) AS UNSIGNED))' % (1 + 8 * i) for i in range(4))
    return 'SELECT COUNT(*), %s FROM (SELECT MD5(%s) AS h FROM %s.t) AS x' % (lanes, row, SCHEMA)


def timed(cur, sql):
    started = time.perf_counter()
    cur.execute(sql)
    cur.fetchall()
    return time.perf_counter() - started


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    ap.add_argument('--inventory', default=os.path.join(REPO, 'inventories', 'lab', 'hosts.yml'))
    ap.add_argument('--host', default='mariadb118')
    ap.add_argument('--rows', type=int, default=300000)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--engine', default='MyISAM')
    args = ap.parse_args()
    conn = connect(host_vars(args.inventory, args.host))
    cur = conn.cursor()
    cur.execute('SELECT VERSION()')
    version = cur.fetchone()[0]
    cur.execute('DROP DATABASE IF EXISTS %s' % SCHEMA)
    cur.execute('CREATE DATABASE %s' % SCHEMA)
    try:
        cur.execute('CREATE TABLE %s.t (id INT PRIMARY KEY, v VARCHAR(64), w VARCHAR(64), n INT NULL, d DATETIME) '
                    'ENGINE=%s' % (SCHEMA, args.engine))
        batch = 10000
        for start in range(1, args.rows + 1, batch):
            values = ', '.join("(%d, MD5(%d), SHA1(%d), %s, '2026-01-01' + INTERVAL %d SECOND)"
                               % (i, i, i, 'NULL' if i % 7 == 0 else str(i), i)
                               for i in range(start, min(start + batch, args.rows + 1)))
            cur.execute('INSERT INTO %s.t VALUES %s' % (SCHEMA, values))
        arms = dict(A='CHECKSUM TABLE %s.t' % SCHEMA, B=content_checksum_sql(SCHEMA, 't', COLUMNS), C=md5_sql(),
                    D='ALTER TABLE %s.t ENGINE=%s' % (SCHEMA, args.engine))
        times = dict((k, []) for k in arms)
        for rnd in range(args.rounds):
            order = sorted(arms) if rnd % 2 == 0 else sorted(arms, reverse=True)
            for k in order:
                times[k].append(timed(cur, arms[k]))
            print('round %d: %s' % (rnd + 1, ', '.join('%s %.2fs' % (k, times[k][-1]) for k in sorted(arms))))
        med = dict((k, statistics.median(v)) for k, v in times.items())
        print('%s, %d rows, %s, %d rounds (medians): CHECKSUM TABLE %.2fs, content checksum %.2fs, MD5 lanes %.2fs, '
              'ALTER %.2fs' % (version, args.rows, args.engine, args.rounds, med['A'], med['B'], med['C'], med['D']))
        print('ratios: content/CHECKSUM TABLE %.2f, MD5 lanes/content %.2f, two content checksums/ALTER %.2f'
              % (med['B'] / med['A'], med['C'] / med['B'], 2 * med['B'] / med['D']))
    finally:
        cur.execute('DROP DATABASE IF EXISTS %s' % SCHEMA)


if __name__ == '__main__':
    main()
