#!/usr/bin/env python3
"""Checks the model columns of a GPU run with --measure-ceilings and --model
(tests/gpu/gpu_tests.cmake, gpu_model_*): run.json next to results.csv.

Environment:
  CCBENCH_EXPECT_CEILING  the ceiling (links.json transport) the rows of our ring and tree are
                          predicted with: it is measured, and every measured ring and tree row has
                          model_link "measured ceiling", model_link_gbps = its bidirectional figure / 2,
                          a prediction, no reason, and efficiency = measured / predicted
  CCBENCH_EXPECT_ALSO     more ceilings that must be measured (space-separated), e.g. net/tcp:4,
                          the tcp streams of the tree all-reduce over net
The model's entry in run.json's context must say the rows were predicted as the kernels run them
(node.kernels of the file).
Usage: check_model.py results.csv
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import run_json  # noqa: E402
from testlib import problems_exit  # noqa: E402


def main(path):
    run = run_json(os.path.dirname(path))
    context = run["context"]
    want = os.environ["CCBENCH_EXPECT_CEILING"]
    problems = []
    ceilings = [c for c in context.get("link_ceilings", {}).get("ceilings", []) if c["transport"] == want]
    if not ceilings:
        return [f"no {want} ceiling in run.json: {context.get('link_ceilings')}"]
    link = ceilings[0]["bidir_GBps"] / 2
    measured = {c["transport"]: c["bidir_GBps"] for c in context["link_ceilings"]["ceilings"]}
    for also in os.environ.get("CCBENCH_EXPECT_ALSO", "").split():
        if not measured.get(also, 0) > 0:
            problems.append(f"no {also} ceiling in run.json: {sorted(measured)}")
    if "as the kernels run them" not in context.get("model", {}).get("kernels", ""):
        problems.append(f"the model did not use the file's kernel figures: {context.get('model')}")
    rows = [r for r in run["rows"] if r["impl"] in ("ring", "tree") and r["status"] == "ok"]
    if not rows:
        problems.append("no measured ring or tree row")
    for r in rows:
        where = f"{r['collective']} {r['impl']} {r['bytes']} B"
        if r["model_link"] != "measured ceiling" or abs(r["model_link_gbps"] - link) > 1e-9 * link:
            problems.append(f"{where}: link {r['model_link']} {r['model_link_gbps']}, not the {want} ceiling {link}")
        if r["model_reason"] or not r["predicted_busbw_gbps"] or r["predicted_busbw_gbps"] <= 0:
            problems.append(f"{where}: no prediction ({r['model_reason']})")
        elif abs(r["model_efficiency"] - r["busbw_gbps"] / r["predicted_busbw_gbps"]) > 1e-9:
            problems.append(f"{where}: efficiency {r['model_efficiency']} is not measured / predicted")
        else:
            print(f"{where}: measured {r['busbw_gbps']:.2f} predicted {r['predicted_busbw_gbps']:.2f} GB/s, "
                  f"efficiency {r['model_efficiency']:.2f}")
    return problems


if __name__ == "__main__":
    sys.exit(problems_exit("check_model", main(sys.argv[1]), "the model columns of ring and tree checked"))
