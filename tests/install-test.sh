#!/usr/bin/env bash
# The collection as a user installs it: build the tarball, make a new virtualenv holding only what README.md
# ("Installing") tells a user to install (requirements/install-test.txt: the newest ansible-core and PyMySQL) on a
# Python >= 3.12, install the tarball with `ansible-galaxy collection install` into an empty collections path, and,
# from a directory outside the repository, render every plugin and role with that ansible-doc and syntax-check
# every playbook by its FQCN.
#
#   tests/install-test.sh [DIR]
#
# With DIR, the install is kept there (DIR/venv, DIR/collections, DIR/ansible.cfg, DIR/dist/*.tar.gz) for a caller
# that goes on with it (tests/integration/test_install.py runs site and verify from it against the lab); without,
# it is removed at the end. The virtualenv is new each time, from wheels downloaded once (.cache/install-wheels/).
# DBFLEET_INSTALL_PYTHON names the interpreter (default: the newest python3.1[2-9] on PATH or under ~/.pyenv/versions:
# Debian 12's python3 is 3.11; the machine image's pyenv has 3.12 and 3.13).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ge 1 ]; then
  WORK=$(mkdir -p "$1" && cd "$1" && pwd)
  rm -rf "$WORK/venv" "$WORK/collections" "$WORK/dist"
else
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
fi
start=$SECONDS

find_python() {
  if [ -n "${DBFLEET_INSTALL_PYTHON:-}" ]; then echo "$DBFLEET_INSTALL_PYTHON"; return; fi
  local candidate best="" best_minor=0 minor
  for candidate in $(compgen -c python3.1 | sort -u) "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3.1[2-9]; do
    command -v "$candidate" >/dev/null 2>&1 || [ -x "$candidate" ] || continue
    minor=$("$candidate" -c 'import sys; print(sys.version_info[1] if sys.version_info[0] == 3 else 0)' 2>/dev/null) \
      || continue
    if [ "$minor" -ge 12 ] && [ "$minor" -gt "$best_minor" ]; then best=$candidate; best_minor=$minor; fi
  done
  echo "$best"
}
PYTHON=$(find_python)
if [ -z "$PYTHON" ]; then
  echo "ERROR: no Python >= 3.12 found (ansible-core 2.20 and later need it on the controller): set" \
       "DBFLEET_INSTALL_PYTHON to one" >&2
  exit 1
fi

# The virtualenv: only requirements/install-test.txt and what those packages themselves require.
# The wheels come from a wheelhouse downloaded once per requirements file and Python version
# (.cache/install-wheels/), so later runs install them without asking PyPI.
# The virtualenv is made without pip (ensurepip costs seconds of CPU) and filled by the interpreter's own pip, which
# installs into it (pip --python); an interpreter without pip makes it with its own.
if "$PYTHON" -m pip --version >/dev/null 2>&1; then
  "$PYTHON" -m venv --without-pip "$WORK/venv"
  PIP="$PYTHON -m pip --python $WORK/venv/bin/python --disable-pip-version-check -q"
else
  "$PYTHON" -m venv "$WORK/venv"
  PIP="$WORK/venv/bin/python -m pip --disable-pip-version-check -q"
fi
WHEELS="$ROOT/.cache/install-wheels/$("$PYTHON" -c 'import sys; print("py%d%d" % sys.version_info[:2])')-$(sha256sum \
  "$ROOT/requirements/install-test.txt" | cut -c1-12)"
if [ ! -f "$WHEELS/.complete" ]; then
  rm -rf "$WHEELS" && mkdir -p "$WHEELS"
  $PIP download -d "$WHEELS" -r "$ROOT/requirements/install-test.txt"
  touch "$WHEELS/.complete"
fi
$PIP install --no-index --find-links "$WHEELS" -r "$ROOT/requirements/install-test.txt"
echo "virtualenv made: $((SECONDS - start))s"
"$WORK/venv/bin/python" - "$ROOT/requirements/install-test.txt" <<'EOF'
"""Fail when the virtualenv holds a distribution that neither the README's packages nor their requirements name."""
import re
import sys
from importlib import metadata

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()

wanted = [norm(re.split(r"[=<>!~ ;\[]", line, maxsplit=1)[0]) for line in open(sys.argv[1], encoding="utf-8")
          if line.strip() and not line.startswith("#")]
installed = {norm(d.metadata["Name"]): d for d in metadata.distributions()}
needed, todo = set(), list(wanted)
while todo:
    name = todo.pop()
    if name in needed or name not in installed:
        continue
    needed.add(name)
    for req in installed[name].requires or []:
        if "extra ==" not in req:
            todo.append(norm(re.split(r"[=<>!~ ;\[(]", req, maxsplit=1)[0]))
extra = sorted(set(installed) - needed - {"pip", "setuptools"})
missing = sorted(set(wanted) - set(installed))
if extra or missing:
    sys.exit("ERROR: the virtualenv holds %s beyond the README's packages, lacks %s" % (extra, missing))
print("virtualenv: %s" % ", ".join("%s %s" % (n, installed[n].version) for n in wanted))
EOF
export PATH="$WORK/venv/bin:/usr/bin:/bin"
ansible --version > "$WORK/ansible-version" && head -1 "$WORK/ansible-version"

# The tarball, built by that ansible-galaxy as a release is.
ansible-galaxy collection build --force --output-path "$WORK/dist" "$ROOT" >/dev/null
TARBALL=$(ls "$WORK"/dist/dbfleet-innodb-*.tar.gz)
echo "built $(basename "$TARBALL") ($(du -h "$TARBALL" | cut -f1))"

# From here on, a directory outside the repository with a configuration of its own: nothing of the checkout's
# ansible.cfg, roles or .collections counts.
cd "$WORK"
printf '[defaults]\ncollections_path = %s\n' "$WORK/collections" > "$WORK/ansible.cfg"
export ANSIBLE_CONFIG="$WORK/ansible.cfg"
unset ANSIBLE_COLLECTIONS_PATH ANSIBLE_COLLECTIONS_PATHS ANSIBLE_ROLES_PATH
# The collection has no collection dependencies, so the install needs no Galaxy server.
ansible-galaxy collection install --offline -p "$WORK/collections" "$TARBALL" >/dev/null
installed_version=$(python -c 'import json, sys; print(json.load(open(sys.argv[1]))["collection_info"]["version"])' \
  "$WORK/collections/ansible_collections/dbfleet/innodb/MANIFEST.json")
galaxy_version=$(sed -n 's/^version: *//p' "$ROOT/galaxy.yml")
[ "$installed_version" = "$galaxy_version" ] \
  || { echo "ERROR: installed $installed_version, galaxy.yml says $galaxy_version" >&2; exit 1; }
ansible-galaxy collection list dbfleet.innodb | grep -q "dbfleet.innodb *$galaxy_version" \
  || { echo "ERROR: ansible-galaxy collection list does not show dbfleet.innodb $galaxy_version" >&2; exit 1; }
echo "installed dbfleet.innodb $installed_version into $WORK/collections"

# Every plugin and role of the install renders with ansible-doc (each kind the collection ships): one ansible-doc lists
# the names of every kind (--metadata-dump, which also reads each one's documentation and fails on one it cannot
# read), one ansible-doc per kind renders all of its names (a name it cannot find or document is a warning or an error
# there), and each name's page must be in what it printed. Nothing on stderr (a warning, a deprecation, an error) but
# ansible-core's own warning about its internal collection (ansible-doc of 2.21 lists ansible._protomatter, which has
# no version).
doc_stderr_clean() {
  ! grep -v "ansible/_internal/ansible_collections/ansible/_protomatter' does not have a MANIFEST" "$1" | grep -q .
}
if ! ansible-doc --metadata-dump dbfleet.innodb >"$WORK/doc.dump" 2>"$WORK/doc.err" || ! doc_stderr_clean "$WORK/doc.err"
then
  cat "$WORK/doc.err" >&2; echo "ERROR: ansible-doc --metadata-dump dbfleet.innodb" >&2; exit 1
fi
rendered=0
for kind in module lookup filter test role; do
  names=$(python -c 'import json, sys; print("\n".join(sorted(n for n in json.load(open(sys.argv[1]))["all"][sys.argv[2]]
                                                       if n.startswith("dbfleet.innodb."))))' "$WORK/doc.dump" "$kind")
  [ -n "$names" ] || { echo "ERROR: ansible-doc lists no dbfleet.innodb $kind" >&2; exit 1; }
  # shellcheck disable=SC2086
  if ! ansible-doc -t "$kind" $names >"$WORK/doc.out" 2>"$WORK/doc.err" || ! doc_stderr_clean "$WORK/doc.err"; then
    cat "$WORK/doc.err" >&2; echo "ERROR: ansible-doc -t $kind" $names >&2; exit 1
  fi
  # Each page starts "> MODULE name (path)" ("> ROLE: name (path)" for a role), the name in bold (a role's between
  # asterisks without colours).
  sed 's/\x1b\[[0-9;]*m//g' "$WORK/doc.out" | awk '/^> [A-Z]+:? [^ ]+ \(/ {print $3}' | tr -d '*' > "$WORK/doc.pages"
  for name in $names; do
    grep -qxF "$name" "$WORK/doc.pages" \
      || { echo "ERROR: ansible-doc -t $kind $name rendered no page" >&2; exit 1; }
    rendered=$((rendered + 1))
  done
  echo "ansible-doc renders every $kind: $(echo $names | wc -w)"
done
# Every playbook by its FQCN, all of them in one syntax check (a failure names the playbook's file).
playbooks=()
for p in "$WORK"/collections/ansible_collections/dbfleet/innodb/playbooks/*.yml; do
  playbooks+=("dbfleet.innodb.$(basename "$p" .yml)")
done
ansible-playbook --syntax-check -i localhost, "${playbooks[@]}" >/dev/null 2>"$WORK/syntax.err" \
  || { cat "$WORK/syntax.err" >&2; echo "ERROR: ansible-playbook --syntax-check ${playbooks[*]}" >&2; exit 1; }
echo "ansible-playbook --syntax-check: every playbook by its FQCN (${#playbooks[@]})"
echo "install test: ok ($rendered plugins and roles rendered, $((SECONDS - start))s)"
