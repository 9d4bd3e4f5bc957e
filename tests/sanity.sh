#!/usr/bin/env bash
# ansible-test sanity on a copy of the collection laid out as ansible_collections/dbfleet/innodb, with the
# ansible-test of the ansible-core on PATH (the pinned one; tests/core-matrix.sh puts another first).
# Its ignore file, tests/sanity/ignore-<major.minor>.txt, exists and stays empty: findings are fixed in the code.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
CORE=$(python -c 'from ansible.release import __version__ as v; print(".".join(v.split(".")[:2]))')
IGNORE=tests/sanity/ignore-$CORE.txt
if [ ! -f "$IGNORE" ] || [ -s "$IGNORE" ]; then
  echo "ERROR: $IGNORE must exist and stay empty (ansible-core $CORE)" >&2
  exit 1
fi
# One copy per ansible-core version, so that the versions' runs can overlap.
DEST="$ROOT/.build/sanity/$CORE/ansible_collections/dbfleet/innodb"
rm -rf "$DEST"
mkdir -p "$DEST"
# The files git would ship: tracked ones plus untracked ones that are not ignored (a symlink as a symlink), copied
# by one process (a cp and a mkdir per file cost about 3 s of CPU a run).
git ls-files -z --cached --others --exclude-standard | python -c '
import os, shutil, sys
dest = sys.argv[1]
for name in sys.stdin.buffer.read().split(b"\0"):
    if name and os.path.lexists(name):
        target = os.path.join(os.fsencode(dest), name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(name, target, follow_symlinks=False)
' "$DEST"
# ansible-test bootstraps pip in its sanity venvs with a script it downloads from a host outside
# the package registries: give it the local stand-in under the name it looks for. Each ansible-test pins its own
# pip version (2.16: 23.1.2, 2.19: 24.2, 2.21: 25.2), read off the ansible-test that runs.
PIP_VERSION=$(python -c 'import re,ansible_test._internal.python_requirements as m,inspect; print(re.search(r"pip=.([0-9.]+).", inspect.getsource(m)).group(1))')
mkdir -p ~/.ansible/test/cache
cp "$ROOT/tests/ansible_test_get_pip.py" ~/.ansible/test/cache/get_pip_${PIP_VERSION//./_}.py
cd "$DEST"
# A repository of its own, so ansible-test lists exactly these files (not the enclosing checkout's).
git init -q . && git add -A && git -c user.name=sanity -c user.email=sanity@localhost commit -q -m sanity
# Sanity tests need their own tools (pylint, yamllint, voluptuous, ...): ansible-test pins and installs them.
ansible-test sanity --requirements --python "$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
  --color no "$@"
