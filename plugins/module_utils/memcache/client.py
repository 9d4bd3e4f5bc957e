# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small client for the memcache text protocol, with timeouts.

Enough for probing the InnoDB memcached plugin (daemon_memcached): version, stats,
get/gets (including ``@@container.key``), set/add/delete. Values are bytes on the wire
and returned as bytes; keys are checked before anything is sent.
"""

from __future__ import annotations

import socket
import time

MAX_KEY_BYTES = 250


class MemcacheError(Exception):
    """The server answered with an error or something the protocol does not allow."""


class MemcacheConnectError(MemcacheError):
    """Nothing answers on host:port (refused, unreachable, or timed out while connecting)."""


class MemcacheTimeout(MemcacheError):
    """The server did not answer within the timeout."""


def check_key(key):
    """Raise ValueError unless key is a valid memcache text-protocol key; returns bytes."""
    if isinstance(key, bytes):
        raw = key
    else:
        raw = str(key).encode('utf-8')
    if not raw:
        raise ValueError('empty memcache key')
    if len(raw) > MAX_KEY_BYTES:
        raise ValueError('memcache key %r is %d bytes long; the limit is %d' % (key, len(raw), MAX_KEY_BYTES))
    for byte in bytearray(raw):
        if byte <= 32 or byte == 127:
            raise ValueError('memcache key %r contains whitespace or a control character' % (key,))
    return raw


def container_key(container, key, delimiter='.'):
    """'@@container.key' for the InnoDB memcached plugin (table_map_delimiter defaults to '.')."""
    if not container:
        return key
    return '@@%s%s%s' % (container, delimiter, key)


class MemcacheClient(object):
    """One TCP connection to a memcache server speaking the text protocol."""

    def __init__(self, host='127.0.0.1', port=11211, timeout=3.0):
        self.host = host
        self.port = int(port)
        self.timeout = float(timeout)
        self.sock = None
        self._buf = b''

    # ------------------------------------------------------------ connection
    def connect(self):
        if self.sock is not None:
            return self
        try:
            self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        except socket.timeout:
            raise MemcacheConnectError('no answer from %s:%s within %ss' % (self.host, self.port, self.timeout))
        except (OSError, socket.error) as e:
            raise MemcacheConnectError('cannot connect to %s:%s: %s' % (self.host, self.port, e))
        self.sock.settimeout(self.timeout)
        try:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (OSError, socket.error):  # pragma: no cover - not every socket type has it
            pass
        return self

    def close(self):
        if self.sock is not None:
            try:
                self.sock.sendall(b'quit\r\n')
            except (OSError, socket.error):
                pass
            try:
                self.sock.close()
            except (OSError, socket.error):  # pragma: no cover
                pass
        self.sock = None
        self._buf = b''

    def __enter__(self):
        return self.connect()

    def __exit__(self, *exc):
        self.close()
        return False

    # ------------------------------------------------------------ low level
    def _send(self, data):
        self.connect()
        try:
            self.sock.sendall(data)
        except socket.timeout:
            raise MemcacheTimeout('timed out sending to %s:%s' % (self.host, self.port))
        except (OSError, socket.error) as e:
            raise MemcacheError('connection to %s:%s lost while sending: %s' % (self.host, self.port, e))

    def _fill(self):
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            raise MemcacheTimeout('no answer from %s:%s within %ss' % (self.host, self.port, self.timeout))
        except (OSError, socket.error) as e:
            raise MemcacheError('connection to %s:%s lost: %s' % (self.host, self.port, e))
        if not chunk:
            raise MemcacheError('connection to %s:%s closed by the server' % (self.host, self.port))
        self._buf += chunk

    def _readline(self):
        while True:
            idx = self._buf.find(b'\r\n')
            if idx >= 0:
                line = self._buf[:idx]
                self._buf = self._buf[idx + 2:]
                return line
            self._fill()

    def _readexact(self, n):
        while len(self._buf) < n + 2:
            self._fill()
        data = self._buf[:n]
        if self._buf[n:n + 2] != b'\r\n':
            raise MemcacheError('malformed data block from %s:%s' % (self.host, self.port))
        self._buf = self._buf[n + 2:]
        return data

    @staticmethod
    def _raise_for_error(line):
        if line == b'ERROR':
            raise MemcacheError('the server does not know the command (ERROR)')
        for prefix in (b'CLIENT_ERROR', b'SERVER_ERROR'):
            if line.startswith(prefix):
                raise MemcacheError(line.decode('utf-8', 'replace'))

    # ------------------------------------------------------------ commands
    def version(self):
        self._send(b'version\r\n')
        line = self._readline()
        self._raise_for_error(line)
        if not line.startswith(b'VERSION '):
            raise MemcacheError('unexpected answer to version: %r' % (line,))
        return line[8:].decode('utf-8', 'replace')

    def _lines_until_end(self):
        """The lines of a multi-line answer up to its END line; an error line raises MemcacheError."""
        while True:
            line = self._readline()
            if line == b'END':
                return
            self._raise_for_error(line)
            yield line

    def stats(self, group=None):
        """{name: value} from 'stats' (or 'stats <group>'); values stay strings."""
        cmd = b'stats\r\n' if not group else b'stats ' + check_key(group) + b'\r\n'
        self._send(cmd)
        result = {}
        for line in self._lines_until_end():
            parts = line.split(b' ', 2)
            if len(parts) < 2 or parts[0] != b'STAT':
                raise MemcacheError('unexpected line in stats: %r' % (line,))
            result[parts[1].decode('utf-8', 'replace')] = (
                parts[2].decode('utf-8', 'replace') if len(parts) > 2 else '')
        return result

    def _retrieve(self, command, keys):
        raw_keys = [check_key(k) for k in keys]
        if not raw_keys:
            return {}
        self._send(command + b' ' + b' '.join(raw_keys) + b'\r\n')
        found = {}
        for line in self._lines_until_end():
            parts = line.split(b' ')
            if parts[0] != b'VALUE' or len(parts) not in (4, 5):
                raise MemcacheError('unexpected line in %s answer: %r' % (command.decode(), line))
            try:
                flags = int(parts[2])
                length = int(parts[3])
                cas = int(parts[4]) if len(parts) == 5 else None
            except ValueError:
                raise MemcacheError('unexpected line in %s answer: %r' % (command.decode(), line))
            data = self._readexact(length)
            found[parts[1].decode('utf-8', 'replace')] = dict(value=data, flags=flags, cas=cas)
        return found

    def get(self, keys):
        """{key: {'value': bytes, 'flags': int, 'cas': None}} for the keys found."""
        if isinstance(keys, (str, bytes)):
            keys = [keys]
        return self._retrieve(b'get', keys)

    def gets(self, keys):
        """Like get, with the CAS unique in 'cas'."""
        if isinstance(keys, (str, bytes)):
            keys = [keys]
        return self._retrieve(b'gets', keys)

    def _store(self, command, key, value, flags=0, exptime=0):
        raw_key = check_key(key)
        data = value if isinstance(value, bytes) else str(value).encode('utf-8')
        header = b'%s %s %d %d %d\r\n' % (command, raw_key, int(flags), int(exptime), len(data))
        self._send(header + data + b'\r\n')
        line = self._readline()
        self._raise_for_error(line)
        return line.decode('utf-8', 'replace')

    def set(self, key, value, flags=0, exptime=0):
        """The server's answer line: STORED, NOT_STORED, ..."""
        return self._store(b'set', key, value, flags, exptime)

    def add(self, key, value, flags=0, exptime=0):
        return self._store(b'add', key, value, flags, exptime)

    def delete(self, key):
        """The server's answer line: DELETED or NOT_FOUND."""
        self._send(b'delete ' + check_key(key) + b'\r\n')
        line = self._readline()
        self._raise_for_error(line)
        return line.decode('utf-8', 'replace')


def wait_for_server(host, port, timeout, total_wait):
    """Connect and ask 'version' until it answers or total_wait seconds pass.

    Returns (version, None) or (None, last error text)."""
    deadline = time.time() + max(float(total_wait), 0.0)
    last = None
    while True:
        client = MemcacheClient(host, port, timeout)
        try:
            with client:
                return client.version(), None
        except MemcacheError as e:
            last = str(e)
        if time.time() >= deadline:
            return None, last
        time.sleep(0.5)
