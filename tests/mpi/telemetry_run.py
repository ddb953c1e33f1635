#!/usr/bin/env python3
"""Health telemetry through the real binary on CPU ranks (mpirun -np 2), with recorded NVML
answers played back (CCBENCH_TELEMETRY_NVML_REPLAY) and a fake NIC sysfs tree
(CCBENCH_TELEMETRY_IB_DIR). Checks what the files say: the health columns of results.csv, the
context and series file referenced from run.json, the warnings (once per run), --fail-on-health's
exit code 4, --temp-limit turning a run's verdict, counter reads that stay off the measuring
thread when they are slow; with NVML
absent, "not available" with the reason; with --telemetry off, nothing.

Usage: telemetry_run.py --ccbench PATH --mpiexec PATH --fixture nvml-h200x2-healthy.json
"""
import argparse
import json
import os
import re
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import expected_cases  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import mpirun_command, run as run_command  # noqa: E402
from testlib import Checks, ExitCode  # noqa: E402

checks = Checks("telemetry")


def fake_sysfs(root, symbol_errors=0):
    c = os.path.join(root, "mlx5_0", "ports", "1", "counters")
    os.makedirs(c, exist_ok=True)
    for name, value in [("symbol_error", symbol_errors), ("link_downed", 0), ("port_rcv_errors", 0),
                        ("port_xmit_data", 1000), ("port_rcv_data", 2000)]:
        with open(os.path.join(c, name), "w") as f:
            f.write(f"{value}\n")


SMALL = ["-b", "8", "-e", "64K", "-f", "64"]


def run(args, out, env, sizes=SMALL):
    """ccbench on 2 CPU ranks with --telemetry on, unless _extra gives --telemetry or _default asks
    for the command line's default."""
    cmd = mpirun_command(args.mpiexec, 2, args.ccbench) + [
        "--device", "cpu",
        "--impl", "ring", "--collective", "allreduce", *sizes, "-n", "4", "-w", "1",
        "--telemetry-interval", "10", "--timeout", "60", "--out", out]
    extra = env.pop("_extra", [])
    if "--telemetry" not in extra and not env.pop("_default", False):
        cmd += ["--telemetry", "on"]
    cmd += extra
    return run_command(cmd, env=env, timeout=240)


def rows(out):
    """results.csv's rows, each measured row's busbw checked against its bus factor."""
    return expected_cases.read_rows(os.path.join(out, "results.csv"))


def series(out):
    return [json.loads(l) for l in open(os.path.join(out, "telemetry.jsonl"))]


def counters_follow_the_windows(out, measured, what, columns=("nvlink_errors", "nic_errors")):
    """A row's counter columns hold a number when a counter read ended while it was measured (its
    series line has a counter window), and are empty otherwise."""
    lines = [l for l in series(out) if l["type"] == "row"]
    checks(len(lines) == len(measured), f"{what}: one series row line per measured row ({len(lines)})")
    bad = [(x["size[B]"], [x[c] for c in columns], l["counter_window_s"]) for x, l in zip(measured, lines)
           if any((x[c] == "") != (l["counter_window_s"] is None) for c in columns)]
    checks(not bad, f"{what}: counter columns set exactly where a read ended during the row: {bad}")
    return lines


def healthy(args, tmp):
    ib = os.path.join(tmp, "ib")
    fake_sysfs(ib)
    out = os.path.join(tmp, "healthy")
    rec = os.path.join(tmp, "recorded.json")
    p = run(args, out, {"CCBENCH_TELEMETRY_NVML_REPLAY": args.fixture, "CCBENCH_TELEMETRY_IB_DIR": ib,
                        "_extra": ["--fail-on-health", "--telemetry-record", rec]})
    checks(p.rc == ExitCode.ok,
           f"healthy run: exit code 0 with --fail-on-health (got {p.rc}: {p.err[-500:]})")
    checks("warning" not in p.err, "healthy run: no warning")
    checks("# health check error counters: pass" in p.out, "healthy run: error-counter check passes")
    r = rows(out)
    measured = [x for x in r if x["status"] == "ok"]
    checks(len(measured) == 6, f"healthy run: 6 measured rows (got {len(measured)})")
    for x in measured:
        t = float(x["gpu_temp_max[C]"])
        checks(36 <= t <= 48 and 118 <= float(x["gpu_power_mean[W]"]) <= 455 and x["gpu_throttle"] == "none"
               and x["nvlink_errors"] in ("", "0") and x["nic_errors"] in ("", "0") and x["ecc_uncorrected"] in ("", "0"),
               f"healthy row {x['size[B]']} {x['in_place']}: temp {t}, power {x['gpu_power_mean[W]']}, "
               f"throttle {x['gpu_throttle']}, nvlink {x['nvlink_errors']}, nic {x['nic_errors']}")
    counters_follow_the_windows(out, measured, "healthy run")
    run_json = json.load(open(os.path.join(out, "run.json")))
    tel = run_json["context"]["telemetry"]
    checks(tel["enabled"] and tel["counter_interval_ms"] == 1000, "run.json: telemetry on, counters every 1000 ms (default)")
    checks(tel["series_file"] == "telemetry.jsonl" and os.path.exists(os.path.join(out, tel["series_file"])),
           "run.json names the series file, which exists")
    node = tel["nodes"][0]
    checks(len(tel["nodes"]) == 1 and node["host"] == socket.gethostname(), "one sampling rank for the one host")
    checks(node["gpus"]["available"] and len(node["gpus"]["devices"]) == 2 and len(node["gpus"]["devices"][0]["nvlinks"]) == 18,
           "context: 2 GPUs with 18 NVLink links each")
    checks(node["nics"]["ports"] == ["mlx5_0/1"], "context: the fake NIC port")
    lines = series(out)
    samples = [l for l in lines if l["type"] == "sample"]
    per_gpu = [len([s for s in samples if s["gpu"] == g]) for g in (0, 1)]
    checks(min(per_gpu) >= 2 and all(s["power_limit_w"] == 700.0 for s in samples),
           f"series: {per_gpu} samples of GPU 0 and 1, the run's start and end among them")
    summary = [l for l in lines if l["type"] == "summary"]
    checks(len(summary) == 1 and all(c["state"] == "pass" for c in summary[0]["checks"]), "series: summary, checks pass")
    run_summary = tel.get("run_summary", {})
    checks([c["state"] for c in run_summary.get("checks", [])] == ["pass"] * 3
           and run_summary["figures"]["gpu_temp_max_c"] <= 48 and run_summary["figures"]["nvlink_errors"] == 0,
           "run.json: context.telemetry.run_summary, checks pass, the run's NVLink errors 0 (not empty)")
    recorded = json.load(open(rec))
    temps = recorded["answers"].get("0 temperature_c", [])
    series_temps = [s["temp_c"] for s in samples if s["gpu"] == 0]
    checks(recorded["format"] == "ccbench-nvml-answers-1" and temps == series_temps and len(temps) >= 2
           and "0 nvlink_replay 3" in recorded["latency_us"],
           f"--telemetry-record wrote the answers it passed on (GPU 0's temperatures {temps}, the series' "
           f"{series_temps}: the start, the end and every interval between), and how long they took")


def unhealthy(args, tmp):
    answers = json.load(open(args.fixture))
    # Constant answers: every row sees them, however the samples fall on a loaded machine.
    answers["answers"]["1 temperature_c"] = [91]
    answers["answers"]["0 throttle_reasons"] = [0x4]  # sw_power_cap
    answers["answers"]["1 nvlink_crc_flit 7"] = [0, 3]  # the read at start, then every later one
    path = os.path.join(tmp, "unhealthy.json")
    json.dump(answers, open(path, "w"))
    ib = os.path.join(tmp, "ib2")
    fake_sysfs(ib)
    out = os.path.join(tmp, "unhealthy")
    p = run(args, out, {"CCBENCH_TELEMETRY_NVML_REPLAY": path, "CCBENCH_TELEMETRY_IB_DIR": ib,
                        "_extra": ["--fail-on-health"]})
    host = socket.gethostname()
    checks(p.rc == ExitCode.threshold, f"unhealthy run: exit code 4 (got {p.rc})")
    for text in [f"warning: host {host} GPU 1 (NVIDIA H200): temperature 91 C reached the limit of 85 C",
                 f"warning: host {host} GPU 0 (NVIDIA H200): clocks throttled (sw_power_cap)",
                 f"warning: host {host} GPU 1 (NVIDIA H200) NVLink 7: CRC flit errors grew by 3 (found ",
                 f"warning: error counters grew in this run: host {host} GPU 1 (NVIDIA H200): CRC flit errors +3 on 1 link\n",
                 "a health check failed (--fail-on-health)"]:
        checks(p.err.count(text) == 1, f"unhealthy run says once: {text}")
    checks(p.err.count("warning:") == 4, f"unhealthy run: 4 warnings in all (got {p.err.count('warning:')})")
    r = [x for x in rows(out) if x["status"] == "ok"]
    checks(sum(int(x["nvlink_errors"] or 0) for x in r) <= 3, f"the rows hold no more than the run's growth: "
           f"{[x['nvlink_errors'] for x in r]}")
    counters_follow_the_windows(out, r, "unhealthy run")
    checks(all(x["gpu_throttle"] == "sw_power_cap" and x["gpu_temp_max[C]"] == "91" for x in r),
           "every row shows the power cap and 91 C")
    checks(os.path.exists(os.path.join(out, "results.csv")) and len(r) == 6, "every row is still written")
    summary = json.load(open(os.path.join(out, "run.json")))["context"]["telemetry"]["run_summary"]
    checks([c["state"] for c in summary["checks"]] == ["fail"] * 3 and summary["figures"]["nvlink_errors"] == 3
           and summary["counters_grown"] == [{"where": "GPU 1 (NVIDIA H200) NVLink 7", "what": "CRC flit errors",
                                              "growth": 3, "host": host}],
           "run.json: the run summary's three checks fail, nvlink_errors 3, the link that grew")


def slow_counters(args, tmp):
    """Counter reads that take 200 ms (recorded latency played back) and a CRC counter that grows at
    every read, on a 20-size run: the reads stay off the measuring thread, the growth reaches the
    rows it was read in, the link is warned about once."""
    answers = json.load(open(args.fixture))
    answers["answers"]["1 nvlink_crc_flit 7"] = list(range(100000))
    answers["latency_us"] = {f"{g} {q}": 50000 for g in (0, 1) for q in ("pcie_replays", "ecc_corrected")}
    path = os.path.join(tmp, "slow.json")
    json.dump(answers, open(path, "w"))
    out = os.path.join(tmp, "slow")
    sizes = ["-b", "8", "-e", "4M", "-f", "2", "--in-place", "no"]
    started = time.monotonic()
    # The 1 MiB size takes over a second (9 calls of 120 ms): longer than a read and its interval.
    p = run(args, out, {"CCBENCH_TELEMETRY_NVML_REPLAY": path, "CCBENCH_FAULT": "slow:rank=0,size=1M,ms=120",
                        "CCBENCH_TELEMETRY_IB_DIR": os.path.join(tmp, "no-ib"),
                        "_extra": ["--telemetry-counter-interval", "100"]}, sizes)
    took = time.monotonic() - started
    host = socket.gethostname()
    checks(p.rc == ExitCode.ok, f"slow counters: exit code 0 (got {p.rc}: {p.err[-500:]})")
    measured = [x for x in rows(out) if x["status"] == "ok"]
    checks(len(measured) == 20, f"slow counters: 20 measured rows (got {len(measured)})")
    lines = counters_follow_the_windows(out, measured, "slow counters", ("nvlink_errors", "pcie_replays"))
    gaps = sum(b["t_s"][0] - a["t_s"][1] for a, b in zip(lines, lines[1:]))
    checks(gaps < 1.0, f"slow counters: {gaps:.2f} s between the 20 sizes in all, run {took:.1f} s "
           "(reading the counters there would take 0.4 s per size)")
    big = [x for x in measured if x["size[B]"] == str(1 << 20)]
    checks(big and big[0]["nvlink_errors"] not in ("", "0"), f"slow counters: the 1 MiB row holds CRC growth: {big}")
    total = json.load(open(os.path.join(out, "run.json")))["context"]["telemetry"]["run_summary"]["figures"]["nvlink_errors"]
    in_rows = sum(int(x["nvlink_errors"] or 0) for x in measured)
    checks(total and 0 < in_rows <= total, f"slow counters: rows hold {in_rows} of the run's {total}")
    first = f"warning: host {host} GPU 1 (NVIDIA H200) NVLink 7: CRC flit errors grew by 1 (found "
    checks(p.err.count(first) == 1 and p.err.count("warning:") == 2, f"slow counters: warned once: {p.err[-600:]}")
    checks(f"error counters grew in this run: host {host} GPU 1 (NVIDIA H200): CRC flit errors +{total} on 1 link" in p.err,
           "slow counters: the run's total at the end")


def without_hardware(args, tmp):
    out = os.path.join(tmp, "none")
    p = run(args, out, {"CCBENCH_TELEMETRY_IB_DIR": os.path.join(tmp, "no-ib"),
                        "CCBENCH_TELEMETRY_NVML_REPLAY": "", "_extra": []})
    checks(p.rc == ExitCode.ok, f"no hardware: exit code 0 (got {p.rc})")
    node = json.load(open(os.path.join(out, "run.json")))["context"]["telemetry"]["nodes"][0]
    checks(not node["nics"]["available"] and "does not exist" in node["nics"]["reason"], "no NIC: reason given")
    checks(node["gpus"]["available"] or "reason" in node["gpus"], f"GPUs: available or a reason: {node['gpus']}")
    if not node["gpus"]["available"]:
        checks(all(x["gpu_temp_max[C]"] == "" and x["nvlink_errors"] == "" for x in rows(out)),
               "no NVML: the health columns are empty, not 0")
        checks(not os.path.exists(os.path.join(out, "telemetry.jsonl")) and "telemetry.jsonl" not in p.out,
               "nothing readable: no series file, none listed")
        checks(f"# health: not available (host {socket.gethostname()}: {node['gpus']['reason']}; "
               f"{node['nics']['reason']})" in p.out, "nothing readable: one line says why")
        checks("warning" not in p.err, "nothing readable: no warning")
    off = os.path.join(tmp, "off")
    p = run(args, off, {"CCBENCH_TELEMETRY_NVML_REPLAY": args.fixture, "_extra": ["--telemetry", "off"]})
    checks(p.rc == ExitCode.ok and not os.path.exists(os.path.join(off, "telemetry.jsonl")),
           "--telemetry off: no series")
    checks(json.load(open(os.path.join(off, "run.json")))["context"]["telemetry"] == {"enabled": False},
           "--telemetry off: the context says so")
    checks(all(x["gpu_temp_max[C]"] == "" for x in rows(off)), "--telemetry off: empty columns")
    checks("# health" not in p.out, "--telemetry off: no health lines")
    # On by default: the same as --telemetry on (the context, the series file, the row columns).
    default = os.path.join(tmp, "default")
    p = run(args, default, {"CCBENCH_TELEMETRY_NVML_REPLAY": args.fixture, "_default": True})
    tel = json.load(open(os.path.join(default, "run.json")))["context"]["telemetry"]
    checks(p.rc == ExitCode.ok and tel["enabled"] and os.path.exists(os.path.join(default, "telemetry.jsonl")),
           "default: telemetry on, a series file written")
    checks(all(x["gpu_temp_max[C]"] != "" for x in rows(default)), "default: every row has its temperature")


def bad_input(args, tmp):
    out = os.path.join(tmp, "bad")
    p = run_command(mpirun_command(args.mpiexec, 2, args.ccbench) + [
        "--telemetry-interval", "5", "--out", out], timeout=120)
    checks(p.rc == ExitCode.usage and "--telemetry-interval: '5' is not valid; expected a whole number from 10 to 60000 (milliseconds)"
           in p.err and not os.path.exists(out), "--telemetry-interval 5: exit code 2 before MPI, says what is valid")
    p = run_command(mpirun_command(args.mpiexec, 2, args.ccbench) + [
        "--telemetry-counter-interval", "50", "--out", out], timeout=120)
    checks(p.rc == ExitCode.usage and "--telemetry-counter-interval: '50' is not valid; expected a whole number from 100 to 600000 "
           "(milliseconds)" in p.err and not os.path.exists(out), "--telemetry-counter-interval 50: exit code 2")
    p = run(args, out, {"_extra": ["--telemetry", "off", "--fail-on-health"]})
    checks(p.rc == ExitCode.usage and "--fail-on-health needs telemetry on" in p.err,
           "--fail-on-health with --telemetry off: exit 2")
    p = run(args, out, {"CCBENCH_TELEMETRY_NVML_REPLAY": os.path.join(tmp, "absent.json"), "_extra": []})
    checks(p.rc == ExitCode.usage and "cannot read the recorded NVML answers" in p.err,
           f"a replay file that does not exist: exit code 2 naming it (got {p.rc})")


def recorded_on_gpus(args, tmp):
    """NVML's answers recorded on 2 x H200 during a real run, played back: the NVLink CRC data
    counters that grew between its first two reads are warned about, each naming its GPU and link,
    and the rows carry the recorded temperatures, power and clocks."""
    answers = json.load(open(args.recorded))["answers"]
    grew = sorted((k.split()[0], k.split()[2]) for k, v in answers.items()
                  if " nvlink_crc_data " in k and len(v) >= 2 and v[1] > v[0])
    checks(grew, f"the recording has NVLink CRC data errors growing between its first reads: {grew}")
    out = os.path.join(tmp, "recorded")
    p = run(args, out, {"CCBENCH_TELEMETRY_NVML_REPLAY": args.recorded, "_extra": []})
    checks(p.rc == ExitCode.ok, f"recorded answers: exit code 0 (got {p.rc}: {p.err[-500:]})")
    for gpu, link in grew:
        checks(re.search(rf"GPU {gpu} \(NVIDIA H200\) NVLink {link}: CRC data errors grew by \d+", p.err),
               f"recorded answers: a warning names GPU {gpu} NVLink {link}")
    temps = {t for g in ("0", "1") for t in answers[f"{g} temperature_c"]}
    measured = [x for x in rows(out) if x["status"] == "ok"]
    checks(measured and all(int(float(x["gpu_temp_max[C]"])) in temps and float(x["gpu_power_mean[W]"]) > 0
                            and float(x["gpu_sm_clock_min[MHz]"]) > 0 for x in measured),
           f"recorded answers: every row carries a recorded temperature ({sorted(temps)}), power and clock")


def temp_limit(args, tmp):
    """--temp-limit changes the verdict: GPU 1 at a steady 70 C fails the health check under
    --temp-limit 60 (exit 4, the warning naming both) and passes under 75 (exit 0, no warning)."""
    answers = json.load(open(args.fixture))
    answers["answers"]["1 temperature_c"] = [70]
    path = os.path.join(tmp, "warm.json")
    json.dump(answers, open(path, "w"))
    host = socket.gethostname()
    for limit, rc in (("60", ExitCode.threshold), ("75", ExitCode.ok)):
        out = os.path.join(tmp, f"warm{limit}")
        p = run(args, out, {"CCBENCH_TELEMETRY_NVML_REPLAY": path, "_extra": ["--fail-on-health", "--temp-limit", limit]})
        warning = f"warning: host {host} GPU 1 (NVIDIA H200): temperature 70 C reached the limit of {limit} C"
        checks(p.rc == rc and (p.err.count(warning) == 1) == (rc == ExitCode.threshold),
               f"--temp-limit {limit} with GPU 1 at 70 C: exit {rc}, {'the' if rc else 'no'} warning (got exit "
               f"{p.rc}: {p.err[-300:]!r})")
        checks(all(x["gpu_temp_max[C]"] == "70" for x in rows(out) if x["status"] == "ok"),
               f"--temp-limit {limit}: every row shows 70 C")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--fixture", required=True)
    ap.add_argument("--recorded", required=True, help="NVML answers recorded on a real GPU node")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        recorded_on_gpus(args, tmp)
        healthy(args, tmp)
        unhealthy(args, tmp)
        temp_limit(args, tmp)
        slow_counters(args, tmp)
        without_hardware(args, tmp)
        bad_input(args, tmp)
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
