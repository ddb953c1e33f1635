#!/usr/bin/env python3
"""ccbench topo under mpirun: the cluster gathered once on rank 0, topology.json written into the
results folder (--out, else a new ccbench-results/<UTC time>-<host>/, never the current folder)
with a line saying where, and --expect naming every difference with exit code 4 (or 0 when every
host matches)."""
import glob
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import launch  # noqa: E402
from testlib import ExitCode, main_guard, need  # noqa: E402


def run(ccbench, mpiexec, workdir, *args):
    r = launch(mpiexec, 2, ccbench, ["topo", *args], cwd=workdir, timeout=120)
    return r.rc, r.output


def main():
    ccbench, mpiexec = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        rc, out = run(ccbench, mpiexec, d)
        need(rc == ExitCode.ok, "plain topo exits 0", out)
        need(out.count("== host ") == 1, "one block per host, printed once (not once per rank)", out)
        need("rank 0: CPUs" in out and "rank 1: CPUs" in out, "every rank's CPU binding", out)
        # Before, topology.json went into the current folder, overwriting one there without a word.
        need(not os.path.exists(os.path.join(d, "topology.json")), "nothing written into the current folder", out)
        written = re.search(r"^# topology written to (ccbench-results/[^/]+/topology\.json)$", out, re.M)
        need(written is not None and os.path.exists(os.path.join(d, written.group(1))),
             "topology.json in a new results folder, and where said", out)
        rc, out = run(ccbench, mpiexec, d)
        need(rc == ExitCode.ok and len(glob.glob(os.path.join(d, "ccbench-results", "*", "topology.json"))) == 2,
             "a second topo writes a second folder, the first untouched", out)
        rc, out = run(ccbench, mpiexec, d, "--json", "--out", "mine")
        need(rc == ExitCode.ok and "# topology written to mine/topology.json" in out,
             "--out FOLDER, said on stderr with --json", out)
        with open(os.path.join(d, "mine", "topology.json")) as f:
            cluster = json.load(f)
        need(len(cluster["hosts"]) == 1 and len(cluster["hosts"][0]["ranks"]) == 2, "topology.json: 1 host, 2 ranks", out)
        cores = cluster["hosts"][0]["node"]["cpu"]["cores"]
        # The kernel's TCP buffers, as this test reads them itself, in the JSON and in words.
        kernel = {}
        for key, path in [("tcp_rmem", "ipv4/tcp_rmem"), ("tcp_wmem", "ipv4/tcp_wmem"), ("rmem_max", "core/rmem_max"),
                          ("wmem_max", "core/wmem_max")]:
            with open(f"/proc/sys/net/{path}") as f:
                values = [int(v) for v in f.read().split()]
            kernel[key] = values if len(values) > 1 else values[0]
        need(cluster["hosts"][0]["node"]["tcp"] == kernel, f"the node's tcp buffers are the kernel's: {kernel}", out)
        rc, out = run(ccbench, mpiexec, d, "--out", "none")
        words = (f"tcp buffers (min default max): receive {' '.join(map(str, kernel['tcp_rmem']))}, send "
                 f"{' '.join(map(str, kernel['tcp_wmem']))}; asked for at most {kernel['rmem_max']} / {kernel['wmem_max']}")
        need(rc == ExitCode.ok and words in out, f"topo says them: {words}", out)

        good = os.path.join(d, "good.yaml")
        with open(good, "w") as f:
            f.write(f"hosts: 1\ncores_per_host: {cores}\nmin_tcp_rmem_default: {kernel['tcp_rmem'][1]}\n")
        rc, out = run(ccbench, mpiexec, d, "--expect", good, "--out", "none")
        need(rc == ExitCode.ok and "every host matches" in out, "a matching expectation passes", out)

        bad = os.path.join(d, "bad.yaml")
        with open(bad, "w") as f:
            f.write(f"hosts: 2\ncores_per_host: {cores + 1}\ngpus_per_host: 8\nnics_per_host: 8\n"
                    f"min_tcp_rmem_default: {kernel['tcp_rmem'][1] + 1}\n")
        rc, out = run(ccbench, mpiexec, d, "--expect", bad, "--out", "none")
        need(rc == ExitCode.threshold, f"differences exit with code {ExitCode.threshold.describe()}", out)
        for text in ["DIFFERENCE: 1 hosts in the job, expected 2",
                     f"CPU cores, expected {cores + 1}", "no GPUs found", "expected 8",
                     f"net.ipv4.tcp_rmem default {kernel['tcp_rmem'][1]} bytes, expected at least "
                     f"{kernel['tcp_rmem'][1] + 1}", "5 difference(s)"]:
            need(text in out, f"names the difference: {text}", out)

        broken = os.path.join(d, "broken.yaml")
        with open(broken, "w") as f:
            f.write("hosts: 1\ngpus_per_hots: 8\n")
        rc, out = run(ccbench, mpiexec, d, "--expect", broken)
        need(rc == ExitCode.usage and "broken.yaml:2: unknown key 'gpus_per_hots'" in out,
             "a bad file is a usage error naming its line", out)
    print("topo runs: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main_guard(main))
