#!/usr/bin/env python3
"""What ccbench says it implements against what the test oracle expects: `ccbench list --json`
(the registry and each implementation's own collectives() in its code) and tests/expected_cases.py
(IMPLEMENTS, IMPLS_OF, DEFAULT_IMPLS from the support matrix collectives/implementations.def;
COLLECTIVES, written apart from the code) must agree on every collective name and its order,
every implementation of each device and its order, the default set, what each is built on, and the
collectives of every implementation built in. The code's declarations and the matrix are two
opinions that must match: a change to either alone fails here.

Usage: support_matrix.py --ccbench PATH     compare the binary's listing with the oracle
       support_matrix.py --self-test        the comparison on listings made to disagree
"""
import argparse
import copy
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expected_cases  # noqa: E402
import implementations  # noqa: E402  (tests/lib, on the path expected_cases gave)
from runs import run  # noqa: E402
from testlib import Checks, ExitCode, Failed, check, main_guard, need  # noqa: E402


def problems_of(listing):
    """(problems, implementations not built in) of a `list --json` document against the oracle."""
    problems, not_built = [], []
    if listing.get("collectives") != expected_cases.COLLECTIVES:
        problems.append(f"collectives {listing.get('collectives')}, the oracle has {expected_cases.COLLECTIVES}")
    entries = listing.get("implementations", [])
    for device, names in expected_cases.IMPLS_OF.items():
        got = [e["name"] for e in entries if e["device"] == device]
        if got != names:
            problems.append(f"{device} implementations {got}, the oracle has {names} (in this order)")
    for e in entries:
        key = (e["device"], e["name"])
        if key not in expected_cases.IMPLEMENTS:
            continue  # said above, as a name the oracle does not list
        needs = implementations.SUPPORT[key].needs
        if e.get("needs") != needs:
            problems.append(f"{e['device']} {e['name']}: needs {e.get('needs')}, the matrix says {needs}")
        by_default = e["name"] in expected_cases.DEFAULT_IMPLS[e["device"]]
        if e["by_default"] != by_default:
            problems.append(f"{e['device']} {e['name']}: by_default is {e['by_default']}, the oracle says {by_default}")
        if not e["built_in"]:
            not_built.append(f"{e['device']} {e['name']}")
            continue
        got, want = set(e["collectives"]), expected_cases.IMPLEMENTS[key]
        if got != want:
            problems.append(f"{e['device']} {e['name']} implements {sorted(got)}; the oracle expects {sorted(want)} "
                            f"(only ccbench: {sorted(got - want)}, only the oracle: {sorted(want - got)})")
    return problems, not_built


def oracle_listing():
    """The listing the oracle expects of a build with everything in it."""
    return {"collectives": list(expected_cases.COLLECTIVES),
            "implementations": [{"name": n, "device": d, "built_in": True,
                                 "needs": implementations.SUPPORT[(d, n)].needs,
                                 "by_default": n in expected_cases.DEFAULT_IMPLS[d],
                                 "collectives": [c for c in expected_cases.COLLECTIVES
                                                 if c in expected_cases.IMPLEMENTS[(d, n)]]}
                                for d, names in expected_cases.IMPLS_OF.items() for n in names]}


def self_test():
    def entry(doc, device, name):
        return next(e for e in doc["implementations"] if e["device"] == device and e["name"] == name)

    def drop_collective(doc):
        entry(doc, "cpu", "ring")["collectives"].remove("broadcast")

    def add_collective(doc):
        entry(doc, "cpu", "tree")["collectives"].append("reducescatter")

    def flip_default(doc):
        entry(doc, "gpu", "best")["by_default"] = False

    def swap_order(doc):
        impls = doc["implementations"]
        impls[1], impls[2] = impls[2], impls[1]

    def wrong_needs(doc):
        entry(doc, "cpu", "mpi")["needs"] = "always"

    def rename(doc):
        entry(doc, "gpu", "ce")["name"] = "copy-engine"

    def drop_collective_name(doc):
        doc["collectives"].remove("gather")

    checks = Checks("support matrix self-test")
    good = oracle_listing()
    problems, _ = problems_of(good)
    checks(not problems, "the oracle's own listing passes", str(problems))
    for edit in (drop_collective, add_collective, flip_default, swap_order, wrong_needs, rename, drop_collective_name):
        doc = copy.deepcopy(good)
        edit(doc)
        checks(problems_of(doc)[0], f"{edit.__name__} is found")
    not_built = copy.deepcopy(good)
    entry(not_built, "gpu", "oneshot").update(built_in=False, collectives=[])
    problems, missing = problems_of(not_built)
    checks(not problems and missing == ["gpu oneshot"], "an implementation not built in is left unchecked, and named",
           f"{problems}, {missing}")
    return checks.exit_code()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not a.ccbench:
        ap.error("--ccbench PATH or --self-test")
    p = run([a.ccbench, "list", "--json"], timeout=60)
    check(p.rc == ExitCode.ok, f"ccbench list --json exited {p.rc}: {p.err.strip()}")
    try:
        listing = json.loads(p.out)
    except json.JSONDecodeError as e:
        raise Failed(f"ccbench list --json printed no JSON ({e}): {p.out[:200]!r}") from None
    problems, not_built = problems_of(listing)
    need(not problems, f"{len(problems)} disagreement(s) between ccbench list --json and the oracle",
         "\n".join(problems))
    built = len(listing["implementations"]) - len(not_built)
    print(f"support matrix: {built} implementations built in checked against the oracle"
          f"{'; not built in here, so their collectives unchecked: ' + ', '.join(not_built) if not_built else ''}; "
          "no disagreement")
    return 0


if __name__ == "__main__":
    sys.exit(main_guard(main))
