# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether the process at the other end of a local connection is the database server (docs/security.md).

Any local user can listen on an unprivileged port such as 3306 while mysqld is down, or on [::1]:3306 when the
server listens on 127.0.0.1 only, and a unix socket in a world-writable directory can be anybody's. A TCP
connection to a loopback address, or a unix socket, carries the password itself (full authentication) only to a
peer proven to run as the server's user:

- a TCP peer's owner is the uid of the server's side of the connection in /proc/net/tcp or /proc/net/tcp6
  (readable without privileges; the socket accept() returns belongs to the listener's owner), for the exact
  address and port connected to (127.0.0.1 and ::1 are different listeners); the listening socket on that
  address (or the wildcard address) when the connection's entry is not there;
- a unix socket's peer is SO_PEERCRED's uid.

The peer is the server's when its uid is root (who can read any file on the host, the password included), the
uid this login runs as (who holds the password already), or a uid that the host shows to run the server:
the owner of a directory the packages make for the server (its socket directory, its data directory) that
nobody else can write to, or the user of the process systemd runs for a server unit (os_facts.FAMILIES).
The evidence is read only when the peer is neither root nor this user, on every connection.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import stat
import struct

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import discovery
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import os_facts

TCP_TABLES = ('/proc/net/tcp', '/proc/net/tcp6')
LISTEN = 0x0A
# The programs a server unit's main process runs (host/process.SERVER_PROGRAMS names the same).
SERVER_PROGRAMS = ('mysqld', 'mariadbd', 'mysqld-debug', 'mariadbd-debug')


def decode_address(text):
    """(address, port) of a /proc/net/tcp* address field ('0100007F:0CEA', 32 hex digits for IPv6): the address as
    ipaddress writes it, an IPv4-mapped IPv6 address (::ffff:127.0.0.1) as its IPv4 address."""
    hex_address, _sep, hex_port = text.partition(':')
    raw = bytes.fromhex(hex_address)
    # The kernel prints each 32-bit word in the host's byte order.
    words = struct.unpack('=%dI' % (len(raw) // 4), raw)
    packed = b''.join(struct.pack('>I', w) for w in words)
    address = ipaddress.ip_address(packed)
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address), int(hex_port, 16)


def parse_table(text):
    """The sockets of a /proc/net/tcp or tcp6 text: a list of dict(local, remote, state, uid); local and remote as
    decode_address() gives them. Lines that are not socket entries are skipped."""
    entries = []
    for line in (text or '').splitlines():
        fields = line.split()
        if len(fields) < 8 or not fields[0].endswith(':') or not fields[0][:-1].isdigit():
            continue
        try:
            entries.append(dict(local=decode_address(fields[1]), remote=decode_address(fields[2]),
                                state=int(fields[3], 16), uid=int(fields[7])))
        except ValueError:
            continue
    return entries


def _normal(address):
    """An (address, port) pair as decode_address() writes it (IPv4-mapped IPv6 as IPv4, no scope or flow info)."""
    host, port = address[0], address[1]
    ip = ipaddress.ip_address(str(host).split('%', maxsplit=1)[0])
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ip), int(port)


def tcp_peer_owner(local, peer, tables):
    """dict(uid, how) of the process at the other end of a TCP connection from local to peer ((address, port)
    pairs as getsockname() / getpeername() give them), or None when no entry shows it.

    tables: the texts of /proc/net/tcp and /proc/net/tcp6. The server's side of this very connection first
    (local address = peer, remote = local); else the socket listening on the peer's exact address and port, else
    on the wildcard address of that port (0.0.0.0 or ::, which also takes IPv4 on a dual-stack socket)."""
    local, peer = _normal(local), _normal(peer)
    entries = [e for text in tables for e in parse_table(text)]
    for entry in entries:
        if entry['local'] == peer and entry['remote'] == local and entry['state'] != LISTEN:
            return dict(uid=entry['uid'], how='its side of this connection')
    listening = [e for e in entries if e['state'] == LISTEN and e['local'][1] == peer[1]]
    for entry in listening:
        if entry['local'][0] == peer[0]:
            return dict(uid=entry['uid'], how='the socket listening on %s' % format_address(peer))
    for entry in listening:
        if entry['local'][0] in ('0.0.0.0', '::'):
            return dict(uid=entry['uid'], how='the socket listening on %s' % format_address(entry['local']))
    return None


def format_address(address):
    host, port = address
    return '[%s]:%s' % (host, port) if ':' in host else '%s:%s' % (host, port)


def read_tables(paths=TCP_TABLES):
    texts = []
    for path in paths:
        try:
            with open(path, 'rb') as handle:
                texts.append(handle.read().decode('ascii', 'replace'))
        except (IOError, OSError):
            continue
    return texts


def unix_peer_uid(sock):
    """SO_PEERCRED's uid of a connected unix socket, or None where the system does not tell."""
    option = getattr(socket, 'SO_PEERCRED', None)
    if option is None:
        return None
    try:
        _pid, uid, _gid = struct.unpack('3i', sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize('3i')))
    except (OSError, struct.error):
        return None
    return uid


def user_name(uid):
    """'uid N (name)', or 'uid N' for a uid without a passwd entry."""
    try:
        import pwd  # pylint: disable=import-outside-toplevel
        return 'uid %d (%s)' % (uid, pwd.getpwuid(uid).pw_name)
    except (ImportError, KeyError):
        return 'uid %d' % uid


def private_dir_owner(path):
    """The owner uid of directory path when nobody but its owner (and root) can write to it, else None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_mode & 0o022:
        return None
    return st.st_uid


def _runs_server_program(base):
    """Whether the process whose /proc directory is base runs a server program (SERVER_PROGRAMS)."""
    with open(os.path.join(base, 'cmdline'), 'rb') as handle:
        program = handle.read().split(b'\0')[0].decode('utf-8', 'replace')
    return os.path.basename(program) in SERVER_PROGRAMS


def _process_uid(base):
    """The effective uid of the process whose /proc directory is base, or None."""
    try:
        with open(os.path.join(base, 'status'), 'rb') as handle:
            for line in handle.read().decode('ascii', 'replace').splitlines():
                if line.startswith('Uid:'):
                    return int(line.split()[2])
    except (IOError, OSError, ValueError, IndexError):
        return None
    return None


def systemd_server_pids(proc_root='/proc'):
    """The processes of a database server program (SERVER_PROGRAMS) that run inside a database server's systemd
    unit, as /proc shows them (each process's cgroup, discovery.unit_of_cgroup(): the unit's name says mysql,
    mariadb or percona); a server started by hand under another unit or from a shell is not one of them."""
    pids = []
    try:
        names = os.listdir(proc_root)
    except OSError:
        return pids
    for name in sorted(names, key=lambda n: (len(n), n)):
        if not name.isdigit():
            continue
        base = os.path.join(proc_root, name)
        try:
            if not _runs_server_program(base):
                continue
            with open(os.path.join(base, 'cgroup'), 'rb') as handle:
                cgroup = handle.read().decode('utf-8', 'replace')
        except (IOError, OSError):
            continue
        if discovery.unit_of_cgroup(cgroup) is not None:
            pids.append(int(name))
    return pids


def server_evidence(socket_dirs=(), proc_root='/proc'):
    """(uid, source) of each user this host shows to run the database server, cheapest first: the owners of the
    server's socket directories (socket_dirs, then the packages' places in os_facts.FAMILIES) and data directories
    that only their owner can write to, then the user of each server process systemd runs (systemd_server_pids)."""
    dirs = list(socket_dirs)
    for family in sorted(os_facts.FAMILIES):
        dirs.extend(os.path.dirname(p) for p in os_facts.FAMILIES[family]['sockets'])
        dirs.extend(os_facts.FAMILIES[family]['datadirs'])
    seen = set()
    for directory in dirs:
        if not directory or directory in seen:
            continue
        seen.add(directory)
        uid = private_dir_owner(directory)
        if uid is not None:
            yield uid, 'owner of %s' % directory
    for pid in systemd_server_pids(proc_root):
        uid = _process_uid(os.path.join(proc_root, str(pid)))
        if uid is not None:
            yield uid, 'user of the server process %d that systemd runs' % pid


def peer_verdict(uid, what, socket_dirs=(), euid=None, evidence=None):
    """dict(trusted, uid, reason) for a peer (TCP listener or unix socket peer) of owner uid: trusted when uid is
    root, this login's user or a user the host shows to run the server (server_evidence(), read only as far as
    needed; evidence: a list instead). what names the peer for the reason ('the listener on 127.0.0.1:3306')."""
    euid = os.geteuid() if euid is None else euid
    if uid is None:
        return dict(trusted=False, uid=None,
                    reason='the owner of %s cannot be found (no entry in %s)' % (what, ' or '.join(TCP_TABLES)))
    if uid == 0:
        return dict(trusted=True, uid=uid, reason='%s belongs to root' % what)
    if uid == euid:
        return dict(trusted=True, uid=uid, reason='%s belongs to the user this login runs as' % what)
    seen = []
    for known, source in (server_evidence(socket_dirs) if evidence is None else evidence):
        if known == uid:
            return dict(trusted=True, uid=uid, reason='%s belongs to %s, the %s' % (what, user_name(uid), source))
        seen.append(known)
    users = sorted(set(user_name(known) for known in seen))
    return dict(trusted=False, uid=uid, reason=(
        '%s belongs to %s, which is not root, not this login\'s user (%s) and not the server\'s user (%s): it is not '
        'proven to be the server' % (what, user_name(uid), user_name(euid),
                                     ', '.join(users) if users else 'none found on this host')))


def tcp_verdict(sock, socket_dirs=(), tables=None, euid=None, evidence=None):
    """peer_verdict() of the process at the other end of connected TCP socket sock."""
    local, peer = sock.getsockname(), sock.getpeername()
    owner = tcp_peer_owner(local, peer, read_tables() if tables is None else tables)
    what = 'the listener on %s' % format_address(_normal(peer))
    if owner is None:
        return peer_verdict(None, what, euid=euid, evidence=evidence)
    return peer_verdict(owner['uid'], what, socket_dirs, euid=euid, evidence=evidence)


def unix_verdict(sock, path, euid=None, evidence=None):
    """peer_verdict() of the process serving unix socket path (sock connected to it)."""
    uid = unix_peer_uid(sock)
    what = 'the process serving socket %s' % path
    if uid is None:
        return dict(trusted=False, uid=None, reason='the owner of %s cannot be found (no SO_PEERCRED)' % what)
    return peer_verdict(uid, what, (os.path.dirname(path),), euid=euid, evidence=evidence)
