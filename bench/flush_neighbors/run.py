#!/usr/bin/env python
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pages flushed per transaction with innodb_flush_neighbors=0 (A) and =1 (B), on one lab server.

The same sysbench oltp_write_only workload runs in alternating rounds (A B, B A, A B, ...). Each round
is --events transactions with innodb_max_dirty_pages_pct lowered to --dirty-pct (so the page cleaner
flushes while the transactions keep re-dirtying pages, as on a server whose data outgrows its buffer
pool), then a drain (innodb_max_dirty_pages_pct=0 until the buffer pool has no
dirty pages left), so every round pays for all the pages it dirtied. Per round it reads the server's
counters: Innodb_buffer_pool_pages_flushed, Com_commit, and the server process's CPU time
(/proc/<pid>/stat utime+stime). It reports pages flushed per transaction and CPU ms per transaction
for A and B, and the ratios B/A.

    .venv/bin/python bench/flush_neighbors/run.py                 # mysql80, 3 rounds of 6000 trx each way
    .venv/bin/python bench/flush_neighbors/run.py --host mariadb1011 --rounds 5 --events 20000

Everything it changes is put back at the end (innodb_flush_neighbors, innodb_max_dirty_pages_pct);
its schema dbfleet_bench_fn is dropped unless --keep.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import pymysql

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from dbfleet_lab.inventory import read_hosts  # noqa: E402
from dbfleet_lab.serverload import connect_retry  # noqa: E402
SCHEMA = 'dbfleet_bench_fn'


def lab_host(name, inventory):
    found = read_hosts(inventory)
    if name in found:
        return found[name]
    # the inventory may belong to another lab directory: ask the lab itself
    lab_dir = os.environ.get('DBFLEET_LAB_DIR') or os.path.join(ROOT, '.lab')
    proc = subprocess.run([sys.executable, os.path.join(ROOT, 'lab', 'lab.py'), '--lab-dir', lab_dir,
                           'status', '--json'], capture_output=True, text=True, check=False)
    rows = dict((r['host'], r) for r in json.loads(proc.stdout)['hosts']) if proc.returncode == 0 else {}
    if rows.get(name, {}).get('state') != 'up':
        sys.exit('host %s is not up in %s nor in the lab at %s (make lab-up)' % (name, inventory, lab_dir))
    with open(os.path.join(lab_dir, 'secrets.json')) as f:
        secrets = json.load(f)
    return dict(dbfleet_login_unix_socket=rows[name]['socket'], dbfleet_login_user=secrets['admin_user'],
                dbfleet_login_password=secrets['admin_password'])


def server_pid(hv):
    """The server's pid, from its pid_file (asked from the server)."""
    conn = connect(hv)
    try:
        path = one(conn, 'SELECT @@pid_file AS p')['p']
    finally:
        conn.close()
    if not os.path.isabs(path):
        conn = connect(hv)
        try:
            path = os.path.join(one(conn, 'SELECT @@datadir AS d')['d'], path)
        finally:
            conn.close()
    with open(path) as f:
        return int(f.read().strip())


def cpu_seconds(pid):
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / float(os.sysconf('SC_CLK_TCK'))


def connect(hv, db=None):
    """A dict-cursor connection to the lab host HV, retried for 30 s while its server restarts."""
    return connect_retry(hv, seconds=30, database=db, cursorclass=pymysql.cursors.DictCursor, connect_timeout=10)


def one(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchone()


def status(conn, names):
    with conn.cursor() as cur:
        cur.execute('SHOW GLOBAL STATUS WHERE Variable_name IN (%s)' % ', '.join(['%s'] * len(names)), names)
        return dict((r['Variable_name'], int(r['Value'])) for r in cur.fetchall())


def sysbench(hv, args, command):
    argv = ['sysbench', 'oltp_write_only', '--db-driver=mysql',
            '--mysql-socket=%s' % hv['dbfleet_login_unix_socket'], '--mysql-user=%s' % hv['dbfleet_login_user'],
            '--mysql-password=%s' % hv['dbfleet_login_password'], '--mysql-db=%s' % SCHEMA,
            '--tables=%d' % args.tables, '--table-size=%d' % args.table_size, '--threads=%d' % args.threads,
            '--rand-type=%s' % args.rand_type, '--report-interval=0']
    if command == 'run':
        # a fixed number of transactions per round (time only as a safety cap)
        argv += ['--events=%d' % args.events, '--time=%d' % args.max_seconds]
    proc = subprocess.run(argv + [command], capture_output=True, text=True, timeout=args.max_seconds + 600,
                          check=False)
    if proc.returncode != 0:
        sys.exit('sysbench %s failed:\n%s%s' % (command, proc.stdout[-2000:], proc.stderr[-2000:]))
    m = re.search(r'transactions:\s+(\d+)', proc.stdout)
    return int(m.group(1)) if m else None


def drain(conn, timeout):
    """Flush every dirty page (innodb_max_dirty_pages_pct=0) and wait until none is left."""
    one(conn, 'SET GLOBAL innodb_max_dirty_pages_pct = 0')
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if status(conn, ['Innodb_buffer_pool_pages_dirty'])['Innodb_buffer_pool_pages_dirty'] == 0:
            return True
        time.sleep(0.2)
    return False


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    p.add_argument('--host', default='mysql80', help='lab host (default mysql80)')
    p.add_argument('--inventory', default=os.path.join(ROOT, 'inventories', 'lab', 'hosts.yml'))
    p.add_argument('--rounds', type=int, default=3, help='A/B pairs (default 3)')
    p.add_argument('--events', type=int, default=6000, help='transactions per round (default 6000)')
    p.add_argument('--max-seconds', type=int, default=60, help='cap on one round\'s workload (default 60)')
    p.add_argument('--dirty-pct', type=float, default=5.0,
                   help='innodb_max_dirty_pages_pct during the workload, so the page cleaner flushes while '
                        'transactions re-dirty pages (default 5; the server\'s own value is put back)')
    p.add_argument('--tables', type=int, default=4)
    p.add_argument('--table-size', type=int, default=50000)
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--rand-type', default='special', choices=['special', 'uniform', 'gaussian', 'pareto'],
                   help='sysbench key distribution (default special: hot spots, as in OLTP)')
    p.add_argument('--drain-timeout', type=int, default=60)
    p.add_argument('--keep', action='store_true', help='keep the sysbench schema')
    p.add_argument('--json', action='store_true', help='print the result as JSON too')
    args = p.parse_args()

    hv = lab_host(args.host, args.inventory)
    pid = server_pid(hv)
    conn = connect(hv)
    version = one(conn, 'SELECT @@version AS v')['v']
    saved = one(conn, 'SELECT @@GLOBAL.innodb_flush_neighbors AS fn, @@GLOBAL.innodb_max_dirty_pages_pct AS pct')
    one(conn, 'CREATE DATABASE IF NOT EXISTS %s' % SCHEMA)
    rounds = []
    try:
        print('%s (%s, pid %d): preparing %d x %d rows' % (args.host, version, pid, args.tables, args.table_size))
        sysbench(hv, args, 'cleanup')
        sysbench(hv, args, 'prepare')
        drain(conn, args.drain_timeout)
        one(conn, 'SET GLOBAL innodb_max_dirty_pages_pct = %s', (saved['pct'],))
        sysbench(hv, dict_args(args, events=max(args.events // 4, 100)), 'run')  # warm-up, not measured
        for r in range(args.rounds):
            for label, value in (('A', 0), ('B', 1)) if r % 2 == 0 else (('B', 1), ('A', 0)):
                drain(conn, args.drain_timeout)
                one(conn, 'SET GLOBAL innodb_max_dirty_pages_pct = %s', (args.dirty_pct,))
                one(conn, 'SET GLOBAL innodb_flush_neighbors = %s', (value,))
                s0 = status(conn, ['Innodb_buffer_pool_pages_flushed', 'Com_commit'])
                c0 = cpu_seconds(pid)
                trx = sysbench(hv, args, 'run')
                drained = drain(conn, args.drain_timeout)
                s1 = status(conn, ['Innodb_buffer_pool_pages_flushed', 'Com_commit'])
                c1 = cpu_seconds(pid)
                commits = s1['Com_commit'] - s0['Com_commit']
                flushed = s1['Innodb_buffer_pool_pages_flushed'] - s0['Innodb_buffer_pool_pages_flushed']
                row = dict(round=r + 1, label=label, flush_neighbors=value, transactions=trx, commits=commits,
                           pages_flushed=flushed, pages_per_trx=flushed / float(max(commits, 1)),
                           cpu_ms_per_trx=1000.0 * (c1 - c0) / max(commits, 1), drained=drained)
                rounds.append(row)
                print('round %d %s flush_neighbors=%d: %6d trx, %7d pages flushed, %.3f pages/trx, '
                      '%.3f CPU ms/trx%s' % (row['round'], label, value, commits, flushed, row['pages_per_trx'],
                                             row['cpu_ms_per_trx'], '' if drained else ' (drain timed out)'))
    finally:
        one(conn, 'SET GLOBAL innodb_flush_neighbors = %s', (saved['fn'],))
        one(conn, 'SET GLOBAL innodb_max_dirty_pages_pct = %s', (saved['pct'],))
        if not args.keep:
            one(conn, 'DROP DATABASE IF EXISTS %s' % SCHEMA)
        conn.close()

    def total(label, key):
        return sum(r[key] for r in rounds if r['label'] == label)
    a_ppt = total('A', 'pages_flushed') / float(total('A', 'commits'))
    b_ppt = total('B', 'pages_flushed') / float(total('B', 'commits'))
    per_round = [b['pages_per_trx'] / a['pages_per_trx'] for a, b in zip(
        [r for r in rounds if r['label'] == 'A'], [r for r in rounds if r['label'] == 'B']) if a['pages_per_trx']]
    a_cpu = statistics.median(r['cpu_ms_per_trx'] for r in rounds if r['label'] == 'A')
    b_cpu = statistics.median(r['cpu_ms_per_trx'] for r in rounds if r['label'] == 'B')
    summary = dict(host=args.host, version=version, rounds=args.rounds, events=args.events,
                   dirty_pct=args.dirty_pct, rand_type=args.rand_type,
                   pages_per_trx_A=round(a_ppt, 4), pages_per_trx_B=round(b_ppt, 4),
                   ratio_pages_B_over_A=round(b_ppt / a_ppt, 4),
                   ratio_pages_per_round=[round(x, 4) for x in per_round],
                   cpu_ms_per_trx_A=round(a_cpu, 4), cpu_ms_per_trx_B=round(b_cpu, 4),
                   ratio_cpu_B_over_A=round(b_cpu / a_cpu, 4) if a_cpu else None)
    print()
    print('A (flush_neighbors=0): %.3f pages flushed/trx, %.3f server CPU ms/trx' % (a_ppt, a_cpu))
    print('B (flush_neighbors=1): %.3f pages flushed/trx, %.3f server CPU ms/trx' % (b_ppt, b_cpu))
    print('B/A pages flushed per transaction: %.3f (per round: %s)' % (
        summary['ratio_pages_B_over_A'], ', '.join('%.3f' % x for x in per_round)))
    if summary['ratio_cpu_B_over_A']:
        print('B/A server CPU per transaction: %.3f' % summary['ratio_cpu_B_over_A'])
    if args.json:
        print(json.dumps(dict(summary=summary, rounds=rounds), indent=2))


def dict_args(args, **changes):
    new = argparse.Namespace(**vars(args))
    for k, v in changes.items():
        setattr(new, k, v)
    return new


if __name__ == '__main__':
    main()
