"""The local lab's clusters: the Galera cluster galera1-3 + galera_replica (MariaDB 10.11 + Debian galera-4) and the
Group Replication group gr1-3 (MySQL 8.0.33, single primary). Their fixtures (cluster, group) are in
tests/integration/local/clusters/conftest.py: each starts its hosts when they are not up, and stops them at the end of the
module if it started them."""
import json
import os
import time

import pymysql
import pytest

from dbfleet_testing.clusterfaults import Queries
from dbfleet_testing.lab import REPO, LabHandle, connect_mysql, default_lab_dir, lab_py, require_lab_hosts

# ---------------------------------------------------------------- Galera
INVENTORY = os.path.join(REPO, 'inventories', 'lab', 'hosts.yml')
NODES = ('galera1', 'galera2', 'galera3')
REPLICA = 'galera_replica'      # an asynchronous replica of galera1
HOSTS = NODES + (REPLICA,)


class Cluster(Queries):
    """The lab's Galera nodes as the tests see them (inventory variables, admin connections; query())."""

    members = NODES

    def __init__(self):
        hosts = require_lab_hosts(INVENTORY, HOSTS)
        self.hv = dict((n, hosts[n]) for n in HOSTS)

    def connect(self, host, timeout=3, read_timeout=10):
        hv = self.hv[host]
        return connect_mysql(host='127.0.0.1', port=hv['dbfleet_login_port'], user=hv['dbfleet_login_user'],
                             password=hv['dbfleet_login_password'], connect_timeout=timeout, read_timeout=read_timeout,
                             write_timeout=read_timeout, autocommit=True)

    def wsrep(self, node):
        """{wsrep status name: value} of a node; None when it does not answer."""
        try:
            rows = self.query(node, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', "
                                    "'wsrep_ready', 'wsrep_cluster_size', 'wsrep_local_recv_queue')")
        except pymysql.err.MySQLError:
            return None
        return dict(rows)

    def synced(self, node):
        state = self.wsrep(node)
        return bool(state) and state.get('wsrep_local_state_comment') == 'Synced' and state.get('wsrep_ready') == 'ON' \
            and state.get('wsrep_cluster_size') == '3'

    def wait_synced(self, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if all(self.synced(n) for n in NODES):
                return
            time.sleep(0.3)
        raise AssertionError('the cluster is not Synced on every node: %s' % {n: self.wsrep(n) for n in NODES})

    def pid(self, node):
        with open(os.path.join(os.path.dirname(self.hv[node]['dbfleet_option_file']), 'mysqld.pid'),
                  encoding='utf-8') as handle:
            return int(handle.read().split()[0])


def galera_cluster():
    """The cluster fixture's body: a Cluster, Synced, stopped again afterwards when this started it."""
    status = json.loads(lab_py('status', '--json').stdout)
    up = [r['host'] for r in status['hosts'] if r['host'] in HOSTS and r['state'] == 'up']
    started = len(up) < len(HOSTS)
    try:
        if started:
            lab_py('up', *HOSTS)
        handle = Cluster()
        handle.wait_synced()
    except BaseException:
        if started:     # a cluster half up stays out of the lab's inventory for the modules after this one
            lab_py('down', *HOSTS, check=False)
        raise
    yield handle
    if started:
        lab_py('down', *HOSTS)


# ---------------------------------------------------------------- Group Replication
MEMBERS = ('gr1', 'gr2', 'gr3')
MEMBER_STATE_SQL = ("SELECT MEMBER_STATE, MEMBER_ROLE FROM performance_schema.replication_group_members "
                    "WHERE MEMBER_ID = @@server_uuid")


def gr_group():
    """The group fixture's body: a LabHandle of the local lab with every member ONLINE, the group stopped again afterwards
    when this started it."""
    lab_dir = default_lab_dir()
    status = json.loads(lab_py('--lab-dir', lab_dir, 'status', '--json').stdout)
    rows = dict((r['host'], r) for r in status['hosts'])
    started = any((rows.get(m) or {}).get('state') != 'up' for m in MEMBERS)
    if started:
        lab_py('--lab-dir', lab_dir, 'up', *MEMBERS)
    handle = LabHandle('local', lab_dir)
    missing = [m for m in MEMBERS if (handle.hosts.get(m) or {}).get('state') != 'up']
    if missing:
        pytest.fail('Group Replication members %s are not up: start them with `python lab/lab.py up gr1 gr2 gr3`'
                    % ', '.join(missing), pytrace=False)
    wait_all_online(handle)
    yield handle
    if started:
        lab_py('--lab-dir', lab_dir, 'down', *MEMBERS)


def member_state(group, host):
    rows = group.query(host, MEMBER_STATE_SQL)
    return (rows[0]['MEMBER_STATE'], rows[0]['MEMBER_ROLE']) if rows else ('OFFLINE', '')


def wait_all_online(group, timeout=90):
    deadline = time.monotonic() + timeout
    while True:
        states = {}
        for host in MEMBERS:
            try:
                states[host] = member_state(group, host)
            except pymysql.err.MySQLError as exc:
                states[host] = ('DOWN (%s)' % exc.args[0], '')
        if all(s == 'ONLINE' for s, _r in states.values()):
            return states
        assert time.monotonic() < deadline, 'the group is not ONLINE after %d s: %s' % (timeout, states)
        time.sleep(0.5)


def primary_of(group):
    states = wait_all_online(group)
    primaries = [h for h, (_s, role) in states.items() if role == 'PRIMARY']
    assert len(primaries) == 1, states
    return primaries[0]


def pid_of(group, host):
    with open(os.path.join(group.lab_dir, host, 'mysqld.pid'), encoding='utf-8') as handle:
        return int(handle.read().split()[0])
