#!/usr/bin/env bash
# The collection's HTML docs: antsibull-docs lints the collection's docs and renders every module, plugin and role
# into DIR/rst, sphinx builds DIR/html from it (docsite/conf.py) with warnings as errors.
#   tests/docs-html.sh [DIR]     (default .build/docsite; make docs-html)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-$ROOT/.build/docsite}
start=$SECONDS
rm -rf "$DIR" && mkdir -p "$DIR/rst"
chmod og-w "$DIR/rst"    # antsibull-docs wants its output directory writable by itself only
cd "$ROOT"
# The collection as ansible-core finds it (.collections links the checkout).
antsibull-docs lint-collection-docs --plugin-docs --skip-rstcheck .collections/ansible_collections/dbfleet/innodb
echo "antsibull-docs lint-collection-docs: $((SECONDS - start))s"
antsibull-docs --config-file docsite/antsibull-docs.cfg collection --use-current --fail-on-error \
  --cleanup everything --dest-dir "$DIR/rst" dbfleet.innodb >/dev/null
cp docsite/index.rst "$DIR/rst/index.rst"
echo "antsibull-docs: $((SECONDS - start))s"
sphinx-build -q -W --keep-going -b html -c docsite "$DIR/rst" "$DIR/html"
pages=$(find "$DIR/html/collections/dbfleet/innodb" -name '*.html' | wc -l)
for page in index.html collections/dbfleet/innodb/index.html collections/dbfleet/innodb/verify_module.html \
            collections/dbfleet/innodb/adaptive_hash_role.html; do
  [ -s "$DIR/html/$page" ] || { echo "ERROR: the HTML docs lack $page" >&2; exit 1; }
done
echo "docs html: $pages pages of dbfleet.innodb in $DIR/html, no warning ($((SECONDS - start))s)"
