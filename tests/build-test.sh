#!/usr/bin/env bash
# Build the collection tarball, install it into an empty collections path, and check that
# ansible-doc renders every module and that ansible-playbook runs a playbook by its FQCN.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"
ansible-galaxy collection build --force --output-path "$WORK/dist" . >/dev/null
TARBALL=$(ls "$WORK"/dist/dbfleet-innodb-*.tar.gz)
echo "built $(basename "$TARBALL") ($(du -h "$TARBALL" | cut -f1))"
# Nothing from the work tree may leak into the tarball.
if tar tzf "$TARBALL" | grep -E '(^|/)(\.lab|\.venv|\.collections|\.build|\.ansible|reports)/' ; then
  echo "ERROR: the tarball carries work-tree state" >&2; exit 1
fi
# The tarball holds the collection, not the tools that build and test it.
tar tzf "$TARBALL" | sed 's|^\./||' > "$WORK/contents"
if grep -E '^((lab|bench|molecule|inventories|\.ci|tests/integration|tests/molecule)/|Makefile$|ansible\.cfg$|tests/[^/]+\.sh$)' "$WORK/contents"; then
  echo "ERROR: the tarball carries the lab, benchmarks, Molecule, integration tests, CI or Make files" >&2; exit 1
fi
for shipped in plugins/modules/ roles/ playbooks/ meta/runtime.yml docs/ tests/unit/; do
  grep -q "^$shipped" "$WORK/contents" \
    || { echo "ERROR: the tarball lacks $shipped" >&2; exit 1; }
done
mkdir -p "$WORK/collections"
# From here on, only the empty collections path counts (not the repo's ansible.cfg, roles or .collections).
cd "$WORK"
printf '[defaults]\n' > "$WORK/ansible.cfg"
export ANSIBLE_CONFIG="$WORK/ansible.cfg" ANSIBLE_COLLECTIONS_PATH="$WORK/collections"
# community.mysql comes from the project's collections path (Galaxy is not reachable).
ansible-galaxy collection install --offline -p "$WORK/collections" "$TARBALL" \
  "$ROOT/.collections/ansible_collections/community/mysql" >/dev/null
for c in dbfleet/innodb community/mysql; do
  [ -f "$WORK/collections/ansible_collections/$c/MANIFEST.json" ] \
    || { echo "ERROR: $c was not installed from the tarball" >&2; exit 1; }
done
# Every module, role, filter and test of the installed tarball renders with ansible-doc.
for kind in module role filter test; do
  case $kind in module|role) ;; *) [ -d "$ROOT/plugins/$kind" ] || continue ;; esac
  names=$(ansible-doc -t "$kind" -l dbfleet.innodb | awk '/^dbfleet\.innodb\./ {sub(":$", "", $1); print $1}')
  [ -n "$names" ] || { echo "ERROR: ansible-doc lists no dbfleet.innodb $kind" >&2; exit 1; }
  for name in $names; do
    ansible-doc -t "$kind" "$name" >/dev/null
    echo "ansible-doc renders $kind $name"
  done
done
# A playbook of the installed collection runs by its FQCN (syntax check needs no hosts).
for p in "$WORK"/collections/ansible_collections/dbfleet/innodb/playbooks/*.yml; do
  name=$(basename "$p" .yml)
  ansible-playbook --syntax-check -i localhost, "dbfleet.innodb.$name" >/dev/null
  echo "ansible-playbook dbfleet.innodb.$name: syntax ok"
done
echo "build test: ok"
