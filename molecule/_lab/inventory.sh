#!/usr/bin/env bash
# Executable inventory for Molecule scenarios: the hosts, connection settings and dbfleet_* login
# variables that lab/lab.py wrote for this scenario's lab (DBFLEET_MOLECULE_INVENTORY, else DBFLEET_LAB_INVENTORY,
# set in molecule.yml). DBFLEET_MOLECULE_INVENTORY may name several files, separated by ':' (the fleet's hosts and
# the booted hosts, which the lab writes apart): ansible-inventory merges them, in that order (a group both name,
# mysql or mariadb, holds the hosts of both).
# Before `create` no file exists yet and the inventory is empty.
set -euo pipefail
if [ "${1:-}" = "--host" ]; then echo '{}'; exit 0; fi
IFS=: read -r -a files <<< "${DBFLEET_MOLECULE_INVENTORY:-${DBFLEET_LAB_INVENTORY:-}}"
sources=()
for inventory in "${files[@]}"; do
  if [ -n "$inventory" ] && [ -s "$inventory" ]; then sources+=(-i "$inventory"); fi
done
if [ ${#sources[@]} -gt 0 ]; then
  exec ansible-inventory "${sources[@]}" --list
fi
echo '{"_meta": {"hostvars": {}}}'
