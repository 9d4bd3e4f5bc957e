"""The guarded drop on the lab's real 3-node Galera cluster (MariaDB 10.11 + Debian galera-4).

The fixture (test_galera.py's) starts galera1, galera2, galera3 and galera_replica when they are not all
up, and stops them at the end of this module if it started them.

- limited to one node (``--limit galera1``), drop_tables.yml refuses before any change, naming the members
  missing from the play: the table is still on every node, AHI untouched everywhere;
- on the whole cluster (and its asynchronous replica) with ``drop_tables_ahi_strategy=toggle``: one DROP, run on
  galera1 in total order isolation; a thread per node polls its AHI and the table every 0.05 s: AHI stayed OFF on
  galera2 and galera3 from its switch until the table disappeared there, galera1 switched it OFF before its DROP, AHI is back
  ON on all three after; galera2 and galera3 are reported "dropped by the cluster", rc 0.
"""
import json
import os
import re
import subprocess
import threading
import time

from dbfleet_testing.clusters import INVENTORY, NODES, REPLICA
from dbfleet_testing.runs import env
from dbfleet_testing.lab import REPO

SCHEMA = 'galera_ddl_it'
TABLE = 'big'
WINDOW = '00:00-23:59'


def drop_playbook(limit, **extra):
    cmd = [os.path.join(REPO, '.venv', 'bin', 'ansible-playbook'), '-i', INVENTORY, '--limit', limit,
           os.path.join(REPO, 'playbooks', 'drop_tables.yml'),
           '-e', json.dumps(dict(dict(drop_tables_tables=['%s.%s' % (SCHEMA, TABLE)], drop_tables_window=WINDOW,
                                      drop_tables_force_window=True, drop_tables_confirm=True), **extra))]
    proc = subprocess.run(cmd, env=env(ANSIBLE_STDOUT_CALLBACK='ansible.builtin.default', ANSIBLE_LOAD_CALLBACK_PLUGINS='0',
                                       ANSIBLE_CALLBACK_RESULT_FORMAT='json'),
                          capture_output=True, text=True, timeout=600, cwd=REPO, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def table_on(cl, node):
    return bool(cl.query(node, 'SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s',
                         (SCHEMA, TABLE)))


def ahi(cl, node):
    return cl.query(node, 'SELECT @@GLOBAL.innodb_adaptive_hash_index')[0][0]


def make_table(cl):
    cl.query('galera1', 'CREATE DATABASE IF NOT EXISTS %s' % SCHEMA)
    cl.query('galera1', 'DROP TABLE IF EXISTS %s.%s' % (SCHEMA, TABLE))
    cl.query('galera1', 'CREATE TABLE %s.%s (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(64)) ENGINE=InnoDB'
             % (SCHEMA, TABLE))
    cl.query('galera1', 'INSERT INTO %s.%s (v) SELECT REPEAT(\'x\', 64) FROM %s.seq_1_to_2000' % (SCHEMA, TABLE, SCHEMA))
    deadline = time.time() + 60
    while not all(table_on(cl, n) for n in NODES + (REPLICA,)):
        assert time.time() < deadline, 'the table did not reach every node'
        time.sleep(0.2)


def test_drop_limited_to_one_member_is_refused_before_any_change(cluster):  # noqa: F811
    make_table(cluster)
    before = dict((n, ahi(cluster, n)) for n in NODES)
    rc, out = drop_playbook('galera1', drop_tables_ahi_strategy='toggle')
    assert rc != 0, out[-3000:]
    assert 'stopped before any change' in out and 'missing' in out, out[-3000:]
    assert 'galera2' in out and 'galera3' in out
    assert all(table_on(cluster, n) for n in NODES)
    assert dict((n, ahi(cluster, n)) for n in NODES) == before


def test_drop_on_the_cluster_runs_once_with_ahi_off_on_every_member(cluster):  # noqa: F811
    make_table(cluster)
    before = dict((n, ahi(cluster, n)) for n in NODES + (REPLICA,))
    for n in NODES + (REPLICA,):
        cluster.query(n, 'SET GLOBAL innodb_adaptive_hash_index = ON')
    samples = dict((n, []) for n in NODES)
    stop = threading.Event()

    def poll(node):
        # one thread per node: each node is sampled every ~0.05 s whatever the others take
        conn = cluster.connect(node)
        try:
            while not stop.is_set():
                with conn.cursor() as cur:
                    cur.execute('SELECT @@GLOBAL.innodb_adaptive_hash_index, (SELECT COUNT(*) FROM '
                                'information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s)',
                                (SCHEMA, TABLE))
                    value, present = cur.fetchone()
                samples[node].append((value, bool(present)))
                time.sleep(0.05)
        finally:
            conn.close()

    pollers = [threading.Thread(target=poll, args=(n,), daemon=True) for n in NODES]
    for poller in pollers:
        poller.start()
    try:
        started = time.monotonic()
        rc, out = drop_playbook('galera', drop_tables_ahi_strategy='toggle')
        seconds = time.monotonic() - started
    finally:
        stop.set()
        for poller in pollers:
            poller.join(10)
        for n, value in before.items():
            cluster.query(n, 'SET GLOBAL innodb_adaptive_hash_index = %s' % ('ON' if value in (1, '1', 'ON') else 'OFF'))
    assert rc == 0, out[-4000:]
    assert not any(table_on(cluster, n) for n in NODES + (REPLICA,))
    # galera1 dropped once; galera2 and galera3 got it from the cluster
    assert out.count('drops once for cluster') == 1 and out.count('the drop on galera1 reaches it through cluster') == 2, out[-4000:]
    assert out.count('dropped by the cluster (the drop ran on galera1)') == 2, out[-4000:]
    assert len(re.findall(r'"dropped": \[\s*"%s\.%s"' % (SCHEMA, TABLE), out)) == 1, out[-4000:]
    assert 'switch AHI OFF' in out
    # the poll: on galera2 and galera3 AHI was OFF at the last sample that still had the table and at the first
    # that had it gone (the drop reached them with AHI off); every node had it ON again at the end
    # (the follower puts AHI back within its 0.2 s poll of the table being gone: the first sample without the table may
    # already see it back, so what is checked is that AHI stayed OFF from its switch until the table was gone)
    for n in ('galera2', 'galera3'):
        gone = next(i for i, s in enumerate(samples[n]) if not s[1])
        off = next((i for i, s in enumerate(samples[n]) if s == (0, True)), None)
        assert off is not None and off < gone and samples[n][gone - 1] == (0, True), (n, samples[n][max(gone - 3, 0):gone + 3])
        assert all(s == (0, True) for s in samples[n][off:gone]), (n, samples[n][off:gone + 1])
    assert all(samples[n][-1] == (1, False) for n in NODES), dict((n, samples[n][-1]) for n in NODES)
    assert seconds < 120
