#!/usr/bin/env python
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Server CPU per 100,000 key lookups: InnoDB memcached `get @@token.<key>` vs SQL primary-key SELECT.

Same table, same random keys, same number of lookups, in alternating rounds (A B A B ...) in one
run. The server's CPU time comes from /proc/<mysqld pid>/stat (utime + stime) around each round.

By default it starts its own MySQL 8.0.33 with the plugin (lab.py, lab directory .lab/bench-memcached,
port base 45700: mysqld 45780, memcached 45911), applies the dbfleet.innodb.memcached role to it
with a container on the bench table, measures, and removes the server again (--keep keeps it).

    .venv/bin/python bench/memcached/run.py                 # ~2-3 minutes with the defaults on 2 busy cores
    .venv/bin/python bench/memcached/run.py --lookups 400000 --rounds 8 --rows 200000 --threads 2
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, '.collections'))

import pymysql  # noqa: E402

from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache_client import MemcacheClient  # noqa: E402

PLAY = """
- hosts: mysql80
  gather_facts: false
  vars:
    memcached_containers:
      - {name: token, schema: bench_memc, table: token, key_column: id, value_columns: [token], unique_index: PRIMARY}
  roles:
    - role: dbfleet.innodb.memcached
"""


def lab(args, *cmd):
    base = [sys.executable, os.path.join(REPO, 'lab', 'lab.py'), '--lab-dir', args.lab_dir,
            '--port-base', str(args.port_base), '--inventory', os.path.join(args.lab_dir, 'hosts.yml')]
    return subprocess.run(base + list(cmd), check=True, capture_output=True, text=True)


def inventory_host(args):
    """mysql80's host vars from the lab inventory (the lab writes it as YAML that is also plain JSON-ish)."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, '.collections'))
    out = subprocess.run([os.path.join(REPO, '.venv', 'bin', 'ansible-inventory'), '-i',
                          os.path.join(args.lab_dir, 'hosts.yml'), '--host', 'mysql80'],
                         check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def cpu_seconds(pid):
    with open('/proc/%d/stat' % pid) as handle:
        fields = handle.read().rsplit(')', 1)[1].split()
    ticks = os.sysconf('SC_CLK_TCK')
    return (int(fields[11]) + int(fields[12])) / float(ticks)  # utime, stime


def percentile(values, p):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def run_round(kind, keys, threads, conn_args, port):
    """Look up `keys` split over `threads` workers; returns (seconds, errors, latencies in ms)."""
    chunks = [keys[i::threads] for i in range(threads)]
    errors = [0] * threads
    lat = [[] for _n in range(threads)]
    clients = []
    for i in range(threads):
        if kind == 'memcache':
            clients.append(MemcacheClient('127.0.0.1', port, 5).connect())
        else:
            clients.append(pymysql.connect(**conn_args))

    def work(i):
        c = clients[i]
        sample = lat[i]
        if kind == 'memcache':
            for n, key in enumerate(chunks[i]):
                t = time.perf_counter()
                full = '@@token.' + key
                if full not in c.get([full]):
                    errors[i] += 1
                if n % 50 == 0:
                    sample.append((time.perf_counter() - t) * 1000)
        else:
            cur = c.cursor()
            for n, key in enumerate(chunks[i]):
                t = time.perf_counter()
                cur.execute('SELECT id, token FROM bench_memc.token WHERE id = %s', (key,))
                if cur.fetchone() is None:
                    errors[i] += 1
                if n % 50 == 0:
                    sample.append((time.perf_counter() - t) * 1000)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - start
    for c in clients:
        c.close()
    return elapsed, sum(errors), [x for part in lat for x in part]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--lookups', type=int, default=60000, help='lookups per method in total (default 60000)')
    parser.add_argument('--rounds', type=int, default=6, help='rounds per method, alternating (default 6)')
    parser.add_argument('--rows', type=int, default=50000, help='rows in the bench table (default 50000)')
    parser.add_argument('--threads', type=int, default=1, help='client connections per method (default 1)')
    parser.add_argument('--lab-dir', default=os.path.join(REPO, '.lab', 'bench-memcached'))
    parser.add_argument('--port-base', type=int, default=45700)
    parser.add_argument('--keep', action='store_true', help='leave the bench server running afterwards')
    parser.add_argument('--json', help='also write the results to this file')
    args = parser.parse_args()

    t0 = time.time()
    print('starting a private MySQL 8.0.33 in %s (port base %d)...' % (args.lab_dir, args.port_base), flush=True)
    lab(args, 'up', 'mysql80')
    try:
        hv = inventory_host(args)
        conn_args = dict(unix_socket=hv['dbfleet_login_unix_socket'], user=hv['dbfleet_login_user'],
                         password=hv['dbfleet_login_password'], autocommit=True)
        port = int(hv['memcached_port'])
        conn = pymysql.connect(**conn_args)
        cur = conn.cursor()
        cur.execute('CREATE DATABASE IF NOT EXISTS bench_memc')
        cur.execute('CREATE TABLE IF NOT EXISTS bench_memc.token (id VARCHAR(32) NOT NULL PRIMARY KEY, '
                    'token VARCHAR(128) NOT NULL)')
        cur.execute('SELECT COUNT(*) FROM bench_memc.token')
        have = cur.fetchone()[0]
        if have < args.rows:
            print('loading %d rows...' % (args.rows - have), flush=True)
            rng = random.Random(42)
            batch = []
            for i in range(have, args.rows):
                batch.append(('%032x' % rng.getrandbits(128), '%032x%032x' % (rng.getrandbits(128), rng.getrandbits(128))))
                if len(batch) == 5000:
                    cur.executemany('INSERT IGNORE INTO bench_memc.token VALUES (%s, %s)', batch)
                    batch = []
            if batch:
                cur.executemany('INSERT IGNORE INTO bench_memc.token VALUES (%s, %s)', batch)
        cur.execute('SELECT id FROM bench_memc.token')
        all_keys = [r[0] for r in cur.fetchall()]
        cur.execute('SELECT @@pid_file')
        pid_file = cur.fetchone()[0]
        conn.close()
        with open(pid_file) as handle:
            pid = int(handle.read().split()[0])

        print('applying the dbfleet.innodb.memcached role...', flush=True)
        env = dict(os.environ, PATH=os.path.join(REPO, '.venv', 'bin') + os.pathsep + os.environ.get('PATH', ''),
                   ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'),
                   ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, '.collections'))
        with tempfile.NamedTemporaryFile('w', suffix='.yml', delete=False) as handle:
            handle.write(PLAY)
            play = handle.name
        try:
            subprocess.run([os.path.join(REPO, '.venv', 'bin', 'ansible-playbook'), '-i',
                            os.path.join(args.lab_dir, 'hosts.yml'), play], check=True, env=env, cwd=REPO,
                           stdout=subprocess.DEVNULL)
        finally:
            os.unlink(play)

        rng = random.Random(7)
        per_round = max(1, args.lookups // args.rounds)
        # Warm-up both paths (buffer pool, plugin connections) so the first measured round is fair.
        warm = [rng.choice(all_keys) for _n in range(min(per_round, 2000))]
        run_round('memcache', warm, 1, conn_args, port)
        run_round('sql', warm, 1, conn_args, port)

        pair_ratios = []
        totals = dict(memcache=dict(cpu=0.0, secs=0.0, n=0, errors=0, lat=[]),
                      sql=dict(cpu=0.0, secs=0.0, n=0, errors=0, lat=[]))
        print('%-6s %-9s %9s %10s %12s %9s' % ('round', 'method', 'lookups', 'seconds', 'server CPU s', 'lookups/s'))
        for r in range(args.rounds):
            keys = [rng.choice(all_keys) for _n in range(per_round)]  # the same keys for A and B in a round
            order = ('memcache', 'sql') if r % 2 == 0 else ('sql', 'memcache')
            cpu_round = {}
            for kind in order:
                c0 = cpu_seconds(pid)
                secs, errors, lat = run_round(kind, keys, args.threads, conn_args, port)
                cpu = cpu_seconds(pid) - c0
                t = totals[kind]
                t['cpu'] += cpu
                t['secs'] += secs
                t['n'] += len(keys)
                t['errors'] += errors
                t['lat'].extend(lat)
                cpu_round[kind] = cpu
                print('%-6d %-9s %9d %10.2f %12.2f %9.0f' % (r + 1, kind, len(keys), secs, cpu, len(keys) / secs),
                      flush=True)
            if cpu_round['memcache'] > 0:
                pair_ratios.append(cpu_round['sql'] / cpu_round['memcache'])

        result = {}
        for kind, t in totals.items():
            result[kind] = dict(lookups=t['n'], errors=t['errors'], seconds=round(t['secs'], 2),
                                server_cpu_s=round(t['cpu'], 3),
                                server_cpu_s_per_100k=round(t['cpu'] * 100000.0 / t['n'], 3),
                                lookups_per_s=round(t['n'] / t['secs'], 1),
                                latency_ms_p50=round(percentile(t['lat'], 0.5), 3),
                                latency_ms_p99=round(percentile(t['lat'], 0.99), 3))
        m, s = result['memcache'], result['sql']
        result['ratio_sql_cpu_over_memcache_cpu'] = round(s['server_cpu_s_per_100k'] / m['server_cpu_s_per_100k'], 2) \
            if m['server_cpu_s_per_100k'] else None
        result['ratio_sql_cpu_over_memcache_cpu_median_of_rounds'] = round(percentile(pair_ratios, 0.5), 2) \
            if pair_ratios else None
        result['ratio_memcache_throughput_over_sql'] = round(m['lookups_per_s'] / s['lookups_per_s'], 2)
        result['settings'] = dict(lookups=args.lookups, rounds=args.rounds, rows=len(all_keys), threads=args.threads,
                                  memcache_client='one persistent connection per thread, one get per round trip '
                                                  '(not pipelined)',
                                  sql_client='PyMySQL, one connection per thread, SELECT id, token ... WHERE id = %s '
                                             '(text protocol, client-side parameter binding)')
        print()
        for kind in ('memcache', 'sql'):
            r = result[kind]
            print('%-9s %8.3f server CPU s per 100k lookups  %8.0f lookups/s  p50 %.3f ms  p99 %.3f ms  errors %d'
                  % (kind, r['server_cpu_s_per_100k'], r['lookups_per_s'], r['latency_ms_p50'], r['latency_ms_p99'],
                     r['errors']))
        print('ratio: SQL uses %.2fx the server CPU of memcache get per lookup (median of the round pairs %.2fx; '
              'the seed saw ~6-8x: 30-40%% vs ~5%%); memcache throughput is %.2fx SQL\'s'
              % (result['ratio_sql_cpu_over_memcache_cpu'] or 0,
                 result['ratio_sql_cpu_over_memcache_cpu_median_of_rounds'] or 0,
                 result['ratio_memcache_throughput_over_sql']))
        print('total time %.0f s' % (time.time() - t0))
        if args.json:
            with open(args.json, 'w') as handle:
                json.dump(result, handle, indent=2)
    finally:
        if not args.keep:
            lab(args, 'down', '--purge', 'mysql80')


if __name__ == '__main__':
    main()
