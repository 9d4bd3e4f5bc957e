# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller audit through a network with 20 ms of round trip: 200 inventory hosts, each its own address
behind bench/verify_fleet/latency.py's delayed path (a relay in a network namespace holding every chunk 10 ms
per direction), on the four lab servers, plus three hosts whose server trickles a byte every half second.

A host's exchange is 10-13 round trips, so one host after the other would take at least 200 x 10 x 20 ms =
40 s; the audit overlaps them (the relay counts the connections open at once). Each of the 200 hosts gets the verdicts the
same server gives over PyMySQL's own result reader on a direct connection (the engine's row reader must not
change a verdict); the tricklers end by verify_deadline, while the others are audited.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time

import pytest
import yaml

from dbfleet_testing.servers import ROOT, lab_inventory
from dbfleet_testing.runs import playbook_proc

sys.path.insert(0, os.path.join(ROOT, 'bench', 'verify_fleet'))
import latency  # noqa: E402  pylint: disable=wrong-import-position
from fleet_inventory import TLS, delayed_login, desired, fleet_inventory, running_values  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection  # noqa: E402
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify_fleet  # noqa: E402

RTT_MS = 20
HOSTS = 200
TRICKLERS = 3
DEADLINE = 4
TIMEOUT = 2
SETTINGS = ('innodb_io_capacity', 'innodb_io_capacity_max', 'innodb_lru_scan_depth', 'innodb_flush_neighbors',
            'innodb_adaptive_hash_index', 'innodb_buffer_pool_size', 'innodb_flush_log_at_trx_commit')
COMPARED = ('status', 'runtime', 'origin', 'default', 'persisted', 'startup', 'desired_normalized', 'kind',
            'dynamic')


class Trickler(object):
    """Accepts every connection and sends the start of a greeting, one byte every `every` seconds, never all."""

    def __init__(self, every=0.5):
        self.every, self.stop = every, threading.Event()
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(('127.0.0.1', 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        self.listener.settimeout(0.5)
        while not self.stop.is_set():
            try:
                client, _addr = self.listener.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._trickle, args=(client,), daemon=True).start()

    def _trickle(self, client):
        data = b'\x4a\x00\x00\x00\x0a' + b'8.0.99-trickle\x00' * 10     # a greeting header promising 74 bytes
        try:
            for i in range(len(data)):
                if self.stop.wait(self.every):
                    break
                client.sendall(data[i:i + 1])
        except OSError:
            pass
        finally:
            client.close()

    def close(self):
        self.stop.set()
        self.listener.close()


def stock_connect(params, timeout, deadline):
    """The connection of the per-host path: PyMySQL's own reader, direct to the server (no delayed path)."""
    kwargs = connection.connection_kwargs(dict(params, connect_timeout=timeout))
    kwargs.update(read_timeout=timeout, write_timeout=timeout)
    return connection.Connection(**kwargs)


def reference(hosts, name, settings, ca):
    hv = hosts[name]
    params = dict(login_user=hv['dbfleet_login_user'], login_password=hv['dbfleet_login_password'],
                  login_host=hv['dbfleet_login_host'], login_port=int(hv['dbfleet_login_port']),
                  login_ssl_mode=TLS[name], ca_cert=ca, config_file=None)
    out = verify_fleet.audit_host(params, settings, timeout=10, connect=stock_connect)
    assert not out['failed'], out
    return out['variables']


@pytest.fixture(scope='module')
def delayed(tmp_path_factory):
    hosts = lab_inventory()
    missing = [name for name in TLS if name not in hosts]
    if missing:
        pytest.fail('lab host(s) %s not up: start them with `make lab-up`' % ', '.join(missing), pytrace=False)
    trickler = Trickler()
    servers = [(name, '127.0.0.1', int(hosts[name]['dbfleet_login_port'])) for name in sorted(TLS)]
    servers.append(('trickler', '127.0.0.1', trickler.port))
    path = latency.DelayedPath(RTT_MS, servers, str(tmp_path_factory.mktemp('delay')), instance=1)
    try:
        path.up()
        yield hosts, path, trickler
    finally:
        path.down()
        trickler.close()


def test_200_hosts_at_20_ms_overlap_keep_their_verdicts_and_the_deadline(delayed, tmp_path):
    hosts, path, trickler = delayed
    probe = latency.probe(path.address(0), path.ports['mysql80'], 5)
    assert RTT_MS * 0.9 <= probe['request_ms'] <= RTT_MS * 2, probe       # the path does delay
    ca = hosts['mysql80']['dbfleet_lab_tls_ca']
    current = running_values(dict((name, hosts[name]) for name in TLS), SETTINGS)
    groups = dict((name, dict(delayed_login(path, name, hosts[name]), verify_extra_settings=desired(current[name])))
                  for name in TLS)
    inventory, expected = fleet_inventory({'ansible_connection': 'local'}, groups, HOSTS, 'lat%03d-%s', path.address)
    inventory['all']['children']['tricklers'] = {'hosts': dict(
        ('slow%d' % i, dict(ansible_host=path.address(HOSTS + i), dbfleet_login_host=path.address(HOSTS + i)))
        for i in range(TRICKLERS)), 'vars': dict(dbfleet_login_user='nobody', dbfleet_login_port=path.ports['trickler'],
                                                 dbfleet_login_ssl_mode='disabled')}
    inv_path = tmp_path / 'hosts.yml'
    inv_path.write_text(yaml.safe_dump(inventory))
    # What each server says through the per-host path's reader, for the two desired-state variants.
    want = {}
    for host, (name, settings) in expected.items():
        key = (name, settings['innodb_io_capacity'])
        if key not in want:
            want[key] = reference(hosts, name, settings, ca)

    reports = tmp_path / 'reports'
    start = time.monotonic()
    proc = playbook_proc(str(inv_path), 'verify.yml', {
        'verify_mode': 'controller', 'verify_desired_from': [], 'verify_report_dir': str(reports),
        'verify_deadline': DEADLINE, 'verify_timeout': TIMEOUT, 'verify_controller_ca_cert': ca,
        'verify_fail_on_error': False}, timeout=300)   # the tricklers are hosts in error by design
    wall = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((reports / 'verify.json').read_text())
    path.down()
    # Overlapped: many exchanges were open at once on the path (one host after the other would take 40 s and
    # more). The wall time itself moves with whatever else runs on the machine: the bound is generous.
    assert path.stats['peak'] >= 50, path.stats
    assert path.stats['connections'] >= HOSTS + TRICKLERS, path.stats
    assert wall < 90, wall
    assert report['summary']['hosts'] == HOSTS + TRICKLERS
    for i in range(TRICKLERS):
        item = report['hosts']['slow%d' % i]
        assert item['status'] == 'error', item
        assert 'deadline of %ds for the whole exchange' % DEADLINE in item['reason'], item
    assert trickler.connections >= TRICKLERS
    drifting = []
    for host, (name, settings) in expected.items():
        item = report['hosts'][host]
        # startup_unknown: runs the desired values, what a restart brings not known (no option file is read from
        # the controller): the host's verdict for its runtime, as ok.
        assert item['status'] in ('ok', 'startup_unknown', 'drift'), (host, item.get('reason'))
        got = item['variables']
        ref = want[(name, settings['innodb_io_capacity'])]
        assert sorted(got) == sorted(ref), host
        for variable in ref:
            assert dict((k, got[variable].get(k)) for k in COMPARED) == dict((k, ref[variable].get(k)) for k in COMPARED), \
                (host, variable)
        if item['status'] == 'drift':
            drifting.append(host)
    # the hosts that want another io_capacity than their server runs drift on it
    for host in expected:
        if int(host[3:6]) % 10 == 0:
            assert host in drifting and report['hosts'][host]['variables']['innodb_io_capacity']['status'] == 'drift_runtime'
