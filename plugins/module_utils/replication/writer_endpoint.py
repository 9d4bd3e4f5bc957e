# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The writer endpoint a switchover moves (restart_primary_endpoint: haproxy): HAProxy's runtime API over its admin
socket (``stats socket ... level admin``; HAProxy 2.6 "Management Guide", 9.3 "Unix Socket commands"), which moves
a backend's servers without a reload: ``set server <backend>/<server> state ready|drain|maint`` and
``shutdown sessions server <backend>/<server>``; ``show servers state <backend>`` reads them (srv_admin_state: bit 0x01
forced maintenance, 0x08 forced drain).

The states of each step: drained - the old primary drains (no new connection; the demotion ends the rest);
moved - the new primary ready, the old one in maintenance and its sessions shut; restored - the old primary ready,
the new one in maintenance (a switch that failed before the promotion).
"""

from __future__ import annotations

import socket

STATES = ('drained', 'moved', 'restored')


def command(path, text, timeout=5.0):
    """One runtime API command over the unix socket at path; its answer."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
        sock.sendall(text.encode() + b'\n')
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
        return b''.join(chunks).decode(errors='replace')
    finally:
        sock.close()


def server_states(answer):
    """{server: 'ready'|'drain'|'maint'} from ``show servers state <backend>`` (format 1)."""
    out = {}
    header = None
    for line in answer.splitlines():
        if line.startswith('# be_id'):
            header = line[2:].split()
            continue
        if not line.strip() or line.startswith('#') or header is None or line.strip() == '1':
            continue
        row = dict(zip(header, line.split()))
        admin = int(row.get('srv_admin_state', '0'))
        out[row.get('srv_name')] = 'maint' if admin & 0x01 or admin & 0x20 else ('drain' if admin & 0x08 else 'ready')
    return out


def wanted(state, old, new):
    """[(server, admin state)] a step asks for, in the order they are set."""
    if state == 'drained':
        return [(old, 'drain')]
    if state == 'moved':
        return [(new, 'ready'), (old, 'maint')]
    return [(old, 'ready'), (new, 'maint')]


def move(path, backend, state, old, new, check_mode=False, run=command):
    """Set the backend's servers as state says; returns dict(changed, before, after, commands, msg)."""
    before = server_states(run(path, 'show servers state %s' % backend))
    missing = [s for s in (old, new) if s not in before]
    if missing:
        raise ValueError('backend %s has no server %s (it has %s)' % (backend, ', '.join(missing),
                                                                      ', '.join(sorted(before)) or 'none'))
    commands = ['set server %s/%s state %s' % (backend, server, admin)
                for server, admin in wanted(state, old, new) if before.get(server) != admin]
    if state == 'moved' and commands:
        commands.append('shutdown sessions server %s/%s' % (backend, old))
    after = before
    if commands and not check_mode:
        for text in commands:
            answer = run(path, text).strip()
            if answer:
                raise ValueError('%s: %s' % (text, answer))
        after = server_states(run(path, 'show servers state %s' % backend))
    verb = 'would run' if check_mode else 'ran'
    return dict(changed=bool(commands), before=before, after=after, commands=commands,
                msg=('%s %s' % (verb, '; '.join(commands))) if commands else '%s already %s' % (backend, state))
