#!/usr/bin/env python3
"""ccbench's Prometheus metrics (results/metrics.h) as the monitoring stack reads them.

Mode `export` (no MPI): `ccbench export` of recorded runs (2 x H200 and CPU ranks) and
`ccbench accept --metrics` with a rule that passes and one that fails. Mode `run`: a real 2-rank
run with --accept and --metrics. Each file must
- pass `promtool check metrics` (the Prometheus linter: format, names, units, HELP) with no
  complaint;
- hold, for every case and size, the busbw and median time that the results file gives (computed
  here from results.csv on its own: the lowest busbw and longest time of rows sharing the labels),
  and the verdicts `accept` printed;
- be served by a real prometheus-node-exporter (127.0.0.1, a free port, textfile collector only,
  started here and stopped in a finally block): every series of ours in its /metrics with the
  same value, and node_textfile_scrape_error 0.
Skipped (exit 77, "SKIPPED:") where promtool or prometheus-node-exporter is missing.

Usage: metrics_e2e.py export|run CCBENCH MPIEXEC SOURCE_DIR WORK_DIR
"""
import csv
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from testlib import Checks, ExitCode  # noqa: E402

mode, ccbench, mpiexec, src, work = sys.argv[1:6]
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
checks = Checks(f"metrics_e2e {mode}")


def parse(text):
    """{(name, frozenset(labels)): value} of a Prometheus text exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise ValueError(f"not a sample line: {line!r}")
        labels = frozenset((k, v) for k, v in LABEL.findall(m.group(3) or "") if v != "")
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def expected_cases(folder):
    """busbw (B/s) and latency (s) per case and size from results.csv, the worst of equal labels."""
    lines = [line for line in open(os.path.join(folder, "results.csv")) if not line.startswith("#")]
    want = {}
    single_host = None
    for r in csv.DictReader(lines):
        if r["status"] != "ok":
            continue
        host = r.get("host", "") or single_host
        labels = frozenset((k, v) for k, v in (
            ("collective", r["collective"]), ("impl", r["impl"]), ("transport", r["transport"]), ("dtype", r["dtype"]),
            ("op", r["op"]), ("placement", "in-place" if r["in_place"] == "true" else "out-of-place"),
            ("mode", r["mode"]), ("size", r["size[B]"]), ("host", host or ""), ("link", r.get("link", "")),
            ("group", r["group"])) if v)
        bw, lat = float(r["busbw[GB/s]"]) * 1e9, float(r["time_median[us]"]) / 1e6
        key_bw, key_lat = ("ccbench_busbw_bytes_per_second", labels), ("ccbench_latency_seconds", labels)
        want[key_bw] = min(want.get(key_bw, bw), bw)
        want[key_lat] = max(want.get(key_lat, lat), lat)
    return want


def host_labels(want, host):
    """The cases of a single-host run carry its host (results.csv of older runs has no host column)."""
    out = {}
    for (name, labels), v in want.items():
        if not any(k == "host" for k, _ in labels):
            labels = labels | {("host", host)}
        out[(name, labels)] = v
    return out


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)


def check_cases(got, want, what):
    """The file's case samples against results.csv's, which keeps 6 significant digits (busbw
    is written in whole bytes per second)."""
    missing = [k for k in want if k not in got]
    wrong = [(k, got[k], v) for k, v in want.items()
             if k in got and abs(got[k] - v) > max(5e-6 * abs(v), 0.5 if k[0].endswith("per_second") else 0)]
    ours = [k for k in got if k[0] in ("ccbench_busbw_bytes_per_second", "ccbench_latency_seconds")]
    checks(not missing and not wrong and len(ours) == len(want),
           f"{what}: {len(want)} case samples as results.csv gives them (missing {missing[:2]}, wrong {wrong[:2]}, "
           f"{len(ours)} in the file)")


def promtool(path, what):
    r = subprocess.run(["promtool", "check", "metrics"], stdin=open(path), capture_output=True, text=True)
    checks(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(),
           f"{what}: promtool check metrics: exit {r.returncode} {r.stdout.strip()} {r.stderr.strip()}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(folder):
    """/metrics of a node_exporter serving `folder` with its textfile collector alone."""
    port = free_port()
    exporter = subprocess.Popen(["prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{port}",
                                 "--collector.disable-defaults", "--collector.textfile",
                                 f"--collector.textfile.directory={folder}"],
                                stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "exporter.log"), "w"))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                return urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
            except OSError:
                if time.monotonic() > deadline or exporter.poll() is not None:
                    raise RuntimeError("node_exporter did not serve: " + open(os.path.join(work, "exporter.log")).read())
                time.sleep(0.2)
    finally:
        exporter.terminate()
        exporter.wait(timeout=10)


def check_served(path, what):
    """node_exporter serving the folder the .prom file `path` is in, that file alone (two files
    holding the same series would leave it one of them: one ccbench file per node)."""
    served = parse(scrape(os.path.dirname(path)))
    checks(served.get(("node_textfile_scrape_error", frozenset())) == 0.0, f"{what}: node_textfile_scrape_error 0")
    ours = parse(open(path).read())
    absent = [k for k in ours if k not in served]
    differ = [k for k in ours if k in served and not close(served[k], ours[k])]
    checks(ours and not absent and not differ,
           f"{what}: node_exporter serves all {len(ours)} series of {os.path.basename(path)} as written "
           f"(absent {absent[:2]}, differ {differ[:2]})")


def alone(path):
    """A copy of the .prom file `path` in a folder of its own."""
    d = os.path.join(work, "served-" + os.path.basename(path))
    os.makedirs(d)
    return shutil.copy(path, d)


def export_mode():
    h200 = os.path.join(src, "tests/fixtures/h200x2-20261130-sweep-cc01c2c")
    prom = os.path.join(work, "prom")
    os.makedirs(prom)
    r = subprocess.run([ccbench, "export", h200, "--metrics", os.path.join(prom, "h200.prom")], capture_output=True,
                       text=True)
    checks(r.returncode == ExitCode.ok, f"export of the 2 x H200 run: exit {r.returncode} {r.stderr.strip()}")
    got = parse(open(os.path.join(prom, "h200.prom")).read())
    check_cases(got, host_labels(expected_cases(h200), "vm"), "2 x H200 export")
    checks(got.get(("ccbench_run_exit_code", frozenset({("host", "vm"), ("source", "results")}))) == ExitCode.ok,
           "the run's exit code from its run.json")
    promtool(os.path.join(prom, "h200.prom"), "2 x H200 export")
    out = subprocess.run([ccbench, "export", h200], capture_output=True, text=True)
    checks(out.returncode == ExitCode.ok and out.stdout.endswith("# EOF\n") and
           parse(out.stdout).keys() == got.keys(), "export to stdout: the same series")
    # accept: the example rules pass; a 400 GB/s floor fails on the node.
    rules = os.path.join(src, "docs/examples/rules/h200x2.yaml")
    ok = subprocess.run([ccbench, "accept", "--rules", rules, h200, "--metrics", os.path.join(prom, "pass.prom")],
                        capture_output=True, text=True)
    checks(ok.returncode == ExitCode.ok, f"accept (passing rules) with --metrics: exit {ok.returncode}")
    got = parse(open(os.path.join(prom, "pass.prom")).read())
    rule_lines = [k for k in got if k[0] == "ccbench_accept_rule_passed"]
    checks(got.get(("ccbench_accept_passed", frozenset())) == 1.0 and len(rule_lines) == ok.stdout.count("): PASS (")
           and all(got[k] == 1.0 for k in rule_lines), f"every rule passed, as accept printed ({len(rule_lines)} rules)")
    judged = [k for k in got if k[0] == "ccbench_accept_check_passed"]
    passed = [line for line in ok.stdout.splitlines() if line.startswith("#   PASS ") and "rows broke a rule" not in line]
    checks(judged and all(got[k] == 1.0 for k in judged) and len(judged) == len(passed),
           f"every check that was judged passed, one series each ({len(judged)}); those not available absent")
    bad = subprocess.run([ccbench, "accept", "--min-busbw", "400", h200, "--metrics", os.path.join(prom, "fail.prom")],
                         capture_output=True, text=True)
    got = parse(open(os.path.join(prom, "fail.prom")).read())
    checks(bad.returncode == ExitCode.threshold and got.get(("ccbench_accept_passed", frozenset())) == 0.0 and
           got.get(("ccbench_accept_node_passed", frozenset({("host", "vm")}))) == 0.0,
           "a 400 GB/s floor: accept exit 4, and the node below its rule is 0")
    m = re.search(r"FAIL vm: (\d+) of (\d+) rows broke a rule", bad.stdout)
    checks(m and got.get(("ccbench_accept_node_failed_rows", frozenset({("host", "vm")}))) == float(m.group(1)),
           "the node's failed rows as accept counted them")
    for f in ("pass.prom", "fail.prom"):
        promtool(os.path.join(prom, f), f)
    for f in ("h200.prom", "fail.prom"):
        check_served(alone(os.path.join(prom, f)), f)
    bad_name = subprocess.run([ccbench, "export", h200, "--metrics", os.path.join(prom, "m.txt")], capture_output=True,
                              text=True)
    checks(bad_name.returncode == ExitCode.usage and "reads only files named *.prom" in bad_name.stderr,
           "a name without .prom: exit 2")


def check_health(got, folder, host):
    """The health series as results.csv's health columns give them: the hottest GPU, throttling,
    and each error counter's growth summed over the rows (absent where no row read it)."""
    lines = [line for line in open(os.path.join(folder, "results.csv")) if not line.startswith("#")]
    rows = list(csv.DictReader(lines))
    temps = [float(r["gpu_temp_max[C]"]) for r in rows if r.get("gpu_temp_max[C]")]
    h = frozenset({("host", host)})
    checks(temps and got.get(("ccbench_gpu_temperature_max_celsius", h)) == max(temps),
           f"the hottest GPU as the rows saw it ({max(temps) if temps else None} C)")
    throttles = [r["gpu_throttle"] for r in rows if r.get("gpu_throttle")]
    checks(throttles and got.get(("ccbench_gpu_throttled", h)) == float(any(t != "none" for t in throttles)) == 1.0,
           f"throttling as the rows saw it ({sorted(set(throttles))})")
    for counter in ("nvlink_errors", "pcie_replays", "ecc_corrected", "ecc_uncorrected", "xid_events", "nic_errors"):
        values = [int(r[counter]) for r in rows if r.get(counter)]
        key = ("ccbench_hardware_error_growth", h | {("counter", counter)})
        checks(got.get(key) == (float(sum(values)) if values else None),
               f"{counter}: {sum(values) if values else 'not read'} as the rows' growth sums to")
    checks(max(temps) == 91 and got.get(("ccbench_gpu_throttle_reason", h | {("reason", "sw_power_cap")})) == 1.0,
           "91 C and the power cap, as replayed")
    checks(got.get(("ccbench_hardware_error_growth", h | {("counter", "nvlink_errors")})) is not None,
           "the NVLink counter was read (a figure, not absent)")


def run_mode():
    prom = os.path.join(work, "prom")
    os.makedirs(prom)
    out, metrics = os.path.join(work, "run"), os.path.join(prom, "ccbench.prom")
    rules = os.path.join(work, "rules.yaml")
    with open(rules, "w") as f:
        f.write("rules:\n  - name: every row correct\n    require: {max_wrong: 0}\n"
                "  - name: impossible floor\n    select: {impl: ring}\n    require: {min_busbw: 100000}\n")
    # Health from recorded NVML answers (2 x H200, as tests/mpi/telemetry_run.py plays them), made
    # unhealthy: GPU 1 at 91 C, GPU 0 held by its power cap, an NVLink CRC counter growing at every read.
    answers = json.load(open(os.path.join(src, "tests/fixtures/nvml-h200x2-healthy.json")))
    answers["answers"]["1 temperature_c"] = [91]
    answers["answers"]["0 throttle_reasons"] = [0x4]
    answers["answers"]["1 nvlink_crc_flit 7"] = list(range(100000))
    replay = os.path.join(work, "nvml.json")
    json.dump(answers, open(replay, "w"))
    # A row's counter growth needs a counter read (every 100 ms at least) to end inside its size:
    # the 1 KiB mpi rows are made 30 ms a call slow (the test fault), so they last ~0.2 s each.
    env = dict(os.environ, CCBENCH_TELEMETRY_NVML_REPLAY=replay, CCBENCH_TELEMETRY_IB_DIR=os.path.join(work, "no-ib"),
               CCBENCH_FAULT="slow:rank=0,size=1024,impl=mpi,ms=30")
    run = subprocess.Popen([mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", "2", ccbench, "--device", "cpu",
                            "--collective", "allreduce,allgather", "--impl", "ring,mpi", "-b", "1K", "-e", "256K", "-f",
                            "4", "-n", "5", "-w", "1", "--telemetry", "on", "--telemetry-interval", "10",
                            "--telemetry-counter-interval", "100", "--out", out,
                            "--accept", rules, "--metrics", metrics],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    r = subprocess.CompletedProcess(run.args, run.wait(), *run.communicate())
    print(r.stdout[-1500:] + r.stderr[-800:])
    checks(r.returncode == ExitCode.threshold and f"# metrics: {metrics}" in r.stdout,
           f"a run with --accept and --metrics: exit 4 ({r.returncode})")
    got = parse(open(metrics).read())
    host = json.load(open(os.path.join(out, "run.json")))["context"]["ranks_detail"][0]["host"]
    check_cases(got, host_labels(expected_cases(out), host), "the run's metrics")
    run = frozenset({("host", host), ("source", "results")})
    checks(got.get(("ccbench_run_exit_code", run)) == ExitCode.threshold, "the run's exit code (4: a rule failed)")
    checks(got.get(("ccbench_accept_rule_passed", frozenset({("rule", "impossible floor"), ("where", f"{rules}:4")})))
           == 0.0 and got.get(("ccbench_accept_rule_passed", frozenset({("rule", "every row correct"),
                                                                         ("where", f"{rules}:2")}))) == 1.0,
           "one rule failed, one passed, as the run printed")
    checks(not [n for n in os.listdir(prom) if n != "ccbench.prom"], "no temporary file left beside the .prom")
    check_health(got, out, host)
    promtool(metrics, "the run's metrics")
    check_served(metrics, "the run's metrics")


def main():
    missing = [t for t in ("promtool", "prometheus-node-exporter") if not shutil.which(t)]
    if missing:
        print(f"SKIPPED: {' and '.join(missing)} not found: install the Debian packages prometheus and "
              "prometheus-node-exporter (scripts/setup.sh does)")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    export_mode() if mode == "export" else run_mode()
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
