# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deadline of a host's whole exchange (audit/fleet_deadline.py): the connection opened with its timeouts under
the deadline, one thread keeping every deadline, the socket it watches shut down when it passes."""

from __future__ import annotations

import socket
import threading
import time

from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_deadline as fd
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_wire


def test_open_connection_passes_the_timeout_for_connect_read_and_write(monkeypatch):
    seen = {}

    class Fake(object):
        def __init__(self, **kwargs):
            seen.update(kwargs)

        def connect(self):
            pass
    monkeypatch.setattr(fleet_wire, 'FleetConnection', Fake)
    fd.open_connection(dict(login_host='h', login_port=3306, login_user='u', config_file=None), 7)
    assert (seen['connect_timeout'], seen['read_timeout'], seen['write_timeout']) == (7, 7, 7)


def test_the_tcp_connect_gets_no_longer_than_the_deadline(monkeypatch):
    seen = {}

    class Fake(object):
        _sock = None

        def __init__(self, **kwargs):
            seen.update(kwargs)

        def connect(self):
            seen['connected'] = True
    monkeypatch.setattr(fleet_wire, 'FleetConnection', Fake)
    conn = fd.open_connection(dict(login_host='h', login_port=3306, login_user='u', config_file=None), 10,
                              fd.Deadline(3))
    assert (seen['connect_timeout'], seen['read_timeout'], seen['defer_connect'], seen['connected']) == (3, 10, True, True)
    assert conn._dbfleet_deadline.seconds == 3


def test_one_thread_keeps_every_deadline():
    """Hundreds of deadlines: each expires at its time, cancelled ones never, and no thread per deadline."""
    before = threading.active_count()
    start = time.monotonic()
    late = [fd.Deadline(0.3).start() for _i in range(300)]
    early = [fd.Deadline(0.1).start() for _i in range(300)]
    cancelled = [fd.Deadline(0.2).start() for _i in range(300)]
    assert threading.active_count() <= before + 1
    for deadline in cancelled:
        deadline.cancel()
    while not all(d.expired for d in early) and time.monotonic() - start < 2:
        time.sleep(0.01)
    assert all(d.expired for d in early)
    assert 0.09 <= time.monotonic() - start < 0.3
    assert not any(d.expired for d in late)
    while not all(d.expired for d in late) and time.monotonic() - start < 2:
        time.sleep(0.01)
    assert all(d.expired for d in late) and time.monotonic() - start < 0.6
    assert not any(d.expired for d in cancelled)


def test_a_deadline_shuts_the_socket_it_watches():
    left, right = socket.socketpair()

    class Conn(object):
        _sock = left
    try:
        deadline = fd.Deadline(0.1).start()
        deadline.attach(Conn())
        right.settimeout(2)
        start = time.monotonic()
        assert right.recv(10) == b''             # the peer sees the shutdown
        assert deadline.expired and time.monotonic() - start < 1
    finally:
        left.close()
        right.close()
