#!/usr/bin/env bash
# Executable inventory for Molecule scenarios: the hosts, connection settings and dbfleet_* login
# variables that lab/lab.py wrote for this scenario's lab (DBFLEET_MOLECULE_INVENTORY, else DBFLEET_LAB_INVENTORY,
# set in molecule.yml).
# Before `create` the file does not exist yet and the inventory is empty.
set -euo pipefail
if [ "${1:-}" = "--host" ]; then echo '{}'; exit 0; fi
inventory=${DBFLEET_MOLECULE_INVENTORY:-${DBFLEET_LAB_INVENTORY:-}}
if [ -n "$inventory" ] && [ -s "$inventory" ]; then
  exec ansible-inventory -i "$inventory" --list
fi
echo '{"_meta": {"hostvars": {}}}'
