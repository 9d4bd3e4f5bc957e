#!/usr/bin/env bash
# Build the collection tarball and check what it holds; check that the release notes of galaxy.yml's version come
# out of the changelog fragments (antsibull-changelog release on a copy of the checkout: the repository's fragments
# stay). Installing the tarball as a user does, ansible-doc of every plugin and role and the playbooks by their
# FQCNs: tests/install-test.sh (tests/integration/test_install.py runs it, then site and verify against the lab).
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
# The HTML report's style and script are files beside its renderer (module_utils/report/html_page.py reads them).
for shipped in plugins/modules/ roles/ playbooks/ meta/runtime.yml docs/ tests/unit/ \
    plugins/module_utils/report/assets/report.css plugins/module_utils/report/assets/report.js; do
  grep -q "^$shipped" "$WORK/contents" \
    || { echo "ERROR: the tarball lacks $shipped" >&2; exit 1; }
done
# The check Galaxy and Automation Hub run on every upload (galaxy-importer, offline here: ansible-doc of every plugin
# and role, the role READMEs, ansible-lint of the content): a refused import fails the build test; its warnings
# (ansible-lint's, as the importer runs it) are printed.
if ! (cd "$WORK" && python -m galaxy_importer.main "$TARBALL" > "$WORK/import.log" 2>&1); then
  grep -v '^Loading ' "$WORK/import.log" >&2
  echo "ERROR: galaxy-importer refuses $(basename "$TARBALL")" >&2; exit 1
fi
grep -E '^(WARNING|ERROR)' "$WORK/import.log" || true
grep -q '^Importer processing completed successfully' "$WORK/import.log" \
  || { echo "ERROR: galaxy-importer did not complete" >&2; exit 1; }
echo "galaxy-importer: $(tail -n 1 "$WORK/import.log")"
# The release notes: `antsibull-changelog release` (what `make release-notes` runs) on a copy of the checkout
# makes CHANGELOG.rst with galaxy.yml's version, its summary and the sections its fragments fill.
VERSION=$(sed -n 's/^version: *//p' galaxy.yml)
COPY="$WORK/copy/ansible_collections/dbfleet/innodb"
mkdir -p "$COPY"
git ls-files -co --exclude-standard -z | tar -cf - --null -T - | tar -xf - -C "$COPY"
(cd "$COPY" && antsibull-changelog lint && antsibull-changelog release --version "$VERSION" >/dev/null)
python3 "$ROOT/tests/release_notes.py" "$COPY" "$VERSION"
echo "build test: ok"
