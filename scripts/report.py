#!/usr/bin/env python3
"""Writes a report of ccbench results: report.md (with PNG plots beside it) and one
self-contained report.html (the same plots inline as base64 PNG).

Usage: scripts/report.py RESULTS... --out DIR [--verdicts accept.xml] [--links links.json]

RESULTS are results.csv files or results folders (run.json beside results.csv gives the
environment). The report holds: the environment of each run; bus bandwidth against size (log
x) per collective, placement and mode, a line per implementation/transport with its min-p95
band (from the fastest and the 95th-percentile iteration), wrong/failed rows marked; latency
against size up to 64 KiB (a series per group of a --groups run, per cycle of a -N run and per
launch of a sweep, so that no line joins two groups' rows); for a merged sweep (scripts/sweep.py), a line per setting and its
sweep.md summary (best setting per size band); the acceptance verdicts of `ccbench accept --junit` (a results
folder's accept.xml is found by itself); the link matrices as heatmaps from the links.json of `ccbench links`
(--links, or one in a results folder; else the section says why it is absent).
Values are checked before they are drawn (scripts/results_csv.py): a file that is not a ccbench
results.csv (binary, empty, no rows) or holds rows with impossible values (nan, inf, negative
times, busbw above what size and time allow) is refused with its lines named. Text from the
results (reasons, hosts, verdicts) is escaped in both outputs: it cannot add HTML or Markdown.
Needs matplotlib (scripts/requirements.txt; scripts/toolenv.py finds it for whichever python3
runs this). Exit codes: 0 written, 2 bad input, 3 no matplotlib.
"""
import argparse
import base64
import collections
import csv
import html
import json
import os
import sys
import xml.etree.ElementTree as ET

import results_csv
from sizes import human_size
import toolenv

SMALL_BYTES = 64 * 1024  # latency plot: sizes up to here are latency-bound on every device we measured


def die(code, msg):
    print(f"report.py: error: {msg}", file=sys.stderr)
    sys.exit(code)


# The Markdown punctuation that makes links and images ([ ]), emphasis (* _ ~), code (`) and
# table cells (|): escaped with a backslash, so that text from the results (a reason, a host, a
# verdict) cannot make any of its own. Raw HTML is escaped before (html.escape).
MD_SPECIAL = set("\\`*_[]|~")


def md_text(text):
    """Text for report.md: HTML escaped (raw HTML passes through Markdown), Markdown punctuation
    escaped, line breaks as <br> (a table cell holds one line)."""
    out = "".join("\\" + c if c in MD_SPECIAL else c for c in html.escape(text, quote=False))
    return "<br>".join(out.splitlines()) if "\n" in out or "\r" in out else out


def html_text(text):
    """Text for report.html: escaped, line breaks kept as <br>."""
    return "<br>".join(html.escape(line) for line in text.splitlines()) if text else ""


class Run:
    """One results.csv, its values checked, with its context (run.json's, when present)."""

    def __init__(self, path):
        csv_path = os.path.join(path, "results.csv") if os.path.isdir(path) else path
        if not os.path.isfile(csv_path):
            die(2, f"{path}: neither a results.csv nor a results folder holding one")
        self.csv_path = csv_path
        self.folder = os.path.dirname(os.path.abspath(csv_path))
        try:
            self.rows, comments = results_csv.read(csv_path)
        except results_csv.BadInput as e:
            die(2, str(e))
        # A merged sweep (scripts/sweep.py) names its setting columns in a '#' line.
        self.settings = next((l[len(SWEEP_SETTINGS_LINE):].strip().split(",") for l in comments
                              if l.startswith(SWEEP_SETTINGS_LINE)), [])
        self.context = {}
        self.verdict = None
        run_json = os.path.join(self.folder, "run.json")
        if os.path.isfile(run_json):
            try:
                with open(run_json, encoding="utf-8") as f:
                    doc = json.load(f)
            except (ValueError, OSError) as e:
                die(2, f"{run_json}: not valid JSON ({e})")
            if not isinstance(doc, dict) or not isinstance(doc.get("context", {}), dict):
                die(2, f"{run_json}: not a ccbench run.json (expected an object with a 'context' object)")
            self.context = doc.get("context", {})
            self.verdict = doc.get("verdict")
        self.name = os.path.basename(self.folder) if os.path.isdir(path) else os.path.basename(csv_path)


SWEEP_SETTINGS_LINE = "# sweep settings: "  # as scripts/sweep.py writes it


def num(row, key):
    try:
        return float(row.get(key) or 0)
    except ValueError:
        return 0.0


def environment(run):
    c = run.context
    if not c:
        return [("results", run.csv_path), ("context", "no run.json beside the CSV")]
    hosts = sorted({d.get("host", "?") for d in c.get("ranks_detail", [])})
    items = [("results", run.csv_path), ("verdict", run.verdict or "-"),
             ("command", c.get("command_line", "-")), ("started (UTC)", c.get("started_utc", "-")),
             ("ccbench", f"{c.get('ccbench_version', '-')} (git {c.get('git_hash', '-')})"),
             ("ranks / nodes", f"{c.get('ranks', '-')} / {c.get('nodes', '-')} ({', '.join(hosts)})"),
             ("device", c.get("device", "-"))]
    items += [(f"version: {k}", str(v)) for k, v in sorted(c.get("versions", {}).items())]
    items += [(f"env: {k}", str(v)) for k, v in sorted(c.get("environment", {}).items())]
    return items


def series_of(runs):
    """(collective, placement, mode) -> label -> [rows], labels being impl/transport, and what else
    tells rows of one size apart so that each series holds one row per size: the sweep's settings
    and launch, the group of a --groups run, the cycle of a repeated run (-N), the run's name when
    several runs are given."""
    out = collections.OrderedDict()
    for run in runs:
        cycles = len({r.get("cycle") or "1" for r in run.rows}) > 1
        for r in run.rows:
            placement = "in-place" if r.get("in_place") == "true" else "out-of-place"
            key = (r["collective"], placement, r.get("mode", "eager"))
            label = (f"{r['impl']}/{r['transport']}" + "".join(f" {n}={r.get(n, '')}" for n in run.settings)
                     + (f" [{r['nccl_config']}]" if r.get("nccl_config") else "")
                     + (f" {r['group']}" if r.get("group", "world") not in ("", "world") else "")
                     + (f" cycle {r.get('cycle') or '1'}" if cycles else "")
                     + (f" launch {r['launch']}" if r.get("launch") else "")
                     + (f" ({run.name})" if len(runs) > 1 else ""))
            out.setdefault(key, collections.OrderedDict()).setdefault(label, []).append(r)
    return out


def plot_lines(plt, title, ylabel, series, value, band, max_bytes=None, log_y=False):
    """One figure: a line per label, its band shaded, wrong/failed rows marked. Returns the figure
    or None when nothing is left to draw."""
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    drawn = marked = 0
    for label, rows in series.items():
        rows = sorted(rows, key=lambda r: int(r["size[B]"]))
        if max_bytes is not None:
            rows = [r for r in rows if int(r["size[B]"]) <= max_bytes]
        ok = [r for r in rows if r["status"] == "ok"]
        bad = [r for r in rows if r["status"] in ("wrong", "failed")]
        if ok:
            xs = [int(r["size[B]"]) for r in ok]
            line, = ax.plot(xs, [value(r) for r in ok], marker=".", label=label)
            lo_hi = [band(r) for r in ok]
            ax.fill_between(xs, [b[0] for b in lo_hi], [b[1] for b in lo_hi], alpha=0.2, color=line.get_color())
            drawn += 1
        if bad:
            ax.scatter([int(r["size[B]"]) for r in bad], [max(value(r), 1e-9) for r in bad], marker="x", s=80,
                       color="red", zorder=5, label=f"{label}: wrong/failed" if not marked else None)
            marked += 1
    if not drawn and not marked:
        plt.close(fig)
        return None
    ax.set_xscale("log", base=2)
    from matplotlib.ticker import FuncFormatter
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: human_size(int(x)) if x >= 1 else ""))
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel("size (bytes)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def busbw_band(r):
    # busbw scales with 1/time: the p95 iteration gives the low end, the fastest the high end.
    med, bw = num(r, "time_median[us]"), num(r, "busbw_median[GB/s]")
    lo = bw * med / num(r, "time_p95[us]") if num(r, "time_p95[us]") > 0 else bw
    hi = bw * med / num(r, "time_min[us]") if num(r, "time_min[us]") > 0 else bw
    return lo, hi


def read_verdicts(path):
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError, UnicodeDecodeError) as e:
        die(2, f"{path}: cannot read the JUnit verdicts ({e})")
    out = []
    for suite in root.iter("testsuite"):
        for case in suite.iter("testcase"):
            failure, skipped = case.find("failure"), case.find("skipped")
            state = "FAIL" if failure is not None else "N/A" if skipped is not None else "PASS"
            detail = (failure.text or failure.get("message", "")) if failure is not None else \
                (skipped.get("message", "") if skipped is not None else "")
            out.append((suite.get("name"), case.get("name"), state, detail.strip()))
    return out


def link_matrices(path):
    """The one-way matrices of a `ccbench links` links.json (schema ccbench-links/1): per transport,
    the pairs measured one at a time at the largest size, as (title, labels, gbps rows)."""
    try:
        doc = json.load(open(path))
        if doc.get("schema") != "ccbench-links/1":
            raise ValueError(f"schema {doc.get('schema')!r}")
        cells = [r for r in doc["results"] if r["mode"] == "pair" and r["dst"] >= 0]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        die(2, f"{path}: not a links.json of `ccbench links` (schema ccbench-links/1): {e!r}")
    out = []
    for transport in sorted({c["transport"] for c in cells}):
        mine = [c for c in cells if c["transport"] == transport]
        size = max(c["bytes"] for c in mine)
        hosts = {}
        for c in mine:
            hosts[c["src"]], hosts[c["dst"]] = c["src_host"], c["dst_host"]
        ranks = sorted(hosts)
        gbps = [[None] * len(ranks) for _ in ranks]
        for c in mine:
            if c["bytes"] == size and c.get("oneway_GBps") is not None:
                gbps[ranks.index(c["src"])][ranks.index(c["dst"])] = c["oneway_GBps"]
        labels = [f"{hosts[r]}:{r}" for r in ranks]
        out.append((f"{transport}, one way, {size} B", labels, gbps))
    if not out:
        die(2, f"{path}: no pair measured one at a time between two ranks: nothing to draw")
    return out


def link_heatmap(plt, title, labels, gbps):
    fig, ax = plt.subplots(figsize=(1.2 * len(labels) + 3, 1.0 * len(labels) + 2), dpi=100)
    im = ax.imshow([[v if v is not None else float("nan") for v in r] for r in gbps], cmap="viridis")
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    ax.set_yticks(range(len(labels)), labels)
    for i, r in enumerate(gbps):
        for j, v in enumerate(r):
            if v is not None:
                ax.text(j, i, f"{v:.3g}", ha="center", va="center", color="w")
    fig.colorbar(im, ax=ax, label="GB/s")
    ax.set_title(f"link bandwidth from (row) to (column): {title}")
    fig.tight_layout()
    return fig


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+")
    ap.add_argument("--out", required=True, help="folder for report.md, report.html and the PNG files")
    ap.add_argument("--verdicts", help="JUnit XML of `ccbench accept --junit` [accept.xml of a results folder]")
    ap.add_argument("--links", help="links.json of `ccbench links` [links.json of a results folder]")
    args = ap.parse_args()
    runs = [Run(p) for p in args.results]  # bad input is said before anything else is needed
    toolenv.require("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(args.out, exist_ok=True)

    md, body, n_fig = [], [], 0

    def section(title):
        md.append(f"\n## {md_text(title)}\n")
        body.append(f"<h2>{html.escape(title)}</h2>")

    def para(text):
        md.append(md_text(text) + "\n")
        body.append(f"<p>{html_text(text)}</p>")

    def figure(fig, caption):
        nonlocal n_fig
        n_fig += 1
        name = f"figure-{n_fig}.png"
        fig.savefig(os.path.join(args.out, name))
        plt.close(fig)
        data = base64.b64encode(open(os.path.join(args.out, name), "rb").read()).decode()
        md.append(f"![{md_text(caption)}]({name})\n")
        body.append(f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
                    f"<figcaption>{html.escape(caption)}</figcaption></figure>")

    def table(header, rows):
        md.append("| " + " | ".join(md_text(h) for h in header) + " |\n|" + "---|" * len(header))
        md.extend("| " + " | ".join(md_text(str(c)) for c in r) + " |" for r in rows)
        md.append("")
        cells = "".join(f"<th>{html.escape(h)}</th>" for h in header)
        trs = "".join("<tr>" + "".join(f"<td>{html_text(str(c))}</td>" for c in r) + "</tr>" for r in rows)
        body.append(f"<table><tr>{cells}</tr>{trs}</table>")

    section("Environment")
    for run in runs:
        table(["", run.name], environment(run))
    bad = [(run.name, r) for run in runs for r in run.rows if r["status"] in ("wrong", "failed")]
    if bad:
        para(f"{len(bad)} row(s) wrong or failed (red crosses in the plots):")
        table(["run", "case", "size", "status", "reason"],
              [(n, f"{r['collective']} {r['impl']}/{r['transport']} {r['dtype']} {r['op']}", human_size(int(r["size[B]"])),
                r["status"], r["reason"]) for n, r in bad])

    series = series_of(runs)
    section("Bus bandwidth against size")
    para("Median iteration; the band spans the fastest to the 95th-percentile iteration.")
    for (coll, placement, mode), s in series.items():
        fig = plot_lines(plt, f"{coll}, {placement}, {mode}: busbw", "busbw (GB/s)", s,
                         lambda r: num(r, "busbw_median[GB/s]"), busbw_band)
        if fig:
            figure(fig, f"{coll} busbw, {placement}, {mode}")
    section(f"Latency up to {human_size(SMALL_BYTES)}")
    para("Median iteration time; the band spans the fastest to the 95th-percentile iteration.")
    for (coll, placement, mode), s in series.items():
        fig = plot_lines(plt, f"{coll}, {placement}, {mode}: time", "time (us)", s,
                         lambda r: num(r, "time_median[us]"),
                         lambda r: (num(r, "time_min[us]"), num(r, "time_p95[us]")), SMALL_BYTES, log_y=True)
        if fig:
            figure(fig, f"{coll} latency, {placement}, {mode}")

    section("Tuning sweeps")
    sweeps = [(run, os.path.join(run.folder, "sweep.md")) for run in runs if run.settings]
    for run, path in sweeps:
        rows = [l.strip().strip("|").strip().split(" | ") for l in open(path) if l.startswith("| ")] if os.path.isfile(path) else []
        if rows:
            para(f"{run.name}: best setting per size band and case (from {path}; a line per setting in the plots).")
            table(rows[0], rows[1:])
        else:
            para(f"{run.name}: a line per {', '.join(run.settings)} value in the plots (no sweep.md beside the results).")
    if not sweeps:
        para("No sweeps among the results (scripts/sweep.py writes them).")

    section("Training conditions")
    trained = [(run.name, r) for run in runs for r in run.rows if r["status"] == "ok" and any(
        r.get(c) for c in ("nccl_config", "load", "energy[J/coll]"))]
    if trained:
        para("Rows measured with --nccl-config, --overlap or --energy: the load's throughput per GPU alone before "
             "the rows, during the timed batch and alone after the rows (its unit), energy per collective and the "
             "data one joule moved (all GPUs of the job).")
        table(["run", "case", "size", "nccl_config", "busbw GB/s", "load", "alone", "during", "alone after", "J/coll",
               "GB/J"],
              [(n, f"{r['collective']} {r['impl']} {r['dtype']}", human_size(int(r["size[B]"])), r.get("nccl_config", ""),
                r["busbw[GB/s]"], f"{r.get('load', '')} {r.get('load_unit', '')}".strip(), r.get("load_alone", ""),
                r.get("load_during", ""), r.get("load_alone_end", ""), r.get("energy[J/coll]", ""),
                r.get("energy_efficiency[GB/J]", ""))
               for n, r in trained])
    else:
        para("No rows with --nccl-config, --overlap or --energy.")

    section("Acceptance verdicts")
    verdicts = args.verdicts or next((os.path.join(r.folder, "accept.xml") for r in runs
                                      if os.path.isfile(os.path.join(r.folder, "accept.xml"))), None)
    if verdicts:
        v = read_verdicts(verdicts)
        fails = sum(1 for x in v if x[2] == "FAIL")
        para(f"From {verdicts}: {'FAIL' if fails else 'PASS'} ({fails} failed of {len(v)} checks).")
        table(["rule / place", "check", "verdict", "detail"], v)
    else:
        para("No verdicts: none given (--verdicts accept.xml from `ccbench accept --junit`), none in the results folders.")

    section("Link matrix")
    links = args.links or next((os.path.join(r.folder, "links.json") for r in runs
                                if os.path.isfile(os.path.join(r.folder, "links.json"))), None)
    if links:
        para(f"From {links}.")
        for title, labels, gbps in link_matrices(links):
            figure(link_heatmap(plt, title, labels, gbps), f"link bandwidth, {title}")
    else:
        para("Omitted: no link matrix given (--links links.json of `ccbench links`), none in the results folders.")

    title = "ccbench report: " + ", ".join(r.name for r in runs)
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(f"# {md_text(title)}\n" + "\n".join(md) + "\n")
    style = ("body{font-family:sans-serif;max-width:70em;margin:auto;padding:1em}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;font-size:small}img{max-width:100%}")
    with open(os.path.join(args.out, "report.html"), "w") as f:
        f.write(f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
                f"<style>{style}</style></head>\n<body><h1>{html.escape(title)}</h1>\n" + "\n".join(body) +
                "\n</body></html>\n")
    print(f"report: {args.out}/report.md, {args.out}/report.html ({n_fig} figures)")


if __name__ == "__main__":
    main()
