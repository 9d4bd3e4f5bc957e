#!/usr/bin/env bash
# Every check of the collection, in order, with the time each part took.
# Runs all parts even when one fails, then exits non-zero if any failed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PATH="$ROOT/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$ROOT/ansible.cfg" ANSIBLE_COLLECTIONS_PATH="$ROOT/.collections"
export ANSIBLE_FORCE_COLOR=0 PY_COLORS=0 ANSIBLE_NOCOLOR=1

declare -a NAMES=() TIMES=() RESULTS=()
run_part() {
  local name=$1; shift
  local start=$SECONDS
  echo
  echo "=================== $name: $*"
  if "$@"; then RESULTS+=(ok); else RESULTS+=(FAILED); fi
  NAMES+=("$name"); TIMES+=($((SECONDS - start)))
}

# The execution environment image (ee/build.sh, as `make ee`) builds beside the first checks: the first time on a
# machine it is mostly downloads (debootstrap, PyPI, Debian packages); afterwards podman's layer cache and the
# cached base root make it short. The integration tests run the job templates inside it (test_awx_ee.py).
EE_OUT=$(mktemp -d)
(
  start=$SECONDS
  if ee/build.sh > "$EE_OUT/output" 2>&1; then result=ok; else result=FAILED; fi
  echo "$result $((SECONDS - start))" > "$EE_OUT/result"
) &
ee_build=$!

run_part lint         ansible-lint --profile production
run_part changelog    antsibull-changelog lint
run_part sanity       tests/sanity.sh
run_part units        python -m pytest -q tests/unit
run_part build        tests/build-test.sh
wait "$ee_build"
echo
echo "=================== ee: ee/build.sh (built beside the checks above)"
read -r ee_result ee_time < "$EE_OUT/result" || { ee_result=FAILED; ee_time=0; }
if [ "$ee_result" = ok ]; then tail -n 4 "$EE_OUT/output"; else tail -n 40 "$EE_OUT/output"; fi
NAMES+=(ee); RESULTS+=("$ee_result"); TIMES+=("$ee_time")
rm -rf "$EE_OUT"
run_part lab-up       python lab/lab.py up

# Two streams at once: the local lab's integration tests, and beside them the SSH fleet's tests then the
# Molecule scenarios. They use different servers (the local lab; the fleet's network namespaces; Molecule's
# private labs on their own ports and, for its fleet scenarios, its own fleet network), and much of a test's
# time is spent waiting for servers to restart and replicate. The second stream's output follows the first's.
STREAM=$(mktemp -d)
(
  NAMES=() TIMES=() RESULTS=()
  run_part integration-fleet python -m pytest -q --durations=10 -m fleet tests/integration
  export DBFLEET_FLEET_NET="${DBFLEET_MOLECULE_FLEET_NET:-12}"
  run_part molecule tests/molecule.sh
  for i in "${!NAMES[@]}"; do echo "${NAMES[$i]} ${RESULTS[$i]} ${TIMES[$i]}"; done > "$STREAM/results"
) > "$STREAM/output" 2>&1 &
second=$!
run_part integration  python -m pytest -q --durations=25 -m "not fleet" tests/integration
wait "$second"
cat "$STREAM/output"
if [ -s "$STREAM/results" ]; then
  while read -r name result time; do NAMES+=("$name"); RESULTS+=("$result"); TIMES+=("$time"); done < "$STREAM/results"
else
  NAMES+=(integration-fleet+molecule); RESULTS+=(FAILED); TIMES+=(0)
fi
rm -rf "$STREAM"
run_part lab-down     python lab/lab.py down

echo
echo "=================== summary"
failed=0
for i in "${!NAMES[@]}"; do
  printf '%-12s %-7s %5ss\n' "${NAMES[$i]}" "${RESULTS[$i]}" "${TIMES[$i]}"
  [ "${RESULTS[$i]}" = ok ] || failed=$((failed + 1))
done
printf 'total        %13ss\n' "$SECONDS"
echo "checks: $(( ${#NAMES[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]
