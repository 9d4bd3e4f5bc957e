#!/usr/bin/env bash
# Run every Molecule scenario (molecule/*/molecule.yml), one after another, with timings.
# Usage: tests/molecule.sh [SCENARIO...]
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PATH="$ROOT/.venv/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH="$ROOT/.collections" ANSIBLE_CONFIG="$ROOT/ansible.cfg"
if [ $# -gt 0 ]; then
  scenarios=("$@")
else
  mapfile -t scenarios < <(for f in molecule/*/molecule.yml; do basename "$(dirname "$f")"; done | sort)
  # booted (pkg1-pkg4, systemd-nspawn machines; root) boots from the cached machine roots that the fleet
  # stream's tests/integration/fleet/hosts/test_booted_hosts.py builds on a fresh machine (lab/dbfleet_lab/machines.py).
  # MySQL 5.7 (end of life since 2023) is opt-in, as in the lab: DBFLEET_LAB_WITH_57=1 adds its scenario.
  if [ "${DBFLEET_LAB_WITH_57:-}" != 1 ]; then
    mapfile -t scenarios < <(printf '%s\n' "${scenarios[@]}" | grep -vx mysql57)
  fi
  # drop_tables_fleet (the drop runbook on a replicated SSH fleet, which the integration tests cover on the
  # fleet too) runs in `make test-extended` (DBFLEET_MOLECULE_EXTENDED=1), outside make test's 35 minutes.
  if [ "${DBFLEET_MOLECULE_EXTENDED:-}" != 1 ]; then
    mapfile -t scenarios < <(printf '%s\n' "${scenarios[@]}" | grep -vx drop_tables_fleet)
  fi
fi
failed=0
summary=()
for s in "${scenarios[@]}"; do
  start=$SECONDS
  echo "=================== molecule test -s $s"
  if molecule test -s "$s"; then r=ok; else r=FAILED; failed=$((failed + 1)); fi
  summary+=("$(printf '%-28s %-7s %5ss' "$s" "$r" "$((SECONDS - start))")")
done
echo "=================== molecule summary"
printf '%s\n' "${summary[@]}"
echo "molecule: $(( ${#scenarios[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]
