#!/usr/bin/env python3
"""Health telemetry through the real binary on CPU ranks (mpirun -np 2), with recorded NVML
answers played back (CCBENCH_TELEMETRY_NVML_REPLAY) and a fake NIC sysfs tree
(CCBENCH_TELEMETRY_IB_DIR). Checks what the files say: the health columns of results.csv, the
context and series file referenced from run.json, the warnings, and --fail-on-health's exit
code 4; with NVML absent, "not available" with the reason; with --telemetry off, nothing.

Usage: telemetry_run.py --ccbench PATH --mpiexec PATH --fixture nvml-h200x2-healthy.json
"""
import argparse
import csv
import json
import os
import socket
import subprocess
import sys
import tempfile

FAILURES = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        FAILURES.append(what)


def fake_sysfs(root, symbol_errors=0):
    c = os.path.join(root, "mlx5_0", "ports", "1", "counters")
    os.makedirs(c, exist_ok=True)
    for name, value in [("symbol_error", symbol_errors), ("link_downed", 0), ("port_rcv_errors", 0),
                        ("port_xmit_data", 1000), ("port_rcv_data", 2000)]:
        with open(os.path.join(c, name), "w") as f:
            f.write(f"{value}\n")


def run(args, out, env):
    cmd = [args.mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", "2", args.ccbench, "--device", "cpu",
           "--impl", "ring", "--collective", "allreduce", "-b", "8", "-e", "64K", "-f", "64", "-n", "4", "-w", "1",
           "--telemetry-interval", "10", "--timeout", "60", "--out", out]
    extra = env.pop("_extra", [])
    cmd += extra if "--telemetry" in extra else ["--telemetry", "on"] + extra
    p = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, timeout=240)
    return p


def rows(out):
    with open(os.path.join(out, "results.csv"), newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def healthy(args, tmp):
    ib = os.path.join(tmp, "ib")
    fake_sysfs(ib)
    out = os.path.join(tmp, "healthy")
    rec = os.path.join(tmp, "recorded.json")
    p = run(args, out, {"CCBENCH_TELEMETRY_NVML_REPLAY": args.fixture, "CCBENCH_TELEMETRY_IB_DIR": ib,
                        "_extra": ["--fail-on-health", "--telemetry-record", rec]})
    check(p.returncode == 0, f"healthy run: exit code 0 with --fail-on-health (got {p.returncode}: {p.stderr[-500:]})")
    check("warning" not in p.stderr, "healthy run: no warning")
    check("# health check error counters: pass" in p.stdout, "healthy run: error-counter check passes")
    r = rows(out)
    measured = [x for x in r if x["status"] == "ok"]
    check(len(measured) == 6, f"healthy run: 6 measured rows (got {len(measured)})")
    for x in measured:
        t = float(x["gpu_temp_max[C]"])
        check(36 <= t <= 48 and 118 <= float(x["gpu_power_mean[W]"]) <= 455 and x["gpu_throttle"] == "none"
              and x["nvlink_errors"] == "0" and x["nic_errors"] == "0" and x["ecc_uncorrected"] == "0",
              f"healthy row {x['size[B]']} {x['in_place']}: temp {t}, power {x['gpu_power_mean[W]']}, "
              f"throttle {x['gpu_throttle']}, nvlink {x['nvlink_errors']}, nic {x['nic_errors']}")
    run_json = json.load(open(os.path.join(out, "run.json")))
    tel = run_json["context"]["telemetry"]
    check(tel["series_file"] == "telemetry.jsonl" and os.path.exists(os.path.join(out, tel["series_file"])),
          "run.json names the series file, which exists")
    node = tel["nodes"][0]
    check(len(tel["nodes"]) == 1 and node["host"] == socket.gethostname(), "one sampling rank for the one host")
    check(node["gpus"]["available"] and len(node["gpus"]["devices"]) == 2 and len(node["gpus"]["devices"][0]["nvlinks"]) == 18,
          "context: 2 GPUs with 18 NVLink links each")
    check(node["nics"]["ports"] == ["mlx5_0/1"], "context: the fake NIC port")
    lines = [json.loads(l) for l in open(os.path.join(out, "telemetry.jsonl"))]
    samples = [l for l in lines if l["type"] == "sample"]
    check(len(samples) >= 2 and all(s["power_limit_w"] == 700.0 for s in samples), f"series: {len(samples)} samples")
    check(sum(l["type"] == "row" for l in lines) == 6, "series: one row line per measured row")
    summary = [l for l in lines if l["type"] == "summary"]
    check(len(summary) == 1 and all(c["state"] == "pass" for c in summary[0]["checks"]), "series: summary, checks pass")
    run_summary = tel.get("run_summary", {})
    check([c["state"] for c in run_summary.get("checks", [])] == ["pass"] * 3
          and run_summary["figures"]["gpu_temp_max_c"] <= 48, "run.json: context.telemetry.run_summary, checks pass")
    recorded = json.load(open(rec))
    check(recorded["format"] == "ccbench-nvml-answers-1" and len(recorded["answers"]["0 temperature_c"]) >= 2,
          "--telemetry-record wrote the answers it passed on")


def unhealthy(args, tmp):
    answers = json.load(open(args.fixture))
    # Constant answers: every row sees them, however the samples fall on a loaded machine.
    answers["answers"]["1 temperature_c"] = [91]
    answers["answers"]["0 throttle_reasons"] = [0x4]  # sw_power_cap
    answers["answers"]["1 nvlink_crc_flit 7"] = [0, 0, 3]  # start, before the first row, after it
    path = os.path.join(tmp, "unhealthy.json")
    json.dump(answers, open(path, "w"))
    ib = os.path.join(tmp, "ib2")
    fake_sysfs(ib)
    out = os.path.join(tmp, "unhealthy")
    p = run(args, out, {"CCBENCH_TELEMETRY_NVML_REPLAY": path, "CCBENCH_TELEMETRY_IB_DIR": ib,
                        "_extra": ["--fail-on-health"]})
    host = socket.gethostname()
    check(p.returncode == 4, f"unhealthy run: exit code 4 (got {p.returncode})")
    for text in [f"warning: host {host} GPU 1 (NVIDIA H200): temperature 91 C reached the limit of 85 C",
                 f"warning: host {host} GPU 0 (NVIDIA H200): clocks throttled (sw_power_cap)",
                 f"warning: host {host} GPU 1 (NVIDIA H200) NVLink 7: CRC flit errors grew by 3 during allreduce/ring",
                 "a health check failed (--fail-on-health)"]:
        check(text in p.stderr, f"unhealthy run says: {text}")
    r = [x for x in rows(out) if x["status"] == "ok"]
    check(r[0]["nvlink_errors"] == "3" and all(x["nvlink_errors"] == "0" for x in r[1:]),
          f"the growth is in the first row only: {[x['nvlink_errors'] for x in r]}")
    check(all(x["gpu_throttle"] == "sw_power_cap" and x["gpu_temp_max[C]"] == "91" for x in r),
          "every row shows the power cap and 91 C")
    check(os.path.exists(os.path.join(out, "results.csv")) and len(r) == 6, "every row is still written")
    summary = json.load(open(os.path.join(out, "run.json")))["context"]["telemetry"]["run_summary"]
    check([c["state"] for c in summary["checks"]] == ["fail"] * 3 and summary["figures"]["nvlink_errors"] == 3,
          "run.json: the run summary's three checks fail, nvlink_errors 3")


def without_hardware(args, tmp):
    out = os.path.join(tmp, "none")
    p = run(args, out, {"CCBENCH_TELEMETRY_IB_DIR": os.path.join(tmp, "no-ib"),
                        "CCBENCH_TELEMETRY_NVML_REPLAY": "", "_extra": []})
    check(p.returncode == 0, f"no hardware: exit code 0 (got {p.returncode})")
    node = json.load(open(os.path.join(out, "run.json")))["context"]["telemetry"]["nodes"][0]
    check(not node["nics"]["available"] and "does not exist" in node["nics"]["reason"], "no NIC: reason given")
    check(node["gpus"]["available"] or "reason" in node["gpus"], f"GPUs: available or a reason: {node['gpus']}")
    if not node["gpus"]["available"]:
        check(all(x["gpu_temp_max[C]"] == "" and x["nvlink_errors"] == "" for x in rows(out)),
              "no NVML: the health columns are empty, not 0")
    off = os.path.join(tmp, "off")
    p = run(args, off, {"CCBENCH_TELEMETRY_NVML_REPLAY": args.fixture, "_extra": ["--telemetry", "off"]})
    check(p.returncode == 0 and not os.path.exists(os.path.join(off, "telemetry.jsonl")), "--telemetry off: no series")
    check(json.load(open(os.path.join(off, "run.json")))["context"]["telemetry"] == {"enabled": False},
          "--telemetry off: the context says so")
    check(all(x["gpu_temp_max[C]"] == "" for x in rows(off)), "--telemetry off: empty columns")


def bad_input(args, tmp):
    out = os.path.join(tmp, "bad")
    p = subprocess.run([args.mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", "2", args.ccbench,
                        "--telemetry-interval", "5", "--out", out], capture_output=True, text=True, timeout=120)
    check(p.returncode == 2 and "--telemetry-interval: '5' is not valid; expected milliseconds, a whole number from 10 to 60000"
          in p.stderr and not os.path.exists(out), "--telemetry-interval 5: exit code 2 before MPI, says what is valid")
    p = run(args, out, {"_extra": ["--telemetry", "off", "--fail-on-health"]})
    check(p.returncode == 2 and "--fail-on-health needs telemetry on" in p.stderr, "--fail-on-health with --telemetry off: exit 2")
    p = run(args, out, {"CCBENCH_TELEMETRY_NVML_REPLAY": os.path.join(tmp, "absent.json"), "_extra": []})
    check(p.returncode == 2 and "cannot read the recorded NVML answers" in p.stderr,
          f"a replay file that does not exist: exit code 2 naming it (got {p.returncode})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--fixture", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        healthy(args, tmp)
        unhealthy(args, tmp)
        without_hardware(args, tmp)
        bad_input(args, tmp)
    print(f"telemetry checks failed: {len(FAILURES)}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
