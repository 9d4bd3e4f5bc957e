# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A delayed network path to the lab's servers: thousands of addresses, each one RTT away.

This kernel has no netem qdisc (``tc qdisc add ... netem`` says "Specified qdisc kind is unknown") and no
fq qdisc (which a BPF earliest-departure-time delay needs), so the delay is made by delay_relay.c (beside
this file, built with gcc at start): a one-thread epoll relay that holds every chunk it reads for RTT/2
before writing it on, in each direction, and opens its connection to the server 1.5 RTT after it
accepted (the TCP handshake of a real path), so that a MySQL greeting reaches the client 2 RTT after
connect(), and every request/answer after that costs one more RTT than on the direct path.

Layout (N = DBFLEET_FLEET_NET, default 7; root only):

    root namespace: veth dbd<N>h 10.233.N.1/30, route 100.<64+N%32>.0.0/16 via 10.233.N.2
    namespace dbfleet<N>-delay: veth eth0 10.233.N.2/30, local route 100.<64+N%32>.0.0/16 dev lo
        (every address of the /16 is this namespace's): the relay's listening sockets, one port per
        lab server; the relay's connections to the servers (127.0.0.1) leave from the root namespace.
    instance 1 (the integration test, beside a bench run): dbfleet<N>-delayt, veth dbd<N>t, 10.233.N.5/30,
        100.<96+N%32>.0.0/16.

Bench host i gets its own address (address(i)); the controller reaches it over a veth, with a non-loopback
address, so the controller applies the rules of a remote server (TLS, no password to an unverified server).
"""

from __future__ import annotations

import os
import re
import socket
import statistics
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, 'delay_relay.c')


def _net():
    text = os.environ.get('DBFLEET_FLEET_NET', '7')
    if not text.isdigit() or not 1 <= int(text) <= 254:
        raise SystemExit('DBFLEET_FLEET_NET must be a number from 1 to 254 (got %r)' % text)
    return int(text)


def _run(cmd, check=True):
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError('%s failed (exit %d): %s' % (' '.join(cmd), proc.returncode, proc.stderr.strip()))
    return proc


class DelayedPath(object):
    """The namespace, its veth and routes, and one delay_relay process for one RTT (ms)."""

    LISTEN_BASE = 33000

    def __init__(self, rtt_ms, servers, work_dir, instance=0):
        """servers: [(name, ip, port)] of the lab's servers; work_dir: where the relay is built and logs;
        instance: 0 (the bench) or 1 (the integration test), two paths that can be up at once."""
        if instance not in (0, 1):
            raise ValueError('instance must be 0 or 1')
        net = _net()
        self.rtt_ms = float(rtt_ms)
        self.servers = list(servers)
        self.work_dir = work_dir
        self.netns = 'dbfleet%d-delay%s' % (net, '' if instance == 0 else 't')
        self.veth = 'dbd%d%s' % (net, 'h' if instance == 0 else 't')
        self.host_ip = '10.233.%d.%d' % (net, 1 + 4 * instance)
        self.ns_ip = '10.233.%d.%d' % (net, 2 + 4 * instance)
        self.second_octet = 64 + 32 * instance + net % 32
        self.prefix = '100.%d.0.0/16' % self.second_octet
        self.ports = dict((name, self.LISTEN_BASE + i) for i, (name, _ip, _port) in enumerate(self.servers))
        self.proc = None
        self.log_path = os.path.join(work_dir, 'delay_relay.log')
        self.stats = None

    def address(self, i):
        """The address of bench host i (0-64515): its own, in the namespace's /16."""
        if not 0 <= i < 254 * 254:
            raise ValueError('bench host index %d out of range' % i)
        return '100.%d.%d.%d' % (self.second_octet, 1 + i // 254, 1 + i % 254)

    def build(self):
        binary = os.path.join(self.work_dir, 'delay_relay')
        _run(['gcc', '-O2', '-Wall', '-o', binary, SOURCE])
        return binary

    def up(self):
        self.down_network()
        _run(['ip', 'netns', 'add', self.netns])
        _run(['ip', 'link', 'add', self.veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', self.netns])
        _run(['ip', 'addr', 'add', self.host_ip + '/30', 'dev', self.veth])
        _run(['ip', 'link', 'set', self.veth, 'up'])
        inside = ['ip', '-n', self.netns]
        _run(inside + ['link', 'set', 'lo', 'up'])
        _run(inside + ['addr', 'add', self.ns_ip + '/30', 'dev', 'eth0'])
        _run(inside + ['link', 'set', 'eth0', 'up'])
        _run(inside + ['route', 'add', 'local', self.prefix, 'dev', 'lo'])
        _run(['ip', 'route', 'replace', self.prefix, 'via', self.ns_ip, 'dev', self.veth])
        binary = self.build()
        mapping = ['%d=%s:%d' % (self.ports[name], ip, port) for name, ip, port in self.servers]
        log = open(self.log_path, 'ab')
        self.proc = subprocess.Popen([binary, '-d', '%g' % (self.rtt_ms / 2.0), '-n', '/run/netns/' + self.netns]
                                     + mapping, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        line = self.proc.stdout.readline()
        if line.strip() != b'ready':
            self.down()
            raise RuntimeError('delay_relay did not start: see %s' % self.log_path)
        return self

    def relay_cpu(self):
        """utime+stime seconds of the relay so far."""
        if self.proc is None:
            return 0.0
        fields = open('/proc/%d/stat' % self.proc.pid).read().rsplit(')', 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / float(os.sysconf('SC_CLK_TCK'))

    def down_network(self):
        if os.path.exists('/sys/class/net/' + self.veth):
            _run(['ip', 'link', 'del', self.veth], check=False)
        if os.path.exists('/run/netns/' + self.netns):
            _run(['ip', 'netns', 'del', self.netns], check=False)

    def down(self):
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc.stdout.close()
            self.proc = None
            self.stats = relay_stats(self.log_path)
        self.down_network()

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()


def relay_stats(log_path):
    """The counters of the relay's last line: dict(connections, peak, chunks, bytes, failed), or None."""
    try:
        with open(log_path) as handle:
            lines = [line for line in handle if line.startswith('delay_relay:')]
    except OSError:
        return None
    numbers = re.findall(r'(\d+) ', lines[-1]) if lines else []
    if len(numbers) < 5:
        return None
    return dict(zip(('connections', 'peak', 'chunks', 'bytes', 'failed'), (int(n) for n in numbers[:5])))


def probe(address, port, count=20):
    """Round trips measured through the path, as a ping-like TCP probe would.

    Per connection: the time from connect() to the server's greeting (2 RTT on a real path: the TCP
    handshake, then the greeting) and the time of one more request/answer (1 RTT: a COM_PING sent before
    logging in, which the server answers with an error packet and the close). Returns dict of medians in ms."""
    greet, ping = [], []
    for _probe in range(count):
        start = time.monotonic()
        sock = socket.create_connection((address, port), timeout=10)
        try:
            sock.recv(65536)
            greet.append((time.monotonic() - start) * 1000.0)
            # A packet of sequence 1 the server does not expect before the handshake response: it answers
            # (an error packet, then closes): one round trip.
            start = time.monotonic()
            sock.sendall(b'\x01\x00\x00\x01\x0e')
            sock.recv(65536)
            ping.append((time.monotonic() - start) * 1000.0)
        finally:
            sock.close()
    return dict(greeting_ms=round(statistics.median(greet), 2), request_ms=round(statistics.median(ping), 2),
                count=count)
