#!/usr/bin/env python3
"""A tuning variable set on one rank only (a forgotten `mpirun -x`) ends the run at start-up with
exit code 2, within seconds, naming the ranks and the values each has; never a hang until the
deadline and never kernels with layouts their peers do not share.

Usage: tuning_agreement.py --ccbench PATH --mpiexec PATH [--gpu] VARIABLE=VALUE
With --gpu the ranks share the first GPU (skipped, exit 77, where there is none or no CUDA).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import launch, run  # noqa: E402
from testlib import Checks, ExitCode, Skipped, main_guard  # noqa: E402

RANKS = 3
BOUND_S = 20  # mpirun start-up on a loaded 2-core machine, then one all-gather of the settings
AGREE = "every rank must have the same tuning variables"


def gpu_or_skip(ccbench):
    version = run([ccbench, "--version"]).out
    gpus = run(["sh", "-c", "nvidia-smi -L 2>/dev/null | grep -c '^GPU'"]).out.strip()
    if "CUDA     built in" not in version or gpus in ("", "0"):
        raise Skipped("needs a GPU and a build with CUDA")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("setting")
    a = ap.parse_args()
    name, value = a.setting.split("=", 1)
    device = ["--device", "cpu"]
    env = {"NCCL_NVLS_ENABLE": "0"}
    if a.gpu:
        gpu_or_skip(a.ccbench)
        env["CUDA_VISIBLE_DEVICES"] = "0"
        device = ["--device", "gpu", "--share-gpus", "--impl", "ring,tree"]
    # Rank 0 alone gets the variable (the shell sees its rank in OMPI_COMM_WORLD_RANK).
    r = launch(a.mpiexec, RANKS, a.ccbench,
               [*device, "--collective", "allreduce", "-b", "1K", "-e", "64K", "-n", "2", "-w", "1", "--out", "none",
                "--timeout", "60"],
               env=env, export=[k for k in env if k == "CUDA_VISIBLE_DEVICES"], unset=[name],
               per_rank=f'[ "$OMPI_COMM_WORLD_RANK" = 0 ] && export {name}={value};', flags=["--bind-to", "none"],
               timeout=120)
    print(r.output[-3000:])
    checks = Checks(f"agreement {a.setting} on rank 0 only")
    checks(r.rc == ExitCode.usage, f"exit code {r.rc}, expected {ExitCode.usage.describe()}")
    checks(r.seconds <= BOUND_S, f"took {r.seconds:.1f} s, bound {BOUND_S} s")
    for text in (AGREE, "rank 0 (host", f"{name}={value}", "rank 1 (host", "no tuning variable set", "mpirun -x"):
        checks(text in r.output, f"the message holds '{text}'")
    checks(r.output.count(AGREE) == 1, f"the message is printed {r.output.count(AGREE)} times, expected once")
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main_guard(main))
