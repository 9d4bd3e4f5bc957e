#!/usr/bin/env python
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU per login with preferred TLS (the default): the collection's one unverified context per process against
PyMySQL's own, a new context with the system's CA store loaded for every connection.

Both in one process, in alternating rounds (ours first in even rounds): open_connection() and close against every
lab server that is up, over 127.0.0.1 as the lab's inventory logs in (preferred TLS); process CPU time per login.
A module run logs in at least once, verify_fleet's controller mode once per host.
The lab must be up (make lab-up). Usage: tls_context.py [ROUNDS] [LOGINS_PER_SERVER_PER_ROUND]
"""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from dbfleet_lab.serverload import alternating_cpu, tcp_logins  # noqa: E402  pylint: disable=wrong-import-position


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    per = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    sys.path.insert(0, os.path.join(ROOT, '.collections'))
    from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
    logins = tcp_logins(os.path.join(ROOT, 'inventories', 'lab', 'hosts.yml'))
    contexts = dict(ours=connection.Connection._create_ssl_ctx,
                    pymysql=connection.pymysql.connections.Connection._create_ssl_ctx)
    tls = {}

    def logins_with(label):
        def one_round():
            connection.Connection._create_ssl_ctx = contexts[label]
            for _i in range(per):
                for name, params in logins.items():
                    conn = connection.open_connection(params)
                    tls[name] = 'TLS' if conn._sock.__class__.__name__ == 'SSLSocket' else 'clear'
                    conn.close()
        return one_round

    try:
        cpu = alternating_cpu(rounds, dict((label, logins_with(label)) for label in contexts))
    finally:
        connection.Connection._create_ssl_ctx = contexts['ours']
    logins_each = rounds * per * len(logins)
    print('servers: %s' % ', '.join('%s (%s)' % item for item in sorted(tls.items())))
    print('%d logins each way, CPU per login: ours %.2f ms, pymysql %.2f ms, ours/pymysql %.2f'
          % (logins_each, 1000 * cpu['ours'] / logins_each, 1000 * cpu['pymysql'] / logins_each,
             cpu['ours'] / cpu['pymysql']))


if __name__ == '__main__':
    main()
