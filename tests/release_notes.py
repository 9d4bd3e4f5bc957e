"""Check the release notes that `antsibull-changelog release --version VERSION` made in a copy of the collection.

    python3 tests/release_notes.py COPY VERSION

CHANGELOG.rst has the release with its summary and sections, every module and role of the collection as new
(each carries version_added of the release), changelogs/changelog.yaml the release, and no fragment is left over.
tests/build-test.sh runs it; exits non-zero naming what is missing.
"""
import os
import re
import sys

import yaml

SECTIONS = ("Release Summary", "Minor Changes", "Bugfixes", "New Modules", "New Plugins", "New Roles")


def problems(copy, version):
    """What the release notes of version in copy lack (empty when none)."""
    with open(os.path.join(copy, "CHANGELOG.rst"), encoding="utf-8") as handle:
        text = handle.read()
    release = "v" + version
    found = []
    start = re.search(r"^%s\n=+\n" % re.escape(release), text, re.M)
    if not start:
        return ["CHANGELOG.rst has no release %s" % release]
    later = re.search(r"^v\S+\n=+\n", text[start.end():], re.M)
    body = text[start.end():start.end() + later.start()] if later else text[start.end():]
    sections = re.findall(r"^(.+)\n-+\n", body, re.M)
    found += ["CHANGELOG.rst %s has no section %r" % (release, s) for s in SECTIONS if s not in sections]
    modules = sorted(f[:-3] for f in os.listdir(os.path.join(copy, "plugins", "modules")) if f.endswith(".py"))
    roles = sorted(os.listdir(os.path.join(copy, "roles")))
    found += ["CHANGELOG.rst %s lists no new module or role %s" % (release, name)
              for name in modules + roles if "- dbfleet.innodb.%s - " % name not in body]
    with open(os.path.join(copy, "changelogs", "changelog.yaml"), encoding="utf-8") as handle:
        changes = yaml.safe_load(handle)
    if version not in (changes.get("releases") or {}):
        found.append("changelogs/changelog.yaml has no release %s" % version)
    left = sorted(f for f in os.listdir(os.path.join(copy, "changelogs", "fragments")) if f.endswith(".yml"))
    if left:
        found.append("fragments left after the release: %s" % ", ".join(left))
    if not found:
        print("release notes: CHANGELOG.rst has %s with %s; %d modules and %d roles new"
              % (release, ", ".join(sections), len(modules), len(roles)))
    return found


if __name__ == "__main__":
    FOUND = problems(*sys.argv[1:3])
    for line in FOUND:
        print("ERROR: %s" % line, file=sys.stderr)
    sys.exit(1 if FOUND else 0)
