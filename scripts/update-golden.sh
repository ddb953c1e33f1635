#!/usr/bin/env bash
# Regenerates the golden files in tests/golden/ from the writers' current output, after a
# deliberate change to the table, CSV, JSON, Markdown or comparison output. The unit tests never
# write tests/golden/ themselves: they leave their output in BUILD/tests/golden-actual/, and this
# script copies it over. Review the result with `git diff tests/golden` before committing it.
# Usage: scripts/update-golden.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
actual="$build/tests/golden-actual"
cmake --build "$build" --target ccbench_unit_tests
rm -rf "$actual"
# The tests that compare with a golden file; they fail here when the output changed, as expected.
"$build/tests/ccbench_unit_tests" --gtest_filter='*Golden*' >/dev/null || true
if ! compgen -G "$actual/*" >/dev/null; then
  echo "update-golden: no output in $actual: did the golden tests run?" >&2; exit 1
fi
cp "$actual"/* "$root/tests/golden/"
"$build/tests/ccbench_unit_tests" --gtest_filter='*Golden*' >/dev/null
echo "update-golden: tests/golden/ rewritten from $actual; the golden tests pass again. Review:"
git -C "$root" diff --stat -- tests/golden
