# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TLS and the password, against the lab's real servers and small fake servers on this machine.

The lab (lab/dbfleet_lab/tls.py) has its own CA: mysql80 has a certificate for 127.0.0.1 / localhost,
mariadb118 one for another name, mariadb1011 offers no TLS. The fake servers speak just enough of the
MySQL protocol to ask a client for its password in clear, and record every byte the client sends.

Also the login rule: a task that names another server reaches that server, not the one of the
inventory's socket.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import struct
import subprocess
import threading
import time

import pymysql
import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils import connection, verify_fleet

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
BIN = os.path.join(ROOT, '.venv', 'bin')
INVENTORY = os.path.join('inventories', 'lab')
MARKER = 'Pw-dbfleet-tls-test-7Qz'     # the password the fake servers must never see


def ansible(*argv):
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get('PATH', ''),
               ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'), ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.collections'),
               ANSIBLE_NOCOLOR='1', ANSIBLE_CALLBACK_RESULT_FORMAT='json', ANSIBLE_DEPRECATION_WARNINGS='0')
    proc = subprocess.run([os.path.join(BIN, 'ansible')] + list(argv), capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def module(host, name, args):
    """(rc, result or None, output) of one ad-hoc module run on a lab host."""
    rc, out = ansible(host, '-i', INVENTORY, '-m', name, '-a', json.dumps(args))
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
    return connection.query_one(conn, "SHOW SESSION STATUS LIKE 'Ssl_version'")['Value']


# ---------------------------------------------------------------- the lab's certificates
def test_verify_identity_with_the_good_certificate_connects(lab):
    _hosts, ca = tls_hosts(lab)
    rc, result, out = module('mysql80', 'dbfleet.innodb.server_facts',
                             login(lab, 'mysql80', login_ssl_mode='verify_identity', ca_cert=ca))
    assert rc == 0, out
    assert result['server_facts']['port'] == lab.hosts['mysql80']['port']
    assert lab.admin_password not in out
    conn = connection.open_connection(dict(login(lab, 'mysql80', login_ssl_mode='verify_identity', ca_cert=ca),
                                           config_file=''))
    try:
        assert ssl_version(conn).startswith('TLS')
    finally:
        conn.close()


def test_a_certificate_for_another_name_is_refused_by_verify_identity_only(lab):
    _hosts, ca = tls_hosts(lab)
    rc, _result, out = module('mariadb118', 'dbfleet.innodb.server_facts',
                              login(lab, 'mariadb118', login_ssl_mode='verify_identity', ca_cert=ca))
    assert rc != 0
    assert 'certificate is not valid for' in out and "'127.0.0.1'" in out, out
    assert lab.admin_password not in out
    # Not set, with a CA: verify_identity, as community.mysql's check_hostname default.
    with pytest.raises(connection.ConnectError, match='certificate verify failed'):
        connection.open_connection(dict(login(lab, 'mariadb118', ca_cert=ca), config_file=''))
    # verify_ca checks the chain, not the name: the same server is accepted.
    conn = connection.open_connection(dict(login(lab, 'mariadb118', login_ssl_mode='verify_ca', ca_cert=ca),
                                           config_file=''))
    try:
        assert ssl_version(conn).startswith('TLS')
    finally:
        conn.close()


def test_the_self_signed_certificate_of_a_server_fails_against_the_lab_ca(lab):
    _hosts, ca = tls_hosts(lab)
    with pytest.raises(connection.ConnectError, match='certificate verify failed'):
        connection.open_connection(dict(login(lab, 'mysql97', login_ssl_mode='verify_ca', ca_cert=ca), config_file=''))


@pytest.mark.parametrize('mode', ['required', 'verify_ca', 'verify_identity'])
def test_a_server_without_tls_is_refused_when_tls_is_required(lab, mode):
    _hosts, ca = tls_hosts(lab)
    with pytest.raises(connection.ConnectError, match='offers no TLS'):
        connection.open_connection(dict(login(lab, 'mariadb1011', login_ssl_mode=mode, ca_cert=ca), config_file=''))
    conn = connection.open_connection(dict(login(lab, 'mariadb1011', login_ssl_mode='preferred'), config_file=''))
    try:
        assert ssl_version(conn) == ''
    finally:
        conn.close()


def test_disabled_uses_no_tls_on_a_server_that_offers_it(lab):
    conn = connection.open_connection(dict(login(lab, 'mysql80', login_ssl_mode='disabled'), config_file=''))
    try:
        assert ssl_version(conn) == ''
    finally:
        conn.close()


# ---------------------------------------------------------------- fake servers that want the password
CAPABILITIES = (0x1 | 0x4 | 0x200 | 0x2000 | 0x8000 | 0x20000 | 0x80000 | 0x200000)
CLIENT_SSL = 0x800


def _packet(seq, payload):
    return struct.pack('<I', len(payload))[:3] + bytes([seq]) + payload


def _greeting(capabilities, plugin=b'mysql_native_password'):
    salt = b'0123456789abcdefghij'
    return _packet(0, b'\x0a' + b'8.0.33-fake\x00' + struct.pack('<I', 7) + salt[:8] + b'\x00'
                   + struct.pack('<H', capabilities & 0xffff) + bytes([45]) + struct.pack('<H', 2)
                   + struct.pack('<H', capabilities >> 16) + bytes([21]) + b'\x00' * 10 + salt[8:] + b'\x00'
                   + plugin + b'\x00')


class Listener:
    """A TCP listener on address that hands each connection, one at a time, to handle() until closed."""

    def __init__(self, address='127.0.0.1'):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((address, 0))
        self.sock.listen(5)
        self.sock.settimeout(0.5)
        self.address, self.port = self.sock.getsockname()
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
            client.sendall(_greeting(self.capabilities))
            first = self._read(client, data)
            if first:
                client.sendall(_packet(2, b'\xfe' + b'mysql_clear_password\x00'))
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


def test_the_fake_server_does_get_the_password_from_plain_pymysql(fake_server):
    # The hazard itself: PyMySQL answers the cleartext request with the password (so the fake server works).
    with pytest.raises(pymysql.err.MySQLError):
        pymysql.connect(host='127.0.0.1', port=fake_server.port, user='dbfleet', password=MARKER, connect_timeout=5)
    assert MARKER.encode() in bytes(fake_server.received[0])


def test_a_server_asking_for_the_cleartext_plugin_gets_no_password(lab, fake_server):
    rc, _result, out = module('mysql80', 'dbfleet.innodb.server_facts',
                              dict(login_host='127.0.0.1', login_port=fake_server.port, login_user='dbfleet',
                                   login_password=MARKER))
    assert rc != 0
    assert 'mysql_clear_password' in out and 'the password was not sent' in out, out
    assert MARKER not in out
    sent = b''.join(bytes(chunk) for chunk in fake_server.received)
    assert b'dbfleet' in sent, 'the module never reached the fake server: %r\n%s' % (sent, out)
    assert MARKER.encode() not in sent


def test_a_server_without_tls_gets_nothing_when_tls_is_required(tls_files):
    server = FakeServer()
    try:
        for mode in ('required', 'verify_identity'):
            with pytest.raises(connection.ConnectError, match='offers no TLS'):
                connection.open_connection(dict(login_host='127.0.0.1', login_port=server.port, login_user='dbfleet',
                                                login_password=MARKER, login_ssl_mode=mode, config_file='',
                                                ca_cert=tls_files[0]))
        assert len(server.received) == 2 and all(bytes(chunk) == b'' for chunk in server.received), server.received
    finally:
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
            client.sendall(_greeting(CAPABILITIES).replace(b'mysql_native_password', b'caching_sha2_password'))
            if not self._read(client, data):
                return
            client.sendall(_packet(2, b'\x01\x04'))           # perform full authentication
            request = self._read(client, data)
            if request[4:] != b'\x02':
                return
            client.sendall(_packet(4, b'\x01' + self.public_pem))
            encrypted = self._read(client, data)[4:]
            if encrypted:
                message = self.key.decrypt(encrypted, padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()),
                                                                   algorithm=hashes.SHA1(), label=None))
                self.password = bytes(b ^ salt[i % len(salt)] for i, b in enumerate(message)).rstrip(b'\0')
        finally:
            client.close()


def test_an_unverified_remote_server_gets_no_password_by_full_authentication():
    server = FullAuthServer(_address_of_this_machine())
    try:
        # The hazard: PyMySQL sends the password encrypted with the key the server hands it.
        with pytest.raises(pymysql.err.MySQLError):
            pymysql.connect(host=server.address, port=server.port, user='dbfleet', password=MARKER, connect_timeout=5)
        assert server.password == MARKER.encode()
        server.password = None
        with pytest.raises(connection.ConnectError, match='the password was not sent'):
            connection.open_connection(dict(login_host=server.address, login_port=server.port, login_user='dbfleet',
                                            login_password=MARKER, config_file=''))
        assert server.password is None
        sent = bytes(server.received[-1])
        # The handshake response (user name, a hash of the password) and nothing after it: no key request.
        assert b'dbfleet' in sent and len(sent) == 4 + int.from_bytes(sent[:3], 'little'), sent
    finally:
        server.close()


def _address_of_this_machine():
    """An address of this machine that is not a loopback one (the controller's view of a remote host)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(('192.0.2.123', 9))
        address = probe.getsockname()[0]
    except OSError:
        address = None
    finally:
        probe.close()
    if not address or connection.is_loopback(address):
        pytest.fail('this machine has no network address besides loopback (the test needs one to stand in for a '
                    'remote host): bring an interface up', pytrace=False)
    return address


def test_the_controller_sends_no_password_to_a_server_it_cannot_verify():
    server = FakeServer(address=_address_of_this_machine(), capabilities=CAPABILITIES | CLIENT_SSL)
    try:
        params = dict(login_host=server.address, login_port=server.port, login_user='dbfleet', login_password=MARKER)
        params, notes = verify_fleet.controller_login(params, dict(ansible_host=server.address), 'remote1')
        assert notes == []
        result = verify_fleet.audit_host(params, {}, timeout=5)
        assert result['failed'] and 'its identity cannot be verified' in result['msg'], result
        assert 'dbfleet_login_ssl_mode' in result['msg'] and MARKER not in result['msg']
        assert server.received == []        # not even a TCP connection
        # Chosen explicitly: the controller connects, and its result says the server was not verified.
        chosen, notes = verify_fleet.controller_login(dict(params, login_ssl_mode='preferred'),
                                                      dict(ansible_host=server.address), 'remote1')
        assert notes == ["the server's identity was not verified: login_ssl_mode preferred was chosen for "
                         "dbfleet@%s:%d" % (server.address, server.port)]
    finally:
        server.close()


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


def _rsa_key():
    from cryptography.hazmat.primitives import serialization  # pylint: disable=import-outside-toplevel
    from cryptography.hazmat.primitives.asymmetric import rsa  # pylint: disable=import-outside-toplevel
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key, key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def _self_signed(directory):
    """(certificate, key) files of a self-signed certificate: what a server in the middle offers."""
    import datetime  # pylint: disable=import-outside-toplevel
    from cryptography import x509  # pylint: disable=import-outside-toplevel
    from cryptography.hazmat.primitives import hashes, serialization  # pylint: disable=import-outside-toplevel
    from cryptography.x509.oid import NameOID  # pylint: disable=import-outside-toplevel
    key, _pem = _rsa_key()
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

    def __init__(self, way, address, tls_files=None):
        self.way = way
        self.key, self.public_pem = _rsa_key()
        self.tls_files = tls_files
        self.received = bytearray()
        self.decrypted = []
        self.connections = 0
        capabilities = CAPABILITIES | (CLIENT_SSL if way == 'caching_full_tls' else 0)
        plugin = {'sha256_greeting': b'sha256_password', 'caching_full': b'caching_sha2_password',
                  'caching_full_tls': b'caching_sha2_password'}.get(way, b'mysql_native_password')
        self.greeting = _greeting(capabilities, plugin)
        super().__init__(address)

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
            client.sendall(_packet((seq + 1) & 0xff, b'\xff\x15\x04#28000Access denied'))
        except (OSError, ssl.SSLError):
            pass
        finally:
            client.close()

    def _send(self, client, seq, payload):
        client.sendall(_packet((seq + 1) & 0xff, payload))
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
        return self._send(client, seq, b'\x01\x04')           # caching_sha2_password: full authentication

    def _after(self, client, seq, payload):
        if payload in (b'\x01', b'\x02'):
            return self._send(client, seq, b'\x01' + self.public_pem)
        if len(payload) == 256:
            self._decrypt(payload)
        return None


@pytest.fixture(scope='module')
def tls_files(tmp_path_factory):
    return _self_signed(str(tmp_path_factory.mktemp('fake-tls')))


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


def _fake_login(server, **extra):
    return dict(login_host=server.address, login_port=server.port, login_user='dbfleet', login_password=MARKER, **extra)


@pytest.mark.fleet
def test_the_fake_servers_learn_the_password_from_plain_pymysql(auth_servers):
    # The hazard itself, for each way: PyMySQL hands over the password (so each fake server works).
    for way, server in auth_servers.items():
        ssl_options = dict(ssl={'check_hostname': False}) if way == 'caching_full_tls' else {}
        with pytest.raises(pymysql.err.MySQLError):
            pymysql.connect(host=server.address, port=server.port, user='dbfleet', password=MARKER, connect_timeout=5,
                            **ssl_options)
        assert server.learned(MARKER), way


@pytest.mark.fleet
@pytest.mark.parametrize('chosen', [{}, {'login_ssl_mode': 'preferred'}], ids=['default', 'preferred'])
def test_no_way_of_asking_gets_the_password_from_a_connection(auth_servers, chosen):
    for way, server in auth_servers.items():
        with pytest.raises(connection.ConnectError) as raised:
            connection.open_connection(dict(_fake_login(server, **chosen), config_file=''))
        message = str(raised.value)
        assert 'the password was not sent' in message and '%s:%d' % (server.address, server.port) in message, message
        assert not server.learned(MARKER), (way, bytes(server.received))
        if way == 'sha256_greeting':
            # The first answer would carry the key request: the client stops before it, having sent nothing.
            assert bytes(server.received) == b'' and server.connections == 1, bytes(server.received)
        else:
            assert b'dbfleet' in bytes(server.received), 'the client never reached the fake server (%s)' % way
        if way in ('sha256_greeting', 'sha256_switch', 'caching_full'):
            assert 'login_server_public_key' in message and 'login_get_server_public_key' in message, message
            plugin = 'caching_sha2_password' if way.startswith('caching') else 'sha256_password'
            assert plugin in message, message


@pytest.mark.fleet
def test_the_key_exchange_is_made_only_with_the_users_key_or_when_chosen(auth_servers, tmp_path):
    # The real server's key, given by the user: the fake server's own key is never used, it decrypts nothing.
    _other, real_pem = _rsa_key()
    key_file = tmp_path / 'server-public-key.pem'
    key_file.write_bytes(real_pem)
    for way in ('sha256_greeting', 'sha256_switch', 'caching_full'):
        server = auth_servers[way]
        with pytest.raises(connection.ConnectError, match='Access denied'):
            connection.open_connection(dict(_fake_login(server, login_server_public_key=str(key_file)), config_file=''))
        assert not server.learned(MARKER) and server.decrypted == [], way
        assert len(bytes(server.received)) > 256, 'the client sent no encrypted password (%s)' % way
    # Chosen explicitly (as --get-server-public-key): the server's key is taken, as the user asked.
    server = auth_servers['caching_full']
    with pytest.raises(connection.ConnectError, match='Access denied'):
        connection.open_connection(dict(_fake_login(server, login_get_server_public_key=True), config_file=''))
    assert server.learned(MARKER)


def test_a_public_key_file_that_is_not_one_is_refused_naming_it(tmp_path):
    bad = tmp_path / 'not-a-key.pem'
    bad.write_text('hello\n')
    with pytest.raises(ValueError, match='login_server_public_key %s holds no PEM public key' % bad):
        connection.connection_kwargs(dict(login_host='10.0.0.1', login_server_public_key=str(bad), config_file=''))


def _results(out, hosts):
    """host -> result dict of an ad-hoc run's output (the default callback, results as JSON)."""
    found = {}
    for host in hosts:
        at = out.find('%s | ' % host)
        if at >= 0:
            found[host] = json.JSONDecoder().raw_decode(out[out.index('{', at):])[0]
    return found


def _assert_refused(server, message, way):
    assert 'the password was not sent' in message, (way, message)
    assert '%s:%d' % (server.address, server.port) in message, (way, message)
    assert not server.learned(MARKER), (way, bytes(server.received))


@pytest.mark.fleet
@pytest.mark.parametrize('route', ['module_task', 'inventory_login'])
def test_no_way_of_asking_gets_the_password_from_a_module(auth_servers, tmp_path, route):
    """server_facts run by Ansible, its login in the task or from the inventory, by default and with preferred."""
    hosts = {}
    for way, server in auth_servers.items():
        for chosen in ('default', 'preferred'):
            login = dict(fake_host=server.address, fake_port=server.port)
            if route == 'inventory_login':
                login.update(dbfleet_login_host=server.address, dbfleet_login_port=server.port,
                             dbfleet_login_user='dbfleet', dbfleet_login_password=MARKER)
                if chosen == 'preferred':
                    login['dbfleet_login_ssl_mode'] = 'preferred'
            hosts['%s_%s' % (way, chosen)] = dict(login, ansible_connection='local', fake_mode=chosen,
                                                  ansible_python_interpreter=os.path.join(BIN, 'python'))
    inventory = tmp_path / 'fake.yml'
    inventory.write_text(json.dumps({'all': {'hosts': hosts}}))
    if route == 'module_task':
        args = dict(login_host='{{ fake_host }}', login_port='{{ fake_port }}', login_user='dbfleet',
                    login_password=MARKER, config_file='',
                    login_ssl_mode="{{ 'preferred' if fake_mode == 'preferred' else omit }}")
    else:
        args = dict(config_file='')
    _rc, out = ansible('all', '-i', str(inventory), '-m', 'dbfleet.innodb.server_facts', '-a', json.dumps(args))
    results = _results(out, hosts)
    assert MARKER not in out
    for host in hosts:
        way = host.rsplit('_', 1)[0]
        assert host in results, out[-3000:]
        assert '%s | FAILED' % host in out, (host, results[host])
        _assert_refused(auth_servers[way], results[host]['msg'], host)


@pytest.mark.fleet
@pytest.mark.parametrize('chosen', [{}, {'login_ssl_mode': 'preferred'}], ids=['default', 'preferred'])
def test_no_way_of_asking_gets_the_password_from_the_controller_audit(auth_servers, chosen):
    for way, server in auth_servers.items():
        params, _notes = verify_fleet.controller_login(_fake_login(server, **chosen),
                                                       dict(ansible_host=server.address), 'remote-%s' % way)
        result = verify_fleet.audit_host(params, {}, timeout=5)
        assert result['failed'], (way, result)
        assert MARKER not in json.dumps(result) and not server.learned(MARKER), (way, result)
        if chosen:
            _assert_refused(server, result['msg'], way)
        else:
            assert 'its identity cannot be verified' in result['msg'] and server.connections == 0, (way, result)


@pytest.mark.fleet
def test_the_restart_gate_shuts_at_once_on_a_refused_login(auth_servers):
    """The gate waits for a server that does not answer, not for one whose login the rules refuse."""
    server = auth_servers['sha256_switch']
    started = time.monotonic()
    rc, result, out = module('mysql80', 'dbfleet.innodb.restart_gate',
                             dict(_fake_login(server), config_file='', timeout=120, interval=1))
    assert rc != 0 and result is not None, out
    assert 'the login was refused and waiting does not change that' in result['msg'], result
    assert 'the password was not sent' in result['msg'] and time.monotonic() - started < 60, result
    assert server.connections == 1 and not server.learned(MARKER) and MARKER not in out


@pytest.mark.fleet
def test_no_way_of_asking_gets_the_password_from_the_restart_gates_looks(auth_servers):
    from ansible_collections.dbfleet.innodb.plugins.modules import restart_gate  # pylint: disable=import-outside-toplevel
    for way, server in auth_servers.items():
        params = dict(_fake_login(server), config_file='', connect_timeout=5, expect_replica=False, max_lag=30)
        facts, problems, conn = restart_gate.look(params, None)
        assert facts is None and conn is None, way
        _assert_refused(server, problems[0], way)


# ---------------------------------------------------------------- loopback TCP, trusted unless turned off
def test_loopback_tcp_is_trusted_by_default_and_not_when_turned_off(tls_files):
    """A local user listening on the port of a server that is down (the restart gate reconnecting): trusted by
    default (documented), given nothing with login_trust_loopback false."""
    server = AuthServer('caching_full', '127.0.0.1', tls_files)
    try:
        login = dict(login_host='127.0.0.1', login_port=server.port, login_user='dbfleet', login_password=MARKER,
                     config_file='')
        with pytest.raises(connection.ConnectError, match='the password was not sent'):
            connection.open_connection(dict(login, login_trust_loopback=False))
        assert not server.learned(MARKER) and b'dbfleet' in bytes(server.received)
        with pytest.raises(connection.ConnectError, match='Access denied'):
            connection.open_connection(login)
        assert server.learned(MARKER)       # the default's trust, as docs/security.md says
    finally:
        server.close()


def test_without_loopback_trust_the_socket_of_the_same_server_is_preferred(lab, tmp_path):
    hosts = lab.refresh()
    login = dict(login_host='127.0.0.1', login_port=hosts['mysql80']['port'], login_user=lab.admin_user,
                 login_password=lab.admin_password, login_trust_loopback=False)
    for socket_of, expected in (('mysql80', 'Localhost via UNIX socket'), ('mariadb1011', 'socket 127.0.0.1:%d'
                                                                           % hosts['mysql80']['port'])):
        cnf = tmp_path / ('%s.cnf' % socket_of)
        cnf.write_text('[client]\nsocket = %s\n' % hosts[socket_of]['socket'])
        conn = connection.open_connection(dict(login, config_file=str(cnf)))
        try:
            # mariadb1011's socket reaches another server: not used, the login goes over TCP as named.
            assert conn.host_info == expected, (socket_of, conn.host_info)
            assert str(connection.query_one(conn, 'SELECT @@port AS p')['p']) == str(hosts['mysql80']['port'])
        finally:
            conn.close()


# ---------------------------------------------------------------- the login rule
def test_a_task_naming_another_server_reaches_that_server(lab):
    hosts = lab.refresh()
    assert hosts['mariadb1011'].get('socket'), hosts['mariadb1011']
    # mariadb1011's inventory sets dbfleet_login_unix_socket; the task names mysql80's TCP port.
    rc, result, out = module('mariadb1011', 'dbfleet.innodb.server_facts',
                             dict(login_host='127.0.0.1', login_port=hosts['mysql80']['port']))
    assert rc == 0, out
    facts = result['server_facts']
    uuid = lab.query('mysql80', 'SELECT @@server_uuid AS u')[0]['u']
    assert facts['port'] == hosts['mysql80']['port'], facts
    assert uuid in json.dumps(facts) or facts['version_text'] == hosts['mysql80']['version'], facts


class Forwarder(Listener):
    """A TCP forwarder on an address of this machine to a lab server on 127.0.0.1: a remote server as the
    controller sees it. connections counts the clients that reached it."""

    def __init__(self, address, port):
        self.target = ('127.0.0.1', port)
        self.connections = 0
        super().__init__(address)

    def handle(self, client):
        self.connections += 1
        upstream = socket.create_connection(self.target, timeout=10)
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


@pytest.mark.fleet
def test_a_remote_login_that_is_not_verified_is_warned_about_and_a_verified_one_is_not(lab, lab_network):  # pylint: disable=redefined-outer-name
    """server_facts reaching mysql80 through an address of the lab's network: a warning in the result names the
    server and how to verify it; with the lab's CA (the chain verified) there is none."""
    _hosts, ca = tls_hosts(lab)
    forwarder = Forwarder(lab_network, lab.hosts['mysql80']['port'])
    try:
        base = dict(login_host=forwarder.address, login_port=forwarder.port, login_user=lab.admin_user,
                    login_password=lab.admin_password, config_file='')
        rc, result, out = module('mysql80', 'dbfleet.innodb.server_facts', base)
        assert rc == 0, out
        assert result['server_facts']['port'] == lab.hosts['mysql80']['port'], out
        warning = '[WARNING]: the server %s@%s:%d is reached over TCP without verifying its identity' % (
            lab.admin_user, forwarder.address, forwarder.port)
        assert warning in out and 'verify_identity with ca_cert' in out and lab.admin_password not in out, out
        rc, result, out = module('mysql80', 'dbfleet.innodb.server_facts',
                                 dict(base, login_ssl_mode='verify_ca', ca_cert=ca))
        assert rc == 0, out
        assert 'without verifying' not in out, out
        rc, _result, out = module('mysql80', 'dbfleet.innodb.server_facts', dict(base, login_ssl_mode='verify_ca'))
        assert rc != 0 and 'none was given: set ca_cert' in out, out
        assert forwarder.connections == 2
    finally:
        forwarder.close()


def test_the_fleet_report_says_whether_the_password_was_sent(lab, tmp_path):
    """verify.yml in controller mode, as AWX runs it, on hosts whose servers are not on the controller."""
    address = _address_of_this_machine()
    _hosts, ca = tls_hosts(lab)
    forwarders = dict((name, Forwarder(address, lab.hosts['mysql80']['port']))
                      for name in ('remote-unverified', 'remote-chosen', 'remote-verified'))
    try:
        template = dict(ansible_host=address, ansible_connection='ssh', dbfleet_login_host=address,
                        dbfleet_login_user=lab.admin_user, dbfleet_login_password=lab.admin_password)
        inventory = tmp_path / 'remote.yml'
        inventory.write_text(json.dumps({'all': {'hosts': {
            'remote-unverified': dict(template, dbfleet_login_port=forwarders['remote-unverified'].port),
            'remote-chosen': dict(template, dbfleet_login_port=forwarders['remote-chosen'].port,
                                  dbfleet_login_ssl_mode='required'),
            # mysql80's certificate is for 127.0.0.1: through another address only the chain verifies.
            # The controller's own CA (verify_controller_ca_cert): a host's dbfleet_login_ca_cert names a
            # file on that host, never read on the controller.
            'remote-verified': dict(template, dbfleet_login_port=forwarders['remote-verified'].port,
                                    dbfleet_login_ssl_mode='verify_ca'),
        }}}))
        env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get('PATH', ''), ANSIBLE_NOCOLOR='1',
                   ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'),
                   ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.collections'))

        def audit(name, **extra):
            """verify.yml in controller mode; the hosts' entries of its report."""
            reports = tmp_path / name
            proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-i', str(inventory),
                                   os.path.join(ROOT, 'playbooks', 'verify.yml'), '-e',
                                   json.dumps(dict({'verify_mode': 'controller', 'verify_report_dir': str(reports),
                                                    'verify_timeout': 5}, **extra))],
                                  capture_output=True, text=True, env=env, timeout=300, cwd=ROOT, check=False)
            out = proc.stdout + proc.stderr
            assert lab.admin_password not in out
            report_text = (reports / 'verify.json').read_text()
            assert lab.admin_password not in report_text
            return json.loads(report_text)['hosts']

        # No CA on the controller: the first host cannot be verified, the second chose not to verify.
        report = audit('reports', verify_hosts='remote-unverified:remote-chosen')
        unverified = json.dumps(report['remote-unverified'])
        assert report['remote-unverified']['status'] == 'error', unverified
        assert 'its identity cannot be verified' in unverified and 'dbfleet_login_ssl_mode' in unverified
        assert forwarders['remote-unverified'].connections == 0, 'the controller connected to a server it cannot verify'
        chosen = report['remote-chosen']
        assert chosen['status'] != 'error', json.dumps(chosen)[:2000]
        assert "the server's identity was not verified: login_ssl_mode required was chosen" in json.dumps(chosen)
        # The controller's own CA verifies the third.
        verified = audit('reports-ca', verify_hosts='remote-verified', verify_controller_ca_cert=ca)['remote-verified']
        assert verified['status'] != 'error', json.dumps(verified)[:2000]
        assert 'not verified' not in json.dumps(verified)
        assert forwarders['remote-chosen'].connections >= 1 and forwarders['remote-verified'].connections >= 1
    finally:
        for forwarder in forwarders.values():
            forwarder.close()
