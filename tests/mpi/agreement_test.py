#!/usr/bin/env python3
"""A tuning variable set on one rank only (a forgotten `mpirun -x`) ends the run at start-up with
exit code 2, within seconds, naming the ranks and the values each has; never a hang until the
deadline and never kernels with layouts their peers do not share.

Usage: agreement_test.py --ccbench PATH --mpiexec PATH [--gpu] VARIABLE=VALUE
With --gpu the ranks share the first GPU (skipped, exit 77, where there is none or no CUDA).
"""
import argparse
import os
import subprocess
import sys
import time

RANKS = 3
BOUND_S = 20  # mpirun start-up on a loaded 2-core machine, then one all-gather of the settings


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("setting")
    a = ap.parse_args()
    name, value = a.setting.split("=", 1)
    device = ["--device", "cpu"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", NCCL_NVLS_ENABLE="0")
    env.pop(name, None)
    if a.gpu:
        version = subprocess.run([a.ccbench, "--version"], capture_output=True, text=True).stdout
        gpus = subprocess.run("nvidia-smi -L 2>/dev/null | grep -c '^GPU'", shell=True, capture_output=True,
                              text=True).stdout.strip()
        if "CUDA     built in" not in version or gpus in ("", "0"):
            print("SKIPPED: needs a GPU and a build with CUDA")
            return 77
        env["CUDA_VISIBLE_DEVICES"] = "0"
        device = ["--device", "gpu", "--share-gpus", "--impl", "ring,tree"]
    # Rank 0 alone gets the variable (the shell sees its rank in OMPI_COMM_WORLD_RANK).
    script = f'[ "$OMPI_COMM_WORLD_RANK" = 0 ] && export {name}={value}; exec "$@"'
    cmd = [a.mpiexec, "--oversubscribe", "--bind-to", "none", "-np", str(RANKS), "-x", "CUDA_VISIBLE_DEVICES",
           "sh", "-c", script, "sh", a.ccbench, *device, "--collective", "allreduce", "-b", "1K", "-e", "64K",
           "-n", "2", "-w", "1", "--out", "none", "--timeout", "60"]
    if "CUDA_VISIBLE_DEVICES" not in env:
        cmd[cmd.index("-x"):cmd.index("-x") + 2] = []
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    elapsed = time.monotonic() - start
    out = p.stdout + p.stderr
    problems = []
    if p.returncode != 2:
        problems.append(f"exit code {p.returncode}, expected 2 (usage error)")
    if elapsed > BOUND_S:
        problems.append(f"took {elapsed:.1f} s, bound {BOUND_S} s")
    for text in ("every rank must have the same tuning variables", f"rank 0 (host", f"{name}={value}",
                 "rank 1 (host", "no tuning variable set", "mpirun -x"):
        if text not in out:
            problems.append(f"the message lacks '{text}'")
    if out.count("every rank must have the same tuning variables") != 1:
        problems.append(f"the message is printed {out.count('every rank must have the same tuning variables')} times, "
                        "expected once")
    print(out[-3000:])
    for pr in problems:
        print("FAIL:", pr)
    print(f"agreement {a.setting} on rank 0 only: exit code {p.returncode} after {elapsed:.1f} s, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
