# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""loopback: the owner of the process at the other end of a local connection, from /proc/net/tcp* text recorded on
this machine (a listener of uid 65534 on 127.0.0.1:35098 and on [::]:35097 dual-stack, the root client connected to
each; [::1]:35099 likewise)."""

from __future__ import annotations

import os
import socket

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import loopback

TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   3: 0100007F:891A 00000000:0000 0A\
 00000000:00000000 00:00000000 00000000 65534        0 88766 1 000000002aeca02c 100 0 0 10 0
  41: 0100007F:891A 0100007F:A436 01\
 00000000:00000000 00:00000000 00000000 65534        0 88767 1 00000000abea8773 20 0 0 10 -1
  52: 0100007F:A436 0100007F:891A 01\
 00000000:00000000 00:00000000 00000000     0        0 88805 2 00000000cc59527d 20 0 0 10 -1
  53: 0100007F:9ACE 0100007F:8919 01\
 00000000:00000000 00:00000000 00000000     0        0 88806 2 00000000a757b6c3 20 0 0 10 -1
   7: 0100007F:0CEA 00000000:0000 0A\
 00000000:00000000 00:00000000 00000000     0        0 11111 1 0000000000000000 100 0 0 10 0
"""
TCP6 = """\
  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:8919 00000000000000000000000000000000:0000 0A\
 00000000:00000000 00:00000000 00000000 65534        0 88764 1 0000000055a0413b 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:8919 0000000000000000FFFF00000100007F:9ACE 01\
 00000000:00000000 00:00000000 00000000 65534        0 88765 1 000000002c170bc9 20 0 0 10 -1
   2: 00000000000000000000000001000000:891B 00000000000000000000000000000000:0000 0A\
 00000000:00000000 00:00000000 00000000 65534        0 74052 1 00000000a9625352 100 0 0 10 0
"""


def test_addresses_are_decoded_ipv4_mapped_as_ipv4():
    assert loopback.decode_address('0100007F:891A') == ('127.0.0.1', 35098)
    assert loopback.decode_address('00000000000000000000000001000000:891B') == ('::1', 35099)
    assert loopback.decode_address('0000000000000000FFFF00000100007F:8919') == ('127.0.0.1', 35097)
    assert loopback.decode_address('00000000000000000000000000000000:0CEA') == ('::', 3306)


def test_table_entries_and_header_skipped():
    entries = loopback.parse_table(TCP)
    assert len(entries) == 5
    assert entries[0] == dict(local=('127.0.0.1', 35098), remote=('0.0.0.0', 0), state=0x0A, uid=65534)
    assert entries[2]['uid'] == 0


def test_the_servers_side_of_this_connection_names_the_owner():
    owner = loopback.tcp_peer_owner(('127.0.0.1', 42038), ('127.0.0.1', 35098), [TCP, TCP6])
    assert owner == dict(uid=65534, how='its side of this connection')


def test_ipv4_through_a_dual_stack_listener_is_found_in_tcp6():
    owner = loopback.tcp_peer_owner(('127.0.0.1', 39630), ('127.0.0.1', 35097), [TCP, TCP6])
    assert owner['uid'] == 65534


def test_the_exact_listener_and_never_the_other_family():
    # No entry of the connection itself (it went away): the listener on the exact address, then the wildcard.
    assert loopback.tcp_peer_owner(('::1', 50000, 0, 0), ('::1', 35099, 0, 0), [TCP, TCP6])['uid'] == 65534
    # 127.0.0.1:3306 belongs to root; [::1]:3306 is somebody else's listener: no entry, nothing proven.
    assert loopback.tcp_peer_owner(('127.0.0.1', 50000), ('127.0.0.1', 3306), [TCP, TCP6])['uid'] == 0
    assert loopback.tcp_peer_owner(('::1', 50000, 0, 0), ('::1', 3306, 0, 0), [TCP, TCP6]) is None
    wildcard = loopback.tcp_peer_owner(('127.0.0.1', 50000), ('127.0.0.1', 35097), [TCP, TCP6])
    assert wildcard == dict(uid=65534, how='the socket listening on [::]:35097')


def test_root_and_this_user_are_trusted_without_evidence():
    assert loopback.peer_verdict(0, 'the listener', euid=1000, evidence=[])['trusted']
    assert loopback.peer_verdict(1000, 'the listener', euid=1000, evidence=[])['trusted']


def test_a_server_user_shown_by_the_host_is_trusted_another_uid_is_not():
    evidence = [(112, 'owner of /run/mysqld')]
    trusted = loopback.peer_verdict(112, 'the listener on 127.0.0.1:3306', euid=0, evidence=evidence)
    assert trusted['trusted'] and 'owner of /run/mysqld' in trusted['reason']
    refused = loopback.peer_verdict(65534, 'the listener on [::1]:3306', euid=0, evidence=evidence)
    assert not refused['trusted']
    assert refused['reason'].startswith('the listener on [::1]:3306 belongs to uid 65534')
    assert 'uid 112' in refused['reason'] and 'not proven to be the server' in refused['reason']
    unknown = loopback.peer_verdict(None, 'the listener on [::1]:3306', euid=0, evidence=evidence)
    assert not unknown['trusted'] and 'cannot be found' in unknown['reason']


def test_evidence_private_directories_and_systemd(tmp_path):
    private, shared = tmp_path / 'private', tmp_path / 'shared'
    private.mkdir(mode=0o755)
    shared.mkdir()
    os.chmod(str(shared), 0o1777)
    assert loopback.private_dir_owner(str(private)) == os.stat(str(private)).st_uid
    assert loopback.private_dir_owner(str(shared)) is None       # /tmp-like: anyone can put a socket there
    proc = tmp_path / 'proc' / '4242'
    proc.mkdir(parents=True)
    (proc / 'cmdline').write_bytes(b'/usr/sbin/mariadbd\0--basedir=/usr\0')
    (proc / 'status').write_text('Name:\tmariadbd\nUid:\t112\t112\t112\t112\n')
    (proc / 'cgroup').write_text('0::/system.slice/mariadb.service\n')
    # The same program started by hand in a user's session: no server unit, no evidence.
    by_hand = tmp_path / 'proc' / '5151'
    by_hand.mkdir()
    (by_hand / 'cmdline').write_bytes(b'/tmp/mariadbd\0')
    (by_hand / 'status').write_text('Name:\tmariadbd\nUid:\t1000\t1000\t1000\t1000\n')
    (by_hand / 'cgroup').write_text('0::/user.slice/user-1000.slice/session-3.scope\n')

    found = list(loopback.server_evidence(proc_root=str(tmp_path / 'proc')))
    assert (112, 'user of the server process 4242 that systemd runs') in found
    assert not [f for f in found if f[0] == 1000], found


def test_a_live_connection_to_this_users_listener():
    server = socket.socket()
    server.bind(('127.0.0.1', 0))
    server.listen(1)
    client = socket.create_connection(server.getsockname())
    try:
        verdict = loopback.tcp_verdict(client)
        assert verdict['trusted'] and verdict['uid'] == os.geteuid()
    finally:
        client.close()
        server.close()
