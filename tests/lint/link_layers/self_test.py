#!/usr/bin/env python3
"""The linker's layer rule, shown to work (scripts/cmake/CcbenchLayers.cmake): a library in the role
of core/ calls a harness engine function (planted_core.cpp). Linked whole against core alone, as
link_layer.core is, the link must fail with an undefined reference naming that function; linked
against the engine as well (the upper library allowed), it must succeed.

Usage: tests/lint/link_layers/self_test.py BUILD_DIR PLANTED_TARGET ALLOWED_TARGET ALLOWED_FILE
Exit 0 when both hold, 1 otherwise.
"""
import os
import subprocess
import sys

SYMBOL = "ccbench::overlap_valid"


def build(build_dir, target):
    run = subprocess.run(["cmake", "--build", build_dir, "--target", target], capture_output=True, text=True)
    return run.returncode, run.stdout + run.stderr


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    build_dir, planted, allowed, allowed_file = sys.argv[1:]
    ok = True
    rc, out = build(build_dir, planted)
    refused = rc != 0 and "undefined reference" in out and SYMBOL in out
    print(f"upward call linked against core alone: {'refused, naming ' + SYMBOL if refused else 'NOT refused'}")
    if not refused:
        print(out[-4000:])
        ok = False
    if os.path.exists(allowed_file):
        os.remove(allowed_file)  # link it again, not just find it there
    rc, out = build(build_dir, allowed)
    linked = rc == 0 and os.path.isfile(allowed_file)
    print(f"the same call with the engine allowed: {'linked' if linked else 'NOT linked'}")
    if not linked:
        print(out[-4000:])
        ok = False
    print(f"link layers self-test: {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
