"""The fleet's replicated pairs behind HAProxy for the switchover tests (restart_primary: switchover): db1 -> db2
(MySQL 8.0.33) and db3 -> db4 (MariaDB 10.11), writers committing through the pair's HAProxy address, the backends'
states read through the runtime API, and the "no errant transaction" check."""
import json
import os
import time

from dbfleet_testing import clusterfaults
from dbfleet_testing.lab import Connection
from dbfleet_testing.replication import one, wait_replicating
from dbfleet_lab import haproxy  # pylint: disable=wrong-import-order
from dbfleet_lab.netns import GATEWAY  # pylint: disable=wrong-import-order

PORTS = dict((p, port) for p, _r, port in haproxy.PAIRS)


class Acks(set):
    """The committed seqs, with the time of each acknowledgement."""

    def __init__(self):
        super().__init__()
        self.times = []

    def add(self, seq):
        self.times.append(time.monotonic())
        super().add(seq)

    def longest_gap(self):
        return max((b - a for a, b in zip(self.times, self.times[1:])), default=None)


class Pair(clusterfaults.Queries):
    """A replicated pair as clusterfaults' Writer and compare() see it; 'endpoint' is its HAProxy address."""

    def __init__(self, fleet, primary, replica):
        self.fleet = fleet
        self.hosts = self.members = (primary, replica)
        self.primary = primary

    def connect(self, host, timeout=3, read_timeout=10):
        if host == 'endpoint':
            return Connection(host=GATEWAY, port=PORTS[self.primary], user=self.fleet.admin_user,
                              password=self.fleet.admin_password, connect_timeout=timeout,
                              read_timeout=read_timeout, autocommit=True)
        return self.fleet.connect(host, connect_timeout=timeout, read_timeout=read_timeout)

    def writer(self):
        writer = clusterfaults.Writer(self, ['endpoint'], connect_timeout=1, read_timeout=5, pause=0.01,
                                      error_pause=0.05)
        writer.committed = Acks()
        return writer


def socket(fleet):
    return haproxy.socket_path(os.path.join(fleet.lab_dir, 'fleet'))


def haproxy_states(fleet):
    from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import writer_endpoint  # pylint: disable=import-outside-toplevel
    return dict(('writer_%s' % p, writer_endpoint.server_states(writer_endpoint.command(socket(fleet), 'show servers state writer_%s' % p)))
                for p, _r, _port in haproxy.PAIRS)


def set_states(fleet, backend, **states):
    """Set servers of a backend ready / maint through the runtime API (a test putting the fleet back)."""
    from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import writer_endpoint  # pylint: disable=import-outside-toplevel
    for server, state in sorted(states.items(), key=lambda kv: kv[1] != 'ready'):
        answer = writer_endpoint.command(socket(fleet), 'set server %s/%s state %s' % (backend, server, state))
        assert not answer.strip(), answer


def lb_states(fleet, primary):
    return haproxy_states(fleet)['writer_%s' % primary]


def replication_password(fleet):
    with open(os.path.join(fleet.lab_dir, 'fleet', 'secrets.json'), encoding='utf-8') as handle:
        return json.load(handle)['replication_password']


def extra(fleet, hosts, endpoint='haproxy', **more):
    more.setdefault('rolling_restart_primary_replication_password', replication_password(fleet))
    return dict(rolling_restart_hosts=hosts, rolling_restart_all=True, rolling_restart_primary='switchover',
                rolling_restart_primary_endpoint=endpoint, **more)


def logins(fleet, path):
    """A second inventory giving db1-db4 a login (the lab's admin; TLS required on MySQL 8, whose servers have no
    certificate a client could verify): with it each switch is one module run reaching both servers over the network
    (roles/restart/tasks/switchover.yml). The fleet's own inventory gives none (the collection finds the login on
    each host), so that file stays as a user's would be."""
    hosts = dict((h, dict(dbfleet_login_user=fleet.admin_user, dbfleet_login_password=fleet.admin_password))
                 for h in ('db1', 'db2', 'db3', 'db4'))
    for host in ('db1', 'db2'):
        hosts[host]['dbfleet_login_ssl_mode'] = 'required'
    path.write_text(json.dumps({'all': {'hosts': hosts}}))
    path.chmod(0o600)
    return str(path)


def no_errant(fleet, primary, replica):
    """The replica has all the primary has and nothing else (GTID sets equal once it caught up)."""
    wait_replicating(fleet, replica)
    if primary in ('db1', 'db2'):
        source = one(fleet, primary, 'SELECT @@GLOBAL.gtid_executed')
        assert one(fleet, replica, 'SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, 30)', (source,)) == 0
        assert one(fleet, replica, 'SELECT GTID_SUBTRACT(@@GLOBAL.gtid_executed, %s)', (source,)) == ''
    else:
        source = one(fleet, primary, 'SELECT @@GLOBAL.gtid_binlog_pos')
        assert one(fleet, replica, 'SELECT MASTER_GTID_WAIT(%s, 30)', (source,)) == 0
        assert one(fleet, replica, 'SELECT @@GLOBAL.gtid_slave_pos') == source
