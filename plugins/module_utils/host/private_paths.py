# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Directories the collection keeps its own files in, checked before anything in them is read or written.

A report directory (verify_report_files.write_report_set()) and a drop/conversion state directory (guarded_marker.Marker)
hold files whose content the collection trusts (a marker names a process, a session, a cancel file; a report
set is made current and old sets removed). Such a directory is used only when it is private: a real
directory (never a symbolic link, which is not followed: os.lstat), owned by the user the collection runs as
(or root, who can write anywhere anyway), writable by nobody else; and so is every directory above it, as OpenSSH's
safe_path() checks them (another user who can rename a parent can put a directory of their own in its place), the
directories of the path as given and of its real path (a symbolic link on the way is checked where it leads too),
except that a sticky directory such as /tmp may be writable by others (they cannot rename or remove what is not
theirs). Files in it are opened with O_NOFOLLOW.
"""

from __future__ import annotations

import os
import stat

# Opening a file in a private directory: a symbolic link planted under its name is refused (ELOOP).
NOFOLLOW = getattr(os, 'O_NOFOLLOW', 0)


def _parents(path):
    """The directories above absolute path, nearest first, up to /."""
    out = []
    parent = os.path.dirname(path)
    while parent and parent != path:
        out.append(parent)
        path, parent = parent, os.path.dirname(parent)
    return out


def parent_problem(path, euid=None):
    """Why a directory above path lets another user replace what is below it (None when none does): every directory
    above path as given and above its real path belongs to this user or root, and is writable by nobody else unless
    it is sticky (/tmp)."""
    euid = os.geteuid() if euid is None else euid
    given = os.path.abspath(path)
    real = os.path.realpath(given)
    seen = set()
    for parent in _parents(given) + _parents(real):
        if parent in seen:
            continue
        seen.add(parent)
        try:
            st = os.lstat(parent)
        except OSError as e:
            return 'directory %s above %s cannot be read (%s)' % (parent, path, e.strerror or e)
        if stat.S_ISLNK(st.st_mode):
            continue            # the directory holding it is checked; where it leads is on the real path
        if st.st_uid not in (euid, 0):
            return ('directory %s above %s belongs to uid %d, not to this user (uid %d) or root: its owner could put '
                    'another directory in place of %s' % (parent, path, st.st_uid, euid, path))
        if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
            return ('directory %s above %s is writable by others (mode %s) and not sticky: anyone could put another '
                    'directory in place of %s' % (parent, path, oct(stat.S_IMODE(st.st_mode)), path))
    return None


def private_dir_problem(path, euid=None):
    """Why path is not a private directory (None when it is): it must exist, be a directory and no symbolic
    link, belong to this user (or root) and be writable by nobody else, and so must every directory above it
    (parent_problem())."""
    euid = os.geteuid() if euid is None else euid
    try:
        st = os.lstat(path)
    except OSError as e:
        return 'directory %s cannot be read (%s)' % (path, e.strerror or e)
    if stat.S_ISLNK(st.st_mode):
        return '%s is a symbolic link (not followed): give the directory itself' % path
    if not stat.S_ISDIR(st.st_mode):
        return '%s is not a directory' % path
    if st.st_uid not in (euid, 0):
        return 'directory %s belongs to uid %d, not to this user (uid %d)' % (path, st.st_uid, euid)
    if st.st_mode & 0o022:
        return ('directory %s is writable by others (mode %s): anyone could create or remove the file there'
                % (path, oct(stat.S_IMODE(st.st_mode))))
    return parent_problem(path, euid)


def open_private_file(path, flags, mode=0o600, euid=None):
    """os.open() of a file in a private directory, never through a symbolic link; an existing file must be a
    regular file of this user (or root). Raises OSError naming the path."""
    euid = os.geteuid() if euid is None else euid
    fd = os.open(path, flags | NOFOLLOW, mode)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid not in (euid, 0):
        os.close(fd)
        raise OSError('%s is not a regular file of this user (uid %d): not used' % (path, euid))
    return fd
