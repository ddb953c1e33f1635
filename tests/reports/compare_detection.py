#!/usr/bin/env python3
"""Detection power of `ccbench compare` on real runs: slowdowns injected into a real pair of runs
are flagged, and the pair itself is not.

    compare_detection.py CCBENCH BEFORE.csv AFTER.csv WORK_DIR [--stable-medians]

BEFORE and AFTER are two runs of one command (tests/fixtures/cpu2core-20261130-np4-np8: 4 CPU
ranks of a loaded 2-core machine, 132 rows). Every check goes through the command line only (exit
code, and the per-row "failure" and "whole_run" of --format json), so it holds whatever noise
estimate compare uses. A row has *normal noise* when its spread (max(time_cv, time_p95 /
time_median - 1)) is at most NORMAL_SPREAD in both runs and the two runs agree on its median time
within RUN_TO_RUN; *low noise* with LOW_SPREAD instead. A case is (collective, impl, placement),
11 sizes. The guarantee checked (docs/guides/compare.md):
  - the pair as it is: exit 0, no row a failure;
  - every row 2x (1.5x) slower: exit 4, one failure, the whole run's, with its ratio (within
    RUN_TO_RUN), and no row blamed: the machine, not a row;
  - each case alone 2x slower (the rest of the run as it is): exit 4 with every failure in that
    case, and every row of it with normal noise a failure; 1.6x: every row with low noise (a
    row counts beyond 4 robust sigmas of the pair's scatter: 37-48 % on this pair, so 1.5x
    is at the edge of what it can tell);
  - one row alone 3x slower, its neighbours untouched: reported slower "at this size only" and not
    counted (exit 0); with --count-isolated a failure (exit 4).
--stable-medians asks more: each case alone 2x slower, every row whose two runs agree on the
median within RUN_TO_RUN, whatever its spread (a few slow iterations inflate time_cv and time_p95
but not the median), is flagged. A noise estimate from the spreads as they are misses rows whose
median is steady; a robust one does not.
Per-row detection is asserted under --count-isolated (a slowdown whose neighbours happen to be
too noisy to flag is otherwise shown but not counted); the exit code without it.
Exit status 0 when every check passes; each failure printed.
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import run  # noqa: E402
from testlib import Checks, ExitCode  # noqa: E402

NORMAL_SPREAD = 0.25  # the median row of these runs spreads ~24 % (compare's threshold there: 48 % for two rows)
LOW_SPREAD = 0.10
RUN_TO_RUN = 0.10
TIME_COLUMNS = ("time_avg[us]", "time_median[us]", "time_min[us]", "time_p95[us]", "time_max[us]")
BANDWIDTH_COLUMNS = ("algbw[GB/s]", "busbw[GB/s]", "busbw_median[GB/s]")


class Results:
    def __init__(self, path):
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.read().splitlines(keepends=True)
        self.preamble = [l for l in lines if l.startswith("#")]
        reader = csv.DictReader([l for l in lines if not l.startswith("#")], strict=True)
        self.columns, self.rows = reader.fieldnames, list(reader)

    def write(self, path, rows):
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write("".join(self.preamble))
            w = csv.DictWriter(f, fieldnames=self.columns, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)


def key(r):
    """A results.csv row's case and size, as compare matches them."""
    return (r["collective"], r["impl"], r["in_place"], r["size[B]"])


def json_key(r):
    """The same for a row as compare's --format json gives it."""
    return (r["collective"], r["impl"], "true" if r["in_place"] else "false", str(r["bytes"]))


def slower(r, k):
    out = dict(r)
    for c in TIME_COLUMNS:
        out[c] = f"{float(r[c]) * k:.6g}"
    for c in BANDWIDTH_COLUMNS:
        out[c] = f"{float(r[c]) / k:.6g}"
    return out


def spread(r):
    return max(float(r["time_cv"]), float(r["time_p95[us]"]) / float(r["time_median[us]"]) - 1)


def quiet(before, after, limit):
    """Rows (keys) whose spread is at most `limit` in both runs and whose runs agree."""
    return {key(b) for b, a in zip(before, after) if spread(b) <= limit and spread(a) <= limit
            and abs(float(a["time_median[us]"]) / float(b["time_median[us]"]) - 1) <= RUN_TO_RUN}


class Test:
    def __init__(self, ccbench, before, work):
        self.ccbench, self.before, self.work = ccbench, before, work
        self.check = Checks("compare detection")

    def compare(self, after_path, *extra):
        p = run([self.ccbench, "compare", self.before, after_path, "--format", "json", *extra])
        try:
            doc = json.loads(p.out)
        except json.JSONDecodeError:
            doc = {"rows": [], "verdict": p.out[-500:] + p.err[-500:]}
        failed = {json_key(r["before"]) for r in doc["rows"] if r["failure"] and r["before"]}
        shown = {json_key(r["before"]): r["verdict"] for r in doc["rows"] if r["before"]}
        self.whole_run = doc.get("whole_run", {})
        return p.rc, failed, shown, doc.get("verdict", "")


def cases_of(rows):
    """The cases of a run's rows, in file order."""
    return list(dict.fromkeys(key(r)[:3] for r in rows))


def each_case_slower(t, before, after, work, k, must_of, label):
    """Each case alone k x slower: its `must_of` rows flagged, nothing outside it, exit 4."""
    must_all, missed, elsewhere, exits = set(), [], [], []
    for case in cases_of(after.rows):
        path = os.path.join(work, f"{'-'.join(case)}-{k}x.csv")
        after.write(path, [slower(r, k) if key(r)[:3] == case else r for r in after.rows])
        must = {x for x in must_of(before.rows, after.rows) if x[:3] == case}
        rc, failed, _, _ = t.compare(path)
        elsewhere += sorted(x for x in failed if x[:3] != case)
        if must and rc != ExitCode.threshold:
            exits.append((case, rc))
        _, failed, _, _ = t.compare(path, "--count-isolated")
        missed += sorted(must - failed)
        must_all |= must
    t.check(must_all and not missed, f"each case alone {k}x slower: all {len(must_all)} rows {label} flagged",
            f"not flagged: {missed}")
    t.check(not exits and not elsewhere, f"each case alone {k}x slower: exit 4, every failure in that case",
            f"exit codes {exits}; flagged outside the case: {elsewhere}")


def whole_run_slower(t, after, work, k):
    """Every row k x slower: one failure, the run's, no row blamed."""
    path = os.path.join(work, f"all-{k}x.csv")
    after.write(path, [slower(r, k) for r in after.rows])
    rc, failed, _, verdict = t.compare(path)
    ratio = t.whole_run.get("ratio") or 0
    t.check(rc == ExitCode.threshold and t.whole_run.get("failure") is True and abs(ratio / k - 1) <= RUN_TO_RUN
            and not failed,
            f"every row {k}x slower: exit 4, the whole run {ratio:.2f}x a failure, no row blamed ({verdict})",
            f"exit {rc}; whole run {t.whole_run}; rows flagged {sorted(failed)}")


def main():
    ccbench, before_path, after_path, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    before, after = Results(before_path), Results(after_path)
    t = Test(ccbench, before_path, work)
    if sys.argv[5:] == ["--stable-medians"]:
        each_case_slower(t, before, after, work, 2.0, lambda b, a: quiet(b, a, float("inf")),
                         "whose runs agree on the median")
        return t.check.exit_code()

    rc, failed, _, verdict = t.compare(after_path)
    t.check(rc == ExitCode.ok and not failed, f"two runs of one command: exit 0, no row flagged ({verdict})",
            f"exit {rc}, flagged {sorted(failed)}")

    for k in (2.0, 1.5):
        whole_run_slower(t, after, work, k)
    each_case_slower(t, before, after, work, 2.0, lambda b, a: quiet(b, a, NORMAL_SPREAD), "with normal noise")
    each_case_slower(t, before, after, work, 1.6, lambda b, a: quiet(b, a, LOW_SPREAD), "with low noise")

    case = ("allreduce", "ring", "false")
    # One row alone: the quiet row of that case whose neighbours are quiet too, 3x slower.
    sizes = [key(r) for r in after.rows if key(r)[:3] == case]
    calm = quiet(before.rows, after.rows, NORMAL_SPREAD)
    candidates = [sizes[i] for i in range(1, len(sizes) - 1) if {sizes[i - 1], sizes[i], sizes[i + 1]} <= calm]
    if t.check(bool(candidates), "a quiet row with quiet neighbours exists for the isolated case"):
        one = candidates[0]
        path = os.path.join(work, "one-row-3x.csv")
        after.write(path, [slower(r, 3.0) if key(r) == one else r for r in after.rows])
        rc, failed, shown, verdict = t.compare(path)
        t.check(rc == ExitCode.ok and not failed and "at this size only" in shown.get(one, ""),
                f"{one} alone 3x slower: shown as slower at this size only, not counted (exit 0; {verdict})",
                f"exit {rc}; verdict of the row {shown.get(one)!r}; flagged {sorted(failed)}")
        rc, failed, _, verdict = t.compare(path, "--count-isolated")
        t.check(rc == ExitCode.threshold and one in failed,
                f"{one} alone 3x slower with --count-isolated: flagged, exit 4 ({verdict})",
                f"exit {rc}; flagged {sorted(failed)}")
    return t.check.exit_code()


if __name__ == "__main__":
    sys.exit(main())
