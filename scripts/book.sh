#!/usr/bin/env bash
# Builds the book (docs/, mdBook, into target/book) and fails when mdbook fails or prints any WARN or ERROR line.
# The book's other checks (links and anchors, code blocks, --help blocks, generated tables) are tests/book.rs:
# cargo test -q -p lpai-direct --test book source_
set -euo pipefail
cd "$(dirname "$0")/.."
command -v mdbook >/dev/null || { echo "book: mdbook is missing: run bash scripts/setup.sh" >&2; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! mdbook build docs >"$log" 2>&1; then
  cat "$log" >&2
  echo "book: mdbook build docs failed" >&2
  exit 1
fi
if grep -E '\b(WARN|ERROR)\b' "$log" >&2; then
  echo "book: mdbook warned (above): warnings are errors here" >&2
  exit 1
fi
