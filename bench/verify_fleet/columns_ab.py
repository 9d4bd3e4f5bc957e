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
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVERS = ('mariadb1011', 'mariadb118', 'mysql80', 'mysql97')


def lab_logins():
    with open(os.path.join(ROOT, 'inventories', 'lab', 'hosts.yml')) as handle:
        inventory = yaml.safe_load(handle)
    found = {}

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in SERVERS and isinstance(value, dict) and 'dbfleet_login_port' in value:
                    found[key] = value
                else:
                    walk(value)
    walk(inventory)
    if not found:
        raise SystemExit('the lab is not up: make lab-up')
    return [dict(login_user=hv['dbfleet_login_user'], login_password=hv['dbfleet_login_password'], login_host='127.0.0.1',
                 login_port=hv['dbfleet_login_port'], config_file=None) for hv in found.values()]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    per = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    sys.path.insert(0, os.path.join(ROOT, '.collections'))
    from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
    from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_wire
    from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify_fleet
    logins = lab_logins()
    readers = dict(ours=fleet_wire.Result._get_descriptions,
                   pymysql=connection.pymysql.connections.MySQLResult._get_descriptions)
    cpu = dict((k, 0.0) for k in readers)
    for number in range(rounds):
        for label in (('ours', 'pymysql') if number % 2 == 0 else ('pymysql', 'ours')):
            fleet_wire.Result._get_descriptions = readers[label]
            start = time.process_time()
            for _i in range(per):
                for params in logins:
                    result = verify_fleet.audit_host(params, {'innodb_io_capacity': 200})
                    if result.get('failed'):
                        raise SystemExit(result['msg'])
            cpu[label] += time.process_time() - start
    audits = rounds * per * len(logins)
    print('controller CPU per audit: fleet_wire.Field %.2f ms, PyMySQL %.2f ms (%d audits each, %d servers, 127.0.0.1)'
          % (cpu['ours'] / audits * 1000, cpu['pymysql'] / audits * 1000, audits, len(logins)))


if __name__ == '__main__':
    main()
