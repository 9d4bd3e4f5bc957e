#!/usr/bin/env bash
# The fast tier for the edit-test loop (`make check`, a few minutes, no lab): the changelog fragments, the unit tests
# (with the docs' names and the layout checks), ansible-lint, ansible-test sanity and the HTML docs build, in two
# streams at once (sanity and the docs build beside the rest). `make test` still runs everything, these included.
# Prints each part's time; exits non-zero naming the parts that failed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PATH="$ROOT/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$ROOT/ansible.cfg" ANSIBLE_COLLECTIONS_PATH="$ROOT/.collections"
export ANSIBLE_FORCE_COLOR=0 PY_COLORS=0 ANSIBLE_NOCOLOR=1

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
start=$SECONDS
# part NAME COMMAND...: runs it, its output into $OUT/NAME.log, its result and time into $OUT/NAME.result
part() {
  local name=$1 began=$SECONDS; shift
  if "$@" > "$OUT/$name.log" 2>&1; then result=ok; else result=FAILED; fi
  echo "$result $((SECONDS - began))" > "$OUT/$name.result"
}
PARTS=(changelog units lint sanity docs-html)
( part sanity tests/sanity.sh; part docs-html tests/docs-html.sh "$ROOT/.build/check-docsite" ) &
part changelog antsibull-changelog lint
part units python -m pytest -q -p no:cacheprovider tests/unit
part lint ansible-lint --profile production
wait

failed=()
for name in "${PARTS[@]}"; do
  read -r result took < "$OUT/$name.result" 2>/dev/null || { result=FAILED; took=0; }
  if [ "$result" != ok ]; then
    failed+=("$name")
    echo "=================== $name FAILED; its output:"
    tail -n 60 "$OUT/$name.log"
  fi
  printf '%-10s %-7s %4ss\n' "$name" "$result" "$took" >> "$OUT/summary"
done
echo "=================== make check: $((SECONDS - start))s wall"
cat "$OUT/summary"
[ ${#failed[@]} -eq 0 ] || { echo "FAILED: ${failed[*]}"; exit 1; }
