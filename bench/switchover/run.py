#!/usr/bin/env python
"""Restarting an asynchronous primary in place vs with the switchover, side by side in one run (bench/switchover).

On the SSH fleet (`DBFLEET_FLEET_NET=N DBFLEET_FLEET_CLUSTERS=0 python lab/lab.py --mode ssh up`), for each pair asked
(db1/db2 MySQL 8.0, db3/db4 MariaDB 10.11): a writer commits one row at a time through the pair's HAProxy (the fleet's
writer endpoint, lab/dbfleet_lab/haproxy.py) while playbooks/rolling_restart.yml restarts the pair, once with
`rolling_restart_primary=in_place` and once with `switchover` (`haproxy` endpoint, hand-back). Printed per arm: the
run's length, commits acknowledged, writer errors, the longest gap between two acknowledged commits, acknowledged
commits missing from the primary at the end, errant transactions on the replica, replication running; then each
switch's own account (step switch: how long writes stopped, the time of each step).

The pair's hosts get the lab's admin login in a second inventory (a private temporary file), so each switch is one
module run reaching both servers (roles/restart/tasks/switchover.yml); --no-logins leaves it out (one module run per
step and server).

    DBFLEET_FLEET_NET=21 .venv/bin/python bench/switchover/run.py --pairs db1 db3
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

import pymysql

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(REPO, 'lab'))

from dbfleet_lab import haproxy  # noqa: E402
from dbfleet_lab.netns import GATEWAY  # noqa: E402

SCHEMA = 'dbfleet_bench_switchover'


def secrets(lab_dir):
    with open(os.path.join(lab_dir, 'fleet', 'secrets.json'), encoding='utf-8') as handle:
        return json.load(handle)


def addresses(inventory):
    import yaml  # pylint: disable=import-outside-toplevel
    sys.path.insert(0, os.path.join(REPO, 'lab'))
    from dbfleet_lab.inventory import hosts_in  # pylint: disable=import-outside-toplevel
    with open(inventory, encoding='utf-8') as handle:
        return dict((h, v.get('ansible_host')) for h, v in hosts_in(yaml.safe_load(handle)).items())


class Writer(threading.Thread):
    """One row per INSERT through the endpoint, reconnecting after an error; the time of each acknowledgement."""

    def __init__(self, creds, port):
        super().__init__(daemon=True)
        self.creds, self.port = creds, port
        self.acks, self.errors, self.stop = [], 0, threading.Event()

    def run(self):
        conn, seq = None, 0
        while not self.stop.is_set():
            try:
                if conn is None:
                    conn = pymysql.connect(host=GATEWAY, port=self.port, user=self.creds['admin_user'],
                                           password=self.creds['admin_password'], connect_timeout=1, read_timeout=5,
                                           autocommit=True)
                seq += 1
                with conn.cursor() as cur:
                    cur.execute('INSERT INTO %s.t (seq) VALUES (%%s)' % SCHEMA, (seq,))
                self.acks.append((time.monotonic(), seq))
            except pymysql.err.MySQLError:
                self.errors += 1
                conn = None
                time.sleep(0.05)
            time.sleep(0.01)

    def longest_gap(self):
        times = [stamp for stamp, _seq in self.acks]
        return max((b - a for a, b in zip(times, times[1:])), default=0.0)


def query(address, creds, sql, args=None):
    conn = pymysql.connect(host=address, port=3306, user=creds['admin_user'], password=creds['admin_password'],
                           autocommit=True, connect_timeout=5)
    try:
        with conn.cursor() as cur:
            cur.execute(sql, args)
            return cur.fetchall()
    finally:
        conn.close()


def login(creds, primary):
    """A pair's hosts' login in the inventory: the lab's admin account; on MySQL 8 (caching_sha2_password sends the
    password itself on a full authentication) over TLS: the lab's servers have no certificate a client could verify,
    so login_ssl_mode required says to send it over their TLS anyway."""
    out = {'dbfleet_login_user': creds['admin_user'], 'dbfleet_login_password': creds['admin_password']}
    if primary == 'db1':
        out['dbfleet_login_ssl_mode'] = 'required'
    return out


def arm(args, creds, hosts, primary, replica, port, mode):
    addr = hosts[primary]
    query(addr, creds, 'CREATE DATABASE IF NOT EXISTS %s' % SCHEMA)
    query(addr, creds, 'DROP TABLE IF EXISTS %s.t' % SCHEMA)
    query(addr, creds, 'CREATE TABLE %s.t (seq INT PRIMARY KEY) ENGINE=InnoDB' % SCHEMA)
    time.sleep(1)
    writer = Writer(creds, port)
    writer.start()
    time.sleep(2)
    extra = dict(rolling_restart_hosts='%s:%s' % (primary, replica), rolling_restart_all=True,
                 rolling_restart_primary=mode)
    if mode == 'switchover':
        extra.update(rolling_restart_primary_endpoint='haproxy', rolling_restart_primary_hand_back=True,
                     rolling_restart_primary_replication_password=creds['replication_password'])
    # The extra variables in a private file, not on the command line (the replication password); with --logins, a
    # second inventory gives the pair's hosts their login (dbfleet_login_user / _password), so the switch is one
    # module run reaching both servers over the network (roles/restart/tasks/switchover.yml).
    with tempfile.NamedTemporaryFile('w', suffix='.json') as handle, \
            tempfile.NamedTemporaryFile('w', suffix='.yml') as logins:
        json.dump(extra, handle)
        handle.flush()
        json.dump({'all': {'hosts': dict((h, login(creds, primary)) for h in (primary, replica))}}, logins)
        logins.flush()
        inventories = ['-i', args.inventory] + (['-i', logins.name] if args.logins else [])
        started = time.monotonic()
        proc = subprocess.run([os.path.join(REPO, '.venv', 'bin', 'ansible-playbook')] + inventories +
                              [os.path.join(REPO, 'playbooks', 'rolling_restart.yml'), '-e', '@' + handle.name, '-v'],
                              capture_output=True, text=True, cwd=REPO, check=False)
    took = time.monotonic() - started
    if args.log:
        with open(os.path.join(args.log, '%s-%s.log' % (primary, mode)), 'w', encoding='utf-8') as handle:
            handle.write(proc.stdout)
    time.sleep(2)
    writer.stop.set()
    writer.join(10)
    if proc.returncode != 0:
        sys.exit('%s %s failed:\n%s' % (primary, mode, proc.stdout[-3000:]))
    mysql = primary == 'db1'
    position = query(addr, creds, 'SELECT @@GLOBAL.%s' % ('gtid_executed' if mysql else 'gtid_binlog_pos'))[0][0]
    query(hosts[replica], creds, ('SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, 30)' if mysql else
                                  'SELECT MASTER_GTID_WAIT(%s, 30)'), (position,))
    errant = (query(hosts[replica], creds, 'SELECT GTID_SUBTRACT(@@GLOBAL.gtid_executed, %s)', (position,))[0][0]
              if mysql else ('' if query(hosts[replica], creds, 'SELECT @@GLOBAL.gtid_slave_pos')[0][0] == position
                             else 'positions differ'))
    seqs = set(r[0] for r in query(addr, creds, 'SELECT seq FROM %s.t' % SCHEMA))
    lost = [seq for _stamp, seq in writer.acks if seq not in seqs]
    status = query(hosts[replica], creds, 'SHOW REPLICA STATUS' if mysql else 'SHOW SLAVE STATUS')
    return dict(pair='%s/%s' % (primary, replica), mode=mode, run_s=took, acks=len(writer.acks), errors=writer.errors,
                gap_s=writer.longest_gap(), lost=len(lost), errant=errant or '-', replicating=bool(status),
                windows=switch_windows(proc.stdout))


def switch_windows(output):
    """The one-run switches' own account of each switch (step switch's msg: writes stopped for N s (timings))."""
    return [' '.join(found.split()) for found in re.findall(r'writes\s+stopped\s+for\s+[0-9.]+\s+s\s+\([^)]*\)', output)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--lab-dir', default=os.path.join(REPO, '.lab'))
    parser.add_argument('--inventory', default=os.path.join(REPO, 'inventories', 'fleet', 'hosts.yml'))
    parser.add_argument('--pairs', nargs='+', default=['db1', 'db3'], choices=['db1', 'db3'])
    parser.add_argument('--modes', nargs='+', default=['in_place', 'switchover'], choices=['in_place', 'switchover'])
    parser.add_argument('--log', help='a directory to keep each arm\'s ansible-playbook output in (-v)')
    parser.add_argument('--no-logins', dest='logins', action='store_false',
                        help='no dbfleet_login_* for the pair: the switch runs one module per step and server')
    args = parser.parse_args()
    creds = secrets(args.lab_dir)
    hosts = addresses(args.inventory)
    rows = []
    for primary, replica, port in haproxy.PAIRS:
        if primary in args.pairs:
            for mode in args.modes:
                rows.append(arm(args, creds, hosts, primary, replica, port, mode))
    header = ('pair', 'primary', 'run s', 'acks', 'errors', 'longest gap s', 'lost', 'errant', 'replicating')
    print('%-8s %-11s %7s %7s %7s %16s %5s %7s %11s' % header)
    for r in rows:
        values = (r['pair'], r['mode'], r['run_s'], r['acks'], r['errors'], r['gap_s'], r['lost'], r['errant'],
                  r['replicating'])
        print('%-8s %-11s %7.1f %7d %7d %16.2f %5d %7s %11s' % values)
    for r in rows:
        for window in r['windows']:
            print('%s %s: %s' % (r['pair'], r['mode'], window))


if __name__ == '__main__':
    main()
