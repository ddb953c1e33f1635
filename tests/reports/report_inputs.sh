#!/usr/bin/env bash
# scripts/report.py and scripts/plot.py run as the docs say (the script itself, so the python3
# on PATH starts them): damaged or foreign input ends with exit 2 and a message naming the file
# (and line), never a traceback, before anything needs matplotlib: random bytes, a file of text
# that is not UTF-8, an empty file, a header without rows, rows whose times and bandwidths are
# all nan. Then, where some interpreter has matplotlib: a `reason` holding HTML and Markdown
# comes out escaped in report.md and report.html.
# Usage: report_inputs.sh SOURCE_DIR WORK_DIR
set -u
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
csv="$src/tests/fixtures/cpu2core-20261130-np2/results.csv"

head -c 4096 /dev/urandom >"$work/random.csv"
printf '\xa2\xf0\x80 not utf-8 at all\n' >"$work/latin.csv"
: >"$work/empty.csv"
sed -n '/^#/p; /^[^#]/{p;q}' "$csv" >"$work/header-only.csv"
python3 - "$csv" "$work/nan.csv" <<'PY'
import csv, sys
lines = open(sys.argv[1]).read().splitlines(True)
first = next(i for i, l in enumerate(lines) if not l.startswith("#"))
header = next(csv.reader([lines[first]]))
out = lines[:first + 1]
for line in lines[first + 1:]:
    r = next(csv.reader([line]))
    for i, h in enumerate(header):
        if h.startswith("time_") or "bw[" in h:
            r[i] = "nan"
    out.append(",".join(r) + "\n")
open(sys.argv[2], "w").writelines(out)
PY
declare -A expect=(
  [random]="not a ccbench results.csv: (a binary file|not UTF-8 text)"
  [latin]="not a ccbench results.csv: not UTF-8 text \(byte 0 is 0xa2\)"
  [empty]="not a ccbench results.csv: no header and no rows"
  [header-only]="a results.csv without rows"
  [nan]="204 of 204 rows have impossible values; nothing drawn:"
)
for name in random latin empty header-only nan; do
  for tool in report.py plot.py; do
    args=("$work/$name.csv")
    [ $tool = report.py ] && args+=(--out "$work/out-$name")
    "$src/scripts/$tool" "${args[@]}" >"$work/$tool-$name.txt" 2>&1
    rc=$?
    [ $rc = 2 ] || { cat "$work/$tool-$name.txt"; fail "$tool on $name: exit $rc, expected 2"; }
    grep -q "Traceback" "$work/$tool-$name.txt" && { cat "$work/$tool-$name.txt"; fail "$tool on $name: a traceback"; }
    grep -qE "^$tool: error: $work/$name.csv:? ?${expect[$name]}" "$work/$tool-$name.txt" ||
      { cat "$work/$tool-$name.txt"; fail "$tool on $name: message"; }
  done
done
grep -q "$work/nan.csv:4: time_avg\[us\] is nan; " "$work/report.py-nan.txt" || fail "the nan rows are not named by line"
[ ! -e "$work/out-nan" ] || fail "report.py made its folder for input it refused"

# A python3 without the tools' packages (a bare venv): without the project's venv and without a
# system python3 that has them (CCBENCH_SYSTEM_PYTHON empty) the tool ends with exit 3 naming
# that interpreter and the set-up step; with the project's venv (CCBENCH_VENV, as setup.sh makes
# it over the system's python3), or with none but a system python3 that has them, it re-runs
# itself there and writes the report.
/usr/bin/python3 -m venv --without-pip "$work/bare" || fail "cannot make a bare venv"
bare="$work/bare/bin/python3"
if ! "$bare" -c "import matplotlib" 2>/dev/null; then
  CCBENCH_SYSTEM_PYTHON= CCBENCH_VENV="$work/no-venv" "$bare" "$src/scripts/report.py" "$csv" --out "$work/bare-out" \
    >"$work/bare.txt" 2>&1
  rc=$?
  [ $rc = 3 ] || { cat "$work/bare.txt"; fail "report.py without matplotlib: exit $rc, expected 3"; }
  grep -qF "report.py: error: $bare (Python " "$work/bare.txt" || { cat "$work/bare.txt"; fail "the interpreter not named"; }
  grep -qF "cannot import matplotlib (scripts/requirements.txt). Run $src/scripts/setup.sh" "$work/bare.txt" ||
    { cat "$work/bare.txt"; fail "what to do not said"; }
  ! grep -q Traceback "$work/bare.txt" || fail "a traceback without matplotlib"
  if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
    /usr/bin/python3 -m venv --without-pip --system-site-packages "$work/venv" || fail "cannot make a venv"
    CCBENCH_VENV="$work/venv" "$bare" "$src/scripts/report.py" "$csv" --out "$work/venv-out" >"$work/venv.txt" 2>&1 ||
      { cat "$work/venv.txt"; fail "report.py started by a python3 without matplotlib did not use the venv"; }
    [ -s "$work/venv-out/report.html" ] || fail "no report from the venv"
    CCBENCH_VENV="$work/no-venv" "$bare" "$src/scripts/report.py" "$csv" --out "$work/sys-out" >"$work/sys.txt" 2>&1 ||
      { cat "$work/sys.txt"; fail "report.py without a venv did not use the system python3 that has matplotlib"; }
    [ -s "$work/sys-out/report.html" ] || fail "no report from the system python3"
  fi
  # The set-up under a python3 without the packages, the system's having them: the environment is
  # made over the system's at once, pip never tried (an offline cluster would wait for it).
  if /usr/bin/python3 "$src/scripts/toolenv.py" --check >/dev/null 2>&1; then
    start=$(date +%s)
    CCBENCH_VENV="$work/setup-venv" "$bare" "$src/scripts/toolenv.py" --setup >"$work/setup.txt" 2>&1 ||
      { cat "$work/setup.txt"; fail "toolenv.py --setup under a python3 without the packages"; }
    [ ! -e "$work/setup-venv/pip.log" ] || { cat "$work/setup-venv/pip.log"; fail "--setup tried pip"; }
    [ $(( $(date +%s) - start )) -le 10 ] || fail "--setup took more than 10 s"
    "$work/setup-venv/bin/python3" "$src/scripts/toolenv.py" --check || fail "the environment --setup made lacks the packages"
  fi
fi

# Escaping needs a report, so matplotlib: skipped where no interpreter (the venv included) has it.
if ! "$src/scripts/toolenv.py" --check >/dev/null 2>&1 && ! "$src/.venv/bin/python3" -c "import matplotlib" 2>/dev/null &&
   ! /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  echo "SKIPPED: no python3 here has matplotlib (Debian: python3-matplotlib; scripts/setup.sh)"
  exit 77
fi
mkdir -p "$work/xss"
sed '0,/,ok,$/s//,wrong,<script>alert(1)<\/script> [click](javascript:alert(2)) | a cell/' "$csv" >"$work/xss/results.csv"
"$src/scripts/report.py" "$work/xss" --out "$work/xss-out" >"$work/xss.txt" 2>&1 || { cat "$work/xss.txt"; fail "report.py"; }
for f in report.md report.html; do
  ! grep -q "<script>" "$work/xss-out/$f" || fail "$f keeps a raw <script> from a reason"
  grep -q "&lt;script&gt;alert" "$work/xss-out/$f" || fail "$f lost the reason"
done
! grep -qE '[^\\]\]\(javascript:' "$work/xss-out/report.md" || fail "report.md makes a link of a reason"
grep -qF '\[click\](javascript:alert(2)) \| a cell |' "$work/xss-out/report.md" || fail "report.md escapes"
# A reason over two lines (a quoted CSV field holding a line break) stays one table row: <br>.
python3 - "$csv" "$work/multi/results.csv" <<'PY'
import csv, io, os, sys
lines = open(sys.argv[1]).read().splitlines(True)
first = next(i for i, l in enumerate(lines) if not l.startswith("#"))
header = next(csv.reader([lines[first]]))
rows = [next(csv.reader([l])) for l in lines[first + 1:]]
rows[0][header.index("status")] = "failed"
rows[0][header.index("reason")] = "first line\nsecond line"
out = io.StringIO()
csv.writer(out, lineterminator="\n").writerows(rows)
os.makedirs(os.path.dirname(sys.argv[2]), exist_ok=True)
open(sys.argv[2], "w").write("".join(lines[:first + 1]) + out.getvalue())
PY
"$src/scripts/report.py" "$work/multi" --out "$work/multi-out" >"$work/multi.txt" 2>&1 || { cat "$work/multi.txt"; fail "report.py (multi-line)"; }
grep -q "| first line<br>second line |" "$work/multi-out/report.md" || fail "report.md: a two-line reason breaks its table row"
grep -q "<td>first line<br>second line</td>" "$work/multi-out/report.html" || fail "report.html: a two-line reason"
echo "report_inputs: all checks passed"
