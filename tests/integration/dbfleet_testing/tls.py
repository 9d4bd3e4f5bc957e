"""What the TLS and password tests share (local/modules/test_tls.py, fleet/modules/test_tls_fleet.py,
fleet/modules/test_tls_distribution.py): the lab's certificates, ad-hoc module runs on the lab, and small fake servers on
this machine that speak just enough of the MySQL protocol to ask a client for its password in clear, and record every
byte the client sends; their fixtures (fake_server, tls_files, lab_network, auth_servers) are imported by the conftest.py
of local/modules and fleet/modules."""
from __future__ import annotations

import json
import os
import socket
import ssl
import struct
import subprocess
import threading

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import is_loopback
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import query_one
from dbfleet_testing.runs import ansible

INVENTORY = os.path.join('inventories', 'lab')
MARKER = 'Pw-dbfleet-tls-test-7Qz'     # the password the fake servers must never see


def module(host, name, args):
    """(rc, result or None, output) of one ad-hoc module run on a lab host."""
    rc, out = ansible('ansible', host, '-i', INVENTORY, '-m', name, '-a', json.dumps(args))
    try:
        start = out.index('{', out.index('%s | ' % host))
        return rc, json.JSONDecoder().raw_decode(out[start:])[0], out
    except ValueError:
        return rc, None, out


def tls_hosts(lab):
    hosts = lab.refresh()
    ca = os.path.join(lab.lab_dir, 'tls', 'ca.pem')
    assert os.path.exists(ca), 'the lab has no CA (%s): restart it with `make lab-down lab-up`' % ca
    return hosts, ca


def login(lab, host, **extra):
    return dict(login_host='127.0.0.1', login_port=lab.hosts[host]['port'], login_user=lab.admin_user,
                login_password=lab.admin_password, **extra)


def ssl_version(conn):
    return query_one(conn, "SHOW SESSION STATUS LIKE 'Ssl_version'")['Value']


def negotiated(lab, host, **options):
    """The TLS version a connection of connection.open_connection() to the lab host with these login options
    (no client option file) runs, '' without TLS; connection.ConnectError when the login refuses the server."""
    conn = connection.open_connection(dict(login(lab, host, **options), config_file=''))
    try:
        return ssl_version(conn)
    finally:
        conn.close()


# ---------------------------------------------------------------- fake servers that want the password
CAPABILITIES = (0x1 | 0x4 | 0x200 | 0x2000 | 0x8000 | 0x20000 | 0x80000 | 0x200000)


CLIENT_SSL = 0x800


def mysql_packet(seq, payload):
    return struct.pack('<I', len(payload))[:3] + bytes([seq]) + payload


def mysql_greeting(capabilities, plugin=b'mysql_native_password'):
    salt = b'0123456789abcdefghij'
    return mysql_packet(0, b'\x0a' + b'8.0.33-fake\x00' + struct.pack('<I', 7) + salt[:8] + b'\x00'
                        + struct.pack('<H', capabilities & 0xffff) + bytes([45]) + struct.pack('<H', 2)
                        + struct.pack('<H', capabilities >> 16) + bytes([21]) + b'\x00' * 10 + salt[8:] + b'\x00'
                        + plugin + b'\x00')


class Listener:
    """A TCP listener on address that hands each connection, one at a time, to handle() until closed."""

    def __init__(self, address='127.0.0.1', port=0):
        self.sock = socket.socket(socket.AF_INET6 if ':' in address else socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((address, port))
        self.sock.listen(5)
        self.sock.settimeout(0.5)
        self.address, self.port = self.sock.getsockname()[:2]
        self.stopped = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stopped:
            try:
                client, _peer = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.handle(client)

    def handle(self, client):
        raise NotImplementedError

    def close(self):
        self.stopped = True
        self.sock.close()
        self.thread.join(5)


class FakeServer(Listener):
    """A MySQL greeting, then an auth switch to mysql_clear_password; records every byte a client sends.

    Serves one connection at a time until closed; received[i] holds the bytes of connection i."""

    def __init__(self, address='127.0.0.1', capabilities=CAPABILITIES):
        self.capabilities = capabilities
        self.received = []
        super().__init__(address)

    def handle(self, client):
        data = bytearray()
        self.received.append(data)
        try:
            client.settimeout(5)
            client.sendall(mysql_greeting(self.capabilities))
            first = self._read(client, data)
            if first:
                client.sendall(mysql_packet(2, b'\xfe' + b'mysql_clear_password\x00'))
                self._read(client, data)
        finally:
            client.close()

    @staticmethod
    def _read(client, data):
        """Read until the client stops sending (a packet, or the end of the connection)."""
        chunk = b''
        try:
            chunk = client.recv(65536)
        except (socket.timeout, OSError):
            return b''
        data.extend(chunk)
        return chunk


@pytest.fixture
def fake_server():
    server = FakeServer()
    yield server
    server.close()


class FullAuthServer(FakeServer):
    """A caching_sha2_password server that asks for full authentication and answers a key request with its
    own RSA key: what a host in the middle does. password holds what it could decrypt."""

    def __init__(self, address):
        from cryptography.hazmat.primitives import serialization  # pylint: disable=import-outside-toplevel
        from cryptography.hazmat.primitives.asymmetric import rsa  # pylint: disable=import-outside-toplevel
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.public_pem = self.key.public_key().public_bytes(serialization.Encoding.PEM,
                                                             serialization.PublicFormat.SubjectPublicKeyInfo)
        self.password = None
        super().__init__(address=address)

    def handle(self, client):
        from cryptography.hazmat.primitives import hashes  # pylint: disable=import-outside-toplevel
        from cryptography.hazmat.primitives.asymmetric import padding  # pylint: disable=import-outside-toplevel
        salt = b'0123456789abcdefghij'
        data = bytearray()
        self.received.append(data)
        try:
            client.settimeout(5)
            client.sendall(mysql_greeting(CAPABILITIES).replace(b'mysql_native_password', b'caching_sha2_password'))
            if not self._read(client, data):
                return
            client.sendall(mysql_packet(2, b'\x01\x04'))           # perform full authentication
            request = self._read(client, data)
            if request[4:] != b'\x02':
                return
            client.sendall(mysql_packet(4, b'\x01' + self.public_pem))
            encrypted = self._read(client, data)[4:]
            if encrypted:
                message = self.key.decrypt(encrypted, padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()),
                                                                   algorithm=hashes.SHA1(), label=None))
                self.password = bytes(b ^ salt[i % len(salt)] for i, b in enumerate(message)).rstrip(b'\0')
        finally:
            client.close()


def address_of_this_machine():
    """An address of this machine that is not a loopback one (the controller's view of a remote host)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(('192.0.2.123', 9))
        address = probe.getsockname()[0]
    except OSError:
        address = None
    finally:
        probe.close()
    if not address or is_loopback(address):
        pytest.fail('this machine has no network address besides loopback (the test needs one to stand in for a '
                    'remote host): bring an interface up', pytrace=False)
    return address


# ---------------------------------------------------------------- every way a server asks for the password
# The fake servers listen on the lab's own network (the SSH fleet's bridge, 10.231.N.1, made by
# `python lab/lab.py --mode ssh up`): an ordinary address, not a loopback one.
WAYS = ('sha256_greeting', 'sha256_switch', 'clear', 'dialog', 'caching_full', 'caching_full_tls')


SALT = b'0123456789abcdefghij'


def lab_network_address():
    """The root side of the lab's SSH fleet network (netns.GATEWAY), or fail saying how to make it."""
    from dbfleet_lab import netns  # pylint: disable=import-outside-toplevel
    shown = subprocess.run(['ip', '-o', '-4', 'addr', 'show', 'dev', netns.BRIDGE], capture_output=True, text=True,
                           check=False).stdout
    if ' %s/' % netns.GATEWAY not in shown:
        pytest.fail('the lab network %s (%s) is not up: start it with `DBFLEET_FLEET_NET=%d python lab/lab.py --mode ssh '
                    'up db3`' % (netns.BRIDGE, netns.GATEWAY, netns.NET), pytrace=False)
    return netns.GATEWAY


def rsa_key():
    from cryptography.hazmat.primitives import serialization  # pylint: disable=import-outside-toplevel
    from cryptography.hazmat.primitives.asymmetric import rsa  # pylint: disable=import-outside-toplevel
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key, key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def self_signed(directory):
    """(certificate, key) files of a self-signed certificate: what a server in the middle offers."""
    import datetime  # pylint: disable=import-outside-toplevel
    from cryptography import x509  # pylint: disable=import-outside-toplevel
    from cryptography.hazmat.primitives import hashes, serialization  # pylint: disable=import-outside-toplevel
    from cryptography.x509.oid import NameOID  # pylint: disable=import-outside-toplevel
    key, _pem = rsa_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'fake-mysql')])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    cert_file, key_file = os.path.join(directory, 'fake-cert.pem'), os.path.join(directory, 'fake-key.pem')
    with open(cert_file, 'wb') as handle:
        handle.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_file, 'wb') as handle:
        handle.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                       serialization.NoEncryption()))
    return cert_file, key_file


class AuthServer(Listener):
    """A fake MySQL server that asks for the password in one of WAYS and keeps what it learns.

    received: every byte a client sent, after TLS is taken off (the server ends the TLS itself, as a
    server in the middle does); decrypted: what it decrypted with its RSA key. learned(secret) tells whether
    the secret reached it in either form."""

    def __init__(self, way, address, tls_files=None, port=0):
        self.way = way
        self.key, self.public_pem = rsa_key()
        self.tls_files = tls_files
        self.received = bytearray()
        self.decrypted = []
        self.connections = 0
        capabilities = CAPABILITIES | (CLIENT_SSL if way == 'caching_full_tls' else 0)
        plugin = {'sha256_greeting': b'sha256_password', 'caching_full': b'caching_sha2_password',
                  'caching_full_tls': b'caching_sha2_password'}.get(way, b'mysql_native_password')
        self.greeting = mysql_greeting(capabilities, plugin)
        super().__init__(address, port)

    def learned(self, secret):
        secret = secret.encode()
        return secret in bytes(self.received) or any(secret in text for text in self.decrypted)

    def _read(self, client):
        """(seq, payload) of the client's next packet, or (None, b'') when it sends no more."""
        try:
            head = self._exactly(client, 4)
            payload = self._exactly(client, int.from_bytes(head[:3], 'little'))
        except (OSError, EOFError):
            return None, b''
        self.received.extend(payload)
        return head[3], payload

    @staticmethod
    def _exactly(client, size):
        data = b''
        while len(data) < size:
            chunk = client.recv(size - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def _decrypt(self, blob):
        from cryptography.hazmat.primitives import hashes  # pylint: disable=import-outside-toplevel
        from cryptography.hazmat.primitives.asymmetric import padding  # pylint: disable=import-outside-toplevel
        try:
            message = self.key.decrypt(blob, padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()),
                                                          algorithm=hashes.SHA1(), label=None))
        except ValueError:
            return              # encrypted with another key (the one the user gave): nothing learned
        self.decrypted.append(bytes(b ^ SALT[i % len(SALT)] for i, b in enumerate(message)))

    @staticmethod
    def _auth_response(payload):
        """The auth response of a handshake response packet (lenenc, as CAPABILITIES announce)."""
        rest = payload[32:]
        rest = rest[rest.index(b'\0') + 1:]
        size = rest[0]
        return rest[1:1 + size]

    def handle(self, client):
        self.connections += 1
        try:
            client.settimeout(5)
            client.sendall(self.greeting)
            seq, payload = self._read(client)
            if seq is None:
                return
            if self.way == 'caching_full_tls' and len(payload) == 32:
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.load_cert_chain(*self.tls_files)
                client = context.wrap_socket(client, server_side=True)
                seq, payload = self._read(client)
                if seq is None:
                    return
            answer = self._respond(client, seq, payload)
            while answer is not None:
                seq, answer = answer
                seq, payload = self._read(client)
                if seq is None:
                    return
                answer = self._after(client, seq, payload)
            client.sendall(mysql_packet((seq + 1) & 0xff, b'\xff\x15\x04#28000Access denied'))
        except (OSError, ssl.SSLError):
            pass
        finally:
            client.close()

    def _send(self, client, seq, payload):
        client.sendall(mysql_packet((seq + 1) & 0xff, payload))
        return (seq + 1, payload)

    def _respond(self, client, seq, payload):
        """The server's answer to the handshake response: (seq, what) to read another packet, None to end."""
        if self.way == 'sha256_greeting':
            response = self._auth_response(payload)
            if response == b'\x01':
                return self._send(client, seq, b'\x01' + self.public_pem)
            self._decrypt(response)
            return None
        if self.way == 'sha256_switch':
            return self._send(client, seq, b'\xfe' + b'sha256_password\x00' + SALT + b'\x00')
        if self.way == 'clear':
            return self._send(client, seq, b'\xfe' + b'mysql_clear_password\x00')
        if self.way == 'dialog':
            return self._send(client, seq, b'\xfe' + b'dialog\x00' + b'\x05Password: ')
        if self.way == 'old_password':
            return self._send(client, seq, b'\xfe' + b'mysql_old_password\x00' + SALT[:8] + b'\x00')
        return self._send(client, seq, b'\x01\x04')           # caching_sha2_password: full authentication

    def _after(self, client, seq, payload):
        if payload in (b'\x01', b'\x02'):
            return self._send(client, seq, b'\x01' + self.public_pem)
        if len(payload) == 256:
            self._decrypt(payload)
        return None


NOBODY = 65534


class NobodyAuthServer:
    """An AuthServer run by another local user (uid and gid 65534, nobody, no groups) in a child process of the test:
    what any user of the database host can start on a free loopback port. port 0 takes a free one (read when first
    asked: children made one after the other make their keys at once); learned(), received and connections ask the
    child what it got."""

    _open = []      # the parent's ends of the children's control sockets: a child closes its siblings' (their EOF)

    def __init__(self, way, address, port=0):
        control, child_end = socket.socketpair()
        pid = os.fork()
        if pid == 0:            # the child: drop to nobody, listen, answer the parent's questions until it closes
            control.close()
            for sibling in self._open:
                os.close(sibling.fileno())      # its file object holds it open too: the descriptor itself
            try:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
                server = AuthServer(way, address, port=port)
                child_end.sendall(json.dumps([server.port]).encode() + b'\n')
                with child_end.makefile('rb') as questions:
                    for _line in questions:
                        child_end.sendall(json.dumps(dict(received=bytes(server.received).hex(),
                                                          decrypted=[d.hex() for d in server.decrypted],
                                                          connections=server.connections)).encode() + b'\n')
                server.close()
            finally:
                os._exit(0)     # pylint: disable=protected-access
        child_end.close()
        self.pid, self.address, self.way = pid, address, way
        self._control = control
        self._open.append(control)
        self._answers = control.makefile('rb')
        self._asked_port = port
        self._port = None

    @property
    def port(self):
        if self._port is None:
            line = self._answers.readline()
            if not line:
                pytest.fail('the fake server of uid %d could not listen on %s port %s'
                            % (NOBODY, self.address, self._asked_port), pytrace=False)
            self._port = json.loads(line)[0]
        return self._port

    def state(self):
        assert self.port
        self._control.sendall(b'?\n')
        answer = json.loads(self._answers.readline())
        return dict(received=bytes.fromhex(answer['received']),
                    decrypted=[bytes.fromhex(d) for d in answer['decrypted']], connections=answer['connections'])

    @property
    def received(self):
        return self.state()['received']

    def learned(self, secret):
        state = self.state()
        secret = secret.encode()
        return secret in state['received'] or any(secret in text for text in state['decrypted'])

    def close(self):
        self._open.remove(self._control)
        self._answers.close()
        self._control.close()
        os.waitpid(self.pid, 0)


@pytest.fixture(scope='module')
def tls_files(tmp_path_factory):
    return self_signed(str(tmp_path_factory.mktemp('fake-tls')))


@pytest.fixture(scope='module')
def lab_network(fleet):  # pylint: disable=unused-argument
    """The address of the lab's network on this machine, the SSH fleet brought up when it is down."""
    return lab_network_address()


@pytest.fixture
def auth_servers(tls_files, lab_network):  # pylint: disable=redefined-outer-name
    """One AuthServer per way on the lab's network; closed after the test."""
    address = lab_network
    servers = dict((way, AuthServer(way, address, tls_files)) for way in WAYS)
    yield servers
    for server in servers.values():
        server.close()


def fake_login(server, **extra):
    return dict(login_host=server.address, login_port=server.port, login_user='dbfleet', login_password=MARKER, **extra)


def adhoc_results(out, hosts):
    """host -> result dict of an ad-hoc run's output (the default callback, results as JSON)."""
    found = {}
    for host in hosts:
        at = out.find('%s | ' % host)
        if at >= 0:
            found[host] = json.JSONDecoder().raw_decode(out[out.index('{', at):])[0]
    return found


def assert_refused(server, message, way):
    assert 'the password was not sent' in message, (way, message)
    assert '%s:%d' % (server.address, server.port) in message, (way, message)
    assert not server.learned(MARKER), (way, bytes(server.received))


class Forwarder(Listener):
    """A TCP forwarder on an address of this machine to a lab server on 127.0.0.1: a remote server as the
    controller sees it. connections counts the clients that reached it."""

    def __init__(self, address, port):
        self.target = ('127.0.0.1', port)
        self.connections = 0
        super().__init__(address)

    def handle(self, client):
        self.connections += 1
        try:
            upstream = socket.create_connection(self.target, timeout=10)
        except OSError:
            # The server is down (a restart by another test): the client sees its connection closed at once, as
            # through a real proxy, instead of waiting on a forwarder that relays nothing.
            client.close()
            return
        for src, dst in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pump(src, dst):
        try:
            while True:
                chunk = src.recv(65536)
                if not chunk:
                    break
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            for end in (src, dst):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
