#!/usr/bin/env python3
"""After the cluster tier: no namespace, process or folder of a box of this build is left.

Usage: leftovers.py BUILD_DIR
Looks for the namespaces (cbx-<prefix>*), processes inside them and folders
(/run/ccbench-box/<prefix>*) of the boxes the cluster tests of BUILD_DIR make (tests/cluster/box.py
names them), removes what it finds with cluster-in-a-box.sh down, and fails naming it: a test
that leaves a box behind is a defect even when its checks passed. Exits 0 when nothing was left.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from box import SCRIPT, tier_prefix  # noqa: E402


def main():
    prefix = tier_prefix(sys.argv[1])
    p = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"SKIPPED: ip netns list failed ({p.stderr.strip()}): no box can have been made here")
        return 77
    spaces = sorted({m.group(0) for m in re.finditer(rf"^cbx-{prefix}[a-z0-9]*-(h\d+|sw)", p.stdout, re.M)})
    folders = sorted(f for f in os.listdir("/run/ccbench-box") if f.startswith(prefix)) \
        if os.path.isdir("/run/ccbench-box") else []
    names = sorted({s[len("cbx-"):].rsplit("-", 1)[0] for s in spaces} | set(folders))
    for name in names:
        d = subprocess.run(["bash", SCRIPT, "--name", name, "down"], capture_output=True, text=True)
        print(f"removed box {name}: {d.stderr.strip()}")
    if names:
        print(f"FAIL: boxes left by the cluster tests: namespaces {spaces}, folders {folders}")
        return 1
    print(f"ok: no namespace or folder of a box named {prefix}* is left")
    return 0


if __name__ == "__main__":
    sys.exit(main())
