#!/usr/bin/env python
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Server CPU per key lookup: InnoDB memcached `get @@token.<key>` vs SQL primary-key SELECT,
both driven by compiled load generators at the same fixed request rate, in one run.

Arms, on the same table and the same key range (uniform random keys), at each --rates rate:
  memcache  mcget.c (built here with the system compiler): --connections threads, one TCP
            connection each, one `get` per round trip, on a fixed schedule;
  sql       sysbench with point_select.lua: --connections threads over TCP,
            `SELECT * FROM bench_memc.token WHERE id = '<key>'` (text protocol), --rate;
  sql_ps    (extra, --prepared) the same through a server-side prepared statement.
Rounds rotate the arm order (A B, B A, ...). Around each arm: the server's CPU seconds (utime +
stime of mysqld, /proc/PID/stat; the plugin runs inside mysqld), the lookups the server counted
(memcached `stats` get_hits; SQL Com_select), and the load generator's own CPU (rusage).
An idle interval first gives the server's background CPU, reported beside the figures.

By default it starts its own MySQL 8.0.33 through lab/lab.py (lab directory .lab/bench-memcached,
port base $DBFLEET_LAB_PORT_BASE + 700, else 45700), applies the dbfleet.innodb.memcached role
with a container on the bench table, measures, and stops and removes the server (--keep keeps it).

    .venv/bin/python bench/memcached/run.py                     # 3 rates x 2 rounds x 2 arms x 20 s: ~4 min
    .venv/bin/python bench/memcached/run.py --rates 5000,10000,20000 --connections 32 --seconds 30 --prepared
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, 'lab'))

from dbfleet_lab.serverload import connect, cpu_seconds, cpu_times, host_vars, query, query_value, server_pid, \
    write_sysbench_config  # noqa: E402

SCHEMA, TABLE = 'bench_memc', 'token'
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


def fill(conn, rows):
    """bench_memc.token with keys 1..rows as 32 zero-padded digits and 64-character tokens (server-side)."""
    query(conn, 'CREATE DATABASE IF NOT EXISTS %s' % SCHEMA)
    query(conn, 'CREATE TABLE IF NOT EXISTS %s.%s (id VARCHAR(32) NOT NULL PRIMARY KEY, token VARCHAR(128) NOT NULL)'
          % (SCHEMA, TABLE))
    if query_value(conn, 'SELECT COUNT(*) FROM %s.%s' % (SCHEMA, TABLE)) == rows:
        return False
    query(conn, 'TRUNCATE TABLE %s.%s' % (SCHEMA, TABLE))
    query(conn, 'CREATE TABLE IF NOT EXISTS %s.seq (n INT PRIMARY KEY)' % SCHEMA)
    query(conn, 'TRUNCATE TABLE %s.seq' % SCHEMA)
    query(conn, 'INSERT INTO %s.seq VALUES (1)' % SCHEMA)
    n = 1
    while n < rows:
        query(conn, 'INSERT INTO {s}.seq SELECT n + {n} FROM {s}.seq WHERE n + {n} <= {r}'.format(s=SCHEMA, n=n, r=rows))
        n *= 2
    query(conn, "INSERT INTO {s}.{t} SELECT LPAD(n, 32, '0'), LEFT(SHA2(n, 256), 64) FROM {s}.seq".format(s=SCHEMA, t=TABLE))
    query(conn, 'DROP TABLE %s.seq' % SCHEMA)
    return True


def apply_role(inventory):
    env = dict(os.environ, PATH=os.path.join(REPO, '.venv', 'bin') + os.pathsep + os.environ.get('PATH', ''),
               ANSIBLE_CONFIG=os.path.join(REPO, 'ansible.cfg'),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, '.collections'))
    with tempfile.NamedTemporaryFile('w', suffix='.yml', delete=False) as handle:
        handle.write(PLAY)
        play = handle.name
    try:
        subprocess.run([os.path.join(REPO, '.venv', 'bin', 'ansible-playbook'), '-i', inventory, play],
                       check=True, env=env, cwd=REPO, stdout=subprocess.DEVNULL)
    finally:
        os.unlink(play)


def build_mcget(workdir):
    cc = os.environ.get('CC') or shutil.which('cc') or shutil.which('gcc')
    if not cc:
        raise SystemExit('no C compiler (cc/gcc): install build-essential (bindep.txt, profile bench)')
    out = os.path.join(workdir, 'mcget')
    subprocess.run([cc, '-O2', '-pthread', '-o', out, os.path.join(HERE, 'mcget.c')], check=True)
    return out


def memcache_stats(port):
    with socket.create_connection(('127.0.0.1', port), timeout=5) as sock:
        sock.sendall(b'stats\r\n')
        data = b''
        while not data.endswith(b'END\r\n'):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    stats = {}
    for line in data.decode('ascii', 'replace').splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == 'STAT':
            stats[parts[1]] = parts[2]
    return stats


def com_select(conn):
    return int(query(conn, "SHOW GLOBAL STATUS LIKE 'Com_select'")[0][1])


def run_measured(cmd):
    """Run a load generator as a child process; (its stdout, the CPU seconds it used: user + system)."""
    before = os.times()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    after = os.times()
    if proc.returncode != 0:
        raise SystemExit('%s failed (%d): %s' % (os.path.basename(cmd[0]), proc.returncode,
                                                 (proc.stderr or proc.stdout)[-2000:]))
    return proc.stdout, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def sysbench_cmd(args, config, arm, rate, seconds):
    # The login (TCP, like the memcache arm) is in CONFIG, a 0600 file, not on the command line.
    return ['sysbench', os.path.join(HERE, 'point_select.lua'), '--config-file=%s' % config, '--rows=%d' % args.rows,
            '--prepared=%s' % ('on' if arm == 'sql_ps' else 'off'),
            '--threads=%d' % args.connections, '--rate=%d' % rate, '--time=%d' % seconds, '--percentile=99', 'run']


def sysbench_summary(out):
    """Queries, rate and p99 latency from sysbench's report."""
    res = {}
    for line in out.splitlines():
        parts = line.split()
        if line.strip().startswith('queries:') and len(parts) >= 3:
            res['sent'] = int(parts[1])
            res['rate'] = float(parts[2].strip('(').split()[0])
        elif line.strip().startswith('99th percentile:'):
            res['latency_ms_p99'] = float(parts[-1])
        elif line.strip().startswith('ignored errors:'):
            res['errors'] = int(parts[2])
    return res


def arm_run(args, hv, conn, pid, mcget, arm, rate, seconds):
    port = int(hv['memcached_port'])
    if arm == 'memcache':
        cmd = [mcget, '127.0.0.1', str(port), str(rate), str(args.connections), str(seconds), str(args.rows),
               '@@token.']
        s0 = memcache_stats(port)
    else:
        cmd = sysbench_cmd(args, args.sysbench_config, arm, rate, seconds)
        s0 = com_select(conn)
    (user0, sys0), wall0 = cpu_times(pid), time.monotonic()
    out, client_cpu = run_measured(cmd)
    (user1, sys1), wall = cpu_times(pid), time.monotonic() - wall0
    user, system = user1 - user0, sys1 - sys0
    cpu = user + system
    if arm == 'memcache':
        s1 = memcache_stats(port)
        client = json.loads(out)
        lookups = int(s1['get_hits']) - int(s0['get_hits'])
        misses = int(s1['get_misses']) - int(s0['get_misses'])
    else:
        lookups = com_select(conn) - s0         # SHOW GLOBAL STATUS is not counted in Com_select
        client = sysbench_summary(out)
        misses = None
    return dict(arm=arm, rate_asked=rate, wall_s=round(wall, 2), server_cpu_s=round(cpu, 3),
                server_user_s=round(user, 3), server_system_s=round(system, 3), lookups=lookups,
                misses=misses, client_cpu_s=round(client_cpu, 3), client=client,
                server_cpu_us_per_lookup=round(1e6 * cpu / max(lookups, 1), 2),
                client_cpu_us_per_lookup=round(1e6 * client_cpu / max(lookups, 1), 2),
                lookups_per_s=round(lookups / wall, 1), server_cpu_pct=round(100.0 * cpu / wall, 1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--rates', default='2000,5000,10000', help='fixed lookup rates per second (default 2000,5000,10000)')
    parser.add_argument('--connections', type=int, default=16, help='client connections (threads) per arm (default 16)')
    parser.add_argument('--seconds', type=int, default=20, help='seconds per arm and round (default 20)')
    parser.add_argument('--rounds', type=int, default=2, help='rounds per rate, arm order rotating (default 2)')
    parser.add_argument('--rows', type=int, default=100000, help='rows in the bench table (default 100000)')
    parser.add_argument('--prepared', action='store_true', help='add the extra arm sql_ps (server-side prepared)')
    parser.add_argument('--idle', type=float, default=5, help='seconds of idle server CPU measured first (default 5)')
    parser.add_argument('--lab-dir', default=os.path.join(REPO, '.lab', 'bench-memcached'))
    parser.add_argument('--port-base', type=int, default=int(os.environ.get('DBFLEET_LAB_PORT_BASE', 45000)) + 700)
    parser.add_argument('--keep', action='store_true', help='leave the bench server running afterwards')
    parser.add_argument('--json', help='also write the results to this file')
    args = parser.parse_args()
    try:
        rates = [int(r) for r in args.rates.split(',') if r.strip()]
    except ValueError:
        raise SystemExit('--rates: a comma-separated list of integers, not %r' % args.rates) from None
    if not rates or min(rates) <= 0 or args.connections <= 0 or args.seconds <= 0 or args.rounds <= 0:
        raise SystemExit('--rates, --connections, --seconds and --rounds must be positive')
    if not shutil.which('sysbench'):
        raise SystemExit('sysbench is not installed: apt-get install sysbench (bindep.txt, profile bench)')
    arms = ['memcache', 'sql'] + (['sql_ps'] if args.prepared else [])

    t_start = time.time()
    print('MySQL 8.0.33 in %s (port base %d)...' % (args.lab_dir, args.port_base), flush=True)
    lab(args, 'up', 'mysql80')
    inventory = os.path.join(args.lab_dir, 'hosts.yml')
    workdir = tempfile.mkdtemp(prefix='dbfleet-mcget-')
    try:
        hv = host_vars(inventory, 'mysql80')
        conn = connect(hv)
        if fill(conn, args.rows):
            print('loaded %d rows into %s.%s' % (args.rows, SCHEMA, TABLE), flush=True)
        print('applying the dbfleet.innodb.memcached role...', flush=True)
        apply_role(inventory)
        mcget = build_mcget(workdir)
        args.sysbench_config = write_sysbench_config(os.path.join(workdir, 'sysbench.cfg'), hv, SCHEMA, tcp=True)
        pid = server_pid(conn)
        version = query_value(conn, 'SELECT @@version')
        pool = int(query_value(conn, 'SELECT @@innodb_buffer_pool_size'))
        options = query_value(conn, 'SELECT @@daemon_memcached_option')
        # Warm both paths: the table into the buffer pool, the plugin's table handles.
        query(conn, 'SELECT COUNT(*), SUM(LENGTH(token)) FROM %s.%s' % (SCHEMA, TABLE))
        for arm in arms:
            arm_run(args, hv, conn, pid, mcget, arm, min(rates), 3)
        cpu0 = cpu_seconds(pid)
        time.sleep(args.idle)
        idle_pct = 100.0 * (cpu_seconds(pid) - cpu0) / args.idle
        print('server %s pid %d, buffer pool %d MiB, table %d rows, daemon_memcached_option %r, '
              'idle server CPU %.1f%% of a core, %d connections per arm, %d s per arm'
              % (version, pid, pool >> 20, args.rows, options, idle_pct, args.connections, args.seconds), flush=True)
        print('%-7s %-6s %-8s %9s %10s %9s %10s %10s %13s %9s' % (
            'rate', 'round', 'arm', 'lookups/s', 'server CPU', 'CPU %', 'us/lookup', 'user us', 'client us/lk', 'p99 ms'))
        results = []
        for rate in rates:
            for rnd in range(args.rounds):
                order = arms[rnd % len(arms):] + arms[:rnd % len(arms)]
                for arm in order:
                    res = arm_run(args, hv, conn, pid, mcget, arm, rate, args.seconds)
                    res['round'] = rnd + 1
                    results.append(res)
                    print('%-7d %-6d %-8s %9.0f %9.2fs %8.1f%% %10.2f %10.2f %13.2f %9.3f'
                          % (rate, rnd + 1, arm, res['lookups_per_s'], res['server_cpu_s'], res['server_cpu_pct'],
                             res['server_cpu_us_per_lookup'], 1e6 * res['server_user_s'] / max(res['lookups'], 1),
                             res['client_cpu_us_per_lookup'],
                             res['client'].get('latency_ms_p99', 0)), flush=True)
        conn.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if not args.keep:
            lab(args, 'down', '--purge', 'mysql80')

    summary = dict(server=version, buffer_pool_mib=pool >> 20, rows=args.rows, connections=args.connections,
                   seconds=args.seconds, rounds=args.rounds, daemon_memcached_option=options,
                   idle_server_cpu_pct=round(idle_pct, 1), rates={})
    print('\nper rate (all rounds): server CPU us per lookup, SQL/memcache ratio (spread over the rounds)')
    for rate in rates:
        per = {}
        for arm in arms:
            rs = [r for r in results if r['rate_asked'] == rate and r['arm'] == arm]
            cpu, n, wall = sum(r['server_cpu_s'] for r in rs), sum(r['lookups'] for r in rs), sum(r['wall_s'] for r in rs)
            user = sum(r['server_user_s'] for r in rs)
            per[arm] = dict(server_cpu_us_per_lookup=round(1e6 * cpu / max(n, 1), 2),
                            server_user_us_per_lookup=round(1e6 * user / max(n, 1), 2),
                            server_system_us_per_lookup=round(1e6 * (cpu - user) / max(n, 1), 2),
                            server_cpu_pct=round(100.0 * cpu / wall, 1), lookups_per_s=round(n / wall, 1),
                            client_cpu_us_per_lookup=round(1e6 * sum(r['client_cpu_s'] for r in rs) / max(n, 1), 2),
                            net_of_idle_us_per_lookup=round(1e6 * (cpu - idle_pct / 100.0 * wall) / max(n, 1), 2))
        line = '%6d/s' % rate
        short = [arm for arm in arms if per[arm]['lookups_per_s'] < 0.95 * rate]
        for arm in arms:
            per[arm]['rate_held'] = arm not in short
            line += '  %s %.1f us = %.1f user + %.1f system (%.1f%% CPU, %.0f/s)' % (
                arm, per[arm]['server_cpu_us_per_lookup'], per[arm]['server_user_us_per_lookup'],
                per[arm]['server_system_us_per_lookup'], per[arm]['server_cpu_pct'], per[arm]['lookups_per_s'])
        for arm in arms[1:]:
            pairs = []
            for rnd in range(args.rounds):
                a = [r for r in results if r['rate_asked'] == rate and r['round'] == rnd + 1]
                m = [r['server_cpu_us_per_lookup'] for r in a if r['arm'] == 'memcache'][0]
                s = [r['server_cpu_us_per_lookup'] for r in a if r['arm'] == arm][0]
                pairs.append(s / m if m else float('nan'))
            ratio = per[arm]['server_cpu_us_per_lookup'] / per['memcache']['server_cpu_us_per_lookup']
            net = per[arm]['net_of_idle_us_per_lookup'] / per['memcache']['net_of_idle_us_per_lookup']
            user_ratio = per[arm]['server_user_us_per_lookup'] / per['memcache']['server_user_us_per_lookup']
            per['%s/memcache' % arm] = dict(ratio=round(ratio, 2), rounds=[round(p, 2) for p in pairs],
                                            net_of_idle=round(net, 2), user_only=round(user_ratio, 2))
            line += '\n         %s/memcache %.2fx (rounds %s; net of idle %.2fx; user CPU only %.2fx)' % (
                arm, ratio, ' '.join('%.2f' % p for p in pairs), net, user_ratio)
        summary['rates'][str(rate)] = per
        if short:
            line += '\n         NOT the same rate: %s below 95%% of %d/s (the machine could not give the server the CPU)' % (
                ', '.join(short), rate)
        print(line)
    print('source: ~70,000 lookups/s, SQL 30-40%% vs memcache ~5%% CPU (6-8x); total time %.0f s' % (time.time() - t_start))
    if args.json:
        with open(args.json, 'w') as handle:
            json.dump(dict(summary=summary, results=results), handle, indent=2)


if __name__ == '__main__':
    main()
