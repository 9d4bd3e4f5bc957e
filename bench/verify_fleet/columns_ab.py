#!/usr/bin/env python
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller CPU per audit with the column definitions read by fleet_wire.Field against PyMySQL's reader.

Both readers in one process, in alternating rounds (ours first in even rounds), the same audits
(verify_fleet.audit_host() of one setting) against every lab server over 127.0.0.1: process CPU time per audit.
The lab must be up (make lab-up). Usage: columns_ab.py [ROUNDS] [AUDITS_PER_SERVER_PER_ROUND]
"""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVERS = ('mariadb1011', 'mariadb118', 'mysql80', 'mysql97')
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from dbfleet_lab.serverload import alternating_cpu, tcp_logins  # noqa: E402  pylint: disable=wrong-import-position


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    per = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    sys.path.insert(0, os.path.join(ROOT, '.collections'))
    from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
    from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_wire
    from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify_fleet
    logins = list(tcp_logins(os.path.join(ROOT, 'inventories', 'lab', 'hosts.yml'), SERVERS).values())
    readers = dict(ours=fleet_wire.Result._get_descriptions,
                   pymysql=connection.pymysql.connections.MySQLResult._get_descriptions)

    def audits_with(label):
        def one_round():
            fleet_wire.Result._get_descriptions = readers[label]
            for _i in range(per):
                for params in logins:
                    result = verify_fleet.audit_host(params, {'innodb_io_capacity': 200})
                    if result.get('failed'):
                        raise SystemExit(result['msg'])
        return one_round

    cpu = alternating_cpu(rounds, dict((label, audits_with(label)) for label in readers))
    audits = rounds * per * len(logins)
    print('controller CPU per audit: fleet_wire.Field %.2f ms, PyMySQL %.2f ms (%d audits each, %d servers, 127.0.0.1)'
          % (cpu['ours'] / audits * 1000, cpu['pymysql'] / audits * 1000, audits, len(logins)))


if __name__ == '__main__':
    main()
