# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deadline of one host's whole exchange with the controller (connect, TLS, authentication, every query), and
the connection opened under it (open_connection()): when the deadline passes, the connection's socket is shut down,
however slowly the server trickles its answers. One thread keeps every host's deadline (_Watch).
"""

from __future__ import annotations

import heapq
import itertools
import os
import socket
import threading
import time

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import describe_target
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.tls import identity_refusal
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import error_text
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_wire


class _Watch(object):
    """One thread for every host's deadline: a heap of (due, seq, Deadline), woken when the earliest is due.

    A thread per host (threading.Timer) doubled the controller's threads for a large pool; this one thread
    expires each Deadline at its time, however many hosts are in flight."""

    def __init__(self):
        self._heap = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._thread = None
        self._pid = None

    def add(self, deadline, due):
        with self._cond:
            if self._thread is None or not self._thread.is_alive() or self._pid != os.getpid():
                self._heap = [entry for entry in self._heap if not entry[2].cancelled]
                self._thread = threading.Thread(target=self._run, name='verify_fleet-deadlines', daemon=True)
                self._pid = os.getpid()
                self._thread.start()
            heapq.heappush(self._heap, (due, next(self._seq), deadline))
            if self._heap[0][2] is deadline:
                self._cond.notify()

    def _run(self):
        while True:
            with self._cond:
                while True:
                    while self._heap and self._heap[0][2].cancelled:
                        heapq.heappop(self._heap)
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    if wait is not None and wait <= 0:
                        deadline = heapq.heappop(self._heap)[2]
                        break
                    self._cond.wait(wait)
            deadline._expire()        # outside the lock: shutting a socket down may take a moment


_WATCH = _Watch()


def after_fork():
    """In a worker process: a fresh deadline thread and lock (a fork keeps neither's state safely)."""
    global _WATCH  # pylint: disable=global-statement
    _WATCH = _Watch()


class Deadline(object):
    """The end of one host's whole exchange: when it passes, the connection's socket is shut down.

    A server that trickles a byte every few seconds never trips a per-read timeout; shutting the socket
    down wakes whatever read (TCP connect, TLS handshake, authentication, query) is waiting on it, and
    every later read of the connection fails at once (fleet_wire.FleetConnection._read_packet). One thread (_Watch) keeps
    every host's deadline."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.expired = False
        self.cancelled = False
        self._conn = None
        self._lock = threading.Lock()

    def start(self):
        _WATCH.add(self, time.monotonic() + self.seconds)
        return self

    def cancel(self):
        self.cancelled = True

    def attach(self, conn):
        with self._lock:
            self._conn = conn
            expired = self.expired
        if expired:
            _shutdown(conn)

    def _expire(self):
        with self._lock:
            if self.cancelled:
                return
            self.expired = True
            conn = self._conn
        if conn is not None:
            _shutdown(conn)

    def message(self):
        return ('no complete answer within the deadline of %ss for the whole exchange (connect, TLS, '
                'authentication, queries)' % self.seconds)


def _shutdown(conn):
    sock = getattr(conn, '_sock', None)
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except (OSError, ValueError):
        pass


def open_connection(params, timeout, deadline=None):
    """A PyMySQL connection with connect, read and write timeouts (seconds); raises connection.ConnectError.

    deadline: a Deadline for the whole exchange, attached before the first byte is read."""
    if connection.pymysql is None:
        raise connection.ConnectError('the PyMySQL library is not installed for the controller\'s Python')
    try:
        refusal = identity_refusal(params)
        # The TCP connect happens before there is a socket to shut down: it gets no longer than the deadline.
        connect_timeout = timeout if deadline is None else max(1, min(timeout, int(deadline.seconds)))
        kwargs = connection.connection_kwargs(dict(params, connect_timeout=connect_timeout))
    except ValueError as e:
        raise connection.ConnectError('cannot connect to %s: %s' % (describe_target(params), e))
    if refusal:
        raise connection.ConnectError(refusal)
    kwargs.update(read_timeout=timeout, write_timeout=timeout)
    try:
        conn = fleet_wire.FleetConnection(defer_connect=True, **kwargs)
        if deadline is not None:
            conn._dbfleet_deadline = deadline
            deadline.attach(conn)
        conn.connect()
        return conn
    except connection.pymysql.err.MySQLError as e:
        if deadline is not None and deadline.expired:
            raise connection.ConnectError('cannot connect to %s: %s' % (describe_target(params), deadline.message()))
        raise connection.ConnectError('cannot connect to %s: %s'
                                      % (describe_target(params), error_text(e)))
    except (OSError, ValueError) as e:
        raise connection.ConnectError('cannot connect to %s: %s' % (describe_target(params), e))
    except Exception:  # pylint: disable=broad-except  # a socket shut down mid-handshake (TLS) fails oddly
        if deadline is not None and deadline.expired:
            raise connection.ConnectError('cannot connect to %s: %s' % (describe_target(params), deadline.message()))
        raise
