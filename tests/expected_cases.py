#!/usr/bin/env python3
"""The rows a ccbench run must write, computed from its command line alone, and the bandwidth
figures every measured row must agree with.

Used by tests/check_results.py (every end-to-end run it decides) and by the test scripts that
read results themselves. Nothing here reads ccbench's output to decide what is expected: the
collectives' shapes and bus factors are nccl-tests' (doc/PERFORMANCE.md), the implementations and
their collectives those of the support matrix (collectives/implementations.def, the one place that
declares them; unit.support_matrix checks each implementation's own declaration in the code
against it), and the reasons a case may be skipped those docs/records.md and the implementations
document.

    expected = plan_from_command(argv)      # None when argv is not a ccbench run we can model
    failures = check_case_set(rows, expected)
    failures += check_bandwidth(rows)

Rows are results.csv rows as dicts (csv.DictReader). A run's rows come per case (group,
collective, implementation, dtype, op) in a fixed order: a case the implementation cannot run is
one skipped row; otherwise the in-place row of a collective without an in-place form, then for
every size and placement one row (skipped when the size holds less than one element per rank),
each measured eager row followed by its CUDA-graph row under -G. Anything missing, extra, out of
order or skipped for a reason not allowed for that implementation and collective is a failure.
"""
import csv
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import implementations  # noqa: E402

# ---- The vocabulary (nccl-tests' names; ccbench's aliases) --------------------------------------

DTYPE_SIZES = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "half": 2, "bfloat16": 2,
               "float": 4, "double": 8, "f8e4m3": 1, "f8e5m2": 1}
DTYPE_ALIASES = {"char": "int8", "int": "int32", "float16": "half", "fp16": "half", "bf16": "bfloat16",
                 "float32": "float", "fp32": "float", "float64": "double", "fp64": "double", "fp8_e4m3": "f8e4m3",
                 "e4m3": "f8e4m3", "fp8_e5m2": "f8e5m2", "e5m2": "f8e5m2"}
FP8 = {"f8e4m3", "f8e5m2"}
OPS = ["sum", "prod", "min", "max", "avg"]
COLLECTIVES = ["allreduce", "allgather", "reducescatter", "broadcast", "sendrecv", "alltoall", "alltoallv", "reduce",
               "gather", "scatter"]
COLLECTIVE_ALIASES = {"all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reducescatter",
                      "all_to_all": "alltoall"}
REDUCING = {"allreduce", "reducescatter", "reduce"}
ROOTED = {"broadcast", "reduce", "gather", "scatter"}
NO_IN_PLACE = {"sendrecv", "alltoall", "alltoallv"}


def size_units(coll, n):
    """How many pieces of `count` elements a requested size covers (nccl-tests: all-gather,
    reduce-scatter, all-to-all, gather and scatter sizes are the whole n-piece buffer; alltoallv's
    n(n+1)/2 units; the others one rank's input)."""
    if coll in ("allgather", "reducescatter", "alltoall", "gather", "scatter"):
        return n
    if coll == "alltoallv":
        return n * (n + 1) // 2
    return 1


def shape(coll, dtype, n, requested):
    """(count per piece, algbw bytes) of a requested size, rounded down to whole elements."""
    esz = DTYPE_SIZES[dtype]
    count = requested // esz // size_units(coll, n)
    return count, count * size_units(coll, n) * esz


def bus_factor(coll, n):
    """busbw / algbw, nccl-tests doc/PERFORMANCE.md: all-reduce 2(n-1)/n; all-gather,
    reduce-scatter, all-to-all, gather, scatter (n-1)/n; broadcast, reduce, sendrecv 1; alltoallv
    the share of a rank's data that leaves it, 1 - 2/(n(n+1))."""
    if coll == "allreduce":
        return 2.0 * (n - 1) / n
    if coll in ("allgather", "reducescatter", "alltoall", "gather", "scatter"):
        return (n - 1) / n
    if coll == "alltoallv":
        return 1.0 - 2.0 / (n * (n + 1))
    return 1.0


# ---- Implementations: what each declares, and why a case of it may be skipped -------------------

# The support matrix, collectives/implementations.def (tests/lib/implementations.py reads it):
# what each implementation implements on each device, their order (`--impl all`) and the default
# set. unit.support_matrix checks the binary's own declarations (`ccbench list --json`) against it.
IMPLEMENTS = {key: set(row.collectives) for key, row in implementations.SUPPORT.items()}
IMPLS_OF = {device: implementations.names_of(device) for device in ("cpu", "gpu")}
DEFAULT_IMPLS = {device: implementations.names_of(device, by_default=True) for device in ("cpu", "gpu")}


class Skip:
    """A skip reason a case may carry without being a failure: where it applies (implementations,
    collectives, a condition on the case and the run) and at which level (a whole case, or one
    size)."""

    def __init__(self, pattern, impls=None, colls=None, when=None, level="case"):
        self.pattern, self.impls, self.colls, self.when, self.level = re.compile(pattern), impls, colls, when, level

    def allows(self, device, impl, coll, dtype, op, plan, reason, level):
        return (level == self.level and (self.impls is None or (device, impl) in self.impls)
                and (self.colls is None or coll in self.colls)
                and (self.when is None or self.when(plan, dtype, op)) and self.pattern.search(reason) is not None)


_CPU_IMPLS = {("cpu", i) for i in implementations.names_of("cpu", needs="always")}  # ours, not MPI's
_GPU_KERNELS = {("gpu", i) for i in implementations.names_of("gpu", needs="cuda")}
_NCCL = {("gpu", i) for i in implementations.names_of("gpu", needs="nccl")}
# Reasons that depend on the machine, the library or the options, not on the case's arithmetic.
CONTEXT_SKIPS = [
    # Open MPI's AVX sum saturates 8-bit integers where ccbench's sums wrap around.
    Skip(r"^this MPI library saturates u?int8 MPI_SUM", {("cpu", "mpi")}, REDUCING,
         lambda p, t, o: t in ("int8", "uint8") and o == "sum"),
    # sendrecv is nccl-tests' rank + 1 pattern, a ring pattern only in rank order.
    Skip(r"^sendrecv sends to rank \+ 1, which is not a neighbour on --ring-order ", {("cpu", "ring")}, {"sendrecv"},
         lambda p, t, o: p.ring_order not in (None, "rank")),
    Skip(r"^transport shm connects ranks of one node only", _CPU_IMPLS, None, lambda p, t, o: p.transport == "shm"),
    # GPU: paths, shared GPUs, libraries and sizes (collectives/gpu, collectives/nccl).
    Skip(r"reads and writes peer GPU memory directly, so it runs over p2p only", _GPU_KERNELS),
    Skip(r"^copy-engine staging over host .* needs a GPU per rank", _GPU_KERNELS),
    Skip(r"^our GPU kernels address at most \d+ ranks", _GPU_KERNELS),
    Skip(r"^--tree binary: the GPU tree all-reduce runs the double binary tree only", {("gpu", "tree")}, {"allreduce"}),
    Skip(r"^--transport ib: ", _GPU_KERNELS),
    Skip(r": (p2p maps peer GPU memory|host shares pinned memory) within one node|have no peer access", _GPU_KERNELS),
    Skip(r"^hier('s ring| needs| all-gather needs| cannot run)", {("gpu", "hier")}),
    Skip(r"and NCCL refuses two ranks of one node on one GPU", _NCCL),
    Skip(r"^NCCL could not be loaded: ", _NCCL),
    Skip(r"^symmetric windows need NCCL >= 2\.27", {("gpu", "nccl-symm")}),
    # NCCL's fp8: from 2.24, reduced on compute capability 9.0 and later (docs/guides/training.md).
    Skip(r"^f8e(4m3|5m2) needs NCCL >= 2\.24", _NCCL, None, lambda p, t, o: t in FP8),
    Skip(r"^NCCL reduces f8e(4m3|5m2) on compute capability >= 9\.0 only", _NCCL, REDUCING,
         lambda p, t, o: t in FP8),
    Skip(r"^NCCL does not take avg of f8e(4m3|5m2)", _NCCL, REDUCING, lambda p, t, o: t in FP8 and o == "avg"),
    # --nccl-config: a key the loaded NCCL lacks, or one its environment variable overrides.
    Skip(r"^--nccl-config (\S+ needs NCCL >= |minCTAs=\d+ is above maxCTAs)|in the environment overrides "
         r"--nccl-config ", _NCCL, None,
         lambda p, t, o: bool(p.nccl_configs)),
    Skip(r"^oneshot handles up to \d+ bytes per rank", {("gpu", "oneshot")}, {"allreduce"}, level="size"),
    Skip(r"^hier's all-gather reorders with strided copies", {("gpu", "hier")}, {"allgather"}, level="size"),
]
# An implementation the run cannot offer at all: one skipped row per collective.
PLAN_SKIP = re.compile(r"^(\S+ runs on (cpu|gpu) ranks and this run uses (cpu|gpu) ranks \(--device\)|"
                       r"this ccbench was built without (CUDA|NCCL) )")


# ---- The command line ---------------------------------------------------------------------------

class Plan:
    """What a ccbench run asks for, from its arguments (defaults as `ccbench run --help` states)."""

    def __init__(self):
        self.ranks = None
        self.device = None  # auto: the caller fills in what the run found (run.json's context)
        self.collectives = ["allreduce", "allgather"]
        self.impls = ["default"]
        self.dtypes = ["float"]
        self.ops = ["sum"]
        self.min_bytes, self.max_bytes, self.factor, self.increment = 8, None, 2.0, 0
        self.in_place = "both"
        self.graphs = 0
        self.root = 0
        self.cycles = 1
        self.groups = "world"
        self.emulate_nodes = 1
        # Real hosts the launcher spreads the ranks over, in rank-order blocks (mpirun --map-by
        # ppr:K:node; check_results.py --hosts); each is split again by --emulate-nodes.
        self.hosts = 1
        self.ring_order = None
        self.transport = "auto"
        self.nccl_configs = []  # --nccl-config: the nccl_config label of each combination
        self.extra_skips = []  # (impl or "", collective or "", text): more reasons this test allows

    def sizes(self):
        """The sweep, as nccl-tests: -b, then x -f (at least +1) or + -i, up to -e."""
        out, size = [], self.min_bytes
        while True:
            out.append(size)
            nxt = size + self.increment if self.increment else max(int(math.floor(size * self.factor)), size + 1)
            if nxt > self.max_bytes:
                return out
            size = nxt

    def implementations(self):
        if self.impls == ["default"]:
            return list(DEFAULT_IMPLS[self.device])
        if self.impls == ["all"]:
            return list(IMPLS_OF[self.device])
        return list(self.impls)

    def variants(self, impl):
        """The case names of an implementation: NCCL's once per --nccl-config combination,
        "nccl[maxCTAs=4]" (rows carry the label in their nccl_config column)."""
        if self.nccl_configs and ("gpu", impl) in _NCCL and self.device == "gpu":
            return [f"{impl}[{c}]" for c in self.nccl_configs]
        return [impl]

    def groups_of(self):
        """[(name, ranks)] of the run's groups (harness/groups/groups.h: world, node, rails, pairs, a file)."""
        n = self.ranks
        if self.groups == "world":
            return [("world", n)]
        if self.groups == "pairs":
            return [(f"pair {a}-{b}", 2) for a in range(n) for b in range(a + 1, n)]
        node_of = [r * self.emulate_nodes * self.hosts // n for r in range(n)]
        if self.groups == "node":
            return [(f"node{k}", node_of.count(k)) for k in sorted(set(node_of))]
        if self.groups == "rails":
            local = [r - node_of.index(node_of[r]) for r in range(n)]
            return [(f"rail{k}", local.count(k)) for k in sorted(set(local))]
        raise ValueError(f"--groups {self.groups}: a groups file is not modelled; state the row count instead")


def parse_size(text):
    m = re.fullmatch(r"([0-9]+)([KMGT]?)(I?B)?", text.upper())
    if not m:
        raise ValueError(f"size {text!r}")
    return int(m.group(1)) << (10 * " KMGT".index(m.group(2) or " "))


def _names(text, table, aliases, what):
    if text == "all":
        return list(table)
    out = []
    for n in text.split(","):
        n = aliases.get(n, n)
        if n not in table:
            raise ValueError(f"{what} {n!r}")
        out.append(n)
    return out


def nccl_config_labels(axes):
    """The nccl_config labels of --nccl-config's combinations, in ccbench's order (the last key
    varies fastest; "key=value" joined by ';')."""
    labels = [""]
    for axis in axes:
        key, _, values = axis.partition("=")
        labels = [f"{l};{key}={v}" if l else f"{key}={v}" for l in labels for v in values.split(",")]
    return labels if axes else []


def base_impl(case_impl):
    """The implementation of a case name: "nccl" of "nccl[maxCTAs=4]"."""
    return case_impl.split("[", 1)[0]


def _ranks_of_launcher(argv):
    """-np N of the mpirun before the ccbench binary (1 without a launcher)."""
    for i, a in enumerate(argv[:-1]):
        if a in ("-np", "-n", "--np", "-c"):
            return int(argv[i + 1])
    return 1


# Options of `ccbench run` that take a value but change nothing modelled here.
_VALUE_OPTIONS = {"-n", "--iters", "-w", "--warmup_iters", "-m", "--agg_iters", "-c", "--check", "-a", "--average",
                  "-u", "--seed", "--pattern", "-T", "--timeout", "--out", "--format", "--baseline", "--progress-interval",
                  "--accept", "--min-busbw", "--db", "--ceilings", "--model", "--straggler-threshold",
                  "--group-outlier-threshold", "--tree", "--telemetry", "--telemetry-interval", "--temp-limit",
                  "--telemetry-record", "--ib-dev", "--ib-port", "--ib-gid-index", "--ib-sl", "--ib-tc",
                  "--ib-mtu", "--gpudirect", "--nccl-library", "-J", "--output_file", "-t", "-g", "-p", "-z", "-R",
                  "-I", "-y", "-s", "--energy", "--overlap", "--telemetry-counter-interval", "--ofi-provider",
                  "--ofi-domain", "--ofi-protocol"}
_FLAGS = {"--share-gpus", "--quiet", "--measure-ceilings", "--serial", "--fail-on-health"}


def plan_from_command(argv):
    """The Plan of a command line that runs ccbench (directly or under mpirun), or None when it
    runs no ccbench or uses an option this model does not know (the caller then says so)."""
    at = next((i for i, a in enumerate(argv) if a.rsplit("/", 1)[-1] == "ccbench"), None)
    if at is None:
        return None
    p = Plan()
    p.ranks = _ranks_of_launcher(argv[:at])
    args = argv[at + 1:]
    if args and args[0] == "run":
        args = args[1:]
    i, axes = 0, []
    while i < len(args):
        a = args[i]
        key, _, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        if key in _FLAGS:
            i += 1
            continue
        if inline:
            v = inline
            i += 1
        elif i + 1 < len(args):
            v = args[i + 1]
            i += 2
        else:
            raise ValueError(f"option {a} without a value")
        if key in ("-b", "--minbytes"):
            p.min_bytes = parse_size(v)
        elif key in ("-e", "--maxbytes"):
            p.max_bytes = parse_size(v)
        elif key in ("-f", "--stepfactor"):
            p.factor = float(v)
        elif key in ("-i", "--stepbytes"):
            p.increment = parse_size(v)
        elif key in ("-d", "--datatype"):
            p.dtypes = _names(v, DTYPE_SIZES, DTYPE_ALIASES, "data type")
        elif key in ("-o", "--op"):
            p.ops = _names(v, OPS, {}, "op")
        elif key == "--collective":
            p.collectives = _names(v, COLLECTIVES, COLLECTIVE_ALIASES, "collective")
        elif key == "--impl":
            p.impls = v.split(",")
        elif key == "--device":
            p.device = None if v == "auto" else v
        elif key == "--in-place":
            p.in_place = v
        elif key in ("-G", "--cudagraph"):
            p.graphs = int(v)
        elif key in ("-r", "--root"):
            p.root = int(v)
        elif key in ("-N", "--cycles", "--run_cycles"):
            p.cycles = int(v)
        elif key == "--groups":
            p.groups = v
        elif key == "--emulate-nodes":
            p.emulate_nodes = int(v)
        elif key == "--ring-order":
            p.ring_order = v
        elif key == "--transport":
            p.transport = v
        elif key == "--nccl-config":
            axes.append(v)
        elif key not in _VALUE_OPTIONS:
            raise ValueError(f"option {a} is not modelled")
    p.nccl_configs = nccl_config_labels(axes)
    if p.max_bytes is None:
        raise ValueError("no -e: the largest size depends on the machine")
    if p.device not in (None, "cpu", "gpu"):
        raise ValueError(f"--device {p.device}")
    if p.cycles < 1:
        raise ValueError("--cycles 0 runs until stopped")
    return p


# ---- The expected rows --------------------------------------------------------------------------

class Want:
    """One expected row: kind 'skip' (with its exact reason) or 'measure' (a measured row, which a
    size-level reason may skip; with `graph`, the CUDA-graph row of the same size follows it when
    it was measured)."""

    def __init__(self, kind, in_place=False, size=0, count=0, reason=None, graph=False, cycle=1):
        self.kind, self.in_place, self.size, self.count = kind, in_place, size, count
        self.reason, self.graph, self.cycle = reason, graph, cycle

    def in_cycle(self, cycle):
        return Want(self.kind, self.in_place, self.size, self.count, self.reason, self.graph, cycle)

    def describe(self):
        where = f"{self.size} B {'in-place' if self.in_place else 'out-of-place'}"
        where += f" (cycle {self.cycle})" if self.cycle > 1 else ""
        return f"{where}: skipped, '{self.reason}'" if self.kind == "skip" else f"{where} measured"


def case_rows(plan, impl, coll, dtype, op, n):
    """The rows of one case of a runnable implementation, in order; or one Want('skip') when the
    case cannot run for a reason that follows from the arguments alone."""
    declared = IMPLEMENTS[(plan.device, base_impl(impl))]
    if coll not in declared:
        listed = ", ".join(c for c in COLLECTIVES if c in declared)
        return [Want("skip", reason=f"{impl} implements {listed}; not {coll}")]
    if coll in ROOTED and plan.root >= n:
        return [Want("skip", reason=f"root {plan.root} does not exist with {n} ranks (valid: 0 to {n - 1})")]
    rows, placements = [], []
    if plan.in_place != "yes":
        placements.append(False)
    if plan.in_place != "no":
        if coll in NO_IN_PLACE:
            rows.append(Want("skip", in_place=True, reason=f"{coll} has no in-place form"))
        else:
            placements.append(True)
    graph = plan.graphs > 0 and plan.device == "gpu"  # every GPU implementation is captured
    for size in plan.sizes():
        count, nbytes = shape(coll, dtype, n, size)
        for ip in placements:
            if count == 0:  # the row keeps the size asked
                rows.append(Want("skip", in_place=ip, size=size,
                                 reason=f"{size} B is less than one {dtype} element per rank"))
            else:
                rows.append(Want("measure", ip, nbytes, count, graph=graph))
    return rows


def expected_cases(plan):
    """{(group, collective, impl, dtype, op): (ranks, [Want])} of the whole run, in row order
    within each case, with --cycles repeats."""
    out = {}
    for group, n in plan.groups_of():
        for coll in plan.collectives:
            for impl in plan.implementations():
                if (plan.device, impl) not in IMPLEMENTS:
                    out[(group, coll, impl, None, None)] = (n, None)  # the plan skips it: one row
                    continue
                for variant in plan.variants(impl):
                    for dtype in plan.dtypes:
                        for op in plan.ops if coll in REDUCING else ["none"]:
                            wants = case_rows(plan, variant, coll, dtype, op, n)
                            out[(group, coll, variant, dtype, op)] = (
                                n, [w.in_cycle(c) for c in range(1, plan.cycles + 1) for w in wants])
    return out


def expected_row_count(plan):
    """Rows the run writes when no case is skipped for a reason of the machine (the count a test
    states); a case skipped whole writes one row instead of its own."""
    return sum(1 if wants is None else len(wants) for _, wants in expected_cases(plan).values())


# ---- Checking rows against them -----------------------------------------------------------------

def _where(key, extra=""):
    group, coll, impl, dtype, op = key
    name = f"{coll}/{impl}" + (f" {dtype}" if dtype else "") + (f" {op}" if op and op != "none" else "")
    return (f"[{group}] " if group != "world" else "") + name + (f" {extra}" if extra else "")


def _allowed(plan, key, reason, level):
    _, coll, impl, dtype, op = key
    impl = base_impl(impl)
    if any(s.allows(plan.device, impl, coll, dtype, op, plan, reason, level) for s in CONTEXT_SKIPS):
        return True
    return any(i in ("", impl) and c in ("", coll) and t in reason for i, c, t in plan.extra_skips)


def _row_matches(r, want, mode):
    return (r["in_place"] == ("true" if want.in_place else "false") and int(r["size[B]"]) == want.size
            and int(r["count[elements]"]) == want.count and r["mode"] == mode and _cycle(r) == want.cycle)


def _cycle(r):
    """The row's cycle column (results.csv schema 4; a run of one cycle before it: 1)."""
    return int(r.get("cycle") or 1)


def _got(r):
    return (f"{r['status']} {r['size[B]']} B in_place={r['in_place']} mode={r['mode']} cycle={_cycle(r)} "
            f"({r['reason']!r})")


class _CaseRows:
    """One case's rows, consumed in order against its expected rows."""

    def __init__(self, plan, key, rows, measured_statuses):
        self.plan, self.key, self.rows, self.measured, self.i, self.fails = plan, key, rows, measured_statuses, 0, []

    def fail(self, text):
        self.fails.append(f"{_where(self.key)}: {text}")

    def skip(self, w):
        r = self.rows[self.i]
        self.i += 1
        if (r["status"] != "skipped" or r["reason"] != w.reason or r["in_place"] != ("true" if w.in_place else "false")
                or int(r["size[B]"]) != w.size or _cycle(r) != w.cycle):
            self.fail(f"expected {w.describe()}; got {_got(r)}")

    def measured_row(self, w, mode):
        """The row of size `w` in `mode`, or None (a failure said) when it is not the next one. A
        row missing here is skipped over only when the wanted one comes later."""
        r = self.rows[self.i]
        if not _row_matches(r, w, mode):
            self.fail(f"expected {w.describe()} ({mode}); got {_got(r)}")
            later = [j for j in range(self.i, len(self.rows)) if _row_matches(self.rows[j], w, mode)]
            if not later:
                return None
            self.i = later[0]
            r = self.rows[self.i]
        self.i += 1
        return r

    def measure(self, w):
        r = self.measured_row(w, "eager")
        if r is None:
            return
        if r["status"] == "skipped":
            if not _allowed(self.plan, self.key, r["reason"], "size"):
                self.fail(f"{w.describe()} skipped for a reason not allowed here: {r['reason']!r}")
            return  # no graph row follows a skipped size
        if r["status"] not in self.measured:
            self.fail(f"{w.describe()}: status {r['status']} ({r['reason']!r})")
            return
        if not w.graph:
            return
        if self.i >= len(self.rows):
            self.fail(f"missing the CUDA-graph row of {w.describe()}")
            return
        g = self.measured_row(w, "graph")
        if g is not None and g["status"] not in self.measured:
            self.fail(f"{w.describe()} (graph): status {g['status']} ({g['reason']!r})")


def _skipped_whole(plan, rows, wants):
    """Whether every row of the case is one skipped row per cycle that no expected row names."""
    reasons = {w.reason for w in wants if w.kind == "skip"}
    return len(rows) == plan.cycles and len(wants) > plan.cycles * len(reasons) and all(
        r["status"] == "skipped" and r["size[B]"] == "0" and r["in_place"] == "false" and r["reason"] not in reasons
        and _cycle(r) == c for c, r in enumerate(rows, 1))


def _check_case(plan, key, n, wants, rows, measured_statuses):
    """Failures of one case's rows against its expected rows."""
    c = _CaseRows(plan, key, rows, measured_statuses)
    bad_ranks = [r["ranks"] for r in rows if int(r["ranks"]) != n]
    if bad_ranks:
        c.fail(f"{len(bad_ranks)} row(s) say {bad_ranks[0]} ranks; this group has {n}")
    root = str(plan.root) if key[1] in ROOTED else "-1"
    bad_roots = [r["root"] for r in rows if r["root"] != root]
    if bad_roots:
        c.fail(f"{len(bad_roots)} row(s) name root {bad_roots[0]}; the run's is {root}")
    if _skipped_whole(plan, rows, wants):  # for a reason of the machine or the options
        for r in rows:
            if not _allowed(plan, key, r["reason"], "case"):
                c.fail(f"skipped for a reason not allowed here: {r['reason']!r}")
        return c.fails
    for w in wants:
        if c.i >= len(rows):
            c.fail(f"missing row {w.describe()}")
        elif w.kind == "skip":
            c.skip(w)
        else:
            c.measure(w)
    for r in rows[c.i:]:
        c.fail(f"extra row {_got(r)}")
    return c.fails


def check_case_set(rows, plan, measured_statuses=("ok",)):
    """Failures of `rows` against the run's expected case set."""
    by_case, plan_skipped = {}, {}
    for r in rows:
        if r["status"] == "skipped" and PLAN_SKIP.search(r["reason"]):  # one row per collective, no case
            plan_skipped.setdefault((r["group"], r["collective"], r["impl"]), []).append(r)
        else:
            impl = r["impl"] + (f"[{r['nccl_config']}]" if r.get("nccl_config") else "")
            by_case.setdefault((r["group"], r["collective"], impl, r["dtype"], r["op"]), []).append(r)
    fails = []
    for key, (n, wants) in expected_cases(plan).items():
        group, coll, impl = key[0], key[1], base_impl(key[2])
        skipped = plan_skipped.get((group, coll, impl))
        if wants is None or skipped:
            if wants is None and [_cycle(r) for r in skipped or []] != list(range(1, plan.cycles + 1)):
                fails.append(f"{_where(key)}: expected {plan.cycles} skipped row(s), cycles 1 to {plan.cycles}, saying "
                             f"why {impl} cannot run on {plan.device} ranks; got {len(skipped or [])}")
            elif wants is not None and not (plan.device == "gpu" and "built without" in skipped[0]["reason"]):
                fails.append(f"{_where(key)}: {impl} skipped whole: {skipped[0]['reason']!r}")
            continue
        mine = by_case.pop(key, [])
        if not mine:
            fails.append(f"{_where(key)}: no row at all ({len(wants)} expected)")
        else:
            fails += _check_case(plan, key, n, wants, mine, measured_statuses)
    for key, extra in by_case.items():
        fails.append(f"{_where(key)}: {len(extra)} row(s) of a case the run did not ask for")
    return fails


# ---- Bandwidth ----------------------------------------------------------------------------------

def read_rows(path):
    """results.csv's rows as dicts (csv module, the '#' lines before the header skipped), every
    measured row's bandwidth checked (check_bandwidth); ValueError naming the first rows that
    disagree."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader([line for line in f if not line.startswith("#")], strict=True))
    bad = check_bandwidth(rows)
    if bad:
        raise ValueError(f"{path}: {len(bad)} bandwidth figure(s) disagree with bytes / time x bus factor: "
                         + "; ".join(bad[:3]))
    return rows


# results.csv prints times and bandwidths with 6 significant digits: each figure computed from
# printed ones agrees to a few parts in a million.
BANDWIDTH_TOLERANCE = 2e-5

# A row's time_avg (the back-to-back batch per call) may be below its fastest single call (those
# wait on a barrier's skew, a sleeping proxy thread or, with more ranks than cores, the scheduler),
# but not by this factor. Lowest ratios seen: 1/69 over 7,964 recorded rows (NCCL's first 8-byte
# row over NET/Socket, h200x2-20261130-r7); 1/122 on a cluster in a box (6 ranks of 3 hosts on 2
# cores: single calls of 13 ms that wait for the scheduler, a ring all-gather batch at 108 us per
# call). A batch loop that timed no call gives ratios near 1/4000.
# Rooted collectives are left out: in a batch the root's sends (broadcast, scatter) and the
# others' sends to the root (reduce, gather) queue without waiting for each call's receiver, so
# their batch may be far below a single call that waits for the round trip (the cluster in a box
# over tcp, ofi and mpi: down to 1/1230 against single calls of 4 to 8 ms).
TIME_AVG_FLOOR = 0.001
# With more ranks than cores the ratio has no floor: on the 2-core machine busy with another
# benchmark, 2 ranks' MPI all-reduce of 4 B took 7,955 us at best as a single call and 6.68 us a
# call in the batch (1/1190). So between ranks a row fails the ratio only where its batch is also
# faster than any real call: a collective between processes moves a cache line between cores each
# call (the fastest row recorded, 2 ranks' MPI all-reduce of 1 KiB, took 0.42 us), while a batch
# that timed no call leaves nanoseconds per call.
MIN_CALL_US = 0.05


def check_bandwidth(rows):
    """Every measured row: algbw = bytes / time_avg, busbw = algbw x the bus factor of its
    collective for the row's rank count (in a --groups run the group's), busbw_median = bytes /
    time_median x the same factor (GB/s = 1e9 B/s, times in microseconds); time_avg not below
    TIME_AVG_FLOOR x time_min (between ranks: or not below MIN_CALL_US), except for rooted
    collectives."""
    fails = []
    for i, r in enumerate(rows):
        if r["status"] not in ("ok", "wrong"):
            continue
        nbytes, n = int(r["size[B]"]), int(r["ranks"])
        factor = bus_factor(r["collective"], n)
        where = (f"results.csv row {i + 1} ({r['collective']}/{r['impl']} {nbytes} B {r['mode']} "
                 f"in_place={r['in_place']}, {n} ranks)")
        checks = [("algbw[GB/s]", "time_avg[us]", 1.0), ("busbw[GB/s]", "time_avg[us]", factor),
                  ("busbw_median[GB/s]", "time_median[us]", factor)]
        t_avg, t_min = float(r["time_avg[us]"]), float(r["time_min[us]"])
        below_floor = not t_avg >= TIME_AVG_FLOOR * t_min and (n == 1 or not t_avg >= MIN_CALL_US)
        if r["collective"] not in ROOTED and below_floor:
            fails.append(f"{where}: time_avg {t_avg:g} us is below {TIME_AVG_FLOOR:g} x the fastest single call "
                         f"({t_min:g} us): the batch cannot have timed its calls")
        for column, time_column, f in checks:
            t, shown = float(r[time_column]), float(r[column])
            want = nbytes / (t * 1e3) * f if t > 0 else math.inf
            if not (abs(shown - want) <= BANDWIDTH_TOLERANCE * max(abs(want), 1e-12)):
                fails.append(f"{where}: {column} {shown:g}, but {nbytes} B / {t:g} us x {f:.6g} (bus factor "
                             f"of {r['collective']} on {n} ranks) = {want:.6g}")
    return fails
