# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared pieces of the adaptive hash index benchmarks: target, table, clients, counters."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import sys
import time

import pymysql
import pymysql.cursors

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from dbfleet_lab.inventory import read_hosts  # noqa: E402
from dbfleet_lab.serverload import cpu_seconds, server_pid  # noqa: E402,F401  pylint: disable=unused-import

METRICS = ('adaptive_hash_searches', 'adaptive_hash_searches_btree', 'adaptive_hash_rows_added',
           'adaptive_hash_rows_removed', 'adaptive_hash_pages_added', 'adaptive_hash_pages_removed')
MAINT = METRICS[2:]


# ---------------------------------------------------------------- target
def add_target_args(parser):
    g = parser.add_argument_group('target (an inventory host, or explicit login)')
    g.add_argument('--inventory', default=os.path.join(ROOT, 'inventories', 'lab', 'hosts.yml'))
    g.add_argument('--host', help='inventory host name (e.g. mysql80)')
    g.add_argument('--socket')
    g.add_argument('--tcp-host', default='127.0.0.1')
    g.add_argument('--port', type=int, default=3306)
    g.add_argument('--user', default='root')
    g.add_argument('--password', default=None)
    g.add_argument('--database', default='dbfleet_bench_ahi')


def login_from_args(args):
    if args.host:
        hv = read_hosts(args.inventory).get(args.host)
        if hv is None:
            raise SystemExit('host %s is not in %s' % (args.host, args.inventory))
        login = dict(user=hv.get('dbfleet_login_user'), password=hv.get('dbfleet_login_password'))
        if hv.get('dbfleet_login_unix_socket'):
            login['unix_socket'] = hv['dbfleet_login_unix_socket']
        else:
            login['host'] = hv.get('dbfleet_login_host', '127.0.0.1')
            login['port'] = int(hv.get('dbfleet_login_port', 3306))
        return login
    login = dict(user=args.user, password=args.password or '')
    if args.socket:
        login['unix_socket'] = args.socket
    else:
        login['host'] = args.tcp_host
        login['port'] = args.port
    return login


def connect(login, database=None):
    kw = dict(login)
    kw = dict((k, v) for k, v in kw.items() if v is not None)
    if database:
        kw['database'] = database
    return pymysql.connect(autocommit=True, charset='utf8mb4', **kw)


def q(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall()


def connect_retry(login, database=None, seconds=60):
    """Connect, retrying while the server is briefly restarted by someone else."""
    deadline = time.time() + seconds
    while True:
        try:
            return connect(login, database)
        except pymysql.err.OperationalError:
            if time.time() > deadline:
                raise
            time.sleep(1)


# ---------------------------------------------------------------- server side
# server_pid(conn) and cpu_seconds(pid) come from dbfleet_lab.serverload.
def metrics_column(conn):
    cols = [r[0].upper() for r in q(conn, 'SHOW COLUMNS FROM INFORMATION_SCHEMA.INNODB_METRICS')]
    return 'STATUS' if 'STATUS' in cols else 'ENABLED'


def metrics(conn):
    rows = q(conn, 'SELECT NAME, `COUNT` FROM INFORMATION_SCHEMA.INNODB_METRICS WHERE NAME IN (%s)'
             % ', '.join(['%s'] * len(METRICS)), METRICS)
    return dict((r[0], int(r[1])) for r in rows)


def status(conn, names):
    rows = q(conn, 'SHOW GLOBAL STATUS WHERE Variable_name IN (%s)' % ', '.join(['%s'] * len(names)), names)
    return dict((r[0].lower(), int(r[1])) for r in rows)


def monitors_off(conn):
    col = metrics_column(conn)
    rows = q(conn, 'SELECT NAME, %s FROM INFORMATION_SCHEMA.INNODB_METRICS WHERE NAME IN (%s)'
             % (col, ', '.join(['%s'] * len(MAINT))), MAINT)
    return [r[0] for r in rows if str(r[1]).lower() not in ('enabled', '1')]


def set_monitors(conn, names, on):
    for n in names:
        q(conn, 'SET GLOBAL %s = %%s' % ('innodb_monitor_enable' if on else 'innodb_monitor_disable'), (n,))


def ahi(conn):
    return str(q(conn, 'SELECT @@GLOBAL.innodb_adaptive_hash_index')[0][0]) in ('1', 'ON')


def set_ahi(conn, on):
    q(conn, 'SET GLOBAL innodb_adaptive_hash_index = %s' % ('ON' if on else 'OFF'))
    if ahi(conn) != on:
        raise RuntimeError('SET GLOBAL innodb_adaptive_hash_index=%s did not take effect' % on)


# ---------------------------------------------------------------- table
def ensure_table(login, database, table, rows, text_len=200, log=print):
    """A table like the seed's: auto-increment PK, secondary key, text column; `rows` rows."""
    conn = connect_retry(login)
    q(conn, 'CREATE DATABASE IF NOT EXISTS `%s`' % database)
    q(conn, 'USE `%s`' % database)
    q(conn, 'CREATE TABLE IF NOT EXISTS `%s` (i INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, '
            'j INT UNSIGNED NOT NULL, v TEXT, KEY ix_j (j)) ENGINE=InnoDB' % table)
    have = int(q(conn, 'SELECT COUNT(*) FROM `%s`' % table)[0][0])
    if have >= rows:
        conn.close()
        return have
    log('filling %s.%s to %d rows' % (database, table, rows))
    pad = 'x' * text_len
    batch = 2000
    while have < rows:
        n = min(batch, rows - have)
        vals = ', '.join(['(%d, %%s)' % random.randint(0, 1 << 30) for _i in range(n)])
        q(conn, 'INSERT INTO `%s` (j, v) VALUES %s' % (table, vals), [pad] * n)
        have += n
    conn.close()
    return have


def id_range(login, database, table):
    conn = connect_retry(login, database)
    lo, hi = q(conn, 'SELECT MIN(i), MAX(i) FROM `%s`' % table)[0]
    conn.close()
    return int(lo), int(hi)


# ---------------------------------------------------------------- clients
def _client(login, database, table, kind, seconds, lo, hi, in_size, hot, counter, seed):
    rnd = random.Random(seed)
    conn = None
    done = 0
    end = time.time() + seconds
    span = hi - lo + 1
    hot_hi = lo + max(int(span * hot), in_size) - 1 if hot else hi
    while time.time() < end:
        try:
            if conn is None:
                conn = connect_retry(login, database, seconds=30)
            with conn.cursor() as cur:
                if kind == 'read':
                    ids = ', '.join(str(rnd.randint(lo, hot_hi)) for _i in range(in_size))
                    cur.execute('SELECT LEFT(v, 1) FROM `%s` WHERE i IN (%s)' % (table, ids))
                    cur.fetchall()
                else:  # write-heavy: updates of the secondary key and inserts, plus a few short IN-list reads
                    r = rnd.random()
                    if r < 0.45:
                        cur.execute('UPDATE `%s` SET j = %d WHERE i = %d'
                                    % (table, rnd.randint(0, 1 << 30), rnd.randint(lo, hi)))
                    elif r < 0.8:
                        cur.execute("INSERT INTO `%s` (j, v) VALUES (%d, REPEAT('y', 200))"
                                    % (table, rnd.randint(0, 1 << 30)))
                    else:
                        ids = ', '.join(str(rnd.randint(lo, hi)) for _i in range(max(1, in_size // 6)))
                        cur.execute('SELECT LEFT(v, 1) FROM `%s` WHERE i IN (%s)' % (table, ids))
                        cur.fetchall()
            done += 1
            if done == 20:
                with counter.get_lock():
                    counter.value += done
                done = 0
        except pymysql.err.OperationalError:
            conn = None
            time.sleep(0.5)
    with counter.get_lock():
        counter.value += done


class Clients(object):
    """`clients` processes sending statements for `seconds`; .done() is the running count."""

    def __init__(self, login, database, table, kind, seconds, clients, lo, hi, in_size=30, hot=None):
        self.counter = multiprocessing.Value('l', 0)
        self.seconds = seconds
        self.procs = [multiprocessing.Process(target=_client, args=(
            login, database, table, kind, seconds, lo, hi, in_size, hot, self.counter,
            random.randint(0, 1 << 30))) for _i in range(clients)]
        for p in self.procs:
            p.start()

    def done(self):
        return self.counter.value

    def join(self):
        for p in self.procs:
            p.join(self.seconds + 60)
        return self.counter.value


def measure(conn, pid, clients, seconds, extra_status=()):
    """Counters over `seconds` while clients run: statements, server CPU, AHI metrics, status."""
    names = ('innodb_buffer_pool_reads', 'innodb_buffer_pool_read_requests', 'handler_read_key') + tuple(extra_status)
    m0, s0, c0, n0, t0 = metrics(conn), status(conn, names), cpu_seconds(pid), clients.done(), time.time()
    time.sleep(seconds)
    m1, s1, c1, n1, t1 = metrics(conn), status(conn, names), cpu_seconds(pid), clients.done(), time.time()
    out = dict(seconds=t1 - t0, statements=n1 - n0, cpu=c1 - c0)
    out.update(dict((k, m1.get(k, 0) - m0.get(k, 0)) for k in METRICS))
    out.update(dict((k, s1.get(k, 0) - s0.get(k, 0)) for k in names))
    return out


def base_parser(description):
    parser = argparse.ArgumentParser(description=description)
    add_target_args(parser)
    return parser
