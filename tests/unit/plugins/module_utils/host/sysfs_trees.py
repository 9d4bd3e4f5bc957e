# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The recorded sysfs trees of tests/unit/fixtures/sysfs/<case>.json, and turning them back into trees.

A real kernel's layout has ':' in its names (dev/block/253:0, pci0000:00/0000:00:03.0), which
ansible-test sanity refuses in file names, and it is mostly symlinks. So each case is kept as one
JSON manifest of the tree under the case's root (its sys/ and proc/ parts), paths relative to that
root and '/'-separated:

    {"dirs": [empty directories],
     "files": {path: content of a regular file},
     "links": {path: target of a symlink, exactly as os.readlink gives it}}

Directories that hold anything are implied by the paths under them. `dump_tree` reads a tree into a
manifest, `materialize` writes a manifest out as a tree, and `Trees` does that once per case into a
scratch directory for the tests, which then use <root>/sys and <root>/proc as sysfs_root and proc_root.
build_fixtures.py (next to the manifests) writes them with `dump_tree` and `write_manifest`.
"""

from __future__ import annotations

import io
import json
import os

MANIFESTS = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'sysfs'))
PARTS = ('sys', 'proc')


def case_names(manifests=MANIFESTS):
    return sorted(name[:-len('.json')] for name in os.listdir(manifests) if name.endswith('.json'))


def manifest_path(case, manifests=MANIFESTS):
    return os.path.join(manifests, case + '.json')


def load_manifest(case, manifests=MANIFESTS):
    with io.open(manifest_path(case, manifests), encoding='utf-8') as f:
        return json.load(f)


def serialize(manifest):
    """The manifest's text: sorted keys, one entry a line, so a change to a tree reads as a small diff."""
    return json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + '\n'


def write_manifest(manifest, path):
    with io.open(path, 'w', encoding='utf-8', newline='') as f:
        f.write(serialize(manifest))


def _read_text(full):
    with io.open(full, encoding='utf-8', newline='') as f:
        return f.read()


def dump_tree(root, parts=PARTS):
    """The manifest of the tree at root: every regular file, symlink and empty directory under
    root/<part> for each part (symlinks are recorded, never followed)."""
    files, links, dirs = {}, {}, []

    def rel(full):
        return os.path.relpath(full, root).replace(os.sep, '/')

    def entry(full):
        if os.path.islink(full):
            links[rel(full)] = os.readlink(full)
        elif os.path.isfile(full):
            files[rel(full)] = _read_text(full)
        elif not os.path.isdir(full):
            raise ValueError('%s: neither a regular file, a symlink nor a directory' % full)

    for part in parts:
        top = os.path.join(root, part)
        if not os.path.lexists(top):
            continue
        if os.path.islink(top) or not os.path.isdir(top):
            entry(top)
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            if not dirnames and not filenames:
                dirs.append(rel(dirpath))
            for name in sorted(dirnames + filenames):
                entry(os.path.join(dirpath, name))
    return {'dirs': sorted(dirs), 'files': files, 'links': links}


def _target(dest, rel):
    parts = rel.split('/')
    if os.path.isabs(rel) or not rel or any(p in ('', '.', '..') for p in parts) or parts[0] not in PARTS:
        raise ValueError('bad path in manifest: %r' % rel)
    return os.path.join(dest, *parts)


def _parent(full):
    parent = os.path.dirname(full)
    if not os.path.isdir(parent):
        os.makedirs(parent)


def materialize(manifest, dest):
    """Write the manifest's tree under dest (which must not hold any of its paths yet); return dest."""
    if not os.path.isdir(dest):
        os.makedirs(dest)
    for rel in manifest.get('dirs', []):
        os.makedirs(_target(dest, rel))
    for rel, text in sorted(manifest.get('files', {}).items()):
        full = _target(dest, rel)
        _parent(full)
        with io.open(full, 'w', encoding='utf-8', newline='') as f:
            f.write(text)
    for rel, link in sorted(manifest.get('links', {}).items()):
        full = _target(dest, rel)
        _parent(full)
        os.symlink(link, full)
    return dest


class Trees(object):
    """The cases' trees, each written out under base on first use and reused after that."""

    def __init__(self, base, manifests=MANIFESTS):
        self.base = str(base)
        self.manifests = manifests
        self.roots = {}

    def root(self, case):
        if case not in self.roots:
            self.roots[case] = materialize(load_manifest(case, self.manifests), os.path.join(self.base, case))
        return self.roots[case]

    def sys(self, case):
        return os.path.join(self.root(case), 'sys')

    def proc(self, case):
        return os.path.join(self.root(case), 'proc')
