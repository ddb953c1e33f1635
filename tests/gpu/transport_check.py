#!/usr/bin/env python3
"""Checks the `transport` column and the skip reasons of a GPU run over one path
(tests/gpu/gpu_tests.cmake, gpu_transport_* and gpu_emulated_*).

Environment:
  CCBENCH_EXPECT          "impl=transport impl=transport ..." every measured row of impl has this transport, and
                          there is at least one ("~TEXT": the transport contains TEXT)
  CCBENCH_EXPECT_SKIPPED  impl,impl/collective:TEXT every row of these impls (of that collective only,
                          where one is named) is skipped, its reason holding TEXT
  CCBENCH_EXPECT_ALGORITHM_HAS  TEXT: the `algorithm` column of every measured row (eager and graph) of
                          the impls in CCBENCH_EXPECT holds TEXT
  CCBENCH_EXPECT_ALGORITHM_FROM  BYTES:TEXT: that column holds TEXT in the rows of BYTES and more, and
                          not in the smaller ones
Usage: transport_check.py results.csv
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import rows as read_rows  # noqa: E402
from testlib import problems_exit  # noqa: E402


def main(path):
    rows = read_rows(path)
    problems = []
    for item in filter(None, os.environ.get("CCBENCH_EXPECT", "").split()):
        impl, want = item.split("=", 1)
        mine = [r for r in rows if r["impl"] == impl and r["status"] == "ok"]
        if not mine:
            problems.append(f"no measured row of {impl}")
        for r in mine:
            got = r["transport"]
            ok = want[1:] in got if want.startswith("~") else got == want
            if not ok:
                problems.append(f"{r['collective']}/{impl} {r['size[B]']} B: transport '{got}', expected '{want}'")
            if r["wrong[elements]"] not in ("0", ""):
                problems.append(f"{r['collective']}/{impl} {r['size[B]']} B: {r['wrong[elements]']} wrong elements")
            has = os.environ.get("CCBENCH_EXPECT_ALGORITHM_HAS", "")
            from_bytes, _, text = os.environ.get("CCBENCH_EXPECT_ALGORITHM_FROM", "").partition(":")
            if from_bytes:  # the text from that size up, and only there
                has = text if int(r["size[B]"]) >= int(from_bytes) else ""
                if not has and text in r.get("algorithm", ""):
                    problems.append(f"{r['collective']}/{impl} {r['size[B]']} B: algorithm '{r.get('algorithm')}' "
                                    f"holds '{text}' below {from_bytes} B")
            if has and has not in r.get("algorithm", ""):
                problems.append(f"{r['collective']}/{impl} {r['size[B]']} B {r.get('mode')}: algorithm "
                                f"'{r.get('algorithm')}', expected it to hold '{has}'")
    skipped = os.environ.get("CCBENCH_EXPECT_SKIPPED", "")
    if skipped:
        impls, text = skipped.split(":", 1)
        for item in impls.split(","):
            impl, _, coll = item.partition("/")
            mine = [r for r in rows if r["impl"] == impl and coll in ("", r["collective"])]
            if not mine:
                problems.append(f"no row of {item}")
            for r in mine:
                if r["status"] != "skipped" or text not in r["reason"]:
                    problems.append(f"{r['collective']}/{impl}: status '{r['status']}' reason '{r['reason']}', "
                                    f"expected skipped with '{text}'")
    return problems_exit("transport_check", problems, f"{len(rows)} rows checked", shown=40)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
