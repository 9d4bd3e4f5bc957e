#!/usr/bin/env bash
# Executable inventory for Molecule scenarios: the hosts, connection settings and dbfleet_* login
# variables that lab/lab.py wrote for this scenario's lab (DBFLEET_LAB_INVENTORY, set in molecule.yml).
# Before `create` the file does not exist yet and the inventory is empty.
set -euo pipefail
if [ "${1:-}" = "--host" ]; then echo '{}'; exit 0; fi
if [ -n "${DBFLEET_LAB_INVENTORY:-}" ] && [ -s "$DBFLEET_LAB_INVENTORY" ]; then
  exec ansible-inventory -i "$DBFLEET_LAB_INVENTORY" --list
fi
echo '{"_meta": {"hostvars": {}}}'
