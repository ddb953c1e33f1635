#!/usr/bin/env python3
"""scripts/sizes.py against ccbench's own spellings (core/size.h): every line of
tests/golden/size_spellings.txt, which the unit test CoreSize.SpellingsGolden writes from
format_size and human_size, must come out the same from the Python formatters.

Usage: sizes_check.py [--golden FILE]"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
from sizes import format_size, human_size  # noqa: E402 (scripts/sizes.py)

MIN_LINES = 20  # the unit test spells 24 sizes; fewer means the file was cut


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--golden", default=os.path.join(HERE, "golden", "size_spellings.txt"))
    a = p.parse_args()
    with open(a.golden, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    wrong = []
    for line in lines:
        n, short, human = line.split("\t")
        got = (format_size(int(n)), human_size(int(n)))
        if got != (short, human):
            wrong.append(f"{n}: ccbench spells {short!r} and {human!r}, scripts/sizes.py {got[0]!r} and {got[1]!r}")
    if len(lines) < MIN_LINES:
        wrong.append(f"{a.golden}: {len(lines)} sizes, expected at least {MIN_LINES}")
    for w in wrong:
        print(f"FAIL: {w}")
    if wrong:
        return 1
    print(f"ok: {len(lines)} sizes spelled alike by core/size.h and scripts/sizes.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
