#!/usr/bin/env python3
"""Automatic tuner: successive halving over a space of environment settings.

Usage: scripts/tune.py --space FILE.yaml --budget MINUTES [--np N] [--repeat N] [--ccbench PATH]
                       [--out DIR] [--iters N] -- ccbench options (the sizes that matter; not -n,
                       --out, --format)

FILE.yaml maps each variable to its values, e.g. {NCCL_PROTO: [default, LL, Simple],
NCCL_MIN_NCHANNELS: [default, 8, 16]}; `default` leaves the variable unset and is the baseline
where listed, else the first value is. Every combination is a candidate.
Round 1 measures every candidate with --iters timed iterations [2], in --repeat launches [3]
alternating between the candidates (as scripts/sweep.py); each later round keeps the better half
(the largest gain over the baseline by sweep.judge(): medians over the launches) and doubles the
iterations, until one candidate is left. The baseline is measured in every round, so gains
compare like with like. A round that would not end within the budget (estimated from the
launches so far) is not started; round 1 stops launching when the budget is spent (its first
launch, the baseline, always runs).
Settings NCCL reads per communicator (NCCL_ALGO, NCCL_PROTO, and NCCL_MIN_CTAS, NCCL_MAX_CTAS,
NCCL_CGA_CLUSTER_SIZE, given as their ncclConfig_t fields) are measured in one launch, one NCCL
communicator per value (ccbench run --nccl-config), their rows told apart by the nccl_config
column; every other setting is read once per process, so each of its values is a fresh mpirun
(as scripts/sweep.py). Every launch is checked for its settings having arrived.
Outputs: OUT/round-R/<combo>/launch-K/ per launch; OUT/tune.md (rounds, the verdict over every
size and case of the last round, and the best setting per size band and case with gain and
spread, as sweep.md); OUT/tune.env, `export` (or `unset`) lines of the winner, or of the baseline
when the winner's gain is inside the spread. The table and the file follow one rule
(sweep.judge), and the table's first line is the file's verdict.
Exit: 2 bad usage; 3 when a setting did not take effect or nothing was measured; else the worst
launch exit.
"""
import argparse
import collections
import itertools
import math
import os
import statistics
import sys
import time

import toolenv

toolenv.require("yaml")
import yaml  # noqa: E402 (found by toolenv first)

import sweep  # noqa: E402


def read_space(path):
    """[(NAME, [values as text])] from the YAML space file; exits 2 naming file and line."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except OSError as e:
        sweep.usage_error(f"--space {path}: {e.strerror}")
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else path
        sweep.usage_error(f"--space {where}: not valid YAML ({getattr(e, 'problem', e)})")
    if not isinstance(doc, dict) or not doc:
        sweep.usage_error(f"--space {path}: expected a mapping NAME: [v1, v2, ...] with at least one name")
    settings = []
    for name, values in doc.items():
        if not isinstance(values, list) or any(isinstance(v, (dict, list)) or v is None for v in values):
            sweep.usage_error(f"--space {path}: '{name}' must map to a list of values, e.g. {name}: [default, 1, 2]")
        text = ["true" if v is True else "false" if v is False else str(v) for v in values]
        settings.append(sweep.check_setting(f"--space {path}", str(name), text, settings))
    return settings


# Settings NCCL reads per communicator, and the `ccbench run --nccl-config` key that sets each for
# one communicator (collectives/nccl/nccl_config.h cites NCCL's source). NCCL_MIN_CTAS,
# NCCL_MAX_CTAS and NCCL_CGA_CLUSTER_SIZE as variables are read once per process and override the
# communicator's fields, so tune.py never sets them: it gives their values as the fields.
PER_COMMUNICATOR = {"NCCL_ALGO": "NCCL_ALGO", "NCCL_PROTO": "NCCL_PROTO", "NCCL_MIN_CTAS": "minCTAs",
                    "NCCL_MAX_CTAS": "maxCTAs", "NCCL_CGA_CLUSTER_SIZE": "cgaClusterSize"}


# Communicators one ccbench launch builds at most (collectives/nccl/nccl_config.h kMaxNcclConfigs).
MAX_CONFIGS = 64


def _communicators(comm, members):
    """How many communicators --nccl-config builds for `members`: the product of each key's values."""
    return math.prod(len({c[i] for c in members}) for i in comm)


def launches(names, combos):
    """The launches that measure `combos`: [(per-process pairs, --nccl-config arguments, [combos])],
    one per distinct per-process part, in the order first seen (the baseline's first); a part whose
    --nccl-config would build more than MAX_CONFIGS communicators (every combination of the values
    seen) is split over several launches."""
    comm = [i for i, n in enumerate(names) if n in PER_COMMUNICATOR]
    proc = [i for i in range(len(names)) if i not in comm]
    groups = collections.OrderedDict()
    for c in combos:
        chunks = groups.setdefault(tuple(c[i] for i in proc), [[]])
        if _communicators(comm, chunks[-1] + [c]) > MAX_CONFIGS:
            chunks.append([])
        chunks[-1].append(c)
    out = []
    for values, chunks in groups.items():
        for members in chunks:
            config = []
            for i in comm:
                seen = list(dict.fromkeys(c[i] for c in members))
                config += ["--nccl-config", f"{PER_COMMUNICATOR[names[i]]}={','.join(seen)}"]
            out.append(([(names[i], v) for i, v in zip(proc, values)], config, members))
    return out


def combo_rows(names, combo, rows):
    """A combination's rows of a launch: NCCL rows of its communicator (nccl_config label), the others all."""
    comm = [(PER_COMMUNICATOR[n], v) for n, v in zip(names, combo) if n in PER_COMMUNICATOR]
    if not comm:
        return rows
    label = ";".join(f"{k}={v}" for k, v in comm)
    return [r for r in rows if not r["impl"].startswith("nccl") or r.get("nccl_config") == label]


def measure(args, settings, combos, iters, round_dir, deadline):
    """Launches each combination with `iters` iterations (those differing only in per-communicator
    settings together), args.repeat times alternating; returns (worst exit, {combo: rows}), each
    row with its `launch`."""
    names = [n for n, _ in settings]
    worst, measured, failed = 0, {}, set()
    plan = launches(names, combos)
    order = sweep.alternating(list(enumerate(plan)), args.repeat)
    for done, (launch_no, (i, (pairs, config, members))) in enumerate(order):
        if done > 0 and time.monotonic() > deadline:  # the first (the baseline's) always runs
            left = {c for _, (_, (_, _, m)) in order[done:] for c in m} - set(measured)
            print(f"tune.py: budget spent; {len(left)} candidate(s) of this round not measured, "
                  f"{len(order) - done} launch(es) left out", file=sys.stderr)
            break
        name = sweep.combo_dir(i, pairs + ([("comm", "swept")] if config else []))
        out_dir = os.path.join(round_dir, name, f"launch-{launch_no}")
        rc = sweep.launch(args, pairs, out_dir, args.passthrough + ["-n", str(iters)] + config)
        worst = max(worst, rc)
        path = os.path.join(out_dir, "results.csv")
        if not os.path.exists(path):
            print(f"tune.py: FAILED {out_dir}: no results, exit {rc}", file=sys.stderr)
            continue
        rows = sweep.read_rows(path)[2]
        bad = launch_problems(settings, out_dir, pairs, config, members, rows)
        worst = max(worst, sweep.EXIT_PRECONDITION if bad else 0)
        failed |= bad
        for combo in members:
            if combo not in failed:
                measured.setdefault(combo, []).extend(
                    dict(r, launch=str(launch_no), **dict(zip(names, combo))) for r in combo_rows(names, combo, rows)
                    if r["status"] == "ok" and r.get("time_median[us]"))
    return worst, {c: rows for c, rows in measured.items() if c not in failed}


def launch_problems(settings, out_dir, pairs, config, members, rows):
    """The combinations of a launch whose settings did not take effect there (each said)."""
    names = [n for n, _ in settings]
    common = sweep.effect_problems(pairs, out_dir, rows)
    bad = set()
    for combo in members:
        mine = combo_rows(names, combo, rows)
        problems = list(common)
        for name, value in zip(names, combo):
            if name in sweep.ALGORITHM_SETTINGS and value != sweep.DEFAULT:
                problems += sweep.algorithm_problems(name, value, mine)
        if config and not any(r["impl"].startswith("nccl") and r["status"] == "ok" for r in mine):
            why = next((r["reason"] for r in mine if r["impl"].startswith("nccl") and r["reason"]), "no row")
            problems.append(f"no measured nccl row with the nccl_config of {label(settings, combo)} ({why})")
        for p in problems:
            print(f"tune.py: FAILED {out_dir} ({label(settings, combo)}): {p}", file=sys.stderr)
        if problems:
            bad.add(combo)
    return bad


def judged(rows, base_rows):
    """sweep.judge() of a candidate's rows against the baseline's over every case and size they
    share, or None."""
    return sweep.judge(sweep.by_launch(base_rows), sweep.by_launch(rows))


def relative_time(rows, base_rows):
    """Median launch time relative to the baseline's (1 / (1 + gain)); inf where none is shared."""
    j = judged(rows, base_rows)
    return 1 / (1 + j[0]) if j else math.inf


def ctas_conflict(settings, combo):
    """Whether `combo` sets NCCL_MIN_CTAS above NCCL_MAX_CTAS (NCCL would change one of them)."""
    given = {n: v for (n, _), v in zip(settings, combo) if v != sweep.DEFAULT}
    try:
        return int(given["NCCL_MIN_CTAS"]) > int(given["NCCL_MAX_CTAS"])
    except (KeyError, ValueError):
        return False


def halve(args, settings, deadline):
    """Runs the rounds; returns (worst exit, [round lines], last round {combo: rows}, baseline)."""
    base = tuple(sweep.baseline(v) for _, v in settings)
    alive = [c for c in itertools.product(*[v for _, v in settings]) if c != base]
    iters, worst, lines, last, r = args.iters, 0, [], {}, 1
    conflicting = [c for c in alive if ctas_conflict(settings, c)]
    if conflicting:  # NCCL would change one of the two: the candidate is not what it says
        alive = [c for c in alive if c not in conflicting]
        lines.append(f"- {len(conflicting)} candidate(s) with NCCL_MIN_CTAS above NCCL_MAX_CTAS left out")
    per_launch = 0.0
    while True:
        batch = [base] + alive
        if r > 1 and time.monotonic() + 2 * per_launch * len(batch) > deadline:
            lines.append(f"- round {r} not started: {len(batch)} launches of ~{2 * per_launch:.0f} s would pass the budget")
            break
        began = time.monotonic()
        rc, measured = measure(args, settings, batch, iters, os.path.join(args.out, f"round-{r}"), deadline)
        per_launch = (time.monotonic() - began) / max(len(measured), 1)
        worst = max(worst, rc)
        if base not in measured:
            lines.append(f"- round {r}: the baseline was not measured; stopping")
            break
        last = measured
        scores = sorted((relative_time(measured[c], measured[base]), c) for c in alive if c in measured)
        lines.append(f"- round {r}: {len(batch)} candidates with -n {iters}, {args.repeat} launch(es) each; best "
                     "relative time "
                     + (f"{scores[0][0]:.3f} ({label(settings, scores[0][1])})" if scores else "-"))
        alive = [c for _, c in scores[:max(1, len(scores) // 2)]] if len(scores) > 1 else [c for _, c in scores]
        if len(scores) <= 1:
            break
        iters, r = iters * 2, r + 1
    return worst, lines, last, base


def label(settings, combo):
    return ", ".join(f"{n}={v}" for (n, _), v in zip(settings, combo))


def env_file(settings, combo, comment):
    lines = [f"# ccbench tune (scripts/tune.py): {comment}"]
    for (name, _), value in zip(settings, combo):
        lines.append(f"unset {name}" if value == sweep.DEFAULT else f"export {name}={value}")
    return "\n".join(lines) + "\n"


def verdict(settings, last, base):
    """(combo to write, comment, its table line) from the last round, by sweep.judge() over every
    case and size: the winner, or the baseline where the best gain is inside the spread."""
    others = [c for c in last if c != base and judged(last[c], last[base])]
    if not others:
        return base, "only the baseline was measured; these are the baseline settings", None
    best = max(others, key=lambda c: judged(last[c], last[base])[0])
    j = judged(last[best], last[base])
    gain, spread, counted = j
    line = f"| all | every case and size | {label(settings, best)} | {sweep.gain_text(j)} | {spread:.1%} |"
    if not counted:
        return base, (f"best candidate {label(settings, best)} gained {gain:+.1%}, inside the spread "
                      f"{spread:.1%}: none; these are the baseline settings"), line
    return best, f"winner {label(settings, best)}: {gain:+.1%} over the baseline (spread {spread:.1%})", line


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--space", required=True)
    p.add_argument("--budget", type=float, required=True, help="minutes")
    p.add_argument("--iters", type=int, default=2)
    p.add_argument("--np", type=int, default=2)
    p.add_argument("--repeat", type=int, default=sweep.DEFAULT_REPEAT, help="launches of each candidate per round")
    p.add_argument("--ccbench", default="")
    p.add_argument("--out", default="")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args, args.passthrough = p.parse_args(argv[:split]), argv[split + 1:]
    settings = read_space(args.space)
    if not args.budget > 0 or args.iters < 1 or args.np < 1 or args.repeat < 1:
        sweep.usage_error("--budget (minutes), --iters, --np and --repeat must be positive")
    for a in args.passthrough:
        if a.split("=")[0] in ("--out", "--format", "-n", "--iters"):
            sweep.usage_error(f"give {a} to tune.py, not after -- (tune.py sets it per round)")
    args.ccbench, args.out = sweep.resolve_paths(args.ccbench, args.out, "tune")
    deadline = time.monotonic() + args.budget * 60

    worst, lines, last, base = halve(args, settings, deadline)
    if not last:
        print("tune.py: nothing was measured", file=sys.stderr)
        return worst or sweep.EXIT_PRECONDITION
    combo, comment, line = verdict(settings, last, base)
    rows = [r for c in last for r in last[c]]
    table = sweep.summarize(settings, rows)[2:]
    if line:  # the environment file's verdict, by the table's own rule, first
        at = next(i for i, l in enumerate(table) if l.startswith("|---")) + 1
        table.insert(at, line)
    md = "\n".join(["# Tuning (successive halving)", ""] + lines + ["", f"Environment file: {comment}.", ""]
                    + table) + "\n"
    with open(os.path.join(args.out, "tune.md"), "w", encoding="utf-8") as f:
        f.write(md)
    with open(os.path.join(args.out, "tune.env"), "w", encoding="utf-8") as f:
        f.write(env_file(settings, combo, comment))
    print(md, end="")
    print(f"environment file: {args.out}/tune.env (source it); summary: {args.out}/tune.md")
    return worst


if __name__ == "__main__":
    sys.exit(main())
