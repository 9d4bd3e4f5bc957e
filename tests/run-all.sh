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
# The CPU time the machine spent while the suite ran (/proc/stat: user, nice, system, irq, softirq; the servers the
# lab starts count too, they are the suite's work), reported beside the wall time: it moves less than the wall time
# from one machine to the next.
cpu_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }
CPU_START=$(cpu_ticks)
# Each part's CPU, where the machine lets the run make cpuacct groups (cgroup v1): every process a part starts stays in
# the part's group, the servers and booted machines its labs start included (lab-up's group holds the shared lab's
# servers until lab-down), and the groups are read once every part has ended. Elsewhere the column says "-".
CPU_GROUPS=/sys/fs/cgroup/cpuacct/dbfleet-test-$$
mkdir "$CPU_GROUPS" 2>/dev/null || CPU_GROUPS=""
in_cpu_group() {   # NAME COMMAND...: COMMAND inside the part's group
  local name=$1; shift
  if [ -n "$CPU_GROUPS" ] && mkdir -p "$CPU_GROUPS/$name" 2>/dev/null; then
    ( echo "$BASHPID" > "$CPU_GROUPS/$name/cgroup.procs" 2>/dev/null; exec "$@" )
  else
    "$@"
  fi
}
part_cpu() {
  local usage
  usage=$(cat "$CPU_GROUPS/$1/cpuacct.usage" 2>/dev/null) && echo "$((usage / 1000000000))s" || echo -
}
run_part() {
  local name=$1; shift
  local start=$SECONDS
  echo
  echo "=================== $name: $*"
  if in_cpu_group "$name" "$@"; then RESULTS+=(ok); else RESULTS+=(FAILED); fi
  NAMES+=("$name"); TIMES+=($((SECONDS - start)))
}

# The execution environment image (ee/build.sh, as `make ee`) builds beside the local lab's start: the first
# time on a machine it is mostly downloads (debootstrap, PyPI, Debian packages); afterwards podman's layer cache and the
# cached base root make it short. The integration tests run the job templates inside it
# (tests/integration/local/awx/test_awx_ee.py, tests/integration/fleet/awx/test_awx_ee_fleet.py).
EE_OUT=$(mktemp -d)
(
  start=$SECONDS
  if in_cpu_group ee ee/build.sh > "$EE_OUT/output" 2>&1; then result=ok; else result=FAILED; fi
  echo "$result $((SECONDS - start))" > "$EE_OUT/result"
) &
ee_build=$!

# Three streams at once: the local lab's integration tests (tests/integration/local), the SSH fleet's tests
# (tests/integration/fleet; the markers select the same tests), and the Molecule scenarios.
# They use different servers (the local lab; the fleet's network namespaces and booted machines; Molecule's
# private labs on their own ports and, for its fleet scenarios, its own fleet network), and most of a test's time
# is spent waiting for servers to restart, rejoin their cluster or replicate, not on the CPU.
# - The local lab comes up first, alone: on a fresh machine it downloads and builds the servers, chroots and
#   datadir templates that the other streams' labs then find in the cache (each is built once, renamed into place).
# - The local integration tests are the longest stream: they start as soon as the lab is up; the tests that run jobs
#   inside the image run last and wait for its build (local/awx/test_awx_ee.py, fleet/awx/test_awx_ee_fleet.py).
# - The changelog and unit checks run at the head of the fleet's stream; sanity, lint, the build and the HTML docs
#   follow Molecule (the fleet's tests are the longer stream).
# - Molecule starts once the lab is up; it needs nothing else.
# The other streams' output follows the first's. Tests marked `extended` (a fault already covered here, again on
# another flavor) run in `make test-extended`.
STREAMS=$(mktemp -d)
stream() {
  local key=$1; shift
  (
    NAMES=() TIMES=() RESULTS=()
    "$@"
    for i in "${!NAMES[@]}"; do echo "${NAMES[$i]} ${RESULTS[$i]} ${TIMES[$i]}"; done > "$STREAMS/$key.results"
  ) > "$STREAMS/$key.output" 2>&1 &
}
# The image's result, once: ee/build.sh writes it when done (a stream is no child of this shell, so it cannot `wait`).
# The tests that run jobs inside the image wait for it themselves and run last (DBFLEET_EE_BUILD_RESULT,
# tests/integration/dbfleet_testing/awx_runner.py): the streams start their tests without waiting for the build.
export DBFLEET_EE_BUILD_RESULT="$EE_OUT/result"
ee_built() { while [ ! -s "$EE_OUT/result" ]; do sleep 2; done; }
fleet_stream() {
  run_part changelog    antsibull-changelog lint
  run_part units        python -m pytest -q tests/unit
  run_part integration-fleet python -m pytest -q --durations=15 -m "fleet and not extended" tests/integration/fleet
}
# The Molecule stream ends long before the others (about 20 minutes): the local tests that use no server of the
# shared lab (marker own_lab: a private lab on ports of its own, or none) follow it, beside the shared lab's tests,
# then sanity, lint, the collection's build and its HTML docs, and the sanity and unit tests on the other ansible-core
# versions meta/runtime.yml claims
# (requirements/core-matrix.txt; the pinned one ran in the fleet stream), one version after the other.
molecule_stream() {
  DBFLEET_FLEET_NET="${DBFLEET_MOLECULE_FLEET_NET:-12}" run_part molecule tests/molecule.sh
  run_part integration-own python -m pytest -q --durations=10 -m "own_lab and not extended" tests/integration/local
  run_part sanity       tests/sanity.sh
  run_part lint         ansible-lint --profile production
  run_part build        tests/build-test.sh
  run_part docs-html    tests/docs-html.sh
  local series
  for series in $(awk '!/^#/ && NF {print $1}' requirements/core-matrix.txt); do
    run_part "core-$series" tests/core-matrix.sh "$series"
  done
}

# A second run starts from what the first one or a user left (docs/development.md, "make test twice"): takeover
# purges Molecule's private labs (only the tests use them; an interrupted run leaves them up) and records the rest
# as the run takes it over (the lab's and the fleet's servers up or down, used datadirs, booted machines running);
# the last check, leftovers, fails naming what the run left that was not there at its start (processes of the
# clone's labs, network namespaces and links, mounts, listening ports of the labs' port ranges, machines' cgroups).
LEFTOVERS=$(mktemp)
run_part takeover     python lab/lab.py leftovers --save "$LEFTOVERS"
run_part lab-up       python lab/lab.py up
stream molecule molecule_stream
stream fleet fleet_stream
run_part integration  python -m pytest -q --durations=25 -m "not fleet and not extended and not own_lab" tests/integration/local
ee_built
wait "$ee_build"
echo
echo "=================== ee: ee/build.sh (built beside the lab's start and the first tests)"
read -r ee_result ee_time < "$EE_OUT/result" || { ee_result=FAILED; ee_time=0; }
if [ "$ee_result" = ok ]; then tail -n 4 "$EE_OUT/output"; else tail -n 40 "$EE_OUT/output"; fi
NAMES+=(ee); RESULTS+=("$ee_result"); TIMES+=("$ee_time")
wait
for key in fleet molecule; do
  cat "$STREAMS/$key.output"
  if [ -s "$STREAMS/$key.results" ]; then
    while read -r name result time; do NAMES+=("$name"); RESULTS+=("$result"); TIMES+=("$time"); done < "$STREAMS/$key.results"
  else
    NAMES+=("$key"); RESULTS+=(FAILED); TIMES+=(0)
  fi
done
rm -rf "$STREAMS" "$EE_OUT"
run_part lab-down     python lab/lab.py down
run_part leftovers    python lab/lab.py leftovers --since "$LEFTOVERS"
rm -f "$LEFTOVERS"

echo
echo "=================== summary"
failed=0
printf '%-17s %-7s %6s %6s\n' part result wall cpu
for i in "${!NAMES[@]}"; do
  printf '%-17s %-7s %5ss %6s\n' "${NAMES[$i]}" "${RESULTS[$i]}" "${TIMES[$i]}" "$(part_cpu "${NAMES[$i]}")"
  [ "${RESULTS[$i]}" = ok ] || failed=$((failed + 1))
done
printf 'total                     %5ss\n' "$SECONDS"
printf 'cpu                       %5ss (all CPUs of the machine while the suite ran, %s of them)\n' \
  "$(( ($(cpu_ticks) - CPU_START) / $(getconf CLK_TCK) ))" "$(nproc)"
echo "checks: $(( ${#NAMES[@]} - failed )) passed, $failed failed"
if [ -n "$CPU_GROUPS" ]; then rmdir "$CPU_GROUPS"/* "$CPU_GROUPS" 2>/dev/null; fi
[ "$failed" -eq 0 ]
