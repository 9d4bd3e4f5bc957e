#!/usr/bin/env python
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""AHI on vs off on a primary-key IN-list workload (the first source report's experiment).

Table: auto-increment PK, secondary key, text column. Clients: separate processes, each sending
SELECT LEFT(v, 1) FROM t WHERE i IN (<~30 random ids>). AHI is switched ON and OFF in
alternating rounds of one run; each round warms up, then measures statements, server CPU
seconds (utime+stime of the server process), and the hash / B-tree search counters.
Prints per-round numbers and ON/OFF ratios. Puts innodb_adaptive_hash_index back at the end.

    .venv/bin/python bench/ahi/run.py --host mysql80
    .venv/bin/python bench/ahi/run.py --host mariadb1011 --rounds 6 --seconds 20 --clients 6
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ahibench  # noqa: E402


def main():
    parser = ahibench.base_parser(__doc__.splitlines()[0])
    parser.add_argument('--rows', type=int, default=200000, help='table rows (default 200000)')
    parser.add_argument('--table', default='ahi_test')
    parser.add_argument('--clients', type=int, default=4, help='client processes (default 4)')
    parser.add_argument('--in-size', type=int, default=30, help='ids per IN-list (default 30)')
    parser.add_argument('--rounds', type=int, default=4, help='rounds, alternating ON/OFF (default 4)')
    parser.add_argument('--seconds', type=float, default=12, help='measured seconds per round (default 12)')
    parser.add_argument('--warmup', type=float, default=3, help='warm-up seconds per round (default 3)')
    parser.add_argument('--json', help='also write the results to this file')
    args = parser.parse_args()

    login = ahibench.login_from_args(args)
    ahibench.ensure_table(login, args.database, args.table, args.rows)
    lo, hi = ahibench.id_range(login, args.database, args.table)
    conn = ahibench.connect_retry(login)
    pid = ahibench.server_pid(conn)
    version = ahibench.q(conn, 'SELECT @@version')[0][0]
    original = ahibench.ahi(conn)
    off_monitors = ahibench.monitors_off(conn)
    print('server %s pid %d, table %d rows, %d clients, IN-lists of %d, %d rounds x %.0f s (+%.0f s warm-up)'
          % (version, pid, hi - lo + 1, args.clients, args.in_size, args.rounds, args.seconds, args.warmup))
    # Warm the buffer pool once so the first round does not pay for it.
    ahibench.q(conn, 'SELECT COUNT(*), SUM(LENGTH(v)) FROM `%s`.`%s`' % (args.database, args.table))
    rounds = []
    try:
        ahibench.set_monitors(conn, off_monitors, True)
        for r in range(args.rounds):
            on = (r % 2 == 0)
            ahibench.set_ahi(conn, on)
            clients = ahibench.Clients(login, args.database, args.table, 'read', args.warmup + args.seconds + 1,
                                       args.clients, lo, hi, args.in_size)
            import time
            time.sleep(args.warmup)
            res = ahibench.measure(conn, pid, clients, args.seconds)
            clients.join()
            res['ahi'] = 'ON' if on else 'OFF'
            rounds.append(res)
            print('round %d AHI %-3s  %7.0f q/s  %.3f CPU s/1000 q  hash %9d  btree %9d  hash share %.3f'
                  % (r + 1, res['ahi'], res['statements'] / res['seconds'],
                     1000.0 * res['cpu'] / max(res['statements'], 1),
                     res['adaptive_hash_searches'], res['adaptive_hash_searches_btree'],
                     res['adaptive_hash_searches'] / float(max(res['adaptive_hash_searches']
                                                               + res['adaptive_hash_searches_btree'], 1))))
            sys.stdout.flush()
    finally:
        ahibench.set_monitors(conn, off_monitors, False)
        ahibench.set_ahi(conn, original)

    def total(state):
        rs = [x for x in rounds if x['ahi'] == state]
        t = dict((k, sum(x[k] for x in rs)) for k in rs[0] if k != 'ahi')
        t['qps'] = t['statements'] / t['seconds']
        t['cpu_per_1000'] = 1000.0 * t['cpu'] / max(t['statements'], 1)
        t['btree_per_query'] = t['adaptive_hash_searches_btree'] / float(max(t['statements'], 1))
        t['hash_per_query'] = t['adaptive_hash_searches'] / float(max(t['statements'], 1))
        t['lookups_per_query'] = t['handler_read_key'] / float(max(t['statements'], 1))
        searches = t['adaptive_hash_searches'] + t['adaptive_hash_searches_btree']
        t['hash_share'] = t['adaptive_hash_searches'] / float(max(searches, 1))
        return t
    on, off = total('ON'), total('OFF')
    print()
    print('%-28s %12s %12s %10s' % ('', 'AHI ON', 'AHI OFF', 'ON/OFF'))
    for key, label in (('qps', 'throughput (q/s)'), ('cpu_per_1000', 'server CPU s / 1000 queries'),
                       ('hash_per_query', 'hash searches / query'), ('btree_per_query', 'B-tree searches / query'),
                       ('lookups_per_query', 'Handler_read_key / query')):
        ratio = on[key] / off[key] if off[key] else float('nan')
        print('%-28s %12.3f %12.3f %10.3f' % (label, on[key], off[key], ratio))
    print('%-28s %12.3f %12.3f' % ('hash share of searches', on['hash_share'], off['hash_share']))
    print('(MariaDB stops counting B-tree searches while AHI is OFF: compare Handler_read_key there)')
    print('AHI rows added+removed per hash hit (ON): %.4f'
          % ((on['adaptive_hash_rows_added'] + on['adaptive_hash_rows_removed'])
             / float(max(on['adaptive_hash_searches'], 1))))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(dict(server=version, rounds=rounds, on=on, off=off), f, indent=1)


if __name__ == '__main__':
    main()
