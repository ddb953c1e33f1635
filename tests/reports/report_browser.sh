#!/usr/bin/env bash
# scripts/report.py on real results (the 2 x H200 baseline with its acceptance verdicts, a CPU
# run with a wrong row, a link matrix), then report.html opened in headless Chromium: the page
# renders (title and sections in the DOM) and every <img> has loaded (complete, naturalWidth >
# 0), checked by a script added to a copy of the page. A screenshot is kept for people.
# Exit 77 (ctest: skipped) with the reason when chromium or matplotlib is missing.
# Usage: report_browser.sh CCBENCH SOURCE_DIR WORK_DIR
set -u
ccbench=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "SKIPPED: chromium is not installed (Debian package chromium)"; exit 77; }
/usr/bin/python3 -c "import matplotlib" 2>/dev/null || python3 -c "import matplotlib" 2>/dev/null ||
  { echo "SKIPPED: python3-matplotlib is not installed"; exit 77; }
# The report as docs/guides/reports.md says: the script itself, started by the python3 on PATH
# (which may lack matplotlib: scripts/toolenv.py then uses the project's .venv from setup.sh).

base="$src/tests/fixtures/h200x2-20261130-sweep-cc01c2c"
"$ccbench" accept --rules "$src/docs/examples/rules/h200x2.yaml" "$base" --junit "$work/accept.xml" >/dev/null
[ $? = 0 ] || fail "accept on the baseline"
# A CPU run with one row turned wrong: it must be marked.
mkdir -p "$work/cpu"
sed '0,/,ok,$/s//,wrong,first wrong element at 3/' "$src/tests/fixtures/cpu2core-20261130-np2/results.csv" \
  >"$work/cpu/results.csv"
# The links.json `ccbench links` wrote on 2 x H200 (evidence h200x2-20261130-r11).
cp "$src/tests/fixtures/h200x2-20261130-r11/links.json" "$work/links.json"
"$src/scripts/report.py" "$base" --verdicts "$work/accept.xml" --out "$work/gpu" || fail "report.py (GPU)"
"$src/scripts/report.py" "$work/cpu" --links "$work/links.json" --out "$work/cpu-report" || fail "report.py (CPU)"
grep -q "PASS (0 failed of" "$work/gpu/report.md" || fail "verdicts missing in report.md"
grep -q "Omitted: no link matrix given" "$work/gpu/report.md" || fail "absent link matrix not explained"
grep -q "1 row(s) wrong or failed" "$work/cpu-report/report.md" || fail "wrong row not listed"
grep -q "link bandwidth, ce, one way, 268435456 B" "$work/cpu-report/report.md" || fail "link heatmap missing"
grep -q '<img .*src="data:image/png;base64,' "$work/gpu/report.html" || fail "plots are not inline"
! grep -qE 'src="(http|file|[a-z-]+\.png)' "$work/gpu/report.html" || fail "report.html refers to outside files"

check_page() {  # REPORT_DIR EXPECTED_IMAGES
  local dir=$1 want=$2
  sed 's|</body>|<script>window.addEventListener("load", () => { const i = [...document.images]; document.body.setAttribute("data-images-ok", i.filter(x => x.complete \&\& x.naturalWidth > 0).length); document.body.setAttribute("data-images", i.length); });</script></body>|' \
    "$dir/report.html" >"$dir/check.html"
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --virtual-time-budget=10000 \
    --dump-dom "file://$dir/check.html" >"$dir/dom.html" 2>"$dir/browser.log" || { tail "$dir/browser.log"; fail "chromium"; }
  grep -q "<h2>Bus bandwidth against size</h2>" "$dir/dom.html" || fail "$dir: the page did not render"
  grep -q "data-images-ok=\"$want\" data-images=\"$want\"" "$dir/dom.html" ||
    fail "$dir: images loaded: $(grep -o 'data-images[^>]*' "$dir/dom.html" | head -1), expected $want"
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --window-size=1200,2400 \
    --screenshot="$dir/screenshot.png" "file://$dir/report.html" >/dev/null 2>&1
  echo "$dir: rendered, $want of $want images loaded"
}
check_page "$work/gpu" "$(grep -o '<img ' "$work/gpu/report.html" | wc -l)"
check_page "$work/cpu-report" "$(grep -o '<img ' "$work/cpu-report/report.html" | wc -l)"
[ "$(grep -o '<img ' "$work/gpu/report.html" | wc -l)" -ge 4 ] || fail "too few plots"
echo "report_browser: all checks passed"
