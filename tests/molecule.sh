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
  # fleet (db1, db2, pkg1-pkg4: systemd-nspawn machines; root) boots from the cached machine roots that the fleet
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
# Each scenario's CPU, where the machine lets the run make cpuacct groups (cgroup v1, as tests/run-all.sh does for
# each part): a group per scenario inside the one this script runs in (so the part's figure still counts them), the
# servers and machines its lab starts included. Elsewhere the column says "-".
CPU_GROUPS=/sys/fs/cgroup/cpuacct$(awk -F: '$2 ~ /(^|,)cpuacct(,|$)/ {print $3; exit}' /proc/self/cgroup)
CPU_GROUPS=${CPU_GROUPS%/}/molecule-$$
mkdir "$CPU_GROUPS" 2>/dev/null || CPU_GROUPS=""
scenario_cpu() {
  local usage
  usage=$(cat "$CPU_GROUPS/$1/cpuacct.usage" 2>/dev/null) && echo "$((usage / 1000000000))s" || echo -
}
failed=0
summary=()
for s in "${scenarios[@]}"; do
  start=$SECONDS
  echo "=================== molecule test -s $s"
  if (
    if [ -n "$CPU_GROUPS" ] && mkdir "$CPU_GROUPS/$s" 2>/dev/null; then echo "$BASHPID" > "$CPU_GROUPS/$s/cgroup.procs"; fi
    exec molecule test -s "$s"
  ); then r=ok; else r=FAILED; failed=$((failed + 1)); fi
  summary+=("$(printf '%-28s %-7s %5ss %6s' "$s" "$r" "$((SECONDS - start))" "$(scenario_cpu "$s")")")
done
if [ -n "$CPU_GROUPS" ]; then rmdir "$CPU_GROUPS"/*/ "$CPU_GROUPS" 2>/dev/null; fi
echo "=================== molecule summary"
printf '%-28s %-7s %6s %6s\n' scenario result wall cpu
printf '%s\n' "${summary[@]}"
echo "molecule: $(( ${#scenarios[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]
