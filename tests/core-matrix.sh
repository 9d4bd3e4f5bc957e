#!/usr/bin/env bash
# Sanity and unit tests on another ansible-core than the pinned one (requirements/venv.txt):
#   tests/core-matrix.sh SERIES [units|sanity|all]     e.g. tests/core-matrix.sh 2.16
# SERIES is a line of requirements/core-matrix.txt (its ansible-core version and controller Python). The
# version gets a virtualenv of its own with only what the unit tests import: ansible-core, pytest, PyMySQL (and
# PyYAML, Jinja2 at the project's pins), from PyPI through the download cache <cache>/pip. It lives in the machine's
# lab cache (DBFLEET_LAB_CACHE, default ~/.cache/dbfleet-lab: <cache>/core/<version>-<hash of what it holds>),
# shared by every clone as the lab's servers and the image are: a fresh clone's `make test` finds it built instead
# of building it again (pip's downloads, resolution and the byte-compiling of ansible-core each time).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
series=${1:?usage: tests/core-matrix.sh SERIES [units|sanity|all] (SERIES from requirements/core-matrix.txt)}
what=${2:-all}
case $what in units|sanity|all) ;; *) echo "ERROR: unknown part '$what' (units, sanity or all)" >&2; exit 2;; esac

read -r _ version python_version < <(grep -E "^${series//./\\.}[[:space:]]" requirements/core-matrix.txt) || {
  echo "ERROR: no ansible-core series '$series' in requirements/core-matrix.txt" >&2; exit 2; }

# The controller Python: pythonX.Y on PATH, else pyenv's newest X.Y (pyenv's shims only answer for its active versions).
find_python() {
  local want=$1 candidate
  if candidate=$(command -v "python$want") && "$candidate" -c '' 2>/dev/null; then echo "$candidate"; return; fi
  local pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
  for candidate in $(ls -d "$pyenv_root"/versions/"$want".*/bin/python"$want" 2>/dev/null | sort -V -r); do
    "$candidate" -c '' 2>/dev/null && { echo "$candidate"; return; }
  done
  echo "ERROR: ansible-core $version needs Python $want on the controller: none on PATH or under $pyenv_root/versions" \
       "(install it, e.g. 'pyenv install $want')" >&2
  return 1
}

# The virtualenv, named by what it holds (the Python and the pins: another list is another directory, so that a
# clone with other pins never rebuilds one in use), built under a lock: another clone that wants the same one waits,
# then finds it built (its stamp, written last, is that list).
CACHE=${DBFLEET_LAB_CACHE:-$HOME/.cache/dbfleet-lab}
pin() { grep -iE "^$1==" requirements/venv.txt; }
wanted="ansible-core==$version $(pin pytest) $(pin PyMySQL) $(pin PyYAML) $(pin Jinja2) $(pin ansible-builder)"
VENV="$CACHE/core/$version-$(echo "$python_version $wanted" | sha256sum | cut -c1-8)"
mkdir -p "$CACHE/core"
exec 9> "$VENV.lock"
flock 9
if [ "$(cat "$VENV/.stamp" 2>/dev/null)" != "$python_version $wanted" ]; then
  python=$(find_python "$python_version")
  echo "virtualenv $VENV: Python $python_version ($python), $wanted"
  rm -rf "$VENV"
  "$python" -m venv "$VENV"
  # shellcheck disable=SC2086 # one argument per requirement
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --cache-dir "$CACHE/pip" $wanted
  echo "$python_version $wanted" > "$VENV/.stamp"
fi
exec 9>&-
export PATH="$VENV/bin:$PATH"
installed=$(python -c 'from ansible.release import __version__; print(__version__)')
[ "$installed" = "$version" ] || { echo "ERROR: $VENV holds ansible-core $installed, not $version" >&2; exit 1; }
echo "ansible-core $installed on $(python -V)"

# The unit tests that import no Ansible check the repository's tooling and files (the lab's lab.py, which the
# project's virtualenv runs; the layout of the integration tests and the Molecule scenarios; YAML read as data): the
# pinned run (`make units`) checks them, and another ansible-core cannot change their answer.
NO_ANSIBLE=(tests/unit/lab tests/unit/test_integration_layout.py tests/unit/test_molecule_layout.py
            tests/unit/test_yaml_copies.py tests/unit/test_restart_role_paths.py)
rc=0
if [ "$what" != sanity ]; then
  python -m pytest -q -p no:cacheprovider "${NO_ANSIBLE[@]/#/--ignore=}" tests/unit || rc=1
fi
if [ "$what" != units ]; then
  tests/sanity.sh || rc=1
fi
exit $rc
