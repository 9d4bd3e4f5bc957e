# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""verify_fleet: the controller's login per host, one host's audit under its timeout and deadline (also a pool of
them), errors isolated, the roles the controller can work out."""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import describe_target, resolve_login
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_pool
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify_fleet as fa
from ansible_collections.dbfleet.innodb.plugins.module_utils.host.process import local_process
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify


# ---------------------------------------------------------------- controller_login
def test_socket_and_option_file_are_never_used_from_the_controller():
    params, notes = fa.controller_login(
        dict(login_user='u', login_password='secret', login_unix_socket='/run/mysqld/mysqld.sock',
             config_file='/root/.my.cnf'),
        dict(ansible_host='10.0.0.5', ansible_connection='ssh'), 'db1')
    assert params['login_host'] == '10.0.0.5'
    assert 'login_unix_socket' not in params
    assert params['config_file'] is None
    assert any('/root/.my.cnf' in n and 'not read' in n for n in notes)
    assert any('socket /run/mysqld/mysqld.sock' in n and '10.0.0.5' in n for n in notes)
    assert not any('secret' in n for n in notes)


def test_loopback_login_host_means_the_host_itself_unless_it_is_the_controller():
    remote, _notes = fa.controller_login(dict(login_host='127.0.0.1', login_port=3307), {}, 'db2.example')
    assert remote['login_host'] == 'db2.example'          # no ansible_host: the inventory name
    assert remote['login_port'] == 3307
    local, notes = fa.controller_login(dict(login_host='127.0.0.1'), dict(ansible_connection='local'), 'lab1')
    assert local['login_host'] == '127.0.0.1' and notes == []


def test_a_host_behind_the_controllers_loopback_is_refused_unless_the_login_host_names_it():
    for host_vars in (dict(ansible_host='127.0.0.1', ansible_port=2222), dict(ansible_host='::1'), {}):
        name = 'localhost' if not host_vars else 'db7'
        with pytest.raises(ValueError, match="reached through the controller's own loopback") as refused:
            fa.controller_login(dict(login_user='u', login_password='secret'), host_vars, name)
        assert 'dbfleet_login_host' in str(refused.value) and 'secret' not in str(refused.value)
    named, _notes = fa.controller_login(dict(login_host='127.0.0.1', login_port=13306),
                                        dict(ansible_host='127.0.0.1'), 'db7')
    assert (named['login_host'], named['login_port']) == ('127.0.0.1', 13306)
    local, _notes = fa.controller_login({}, dict(ansible_host='127.0.0.1', ansible_connection='local'), 'lab1')
    assert local['login_host'] == '127.0.0.1'


def test_a_real_login_host_is_kept():
    params, notes = fa.controller_login(dict(login_host='db3.internal'), dict(ansible_host='10.9.9.9'), 'db3')
    assert params['login_host'] == 'db3.internal' and notes == []


def test_no_login_host_on_a_remote_host_uses_ansible_host():
    params, _notes = fa.controller_login({}, dict(ansible_host='10.0.0.7'), 'db4')
    assert params['login_host'] == '10.0.0.7'
    # resolve_login() then reads no option file of the controller
    assert resolve_login(params)['host'] == '10.0.0.7'


# ---------------------------------------------------------------- one host
class FakeConn(object):
    def __init__(self):
        self.closed = False

    def close(self):
        self.closed = True


def test_unreachable_host_is_an_error_item_with_the_target_and_no_password():
    def refuse(params, timeout, deadline=None):
        raise connection.ConnectError('cannot connect to %s: (2003) refused' % describe_target(params))

    out = fa.audit_host(dict(login_host='10.0.0.9', login_port=3306, login_user='u', login_password='secret'),
                        {}, connect=refuse)
    assert out['failed'] is True
    assert out['connected_to'] == 'u@10.0.0.9:3306'
    assert 'secret' not in repr(out)


def test_bad_role_input_fails_that_host_and_closes_its_connection(monkeypatch):
    conn = FakeConn()

    def bad_input(*args, **kwargs):
        assert kwargs['proc_root'] is None and kwargs['desired_from'] == ['adaptive_hash']
        raise desired.InputError(['adaptive_hash: adaptive_hash_parts must be 1-512; got 1000'])
    monkeypatch.setattr(verify, 'audit', bad_input)
    out = fa.audit_host(dict(login_host='h'), {}, ['adaptive_hash'], dict(adaptive_hash_parts=1000),
                        connect=lambda params, timeout, deadline=None: conn)
    assert out['failed'] and 'adaptive_hash_parts must be 1-512' in out['msg']
    assert conn.closed


def test_an_exception_while_auditing_is_that_hosts_error(monkeypatch):
    conn = FakeConn()

    def broken(*args, **kwargs):
        raise KeyError('version')
    monkeypatch.setattr(verify, 'audit', broken)
    out = fa.audit_host(dict(login_host='h', login_port=1), {}, connect=lambda params, timeout, deadline=None: conn)
    assert out['failed'] and 'KeyError' in out['msg'] and conn.closed


def test_a_server_that_never_answers_times_out():
    """A real TCP listener that accepts and says nothing: the audit of that host ends after the timeout."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(('127.0.0.1', 0))
    listener.listen(5)
    port = listener.getsockname()[1]
    try:
        start = time.monotonic()
        out = fa.audit_host(dict(login_host='127.0.0.1', login_port=port, login_user='u', login_password='pw',
                                 config_file=None), {}, timeout=1)
        elapsed = time.monotonic() - start
    finally:
        listener.close()
    assert out['failed'] is True
    assert 'cannot connect to u@127.0.0.1:%d' % port in out['msg']
    assert elapsed < 5


# ---------------------------------------------------------------- the deadline per host
def _packet(seq, payload):
    return struct.pack('<I', len(payload))[:3] + bytes([seq]) + payload


def _greeting():
    caps = 0x0001 | 0x0200 | 0x2000 | 0x8000 | 0x80000     # long password, 4.1, transactions, secure conn, plugin auth
    return _packet(0, b'\x0a' + b'8.0.33-trickle\0' + struct.pack('<I', 7) + b'abcdefgh\0'
                   + struct.pack('<H', caps & 0xffff) + b'\x21' + struct.pack('<H', 2) + struct.pack('<H', caps >> 16)
                   + b'\x15' + b'\0' * 10 + b'ijklmnopqrst\0' + b'mysql_native_password\0')


class TricklingServer(object):
    """A fake server on loopback that sends one byte every `every` seconds and never finishes a packet:
    in the greeting (phase 'connect'), or after a real handshake and login, in the reply to the first
    query (phase 'query'). Each byte resets a per-read timeout; only a deadline ends the exchange."""

    def __init__(self, phase, every=0.3):
        self.phase, self.every = phase, every
        self.stop = threading.Event()
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(('127.0.0.1', 0))
        self.listener.listen(5)
        self.port = self.listener.getsockname()[1]
        self.bytes_sent = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _trickle(self, client, data):
        for i in range(len(data)):
            if self.stop.wait(self.every):
                return
            client.sendall(data[i:i + 1])
            self.bytes_sent += 1

    def _serve(self):
        self.listener.settimeout(10)
        try:
            client, _addr = self.listener.accept()
        except OSError:
            return
        try:
            if self.phase == 'connect':
                self._trickle(client, _greeting() * 100)
                return
            client.sendall(_greeting())
            client.recv(65536)                                  # the login
            client.sendall(_packet(2, b'\0\0\0' + struct.pack('<HH', 2, 0)))
            client.recv(65536)                                  # the first query
            self._trickle(client, _packet(1, b'\x01') + _packet(2, b'\x03def' * 400))
        except OSError:
            pass
        finally:
            client.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.listener.close()
        self.thread.join(5)


@pytest.mark.parametrize('phase', ['connect', 'query'])
def test_a_trickling_server_is_cut_off_at_the_deadline(phase):
    """One byte every 0.3 s never trips the 1 s read timeout; the 2 s deadline for the whole exchange ends it."""
    with TricklingServer(phase) as server:
        start = time.monotonic()
        out = fa.audit_host(dict(login_host='127.0.0.1', login_port=server.port, login_user='u', login_password='pw',
                                 config_file=None), {}, timeout=1, deadline=2)
        elapsed = time.monotonic() - start
    assert out['failed'] is True, out
    assert 'within the deadline of 2s for the whole exchange' in out['msg'], out
    assert 'pw' not in out['msg']
    assert server.bytes_sent >= 4            # it did keep talking, more slowly than the read timeout
    assert 1.9 <= elapsed < 3.5, elapsed


def test_the_deadline_covers_a_pool_of_tricklers():
    """Three trickling hosts with a pool of 3: the pool ends by the deadline, not by the servers."""
    servers = [TricklingServer('query') for _i in range(3)]
    for server in servers:
        server.__enter__()
    try:
        jobs = dict(('h%d' % i, server.port) for i, server in enumerate(servers))
        start = time.monotonic()
        results = fleet_pool.run_pool(jobs, lambda port: fa.audit_host(
            dict(login_host='127.0.0.1', login_port=port, login_user='u', config_file=None), {}, timeout=1,
            deadline=2), pool=3)
        elapsed = time.monotonic() - start
    finally:
        for server in servers:
            server.__exit__()
    assert all(r['failed'] and 'deadline of 2s' in r['msg'] for r in results.values()), results
    assert elapsed < 4, elapsed


@pytest.mark.parametrize('pool,timeout,deadline,error', [
    (32, 10, 60, None),
    (256, 3600, 3600, None),
    (None, 10, 60, None),
    (65536, 10, 60, None),
    (0, 10, 60, 'pool must be 1-65536; got 0'),
    (65537, 10, 60, 'pool must be 1-65536; got 65537'),
    (32, 0, 60, 'timeout must be 1-3600; got 0'),
    (32, 10, 86400, 'deadline must be 1-3600; got 86400'),
])
def test_limits(pool, timeout, deadline, error):
    errors = fa.check_limits(pool, timeout, deadline)
    assert errors == ([] if error is None else [error])


def test_host_file_paths_are_never_used_from_the_controller():
    params, notes = fa.controller_login(
        dict(login_host='db5.internal', ca_cert='/etc/mysql/ca.pem', client_cert='/etc/mysql/client.pem',
             client_key='/etc/mysql/client-key.pem', check_hostname=True), {}, 'db5')
    assert not any(k in params for k in ('ca_cert', 'client_cert', 'client_key'))
    assert params['check_hostname'] is True
    for path in ('/etc/mysql/ca.pem', '/etc/mysql/client.pem', '/etc/mysql/client-key.pem'):
        assert any(path in n and 'not read from the controller' in n for n in notes), notes


# ---------------------------------------------------------------- desired state and notes
def test_flush_neighbors_only_with_a_storage_class_and_storage_is_never_inspected():
    roles, notes = fa.controller_roles(['adaptive_hash', 'flush_neighbors'], dict(adaptive_hash_enabled=False))
    assert roles == ['adaptive_hash'] and notes == [fa.storage_note("flush_neighbors")]
    assert notes[0].startswith("flush_neighbors: ") and "set flush_neighbors_storage_class to audit" in notes[0]
    roles, notes = fa.controller_roles(['flush_neighbors'], dict(flush_neighbors_storage_class='hdd'))
    assert roles == ['flush_neighbors'] and notes == []
    found = fa.storage_not_inspected('/var/lib/mysql', True)
    assert found['storage_class'] == 'unknown' and 'not inspected' in found['reasons'][0]
    facts = dict(flavor='mysql', version=[8, 0, 33], version_text='8.0.33', datadir='/var/lib/mysql',
                 capabilities={}, variables=dict(innodb_flush_neighbors=dict(exists=True, settable=True,
                                                                             runtime='0')))
    state = desired.for_role('flush_neighbors', dict(flush_neighbors_storage_class='hdd'), facts,
                             fa.storage_not_inspected)
    assert state['settings'] == dict(innodb_flush_neighbors=1)


@pytest.mark.parametrize('item, fragment', [
    (dict(startup=dict(state='known')), None),
    (dict(startup=dict(state='unavailable'), origin=None), 'only the running value was checked'),
    (dict(startup=dict(state='unavailable'), origin='COMPILED'), 'compiled-in default when it started'),
    (dict(startup=dict(state='unavailable'), origin='EXPLICIT', origin_path='/etc/my.cnf'),
     'an option file (/etc/my.cnf) when it started'),
    (dict(startup=dict(state='unavailable'), origin='SQL'), 'set at runtime'),
])
def test_startup_notes_say_what_sql_tells_and_what_it_does_not(item, fragment):
    notes = fa.startup_notes(item)
    if fragment is None:
        assert notes == []
    else:
        assert len(notes) == 1 and fragment in notes[0]


def test_local_process_is_never_read_from_the_controller(tmp_path):
    pid_file = tmp_path / 'mysqld.pid'
    pid_file.write_text('1\n')
    process, reason = local_process(dict(pid_file=str(pid_file)), dict(login_host='127.0.0.1'),
                                    proc_root=None)
    assert process is None and 'controller' in reason
