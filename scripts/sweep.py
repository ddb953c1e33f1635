#!/usr/bin/env python3
"""Tuning sweep: measures the same ccbench run under every combination of environment settings.

Usage: scripts/sweep.py --sweep-env NAME=v1,v2,... [--sweep-env ...] [--np N] [--repeat N]
                        [--ccbench PATH] [--out DIR] -- ccbench options

--repeat N (3) launches of each combination, each into OUT/<combo>/launch-K/, with the
combination's settings passed as `-x NAME=value`; the combinations alternate (every one once, then
every one again in the reverse order, ...), so that a machine getting busier or quieter over the
sweep weighs on all of them alike. A fresh launch per combination covers every kind of setting: those NCCL caches
once per process (most NCCL_PARAM values, NCCL_P2P_*, NCCL_SHM_DISABLE, NCCL_IB_*, NCCL_SOCKET_*,
NCCL_BUFFSIZE), our own CCBENCH_* knobs (read once at start) and the per-communicator ones
(NCCL_ALGO, NCCL_PROTO), which a fresh process reads for its fresh communicator too.
The value `default` leaves the variable unset; the baseline of each setting is `default` where
listed, else its first value.

Each setting is checked to have reached ccbench: run.json's context.environment must list it with
its value (and must not list a `default` one); NCCL_ALGO/NCCL_PROTO are also checked against the
`algorithm` column of nccl rows. A combination that fails the check keeps its rows, turned
`failed` with the reason. The rows of all launches are merged into OUT/results.csv with one column
per setting and a `launch` column; the best setting per size band and case goes to OUT/sweep.md
and stdout, judged by judge(): the median over the launches against the baseline's, and a gain
inside the spread (the launches' own scatter, or the rows' where larger) reported as none.

Environment: MPIRUN is the launcher, split into words [mpirun].
Exit: 2 on bad usage; 3 when a setting did not take effect; else the worst exit of the launches.
"""
import argparse
import csv
import itertools
import json
import math
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

from sizes import human_size

DEFAULT = "default"
# Launches of each setting: a median of 3 launches is robust to one disturbed launch, and their
# range measures how much a launch moves on this machine (judge()).
DEFAULT_REPEAT = 3
# Size bands of the summary, the one place they are defined: (name, lowest size, highest size + 1).
BANDS = [("latency", 0, 64 << 10), ("medium", 64 << 10, 16 << 20), ("bandwidth", 16 << 20, math.inf)]
# Columns that identify a case apart from its size (all present in results.csv schema 2).
CASE_COLUMNS = ["collective", "impl", "transport", "device", "dtype", "op", "in_place", "mode", "ranks", "group"]
# Settings whose effect also shows in the `algorithm` column of nccl rows (e.g. "Ring/Simple").
ALGORITHM_SETTINGS = ("NCCL_ALGO", "NCCL_PROTO")
EXIT_USAGE, EXIT_PRECONDITION = 2, 3
# The '#' line of the merged results.csv naming the setting columns (scripts/report.py reads it).
SETTINGS_LINE = "# sweep settings: "


def usage_error(msg):
    print(f"{os.path.basename(sys.argv[0])}: {msg}", file=sys.stderr)
    sys.exit(EXIT_USAGE)


def parse_settings(specs):
    """['NAME=v1,v2', ...] -> ordered list of (NAME, [values]); exits 2 on malformed input."""
    if not specs:
        usage_error("give at least one --sweep-env NAME=v1,v2,... (e.g. NCCL_PROTO=Simple,LL)")
    settings = []
    for spec in specs:
        if "=" not in spec:
            usage_error(f"--sweep-env '{spec}': expected NAME=v1,v2,... (no '=')")
        name, values = spec.split("=", 1)
        settings.append(check_setting(f"--sweep-env '{spec}'", name, values.split(","), settings))
    return settings


def check_setting(where, name, values, earlier):
    """(name, values) when they make a valid setting not among `earlier` ones; else exits 2."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        usage_error(f"{where}: '{name}' is not an environment variable name "
                    "(letters, digits, '_', not starting with a digit)")
    if not values or any(v == "" for v in values):
        usage_error(f"{where}: empty value list or empty value; give NAME=v1,v2,... (use '{DEFAULT}' for unset)")
    if len(set(values)) != len(values):
        usage_error(f"{where}: a value is listed twice")
    if any(name == n for n, _ in earlier):
        usage_error(f"{where}: '{name}' is given twice; list all its values once")
    return name, values


def baseline(values):
    return DEFAULT if DEFAULT in values else values[0]


def combo_dir(index, combo):
    label = "_".join(f"{n}={v}" for n, v in combo)
    return f"{index:02d}-" + re.sub(r"[^A-Za-z0-9._=-]", "_", label)


def launch(args, combo, out_dir, passthrough):
    env = dict(os.environ)
    cmd = shlex.split(os.environ.get("MPIRUN", "mpirun")) + ["--oversubscribe", "--bind-to", "none",
                                                             "-np", str(args.np)]
    for name, value in combo:
        if value == DEFAULT:
            env.pop(name, None)
        else:
            cmd += ["-x", f"{name}={value}"]
    cmd += [args.ccbench, "--out", out_dir, "--format", "csv,json"] + passthrough
    print("== " + " ".join(f"{n}={v}" for n, v in combo), file=sys.stderr, flush=True)
    rc = subprocess.call(cmd, env=env)
    print(f"== exit {rc}", file=sys.stderr, flush=True)
    return rc


def read_rows(path):
    """(comment lines, fieldnames, rows) of a ccbench results.csv."""
    with open(path, newline="", encoding="utf-8") as f:
        lines = f.readlines()
    comments = [l for l in lines if l.startswith("#")]
    reader = csv.DictReader(l for l in lines if not l.startswith("#"))
    return comments, reader.fieldnames, list(reader)


def effect_problems(combo, out_dir, rows):
    """Reasons why a setting of the combination did not take effect (empty when all did)."""
    try:
        with open(os.path.join(out_dir, "run.json"), encoding="utf-8") as f:
            environment = json.load(f)["context"]["environment"]
    except (OSError, KeyError, ValueError) as e:
        return [f"cannot read context.environment of {out_dir}/run.json: {e}"]
    problems = []
    for name, value in combo:
        seen = environment.get(name)
        if value == DEFAULT and seen is not None:
            problems.append(f"{name} should be unset but ccbench saw {name}={seen}")
        elif value != DEFAULT and seen != value:
            problems.append(f"{name}={value} did not reach ccbench (context.environment "
                            + (f"has {name}={seen}" if seen is not None else
                               f"does not list {name}: ccbench records NCCL_*, CCBENCH_*, UCX_*, "
                               "OMPI_MCA_*, CUDA_* variables; check the spelling") + ")")
        elif name in ALGORITHM_SETTINGS and value != DEFAULT:
            problems += algorithm_problems(name, value, rows)
    return problems


def algorithm_problems(name, value, rows):
    """NCCL_ALGO/NCCL_PROTO against what NCCL reported on nccl rows, e.g. "RING/LL 16ch" or
    "TREE/SIMPLE 2ch+RING/LL 2ch" (algorithm/protocol per call); nothing to check where no nccl row
    reports one, or for a value that is not one name (optionally ^-negated)."""
    shown = [r.get("algorithm", "") for r in rows if r["impl"].startswith("nccl") and r.get("algorithm")]
    if not shown or not re.fullmatch(r"\^?[A-Za-z0-9_]+", value):
        return []
    part = 0 if name == "NCCL_ALGO" else 1
    excluded, want = value.startswith("^"), value.lstrip("^").upper()

    def used(choice):  # the algorithm or protocol names of one row's calls
        return {c.split(" ")[0].split("/")[part].upper() for c in choice.split("+") if "/" in c}

    bad = [a for a in shown if (want in used(a)) == excluded or (not excluded and used(a) != {want})]
    if not bad:
        return []
    return [f"{name}={value} but NCCL reported algorithm '{bad[0]}' on {len(bad)} of {len(shown)} nccl rows"]


def alternating(items, repeat):
    """[(launch number from 1, item)]: every item once, then again in the reverse order, ..."""
    order = []
    for k in range(repeat):
        order += [(k + 1, x) for x in (items if k % 2 == 0 else items[::-1])]
    return order


def run_combinations(args, settings, passthrough):
    """Launches every combination args.repeat times, alternating; returns (worst exit,
    [(comments, fields, rows)] of the launches with results), each row with its `launch`."""
    names = [n for n, _ in settings]
    combos = [list(zip(names, values)) for values in itertools.product(*[v for _, v in settings])]
    worst, results = 0, []
    for launch_no, combo in alternating(list(enumerate(combos)), args.repeat):
        i, combo = combo
        name = os.path.join(combo_dir(i, combo), f"launch-{launch_no}")
        out_dir = os.path.join(args.out, name)
        rc = launch(args, combo, out_dir, passthrough)
        worst = max(worst, rc)
        path = os.path.join(out_dir, "results.csv")
        if not os.path.exists(path):
            print(f"sweep.py: FAILED {name}: no results ({path}), exit {rc}", file=sys.stderr)
            continue
        comments, fields, rows = read_rows(path)
        problems = effect_problems(combo, out_dir, rows)
        for p in problems:
            print(f"sweep.py: FAILED {name}: {p}", file=sys.stderr)
        if problems:
            worst = max(worst, EXIT_PRECONDITION)
            for r in rows:
                r["status"], r["reason"] = "failed", "sweep: " + "; ".join(problems)
        for r in rows:
            r.update(combo, launch=str(launch_no))
        results.append((comments, fields, rows))
    return worst, results


def write_merged(out, names, results, more=()):
    """Writes OUT/results.csv: the first run's '#' lines, the settings line, then every run's rows
    (each already carrying its `names` and `more` columns) under names + more + the first run's
    columns. `results` is [(comments, fields, rows)] as read_rows gives them. Shared with
    scripts/paths.sh."""
    comments, fields = results[0][0], results[0][1]
    rows = [r for res in results for r in res[2]]
    path = os.path.join(out, "results.csv")
    with open(path, "w", newline="", encoding="utf-8") as f:
        f.writelines(comments)
        f.write(SETTINGS_LINE + ",".join(names) + "\n")
        w = csv.DictWriter(f, fieldnames=list(names) + list(more) + list(fields), extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    return path, rows


def band_of(size):
    return next(name for name, lo, hi in BANDS if lo <= size < hi)


def launches_of(rows, names, key_of):
    """{key: {combo: {launch: {size: (median time, row spread)}}}} of the ok rows, `key_of(row,
    size)` giving each row's key (None: left out); a row without a `launch` column is launch 1."""
    table = {}
    for r in rows:
        if r["status"] != "ok" or not r.get("time_median[us]"):
            continue
        size = int(r["size[B]"])
        key = key_of(r, size)
        if key is None:
            continue
        combo = tuple(r[n] for n in names)
        by_launch = table.setdefault(key, {}).setdefault(combo, {})
        by_launch.setdefault(r.get("launch") or "1", {})[size] = (float(r["time_median[us]"]), row_spread(r))
    return table


def by_launch(rows):
    """{launch: {(case, size): (median time, row spread)}} of one setting's ok rows, every case and
    size one key: what judge() takes to judge a setting over a whole run."""
    out = {}
    for r in rows:
        if r["status"] == "ok" and r.get("time_median[us]"):
            key = tuple(r.get(c, "") for c in CASE_COLUMNS) + (int(r["size[B]"]),)
            out.setdefault(r.get("launch") or "1", {})[key] = (float(r["time_median[us]"]), row_spread(r))
    return out


def judge(ref, cand):
    """The one rule of the sweep table, tune's table and tune's environment file: (gain, spread,
    counted) of `cand` over the baseline `ref`, each {launch: {size: (time, row spread)}} (a size
    may be any key: by_launch() keys case and size). A launch's time is the geometric mean over the
    sizes both measured in every launch; gain = the
    baseline's median launch time / the candidate's - 1. spread = the larger of the launches'
    scatter (each side's slowest / fastest launch - 1, both sides added: how far one launch of a
    setting moves on this machine) and the rows' own (the median over the sizes of both rows'
    spreads added, each the median over its launches). The gain counts only beyond the spread:
    on this rule two settings that are the same show a gain beyond it in 0.7 % of lines at 3
    launches each (simulated: 3 against 3 draws of one log-normal distribution). None when they
    share no size."""
    sizes = set.intersection(*[set(by_size) for by_size in list(ref.values()) + list(cand.values())])
    if not sizes:
        return None

    def launch_times(side):
        return [math.exp(statistics.fmean(math.log(by_size[s][0]) for s in sizes)) for by_size in side.values()]

    def row_spreads(side, s):
        return statistics.median(by_size[s][1] for by_size in side.values())

    tr, tc = launch_times(ref), launch_times(cand)
    gain = statistics.median(tr) / statistics.median(tc) - 1
    launch_spread = max(tr) / min(tr) - 1 + max(tc) / min(tc) - 1
    rows = statistics.median(row_spreads(ref, s) + row_spreads(cand, s) for s in sizes)
    spread = max(launch_spread, rows)
    return gain, spread, gain > spread


def best_of(combos, base):
    """(best combination, its judge()) among `combos` against the baseline; the best by gain."""
    judged = {c: judge(combos[base], combos[c]) for c in combos if c != base}
    judged = {c: j for c, j in judged.items() if j is not None}
    if not judged:
        return base, None
    best = max(judged, key=lambda c: judged[c][0])
    return best, judged[best]


def summarize(settings, rows):
    """Markdown lines: per band and case, the best combination, its gain and the spread."""
    names = [n for n, _ in settings]
    base = tuple(baseline(v) for _, v in settings)
    table = launches_of(rows, names, lambda r, size: (band_of(size), tuple(r.get(c, "") for c in CASE_COLUMNS)))
    launches = max((len(by_launch) for combos in table.values() for by_launch in combos.values()), default=0)
    lines = ["# Sweep summary", "",
             "Settings: " + ", ".join(f"{n} = {','.join(v)} (baseline {baseline(v)})" for n, v in settings), "",
             "Bands: " + ", ".join(f"{n} {fmt_size(lo)}..{fmt_size(hi)}" for n, lo, hi in BANDS) + ".",
             f"Launches: up to {launches} of each setting, alternating. Gain = the baseline's median launch / the "
             "best setting's - 1, a launch's time the geometric mean of its median times over the band's sizes; "
             "spread = the larger of the launches' scatter (slowest / fastest launch - 1, both settings added) and "
             "the rows' own (the median over the band's sizes of both rows' max(time_cv, p95/median - 1) added); "
             "a gain inside the spread is reported as none.", "",
             "| band | case | best setting | gain | spread |", "|---|---|---|---|---|"]
    for (band, case), combos in sorted(table.items(), key=lambda kv: ([b for b, *_ in BANDS].index(kv[0][0]), kv[0][1])):
        lines.append(summary_line(band, case, combos, names, base))
    return lines


def row_spread(r):
    """A row's measured variation: max(time_cv, p95/median - 1)."""
    median, p95 = float(r["time_median[us]"]), float(r.get("time_p95[us]") or 0)
    return max(float(r["time_cv"] or 0), p95 / median - 1 if median > 0 else 0)


def gain_text(judged):
    """The gain column: the gain, or none where it is inside the spread."""
    gain, spread, counted = judged
    return f"{gain:+.1%}" if counted else "none (inside the noise)"


def summary_line(band, case, combos, names, base):
    case_text = case_label(dict(zip(CASE_COLUMNS, case)))
    if base not in combos:
        return f"| {band} | {case_text} | (baseline not measured) | - | - |"
    best, judged = best_of(combos, base)
    if judged is None:
        return f"| {band} | {case_text} | (no other setting measured the same sizes) | - | - |"
    setting = ", ".join(f"{n}={v}" for n, v in zip(names, best))
    return f"| {band} | {case_text} | {setting} | {gain_text(judged)} | {judged[1]:.1%} |"


def case_label(c):
    placement = "in-place" if c["in_place"] == "true" else "out-of-place"
    group = "" if c["group"] in ("", "world") else f" group {c['group']}"
    return (f"{c['collective']} {c['impl']}/{c['transport']} {c['device']} {c['dtype']} {c['op']} "
            f"{placement} {c['mode']} {c['ranks']} ranks{group}")


def fmt_size(n):
    """A band's bound: its size as ccbench spells it for people, or "inf" for the open end."""
    return "inf" if n == math.inf else human_size(n)


def resolve_paths(ccbench, out, kind):
    """The ccbench binary (checked) and the output folder (made) [the installation's bin/ccbench
    (share/ccbench/scripts -> bin), else build/ccbench beside scripts/, else ccbench on PATH;
    ccbench-results/KIND-TIME]."""
    here = os.path.dirname(os.path.abspath(__file__))
    if not ccbench:
        found = [c for c in (os.path.join(here, "..", "..", "..", "bin", "ccbench"),
                             os.path.join(here, "..", "build", "ccbench"), shutil.which("ccbench") or "")
                 if c and os.access(c, os.X_OK)]
        ccbench = found[0] if found else os.path.join(here, "..", "build", "ccbench")
    if not os.access(ccbench, os.X_OK):
        usage_error(f"no ccbench at '{ccbench}' (give --ccbench PATH)")
    out = out or os.path.join("ccbench-results", f"{kind}-" + time.strftime("%Y%m%d-%H%M%S", time.gmtime()))
    os.makedirs(out, exist_ok=True)
    return ccbench, out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sweep-env", action="append", default=[], metavar="NAME=v1,v2,...")
    p.add_argument("--np", type=int, default=2)
    p.add_argument("--repeat", type=int, default=DEFAULT_REPEAT, help="launches of each combination")
    p.add_argument("--ccbench", default="")
    p.add_argument("--out", default="")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args, passthrough = p.parse_args(argv[:split]), argv[split + 1:]
    settings = parse_settings(args.sweep_env)
    if args.np < 1:
        usage_error(f"--np {args.np}: give a positive number of ranks")
    if args.repeat < 1:
        usage_error(f"--repeat {args.repeat}: give a positive number of launches per combination "
                    f"({DEFAULT_REPEAT} by default: fewer cannot tell a gain from a launch's scatter)")
    for a in passthrough:
        if a.split("=")[0] in ("--out", "--format"):
            usage_error(f"give {a} to sweep.py, not after -- (sweep.py sets --out and --format per combination)")
    args.ccbench, args.out = resolve_paths(args.ccbench, args.out, "sweep")

    worst, results = run_combinations(args, settings, passthrough)
    if not results:
        print("sweep.py: no combination produced results", file=sys.stderr)
        return worst or EXIT_PRECONDITION
    path, rows = write_merged(args.out, [n for n, _ in settings], results, ["launch"])
    md = "\n".join(summarize(settings, rows)) + "\n"
    with open(os.path.join(args.out, "sweep.md"), "w", encoding="utf-8") as f:
        f.write(md)
    print(md, end="")
    print(f"merged: {path} ({len(rows)} rows of {len(results)} launches); summary: {args.out}/sweep.md")
    return worst


if __name__ == "__main__":
    sys.exit(main())
