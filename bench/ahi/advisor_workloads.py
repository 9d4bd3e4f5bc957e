#!/usr/bin/env python
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Does dbfleet.innodb.ahi_advisor pick the setting that measures better?

Three workloads, each run with AHI ON and OFF alternately (measuring server CPU seconds per 1000
statements, the hash/B-tree counters and throughput) and, separately, under the advisor
(the real module, run through ansible) with AHI ON and with AHI OFF:

  hot       IN-lists of 30 ids drawn from a hot 5% of the table (fits the buffer pool)
  uniform   IN-lists of 30 ids drawn uniformly from a table much larger than the buffer pool
  write     45% single-row updates of the secondary key, 35% inserts, 20% reads of 5 ids

Use a server with a small buffer pool of your own (the script never changes the buffer pool):

  .venv/bin/python lab/lab.py --lab-dir .lab/p-ahi --port-base 44000 --inventory .lab/p-ahi/hosts.yml up mysql80
  echo -e '[mysqld]\\ninnodb_buffer_pool_size = 32M' > .lab/p-ahi/mysql80/conf.d/50-bench.cnf
  .venv/bin/python lab/lab.py --lab-dir .lab/p-ahi --port-base 44000 --inventory .lab/p-ahi/hosts.yml restart mysql80
  .venv/bin/python bench/ahi/advisor_workloads.py --inventory .lab/p-ahi/hosts.yml --host mysql80

"Measured better" = lower server CPU per statement (ratio ON/OFF below 1 - margin: ON better;
above 1 + margin: OFF better; else "no difference").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ahibench  # noqa: E402

ROOT = ahibench.ROOT


def advisor(args, sample):
    """Run the real module through ansible against the inventory host; returns its result."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.collections'),
               ANSIBLE_STDOUT_CALLBACK='ansible.builtin.minimal', ANSIBLE_CALLBACK_RESULT_FORMAT='json',
               PATH=os.path.join(ROOT, '.venv', 'bin') + ':' + os.environ.get('PATH', ''))
    login = ahibench.login_from_args(args)
    margs = dict(sample_seconds=int(sample), login_user=login.get('user'), login_password=login.get('password'),
                 config_file='')
    if login.get('unix_socket'):
        margs['login_unix_socket'] = login['unix_socket']
    else:
        margs.update(login_host=login['host'], login_port=login['port'])
    cmd = ['ansible', '-i', args.inventory, args.host, '-m', 'dbfleet.innodb.ahi_advisor', '-a', json.dumps(margs)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT, check=False)
    try:
        return json.loads(out.stdout.split('=>', 1)[1])
    except (ValueError, IndexError):
        raise SystemExit('advisor run failed:\n%s\n%s' % (out.stdout[-2000:], out.stderr[-2000:]))


def main():
    parser = ahibench.base_parser(__doc__.splitlines()[0])
    parser.add_argument('--workloads', default='hot,uniform,write')
    parser.add_argument('--small-rows', type=int, default=100000, help='rows of the hot-set table')
    parser.add_argument('--big-rows', type=int, default=600000, help='rows of the table much larger than the BP')
    parser.add_argument('--hot', type=float, default=0.05, help='hot share of the small table (default 0.05)')
    parser.add_argument('--clients', type=int, default=4)
    parser.add_argument('--rounds', type=int, default=4, help='alternating ON/OFF rounds per workload')
    parser.add_argument('--seconds', type=float, default=10, help='measured seconds per round')
    parser.add_argument('--warmup', type=float, default=4)
    parser.add_argument('--sample', type=int, default=12, help='advisor sample_seconds')
    parser.add_argument('--margin', type=float, default=0.05, help='CPU ratio margin for "no difference"')
    parser.add_argument('--json')
    args = parser.parse_args()
    login = ahibench.login_from_args(args)

    conn = ahibench.connect_retry(login)
    pid = ahibench.server_pid(conn)
    bp = int(ahibench.q(conn, 'SELECT @@innodb_buffer_pool_size')[0][0])
    version = ahibench.q(conn, 'SELECT @@version')[0][0]
    original = ahibench.ahi(conn)
    print('server %s, buffer pool %d MB, %d clients' % (version, bp >> 20, args.clients))
    ahibench.ensure_table(login, args.database, 'ahi_small', args.small_rows)
    ahibench.ensure_table(login, args.database, 'ahi_big', args.big_rows, text_len=400)
    size = ahibench.q(conn, "SELECT table_name, ROUND((data_length + index_length) / 1048576) FROM "
                            "information_schema.tables WHERE table_schema = %s", (args.database,))
    print('tables (MB): %s' % ', '.join('%s %s' % (r[0], r[1]) for r in size))
    specs = dict(hot=('ahi_small', 'read', args.hot), uniform=('ahi_big', 'read', None),
                 write=('ahi_small', 'write', None))
    results = []
    try:
        for name in args.workloads.split(','):
            table, kind, hot = specs[name]
            lo, hi = ahibench.id_range(login, args.database, table)
            rounds = []
            for r in range(args.rounds):
                on = r % 2 == 0
                ahibench.set_ahi(conn, on)
                cl = ahibench.Clients(login, args.database, table, kind, args.warmup + args.seconds + 1,
                                      args.clients, lo, hi, hot=hot)
                time.sleep(args.warmup)
                res = ahibench.measure(conn, pid, cl, args.seconds)
                cl.join()
                res['on'] = on
                rounds.append(res)
            agg = {}
            for on in (True, False):
                rs = [x for x in rounds if x['on'] == on]
                st = sum(x['statements'] for x in rs)
                agg[on] = dict(qps=st / sum(x['seconds'] for x in rs), cpu_per_1000=1000.0 * sum(x['cpu'] for x in rs) / max(st, 1),
                               hash=sum(x['adaptive_hash_searches'] for x in rs),
                               btree=sum(x['adaptive_hash_searches_btree'] for x in rs))
            ratio = agg[True]['cpu_per_1000'] / agg[False]['cpu_per_1000']
            better = 'ON' if ratio < 1 - args.margin else ('OFF' if ratio > 1 + args.margin else 'no difference')
            verdicts = {}
            for on in (True, False):
                ahibench.set_ahi(conn, on)
                cl = ahibench.Clients(login, args.database, table, kind, args.warmup + args.sample + 8,
                                      args.clients, lo, hi, hot=hot)
                time.sleep(args.warmup)
                res = advisor(args, args.sample)
                cl.join()
                adv = res.get('advice', {})
                verdicts['ON' if on else 'OFF'] = dict(recommendation=adv.get('recommendation'),
                                                       hit_ratio=adv.get('hit_ratio'),
                                                       maintenance_per_hit=adv.get('maintenance_per_hit'),
                                                       buffer_pool_miss_ratio=adv.get('buffer_pool_miss_ratio'),
                                                       write_share=adv.get('write_share'),
                                                       reasons=adv.get('reasons'))
            wants_on = verdicts['ON']['recommendation'] == 'keep_on' or verdicts['OFF']['recommendation'] == 'try_on'
            wants_off = verdicts['ON']['recommendation'] == 'turn_off' or verdicts['OFF']['recommendation'] == 'turn_off'
            advised = 'ON' if wants_on and not wants_off else ('OFF' if wants_off and not wants_on else 'mixed')
            agree = (advised == better) or (better == 'no difference' and advised == 'OFF')
            row = dict(workload=name, on=agg[True], off=agg[False], cpu_ratio_on_off=ratio,
                       qps_ratio_on_off=agg[True]['qps'] / agg[False]['qps'], measured_better=better,
                       advisor=verdicts, advised=advised, agree=agree)
            results.append(row)
            print('\n== %s: CPU s/1000 stmts ON %.3f OFF %.3f (ON/OFF %.3f), q/s ON/OFF %.3f, hash share ON %.3f'
                  % (name, agg[True]['cpu_per_1000'], agg[False]['cpu_per_1000'], ratio, row['qps_ratio_on_off'],
                     agg[True]['hash'] / float(max(agg[True]['hash'] + agg[True]['btree'], 1))))
            for state in ('ON', 'OFF'):
                v = verdicts[state]
                print('   advisor with AHI %-3s -> %-17s hit %s, maint/hit %s, BP miss %s, write share %s'
                      % (state, v['recommendation'], v['hit_ratio'], v['maintenance_per_hit'],
                         v['buffer_pool_miss_ratio'], v['write_share']))
                for reason in v['reasons'] or []:
                    print('        - %s' % reason)
            print('   measured better: %s; advisor says: %s; agree: %s' % (better, advised, 'yes' if agree else 'NO'))
            sys.stdout.flush()
    finally:
        ahibench.set_ahi(conn, original)
    print('\n%-9s %10s %10s %16s %10s %6s' % ('workload', 'CPU ON/OFF', 'q/s ON/OFF', 'measured better', 'advised', 'agree'))
    for r in results:
        print('%-9s %10.3f %10.3f %16s %10s %6s' % (r['workload'], r['cpu_ratio_on_off'], r['qps_ratio_on_off'],
                                                    r['measured_better'], r['advised'], 'yes' if r['agree'] else 'NO'))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(dict(server=version, buffer_pool=bp, results=results), f, indent=1)


if __name__ == '__main__':
    main()
