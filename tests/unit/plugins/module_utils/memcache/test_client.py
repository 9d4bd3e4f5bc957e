# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The memcache text-protocol client against a fake in-process TCP server (protocol parsing only)."""

import socket
import threading
import time

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache import client as memcache_client
from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache.client import (
    MemcacheClient, MemcacheConnectError, MemcacheError, MemcacheTimeout, check_key, container_key)


class FakeServer(object):
    """Answers each request line with a scripted reply; records what it received.

    script: list of (expected request prefix, reply bytes or callable, read_data_block)."""

    def __init__(self, replies, split_replies=False, silent=False):
        self.replies = list(replies)
        self.received = []
        self.split_replies = split_replies
        self.silent = silent
        self.sock = socket.socket()
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve)
        self.thread.daemon = True
        self.thread.start()

    def _serve(self):
        conn = self.sock.accept()[0]
        buf = b''
        try:
            while True:
                while b'\r\n' not in buf:
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    buf += chunk
                line, buf = buf.split(b'\r\n', 1)
                if line.split(b' ')[0] in (b'set', b'add'):
                    length = int(line.split(b' ')[4])
                    while len(buf) < length + 2:
                        buf += conn.recv(4096)
                    line = line + b'|' + buf[:length]
                    buf = buf[length + 2:]
                self.received.append(line)
                if line == b'quit':
                    return
                if self.silent:
                    continue
                reply = self.replies.pop(0)
                if self.split_replies:
                    for i in range(len(reply)):
                        conn.sendall(reply[i:i + 1])
                        time.sleep(0.0005)
                else:
                    conn.sendall(reply)
        finally:
            conn.close()

    def close(self):
        self.sock.close()


@pytest.fixture
def server():
    servers = []

    def make(replies, **kw):
        s = FakeServer(replies, **kw)
        servers.append(s)
        return s
    yield make
    for s in servers:
        s.close()


def test_version(server):
    s = server([b'VERSION 8.0.33\r\n'])
    with MemcacheClient('127.0.0.1', s.port, 2) as c:
        assert c.version() == '8.0.33'
    assert s.received[0] == b'version'


def test_get_value_with_flags_and_container_key(server):
    s = server([b'VALUE @@aaa.AA 8 12\r\nHELLO, HELLO\r\nEND\r\n'])
    with MemcacheClient('127.0.0.1', s.port, 2) as c:
        got = c.get('@@aaa.AA')
    assert got == {'@@aaa.AA': dict(value=b'HELLO, HELLO', flags=8, cas=None)}
    assert s.received[0] == b'get @@aaa.AA'


def test_get_value_containing_crlf_and_split_packets(server):
    # A value may contain \r\n itself: the length, not the line end, delimits it.
    s = server([b'VALUE k 0 7\r\na\r\nb\r\nc\r\nEND\r\n'], split_replies=True)
    with MemcacheClient('127.0.0.1', s.port, 2) as c:
        assert c.get('k')['k']['value'] == b'a\r\nb\r\nc'


def test_get_miss_and_gets_cas(server):
    s = server([b'END\r\n', b'VALUE k 0 1 42\r\nx\r\nEND\r\n'])
    with MemcacheClient('127.0.0.1', s.port, 2) as c:
        assert c.get('nokey') == {}
        assert c.gets('k')['k']['cas'] == 42


def test_stats(server):
    s = server([b'STAT pid 1\r\nSTAT version 8.0.33\r\nSTAT cmd_get 6\r\nEND\r\n'])
    with MemcacheClient('127.0.0.1', s.port, 2) as c:
        stats = c.stats()
    assert stats == {'pid': '1', 'version': '8.0.33', 'cmd_get': '6'}


def test_set_and_delete_answers(server):
    s = server([b'STORED\r\n', b'NOT_FOUND\r\n'])
    with MemcacheClient('127.0.0.1', s.port, 2) as c:
        assert c.set('@@t.k', 'hello', flags=3) == 'STORED'
        assert c.delete('@@t.k') == 'NOT_FOUND'
    assert s.received[0] == b'set @@t.k 3 0 5|hello'
    assert s.received[1] == b'delete @@t.k'


@pytest.mark.parametrize('reply', [b'ERROR\r\n', b'SERVER_ERROR out of memory\r\n', b'CLIENT_ERROR bad data chunk\r\n'])
def test_error_answers_raise(server, reply):
    s = server([reply])
    with MemcacheClient('127.0.0.1', s.port, 2) as c:
        with pytest.raises(MemcacheError) as e:
            c.get('k')
    assert 'ERROR' in str(e.value) or 'does not know' in str(e.value)


def test_garbage_answer_raises(server):
    s = server([b'HELLO there\r\n'])
    with MemcacheClient('127.0.0.1', s.port, 2) as c:
        with pytest.raises(MemcacheError):
            c.get('k')


def test_timeout_when_server_is_silent(server):
    s = server([], silent=True)
    c = MemcacheClient('127.0.0.1', s.port, 0.3)
    start = time.time()
    with pytest.raises(MemcacheTimeout):
        c.connect().version()
    assert time.time() - start < 2
    c.close()


def test_connect_refused():
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    with pytest.raises(MemcacheConnectError):
        MemcacheClient('127.0.0.1', port, 1).connect()


def test_wait_for_server_gives_up_with_the_error():
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()
    version, error = memcache_client.wait_for_server('127.0.0.1', port, 0.5, 0.6)
    assert version is None
    assert 'cannot connect' in error


@pytest.mark.parametrize('key', ['', 'with space', 'tab\there', 'x' * 251, 'nl\n'])
def test_bad_keys_refused_before_sending(key):
    with pytest.raises(ValueError):
        check_key(key)


def test_container_key():
    assert container_key('token', 'abc') == '@@token.abc'
    assert container_key('token', 'abc', ':') == '@@token:abc'
    assert container_key(None, 'abc') == 'abc'
