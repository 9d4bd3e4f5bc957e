# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The block devices under a path, as the kernel shows them (pure reading, no judgement): the mount that holds a
path (/proc/<pid>/mountinfo parsed: parse_mountinfo(), find_mount()) and the device tree below a device directory
of a sysfs tree, the live /sys or a recorded copy (SysfsTree, build_tree(): partitions to their disk, dm/LVM/dm-crypt
and md to all their slaves, loop devices to the storage of their backing file). host/storage.py judges the tree.
"""

from __future__ import annotations

import os
import re

# How deep build_tree() descends (a stack of devices deeper than this is taken for a loop).
MAX_DEPTH = 16


# ---------------------------------------------------------------- mountinfo (pure)
_ESCAPE_RE = re.compile(r'\\([0-7]{3})')


def _unescape(text):
    return _ESCAPE_RE.sub(lambda m: chr(int(m.group(1), 8)), text)


def parse_mountinfo(text):
    """Mounts from /proc/<pid>/mountinfo text, in file order (later entries overmount earlier ones).

    Each mount is a dict: mount_id, parent_id, major, minor, root, mount_point, fstype, source.
    Malformed lines are skipped.
    """
    mounts = []
    for line in (text or '').splitlines():
        fields = line.split()
        if len(fields) < 10 or '-' not in fields[6:]:
            continue
        sep = fields.index('-', 6)
        if len(fields) < sep + 3:
            continue
        try:
            major, minor = (int(x) for x in fields[2].split(':'))
        except ValueError:
            continue
        mounts.append(dict(
            mount_id=fields[0], parent_id=fields[1], major=major, minor=minor,
            root=_unescape(fields[3]), mount_point=_unescape(fields[4]),
            fstype=fields[sep + 1], source=_unescape(fields[sep + 2]),
        ))
    return mounts


def find_mount(mounts, path):
    """The mount that holds absolute path: longest mount point that is a prefix of the path
    (at a path-component boundary); among equal mount points the last one wins."""
    path = os.path.normpath(path)
    best, best_len = None, -1
    for mount in mounts:
        mp = mount['mount_point'].rstrip('/') or '/'
        if not (path == mp or mp == '/' or path.startswith(mp + '/')):
            continue
        if len(mp) >= best_len:
            best, best_len = mount, len(mp)
    return best


def parse_majmin(text):
    """(major, minor) from '259:2', or None."""
    m = re.match(r'^\s*(\d+):(\d+)\s*$', str(text or ''))
    return (int(m.group(1)), int(m.group(2))) if m else None


VALID_DEVICE_RE = re.compile(r'^[A-Za-z0-9_.!+-]{1,64}$')


def valid_device_name(name):
    """True for a kernel block device name (sda, nvme0n1p2, dm-3, cciss!c0d0) or MAJ:MIN."""
    return bool(VALID_DEVICE_RE.match(name or '')) or parse_majmin(name) is not None


# ---------------------------------------------------------------- sysfs reading (I/O)
class SysfsTree(object):
    """Read-only access to a sysfs tree rooted at sysfs_root (the live /sys or a recorded copy).

    Links inside a recorded copy are relative, as in the kernel's own tree, so they resolve
    inside the copy. Every path read is remembered in `self.read_paths` (for recording).
    """

    def __init__(self, sysfs_root='/sys'):
        self.root = os.path.realpath(sysfs_root)
        self.read_paths = []

    def _full(self, rel):
        return os.path.join(self.root, rel)

    def rel(self, full):
        full = os.path.realpath(full)
        if full == self.root:
            return ''
        if full.startswith(self.root + os.sep):
            return full[len(self.root) + 1:]
        return full

    def read(self, full):
        self.read_paths.append(full)
        try:
            with open(full, 'r') as f:
                return f.read().strip()
        except (IOError, OSError, UnicodeDecodeError):
            return None

    def exists(self, full):
        self.read_paths.append(full)
        return os.path.exists(full)

    def listdir(self, full):
        self.read_paths.append(full)
        try:
            return sorted(os.listdir(full))
        except OSError:
            return []

    def device_dir_by_name(self, name):
        """The /sys/devices/... directory of block device `name`, or None."""
        link = self._full(os.path.join('class', 'block', name))
        self.read_paths.append(link)
        if not os.path.exists(link):
            return None
        return os.path.realpath(link)

    def device_dir_by_majmin(self, major, minor):
        link = self._full(os.path.join('dev', 'block', '%d:%d' % (major, minor)))
        self.read_paths.append(link)
        if not os.path.exists(link):
            return None
        return os.path.realpath(link)

    def _int(self, full):
        text = self.read(full)
        if text is None:
            return None
        try:
            return int(text)
        except ValueError:
            return None

    def facts(self, ddir):
        """Raw facts of one block device directory (only what the judgement needs)."""
        name = os.path.basename(ddir)
        facts = dict(name=name, sys_path=self.rel(ddir), dev=self.read(os.path.join(ddir, 'dev')))
        facts['partition'] = self.exists(os.path.join(ddir, 'partition'))
        if facts['partition']:
            return facts
        facts['rotational'] = self._int(os.path.join(ddir, 'queue', 'rotational'))
        facts['discard_max_bytes'] = self._int(os.path.join(ddir, 'queue', 'discard_max_bytes'))
        device = os.path.join(ddir, 'device')
        if os.path.isdir(device):
            self.read_paths.append(device)
            facts['device_path'] = self.rel(device)
            facts['vendor'] = self.read(os.path.join(device, 'vendor'))
            facts['model'] = self.read(os.path.join(device, 'model'))
            facts['transport'] = self.read(os.path.join(device, 'transport'))
        for key, rel in (('dm_name', 'dm/name'), ('dm_uuid', 'dm/uuid'),
                         ('md_level', 'md/level'), ('md_array_state', 'md/array_state'),
                         ('loop_backing_file', 'loop/backing_file')):
            full = os.path.join(ddir, rel)
            if os.path.isdir(os.path.dirname(full)):
                facts[key] = self.read(full)
        if os.path.isdir(os.path.join(ddir, 'md')):
            facts['md_degraded'] = self._int(os.path.join(ddir, 'md', 'degraded'))
            facts['md_raid_disks'] = self._int(os.path.join(ddir, 'md', 'raid_disks'))
        return facts

    def slaves(self, ddir):
        out = []
        sdir = os.path.join(ddir, 'slaves')
        for entry in self.listdir(sdir):
            out.append(os.path.realpath(os.path.join(sdir, entry)))
        return out


def build_tree(sysfs, ddir, resolve_file=None, depth=0, seen=None):
    """The device tree below device directory ddir, as nested dicts with a 'children' list.

    resolve_file(path) -> (device_dir or None, note) lets a loop device descend into the
    storage of its backing file.
    """
    seen = set() if seen is None else seen
    node = sysfs.facts(ddir)
    node['children'] = []
    if depth > MAX_DEPTH or ddir in seen:
        node['cycle'] = True
        return node
    seen = seen | set([ddir])
    if node['partition']:
        parent = os.path.dirname(ddir)
        node['children'].append(build_tree(sysfs, parent, resolve_file, depth + 1, seen))
        return node
    for child in sysfs.slaves(ddir):
        node['children'].append(build_tree(sysfs, child, resolve_file, depth + 1, seen))
    backing = node.get('loop_backing_file')
    if backing and not node['children'] and resolve_file is not None:
        child_dir, note = resolve_file(backing)
        node['backing_note'] = note
        if child_dir:
            node['backing_device'] = True
            node['children'].append(build_tree(sysfs, child_dir, resolve_file, depth + 1, seen))
    return node
