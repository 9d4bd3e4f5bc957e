# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Directories the collection keeps its own files in, checked before anything in them is read or written.

A report directory (verify_report_files.write_report_set()) and a drop/conversion state directory (guarded_marker.Marker)
hold files whose content the collection trusts (a marker names a process, a session, a cancel file; a report
set is made current and old sets removed). Such a directory is used only when it is private: a real
directory (never a symbolic link, which is not followed: os.lstat), owned by the user the collection runs as
(or root, who can write anywhere anyway), writable by nobody else. Files in it are opened with O_NOFOLLOW.
"""

from __future__ import annotations

import os
import stat

# Opening a file in a private directory: a symbolic link planted under its name is refused (ELOOP).
NOFOLLOW = getattr(os, 'O_NOFOLLOW', 0)


def private_dir_problem(path, euid=None):
    """Why path is not a private directory (None when it is): it must exist, be a directory and no symbolic
    link, belong to this user (or root) and be writable by nobody else."""
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
    return None


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
