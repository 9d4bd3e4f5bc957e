# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drop-ins put back after a start the server refused: the backups ansible.builtin.template (backup: true) leaves
beside a drop-in (dropin_backups(): the oldest made since the last start is the version the server last started
with), what putting back means for each drop-in (put_back_plan()), the drop-ins a refusal is traced to
(put_back_targets()), put_back() itself, and the backups dropped after a good start (drop_backups()).
"""

from __future__ import annotations

import os
import re

# ansible.builtin.template / copy with backup: true name the backup PATH.PID.YYYY-MM-DD@HH:MM:SS~
_BACKUP_RE = re.compile(r'^\.\d+\.\d{4}-\d\d-\d\d@\d\d:\d\d:\d\d~$')


def dropin_backups(path, names):
    """Backups of the drop-in at path among the file names of its directory, oldest first (by the time
    in the name). The server reads only *.cnf from a directory, so they are never read as options."""
    base = os.path.basename(path)
    found = [n for n in names if n.startswith(base) and _BACKUP_RE.match(n[len(base):])]
    return sorted(found, key=lambda n: n[len(base):].split('.', 2)[2])


def is_dropin(path):
    """A drop-in this collection writes (60-dbfleet-<role>.cnf)."""
    return bool(re.match(r'^60-dbfleet-[A-Za-z0-9_]+\.cnf$', os.path.basename(path or '')))


def backup_time(path, name):
    """Seconds since the epoch (to the second, local time as the backup's name says it) at which the backup name of
    the drop-in at path was made, or None."""
    import time
    try:
        return time.mktime(time.strptime(name[len(os.path.basename(path)):].split('.', 2)[2], '%Y-%m-%d@%H:%M:%S~'))
    except (IndexError, ValueError, OverflowError):
        return None


def put_back_plan(dropins, last_start, listdir=os.listdir, stat_fn=os.stat):
    """What putting back the drop-ins means: a list of dict(path, action, backup, discard): 'restore' the oldest
    backup made since the server last started (the version it last started with), or 'remove' a drop-in written
    since the server last started that had no earlier version; discard: the other backups. A backup made before the
    last start holds a version older than the one the server started with (a write the server has already started
    with replaced it): never restored. A drop-in unchanged since the last start stays, and so does one without a
    backup when the last start is not known (last_start None: every backup counts)."""
    plan = []
    for path in dropins:
        directory = os.path.dirname(path) or '.'
        try:
            names = listdir(directory)
        except OSError:
            names = []
        backups = dropin_backups(path, names)
        # (the name says the second: a backup within the second before the start counts as made since)
        since = [n for n in backups if last_start is None or (backup_time(path, n) or 0) + 1 > last_start]
        discard = [os.path.join(directory, n) for n in backups if n not in since[:1]]
        try:
            st = stat_fn(path)
            changed = max(st.st_mtime, st.st_ctime)
        except OSError:
            st = None
            changed = None
        if since:
            plan.append(dict(path=path, action='restore', backup=os.path.join(directory, since[0]), discard=discard))
        elif st is not None and last_start is not None and changed > last_start:
            plan.append(dict(path=path, action='remove', backup=None, discard=discard))
    return plan


def drop_backups(dropins):
    """After a good start: the backups beside the drop-ins go (the server has started with their new version)."""
    for plan in put_back_plan(dropins, None):
        for path in ([plan['backup']] if plan['action'] == 'restore' else []) + plan['discard']:
            _remove(path)


def put_back_targets(dropins, refused):
    """The drop-ins a refused start puts back: those a refusal is traced to (its file:line, or the file it names),
    when it is traced to one; else every drop-in (no line is named: whatever changed since the last start is
    suspect). A drop-in the server runs with that the refusal is not about stays: another run may have written it
    since the last start, its settings already in effect at runtime (a plugin's options read at INSTALL PLUGIN)."""
    def same(a, b):
        return bool(a) and bool(b) and os.path.realpath(a) == os.path.realpath(b)
    named = [d for d in dropins if any(same(d, (r.get('where') or (None,))[0]) or same(d, r.get('file'))
                                       for r in refused)]
    return named or list(dropins)


def put_back(dropins, last_start):
    """Put back what was written since the server last started (put_back_plan()): ([dict(path, action, backup)] done,
    [notes on what could not be put back])."""
    done, notes = [], []
    for item in put_back_plan(dropins, last_start):
        try:
            if item['action'] == 'restore':
                os.replace(item['backup'], item['path'])
            else:
                os.remove(item['path'])
            for path in item['discard']:
                _remove(path)
            done.append(dict(path=item['path'], action=item['action'], backup=item['backup']))
        except OSError as e:
            notes.append('could not put back %s: %s' % (item['path'], e))
    return done, notes


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass
