# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every ``version_added`` of the collection names a release it can have shipped in.

docs/development.md, "Releasing": a module, plugin, option, return value or role entry point carries the release it
first shipped in. That is a release changelogs/changelog.yaml already holds, or the one being prepared (galaxy.yml's
``version``: what ``tests/build-test.sh`` releases on a copy). A ``version_added`` newer than both (a guess at the next
release) would put the plugin under no release of CHANGELOG.rst's "New Plugins" and tell users a version that does
not exist; the failure names the file, the line and the value.
"""

from __future__ import annotations

import glob
import os
import re

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VERSION_ADDED = re.compile(r'^\s*version_added:\s*["\']?([^"\'\s#]+)', re.M)
# Where version_added is written: the plugins' documentation (Python DOCUMENTATION strings and the YAML docs of the
# filter and test plugins) and the roles' argument specs.
SOURCES = ('plugins/**/*.py', 'plugins/**/*.yml', 'roles/*/meta/argument_specs.yml')


def _load(path):
    with open(os.path.join(ROOT, path), encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def releases():
    """The releases a version_added may name: changelog.yaml's and galaxy.yml's version."""
    known = set(str(v) for v in (_load('changelogs/changelog.yaml').get('releases') or {}))
    known.add(str(_load('galaxy.yml')['version']))
    return known


def found():
    """[(path:line, version)] of every version_added the collection writes."""
    out = []
    for pattern in SOURCES:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern), recursive=True)):
            with open(path, encoding='utf-8') as handle:
                text = handle.read()
            for match in VERSION_ADDED.finditer(text):
                line = text.count('\n', 0, match.start()) + 1
                out.append(('%s:%d' % (os.path.relpath(path, ROOT), line), match.group(1)))
    return out


def test_the_collection_writes_version_added():
    # The check below reads something: every module and role documents the release it came with.
    places = [where for where, _version in found()]
    assert any(p.startswith('plugins/modules/') for p in places)
    assert any(p.startswith('roles/') for p in places)


def test_every_version_added_is_a_release():
    known = releases()
    wrong = ['%s: version_added %s' % (where, version) for where, version in found() if version not in known]
    assert not wrong, 'not a release of changelogs/changelog.yaml nor galaxy.yml\'s version %s:\n%s' % (
        sorted(known), '\n'.join(wrong))
