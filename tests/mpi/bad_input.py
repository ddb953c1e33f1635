#!/usr/bin/env python3
"""Bad-input matrix: every flag, size string, environment variable, CSV input and output path of
ccbench in invalid forms, each run as a real launch (mpirun -np 2, or plain for some) and checked
against docs/design.md ("Exit codes"): the exit code (2 usage, 3 precondition), a message on
stderr that names the bad thing and says what is valid, and, for input that can be judged before
MPI start-up, that nothing ran: no results folder, nothing on stdout, the error said once (by
rank 0).

Usage: bad_input.py --ccbench PATH --mpiexec PATH --golden tests/golden/results.csv [--jobs N]
Prints one line per case and "bad inputs tried: N"; exits 1 if any case misbehaved.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import launch, run  # noqa: E402
from testlib import ExitCode  # noqa: E402

USAGE, PRECONDITION = ExitCode.usage, ExitCode.precondition

# A sanitizer report: ASan/LSan/UBSan summaries, or UBSan's "file:line:col: runtime error:".
SANITIZER_REPORT = re.compile(r"(Address|Leak|UndefinedBehavior)Sanitizer|:[0-9]+:[0-9]+: runtime error:")
SIZE_HELP = "whole number of bytes with an optional suffix K, M, G or T"
FAULT_HELP = "expected KIND:rank=R"


class Case:
    """One bad input. rc: expected exit code. texts: substrings the message must hold.
    pre: judged before MPI start-up (no results folder, empty stdout, said once).
    where: 'stderr' or 'output' (stdout + stderr, for reasons printed in the result table)."""

    def __init__(self, name, args, rc, texts, env=None, launch="mpi", pre=True, where="stderr", absent=()):
        self.name, self.args, self.rc, self.texts = name, list(args), rc, list(texts)
        self.env, self.launch, self.pre, self.where = dict(env or {}), launch, pre, where
        self.absent = list(absent)  # paths that must not exist afterwards


def make_files(scratch, golden):
    """Result files for `ccbench compare`: one good, the others broken in one way each."""
    with open(golden, encoding="utf-8") as f:
        good = f.read()
    lines = good.splitlines(keepends=True)
    header_at = next(i for i, l in enumerate(lines) if l.startswith("collective,"))
    header = lines[header_at]
    # The row the broken variants alter: MPI's skipped 8 B all-reduce, out-of-place.
    first = next(l for l in lines[header_at + 1:] if ",8,2,false,eager," in l and ",skipped," in l)
    head = "".join(lines[: header_at + 1])  # comments and header: the altered row is line 4
    files = {
        "good.csv": good,
        "notcsv.txt": "hello, this is not a results file\n",
        "binary.csv": "\x00\x01\x02\xff garbage",
        "empty.csv": "",
        "comments.csv": "# only a comment\n# and another\n",
        "renamed_column.csv": good.replace("collective,impl,", "collective,implementation,", 1),
        "missing_column.csv": "".join(lines[:header_at]) + header.replace(",busbw[GB/s]", "", 1),
        "bad_number.csv": head + first.replace(",8,2,", ",eight,2,", 1),
        "bad_bool.csv": head + first.replace(",false,eager,", ",maybe,eager,", 1),
        "bad_status.csv": head + first.replace(",skipped,", ",great,", 1),
        "int_range.csv": head + first.replace(",eager,4,2,2,", ",eager,4294967298,2,2,", 1),
        "stray_quote.csv": head + 'allreduce,mpi,"mp"i,cpu\n',
        "open_quote.csv": head + 'allreduce,mpi,"mpi,cpu\n',
        "short_row.csv": head + "allreduce,mpi,mpi\n",
        "select_typo.yaml": "rules:\n  - select: {collective: allreduc}\n    require: {min_busbw: 1}\n",
        "key_typo.yaml": "rules:\n  - select: {colective: allreduce}\n    require: {min_busbw: 1}\n",
    }
    for name, text in files.items():
        with open(os.path.join(scratch, name), "w", encoding="latin-1") as f:
            f.write(text)
    os.mkdir(os.path.join(scratch, "a_folder.csv"))
    with open(os.path.join(scratch, "regular_file"), "w") as f:
        f.write("not a folder\n")
    return {n: os.path.join(scratch, n) for n in list(files) + ["a_folder.csv", "regular_file"]}


def cases(files, scratch, have_gpu, cuda_built):
    small = ["-b", "8", "-e", "8", "-n", "1", "-w", "0", "--timeout", "20"]
    c = []
    # Sizes and the sweep.
    c += [
        Case("-b 0", ["-b", "0"], USAGE, ["-b/--minbytes", "at least 1 byte"]),
        Case("-b > -e", ["-b", "1M", "-e", "1K"], USAGE, ["-b/--minbytes 1M is larger than -e/--maxbytes 1K"]),
        Case("-f 1 with -b < -e", ["-b", "8", "-e", "1K", "-f", "1"], USAGE,
             ["-f/--stepfactor: '1' is not valid; expected a factor above 1", "never advances the sweep"]),
        Case("-f 0.5", ["-f", "0.5"], USAGE, ["-f/--stepfactor: '0.5' is not valid", "never advances the sweep"]),
        Case("-f abc", ["-f", "abc"], USAGE, ["-f/--stepfactor: 'abc' is not a number", "a factor above 1"]),
        Case("-f inf", ["-f", "inf"], USAGE, ["-f/--stepfactor: 'inf' is not a number"]),
        Case("-f empty", ["-f", ""], USAGE, ["-f/--stepfactor: '' is not a number"]),
        Case("-i 0", ["-i", "0"], USAGE, ["-i/--stepbytes 0 never advances", "size > 0"]),
        Case("-f and -i together", ["-f", "2", "-i", "8"], USAGE, ["exclude each other"]),
        Case("-i 1.5K", ["-i", "1.5K"], USAGE, ["-i/--stepbytes: fractional size", SIZE_HELP]),
        Case("-b -5", ["-b", "-5"], USAGE, ["-b/--minbytes: negative size '-5'", SIZE_HELP]),
        Case("-b 1Q", ["-b", "1Q"], USAGE, ["-b/--minbytes: unknown size suffix 'Q'", SIZE_HELP]),
        Case("-b 1.5K", ["-b", "1.5K"], USAGE, ["-b/--minbytes: fractional size '1.5K'", SIZE_HELP]),
        Case("-b 20 digits", ["-b", "99999999999999999999"], USAGE, ["-b/--minbytes", "does not fit in 64 bits"]),
        Case("-b 20000000T", ["-b", "20000000T"], USAGE, ["-b/--minbytes", "'20000000T' does not fit in 64 bits"]),
        Case("-b empty", ["-b", ""], USAGE, ["-b/--minbytes: empty size", SIZE_HELP]),
        Case("-b 0x10", ["-b", "0x10"], USAGE, ["-b/--minbytes: unknown size suffix 'x10'"]),
        Case("-e K", ["-e", "K"], USAGE, ["-e/--maxbytes: 'K' is not a size", SIZE_HELP]),
        Case("-e empty", ["-e", ""], USAGE, ["-e/--maxbytes: empty size"]),
        Case("-i 1 (too many sizes)", ["-b", "1", "-e", "1M", "-i", "1"], USAGE, ["more than 10000 sizes", "larger -f or -i"]),
    ]
    # Counts and choices.
    c += [
        Case("-n 0", ["-n", "0"], USAGE, ["-n/--iters: '0' is not valid", "from 1 to 1000000"]),
        Case("-n abc", ["-n", "abc"], USAGE, ["-n/--iters: 'abc' is not valid", "from 1 to 1000000"]),
        Case("-n 1e3", ["-n", "1e3"], USAGE, ["-n/--iters: '1e3' is not valid"]),
        Case("-w -1", ["-w", "-1"], USAGE, ["-w/--warmup_iters: '-1' is not valid", "from 0 to 1000000"]),
        Case("-c -1", ["-c", "-1"], USAGE, ["-c/--check: '-1' is not valid", "0 (off) or a count of checked iterations"]),
        Case("-r -1", ["-r", "-1"], USAGE, ["-r/--root: '-1' is not valid", "a rank number"]),
        Case("-G -1", ["-G", "-1"], USAGE, ["-G/--cudagraph: '-1' is not valid"]),
        Case("-d badtype", ["-d", "badtype"], USAGE, ["-d/--datatype: unknown value 'badtype'", "valid: int8"]),
        Case("-d float,,int8", ["-d", "float,,int8"], USAGE, ["-d/--datatype: unknown value ''", "valid: int8"]),
        Case("-o badop", ["-o", "badop"], USAGE, ["-o/--op: unknown value 'badop'", "valid: sum, prod, min, max, avg"]),
        Case("--collective foo", ["--collective", "foo"], USAGE, ["--collective: unknown value 'foo'", "valid: allreduce"]),
        Case("--impl foo", ["--impl", "foo"], USAGE, ["--impl: unknown implementation 'foo'", "valid: mpi, ring, tree"]),
        Case("--impl empty list", ["--impl", ","], USAGE, ["--impl: unknown implementation ''", "valid: mpi"]),
        Case("--device tpu", ["--device", "tpu"], USAGE, ["--device: unknown value 'tpu'", "valid: auto, cpu, gpu"]),
        Case("--transport carrier-pigeon", ["--transport", "carrier-pigeon"], USAGE,
             ["--transport: unknown value 'carrier-pigeon'", "valid: auto, shm, mpi"]),
        Case("--in-place maybe", ["--in-place", "maybe"], USAGE, ["--in-place: unknown value 'maybe'", "valid: yes, no, both"]),
        Case("--format xml", ["--format", "xml"], USAGE, ["--format: unknown value 'xml'", "valid: table, csv, json, md"]),
        Case("--format empty", ["--format", ""], USAGE, ["--format: empty list", "valid: table"]),
        Case("-T x", ["-T", "x"], USAGE, ["-T/--timeout: 'x' is not a number", "seconds from 0.001 to 604800 = a week; 0 = a week"]),
        Case("--timeout -1", ["--timeout", "-1"], USAGE, ["-T/--timeout: '-1' is not valid", "seconds from 0.001"]),
        Case("--timeout 0.0001", ["--timeout", "0.0001"], USAGE, ["-T/--timeout: '0.0001' is not valid", "seconds from 0.001"]),
        Case("--timeout nan", ["--timeout", "nan"], USAGE, ["-T/--timeout: 'nan' is not a number"]),
        Case("--timeout 8 days", ["--timeout", "691200"], USAGE, ["-T/--timeout: '691200' is not valid", "a week"]),
        Case("--cycles -1", ["--cycles", "-1"], USAGE, ["--cycles: '-1' is not valid", "0 = until stopped"]),
        Case("--seed x", ["--seed", "x"], USAGE, ["--seed: 'x' is not valid", "a whole number from 0 to 18446744073709551615"]),
        Case("--seed 2^64", ["--seed", "18446744073709551616"], USAGE, ["--seed: '18446744073709551616' is not valid"]),
        Case("--baseline foo", ["--baseline", "foo"], USAGE, ["--baseline: unknown implementation 'foo'", "valid: mpi"]),
        Case("--baseline empty", ["--baseline", ""], USAGE, ["--baseline: unknown implementation ''", "valid: mpi"]),
        Case("unknown flag --foo", ["--foo"], USAGE, ["unknown argument(s): --foo", "see ccbench --help"]),
        Case("--progress-interval 0", ["--progress-interval", "0"], USAGE,
             ["--progress-interval: '0' is not valid", "seconds from 0.01 to 3600"]),
        Case("--straggler-threshold -1", ["--straggler-threshold", "-1"], USAGE,
             ["--straggler-threshold: '-1' is not valid", "a fraction from 0.001 to 100"]),
        Case("--group-outlier-threshold 2", ["--group-outlier-threshold", "2"], USAGE,
             ["--group-outlier-threshold: '2' is not valid", "a fraction from 0.01 to 1"]),
        Case("--ring-order 0,x", ["--ring-order", "0,x"], USAGE, ["--ring-order 0,x: 'x' is not a rank", "whole numbers"]),
        Case("--ring-order 1,1 (2 ranks)", ["--ring-order", "1,1"], USAGE,
             ["--ring-order 1,1: 2 rank(s) given for a run of 2: repeated 1; missing 0", "exactly once"], pre=False),
        Case("--ring-order no file", ["--ring-order", "gone.txt"], USAGE, ["--ring-order gone.txt: not rank, topo", "no readable file"]),
        Case("--tree triple", ["--tree", "triple"], USAGE, ["--tree: unknown value 'triple'", "valid: double, binary"]),
        Case("flag without value -n", ["-n"], USAGE, ["--iters", "see ccbench --help"]),
        Case("flag given twice", ["-n", "3", "-n", "4"], USAGE, ["-n/--iters: given 2 times ('3', '4'); give it once"]),
        Case("unknown subcommand argument", ["compare"], USAGE, ["before is required", "see ccbench --help"], launch="plain"),
        # Mistyped names: what is valid and the closest ones.
        Case("--iter (a typo)", ["--iter", "5"], USAGE, ["unknown argument(s): --iter 5 (did you mean '--iters'?)"]),
        Case("--collective allreduc", ["--collective", "allreduc"], USAGE,
             ["--collective: unknown value 'allreduc'", "(did you mean 'allreduce'?)"]),
        Case("--transport shmm", ["--transport", "shmm"], USAGE, ["valid: auto, shm, mpi", "(did you mean 'shm'?)"]),
        Case("--transport ce (a links mode)", ["--transport", "ce"], USAGE,
             ["--transport: 'ce' is valid for links on GPU ranks only", "valid here: auto, shm, mpi"]),
        Case("--tolerance outside compare", ["--tolerance", "0.1"], USAGE, ["--tolerance is an option of `ccbench compare`"]),
        Case("a subcommand mistyped", ["comapre", "a.csv", "b.csv"], USAGE, ["(did you mean 'compare'?)"], launch="plain"),
        Case("-V alone", ["-V"], USAGE, ["-V/--device_cta_count", "the version is ccbench --version"], launch="plain"),
        Case("links --transport p2p", ["links", "--transport", "p2p"], USAGE,
             ["'p2p' is valid for run on GPU ranks only", "valid here: auto, shm, mpi, tcp, ib, ofi, ce"]),
        Case("links -T x", ["links", "-T", "x"], USAGE, ["-T/--timeout: 'x' is not a number"]),
        Case("topo --out FILE.json", ["topo", "--out", "topology.json"], USAGE,
             ["--out is a results folder (as in run and links)"], absent=["topology.json"]),
        Case("history --transport shmm", ["history", "--db", "h.db", "--transport", "shmm"], USAGE,
             ["--transport: unknown value 'shmm': it names no row ccbench writes", "(did you mean 'shm'?)"],
             launch="plain"),
    ]
    # Options that would change nothing in the run: refused where the command line says so
    # (docs/reliability.md "Options that do not apply"; --device auto finding CPU ranks: a note).
    gpu_only = "acts on GPU ranks, and --device cpu measures CPU ranks"
    c += [
        Case("-G with --device cpu", ["--device", "cpu", "-G", "5"], USAGE, ["-G 5 " + gpu_only, "leave it out"]),
        Case("--nccl-config with --device cpu", ["--device", "cpu", "--nccl-config", "maxCTAs=2"], USAGE,
             ["--nccl-config maxCTAs=2 " + gpu_only]),
        Case("--share-gpus with --device cpu", ["--device", "cpu", "--share-gpus"], USAGE, ["--share-gpus " + gpu_only]),
        Case("-G and --share-gpus with --device cpu", ["--device", "cpu", "-G", "2", "--share-gpus"], USAGE,
             ["-G 2, --share-gpus act on GPU ranks, and --device cpu measures CPU ranks: leave them out"]),
        Case("--serial without --groups", ["--serial"], USAGE,
             ["--serial acts on the groups of a --groups run, and this run has none (--groups world)"]),
        Case("--group-outlier-threshold without --groups", ["--group-outlier-threshold", "0.5"], USAGE,
             ["--group-outlier-threshold acts on the groups of a --groups run"]),
        Case("--ib-qps with --transport shm", ["--transport", "shm", "--ib-qps", "2"], USAGE,
             ["--ib-qps sets up the ib transport, and --transport shm does not use it"]),
        Case("--ofi-provider without --transport ofi", ["--ofi-provider", "tcp"], USAGE,
             ["--ofi-provider sets up the ofi transport, which only --transport ofi uses (this run: --transport auto)"]),
        Case("--tree with no tree", ["--impl", "ring,mpi", "--tree", "binary"], USAGE,
             ["--tree shapes the trees of the tree implementation, and --impl ring,mpi names no tree"]),
        Case("--ring-order with no ring", ["--impl", "mpi", "--ring-order", "topo"], USAGE,
             ["--ring-order orders the ring of ring, hier and best, and --impl mpi names none of them"]),
        Case("--baseline not measured", ["--impl", "ring,tree", "--baseline", "mpi"], USAGE,
             ["--baseline mpi: the summary compares the implementations measured with it, and --impl ring,tree does "
              "not measure it"]),
    ]
    # nccl-tests flags ccbench cannot honour: refused, naming what to use instead.
    c += [
        Case("-g 8 (nccl-tests' single-process example)", ["-b", "8", "-e", "128M", "-f", "2", "-g", "8"], USAGE,
             ["-g/--ngpus 8: ccbench runs one thread and one GPU per process", "mpirun -np N"]),
        Case("-t 2", ["-t", "2"], USAGE, ["-t/--nthreads 2", "start more MPI ranks"]),
        Case("-m 2000", ["-m", "2000"], USAGE, ["-m/--agg_iters: '2000' is not valid", "from 1 to 1024"]),
        # -z 1 (blocking) is accepted now, with a note (tests/mpi/cli_runs.py); 0 and 1 are nccl-tests' values.
        Case("-z 2", ["-z", "2"], USAGE, ["-z/--blocking: '2' is not valid", "from 0 to 1"]),
        Case("-z 5", ["-z", "5"], USAGE, ["-z/--blocking: '5' is not valid", "from 0 to 1"]),
        Case("-a 7", ["-a", "7"], USAGE, ["-a/--average: '7' is not valid", "from 0 to 3"]),
        Case("-R 1", ["-R", "1"], USAGE, ["-R/--local_register 1", "--impl nccl-symm"]),
        Case("-R 2 with --impl ring", ["-R", "2", "--impl", "ring"], USAGE, ["-R 2 puts nccl-symm in place of nccl"]),
        Case("-C 1", ["-C", "1"], USAGE, ["-C/--report_cputime 1", "device time"]),
        Case("-S 1", ["-S", "1"], USAGE, ["-S/--report_timestamps 1", "started_utc"]),
        Case("-M 1", ["-M", "1"], USAGE, ["-M/--memory 1", "ccbench topo"]),
        Case("-y 1", ["-y", "1"], USAGE, ["-y/--stream_null 1", "own stream"]),
        Case("-x 1", ["-x", "1"], USAGE, ["-x/--cta_policy 1", "NCCL_CTA_POLICY=1"]),
        Case("-D 1", ["-D", "1"], USAGE, ["-D/--device_implementation 1", "--impl ring,tree"]),
        Case("-V 16", ["-V", "16"], USAGE, ["-V/--device_cta_count 16", "CCBENCH_GPU_CHANNELS"]),
        Case("-u -1", ["-u", "-1"], USAGE, ["-u/--unalign: '-1' is not valid", "from 0 to 1048576"]),
        Case("-K x", ["-K", "x"], USAGE, ["-K/--per_iter_skip: 'x' is not valid"]),
        Case("-J out.txt", ["-J", "out.txt"], USAGE, ["-J/--output_file: 'out.txt' does not end in .json"]),
        Case("-J unwritable", ["-J", "/proc/ccbench.json"] + small, USAGE,
             ["-J/--output_file: cannot write '/proc/ccbench.json'"], absent=["/proc/ccbench.json"]),
        Case("NCCL_TESTS_SPLIT", small, USAGE, ["NCCL_TESTS_SPLIT='AND 0x1': nccl-tests' sub-groups", "--groups",
                                            "unset NCCL_TESTS_SPLIT"], env={"NCCL_TESTS_SPLIT": "AND 0x1"}),
        Case("NCCL_TESTS_SPLIT_MASK", small, USAGE, ["NCCL_TESTS_SPLIT_MASK='0x1'"], env={"NCCL_TESTS_SPLIT_MASK": "0x1"}),
        Case("NCCL_TESTS_MIN_BW=x", small, USAGE, ["NCCL_TESTS_MIN_BW='x' is not valid", "GB/s > 0"],
             env={"NCCL_TESTS_MIN_BW": "x"}),
    ]
    # Output folder.
    under_file = os.path.join(files["regular_file"], "results")
    c += [
        Case("--out /proc/ccbench", ["--out", "/proc/ccbench"] + small, USAGE,
             ["--out: cannot create the results folder '/proc/ccbench'"], absent=["/proc/ccbench"]),
        Case("--out under a regular file", ["--out", under_file] + small, USAGE,
             ["--out: cannot create the results folder", "Not a directory"], absent=[under_file]),
        Case("--out is a regular file", ["--out", files["regular_file"]] + small, USAGE,
             ["--out: cannot create the results folder", "regular_file"]),
        Case("--out empty", ["--out", ""] + small, USAGE, ["--out: empty path", "or none"]),
    ]
    # Environment: fault injection (test-only) and tuning variables.
    faults = [
        ("no colon", "stop", ["CCBENCH_FAULT='stop' is not valid", FAULT_HELP]),
        ("unknown kind", "explode:rank=1", ["CCBENCH_FAULT: unknown kind 'explode'", "stop, kill, delay, corrupt, corrupt_send, overrun, alloc"]),
        ("empty kind", ":rank=1", ["CCBENCH_FAULT: unknown kind ''", FAULT_HELP]),
        ("no rank", "stop:size=4K", ["names no rank", FAULT_HELP]),
        ("rank not a number", "stop:rank=x", ["CCBENCH_FAULT: rank='x' is not a non-negative whole number"]),
        ("negative rank", "stop:rank=-1", ["CCBENCH_FAULT: rank='-1' is not a non-negative whole number"]),
        ("rank too large for int", "stop:rank=99999999999", ["rank='99999999999' is not a non-negative whole number"]),
        ("negative ms", "delay:rank=0,ms=-5", ["CCBENCH_FAULT: ms='-5' is not a non-negative whole number"]),
        ("negative iteration", "stop:rank=1,iteration=-1", ["iteration='-1' is not a non-negative whole number"]),
        ("negative index", "corrupt:rank=0,index=-1", ["index='-1' is not a non-negative whole number"]),
        ("bad size", "stop:rank=1,size=1Q", ["CCBENCH_FAULT size: unknown size suffix 'Q'", SIZE_HELP]),
        ("unknown key", "stop:rank=1,colour=red", ["CCBENCH_FAULT: unknown key 'colour'", FAULT_HELP]),
        ("not key=value", "stop:rank", ["CCBENCH_FAULT: 'rank' is not key=value", FAULT_HELP]),
        ("empty item", "stop:rank=1,,size=4K", ["CCBENCH_FAULT: '' is not key=value"]),
        ("bytes 0", "overrun:rank=0,bytes=0", ["CCBENCH_FAULT: bytes must be from 1 to 4096"]),
        ("bytes 5000", "overrun:rank=0,bytes=5000", ["CCBENCH_FAULT: bytes must be from 1 to 4096"]),
        ("empty impl", "stop:rank=1,impl=", ["CCBENCH_FAULT: impl= needs a name"]),
        ("a key twice", "stop:rank=1,rank=2", ["CCBENCH_FAULT='stop:rank=1,rank=2': rank is given twice",
                                               "give each key once"]),
    ]
    for label, value, texts in faults:
        c.append(Case(f"CCBENCH_FAULT {label}", small, USAGE, texts, env={"CCBENCH_FAULT": value}))
    # A rank the run does not have: known only after MPI start-up (the folder may exist).
    c.append(Case("CCBENCH_FAULT rank outside the run", small + ["--out", "none"], USAGE,
                  ["CCBENCH_FAULT: rank=2 does not exist in this run of 2 ranks", "valid: 0 to 1"],
                  env={"CCBENCH_FAULT": "stop:rank=2"}, pre=False))
    # A size or iteration the run never reaches: the fault could never fire (the sizes are known
    # after MPI start-up).
    c.append(Case("CCBENCH_FAULT size not swept", small + ["--out", "none"], USAGE,
                  ["CCBENCH_FAULT: size=4K is not among the sizes of this sweep (8 to 8): it would never fire"],
                  env={"CCBENCH_FAULT": "stop:rank=1,size=4K"}, pre=False))
    c.append(Case("CCBENCH_FAULT iteration past -n", small + ["--out", "none"], USAGE,
                  ["CCBENCH_FAULT: iteration=1 is beyond the 1 timed iteration of a measurement (-n 1; valid: 0 to 0)"],
                  env={"CCBENCH_FAULT": "stop:rank=1,iteration=1"}, pre=False))
    slot_bytes_help = "a multiple of 64 from 64 to 64M"
    for value in ["abc", "0", "100", "65", "1G", "-64", "99999999999999999999", "64Q"]:
        c.append(Case(f"CCBENCH_CPU_SLOT_BYTES={value}", small, USAGE,
                      [f"CCBENCH_CPU_SLOT_BYTES='{value}' is invalid", slot_bytes_help],
                      env={"CCBENCH_CPU_SLOT_BYTES": value}))
    for value in ["1", "0", "65", "x", "-2"]:
        c.append(Case(f"CCBENCH_CPU_SLOT_DEPTH={value}", small, USAGE,
                      [f"CCBENCH_CPU_SLOT_DEPTH='{value}' is invalid", "an integer from 2 to 64"],
                      env={"CCBENCH_CPU_SLOT_DEPTH": value}))
    if cuda_built:  # the GPU tuning variables are read only where the CUDA kernels are built in
        for var, value, texts in [
            ("CCBENCH_GPU_SLOT_BYTES", "5000", ["a multiple of 4K from 4K to 16M"]),
            ("CCBENCH_GPU_NET_SLOT_BYTES", "32M", ["a multiple of 4K from 4K to 16M"]),
            ("CCBENCH_GPU_NET_THREADS", "0", ["an integer from 1 to 64"]),
            ("CCBENCH_GPU_HOST_RECV", "dma", ["give one of sm, ce"]),
            ("CCBENCH_GPU_HOST_SEND", "CE", ["give one of sm, ce"]),
            ("CCBENCH_GPU_CHANNELS", "0", ["an integer from 1 to 128"]),
            ("CCBENCH_GPU_CHANNELS", "many", ["an integer from 1 to 128"]),
            ("CCBENCH_GPU_TREE_CHANNELS", "33", ["an integer from 1 to 32"]),
            ("CCBENCH_GPU_TWOSHOT_BLOCKS", "-1", ["an integer from 1 to 128"]),
            ("CCBENCH_ONESHOT_MAX_BYTES", "9", ["a multiple of 8 from 8 to 8M"]),
            ("CCBENCH_BEST_ONESHOT_MAX_BYTES", "1G", ["from 0 to 512K"]),
            ("CCBENCH_BEST_TWOSHOT_MAX_BYTES", "x", ["'x' is not a size", "from 0 to 1T"]),
            ("CCBENCH_BEST_BRUCK_MAX_BYTES", "2T", ["from 0 to 1T"]),
            ("CCBENCH_BEST_RING_ALLGATHER_MAX_BYTES", "-5", ["negative size '-5'", "from 0 to 1T"]),
        ]:
            c.append(Case(f"{var}={value}", small, USAGE, [f"{var}='{value}' is invalid"] + texts, env={var: value}))
        # Valid alone, impossible together: the net slots lie in the kernels' FIFO slots.
        c.append(Case("CCBENCH_GPU_NET_SLOT_BYTES above CCBENCH_GPU_SLOT_BYTES", small, USAGE,
                      ["CCBENCH_GPU_NET_SLOT_BYTES='2M' is larger than CCBENCH_GPU_SLOT_BYTES (1M)", "give at most 1M"],
                      env={"CCBENCH_GPU_NET_SLOT_BYTES": "2M"}))
    # Preconditions: valid input that cannot run here (exit 3, after MPI start-up).
    if have_gpu:
        c.append(Case("--impl mpi --device gpu", ["--impl", "mpi", "--device", "gpu", "--share-gpus"] + small, PRECONDITION,
                      ["no requested implementation can run here", "mpi runs on cpu ranks"], pre=False))
    else:
        c.append(Case("--device gpu without a GPU", ["--device", "gpu"] + small, PRECONDITION,
                      ["--device gpu", "has no usable GPU"], pre=False))
    c += [
        Case("--impl nccl --device cpu", ["--impl", "nccl", "--device", "cpu"] + small, PRECONDITION,
             ["no requested implementation can run here", "nccl runs on gpu ranks"], pre=False),
        Case("--impl oneshot,ce --device cpu", ["--impl", "oneshot,ce", "--device", "cpu"] + small, PRECONDITION,
             ["oneshot runs on gpu ranks", "ce runs on gpu ranks"], pre=False),
        # cuda_ipc is p2p's earlier name: a GPU path, which CPU ranks cannot take.
        Case("--impl ring --transport cuda_ipc on CPU", ["--impl", "ring", "--transport", "cuda_ipc", "--device", "cpu"]
             + small, PRECONDITION, ["nothing could be measured", "not p2p (valid: auto, shm, mpi, tcp, ib, ofi)"], pre=False,
             where="output"),
        # nccl names an implementation, not a transport: refused before MPI start-up now.
        Case("--impl tree --transport nccl on CPU", ["--impl", "tree", "--transport", "nccl", "--device", "cpu"]
             + small, USAGE, ["--transport: 'nccl' is an implementation, not a transport: give --impl nccl"]),
        Case("broadcast root outside the run", ["--collective", "broadcast", "-r", "5", "--device", "cpu"] + small, PRECONDITION,
             ["nothing could be measured", "root 5 does not exist with 2 ranks (valid: 0 to 1)"], pre=False,
             where="output"),
    ]
    # compare: results files (no MPI).
    good = files["good.csv"]
    with open(good, encoding="utf-8") as f:
        header_fields = next(l for l in f if l.startswith("collective,")).split(",")
    for label, name, texts in [
        ("missing file", "missing.csv", ["cannot read", "missing.csv: No such file or directory"]),
        ("a folder without results.csv", "a_folder.csv", ["a_folder.csv is a folder without results.csv"]),
        ("not CSV", "notcsv.txt", ["notcsv.txt: not a ccbench results.csv", "no column 'collective'"]),
        ("binary", "binary.csv", ["binary.csv: not a ccbench results.csv"]),
        ("empty", "empty.csv", ["empty.csv: the CSV has no header line"]),
        ("comments only", "comments.csv", ["comments.csv: the CSV has no header line"]),
        ("renamed column", "renamed_column.csv", ["renamed_column.csv: not a ccbench results.csv", "no column 'impl'"]),
        ("missing column", "missing_column.csv", ["missing_column.csv", "no column 'busbw[GB/s]'"]),
        ("bad number", "bad_number.csv", ["bad_number.csv: line 4: column 'size[B]': 'eight' is not a valid number"]),
        ("bad boolean", "bad_bool.csv", ["bad_bool.csv: line 4: column 'in_place': 'maybe' is not true or false"]),
        ("number out of range", "int_range.csv",
         ["int_range.csv: line 4: column 'ranks': 4294967298 is out of range (valid: -2147483648 to 2147483647)"]),
        ("bad status", "bad_status.csv", ["bad_status.csv: line 4", "unknown row status 'great' (valid: ok, wrong"]),
        ("stray quote", "stray_quote.csv", ["stray_quote.csv: line 4: malformed CSV", "quotes doubled"]),
        ("unclosed quote", "open_quote.csv", ["open_quote.csv: line 4: malformed CSV", "quoted field is not closed"]),
        ("short row", "short_row.csv", [f"short_row.csv: line 4: the row has 3 fields but the header has {len(header_fields)}"]),
    ]:
        path = files.get(name, os.path.join(scratch, name))
        c.append(Case(f"compare: {label} (before)", ["compare", path, good], USAGE, texts, launch="plain"))
    c.append(Case("compare: missing file (after)", ["compare", good, os.path.join(scratch, "gone.csv")], USAGE,
                  ["gone.csv: No such file or directory"], launch="plain"))
    # Rules: a select value that names nothing ccbench writes is a usage error (it would select no
    # row, and the rule would FAIL as if the cluster had), as is a mistyped key; both say the closest.
    for flag, args in [("accept", ["accept", good, "--rules"]), ("run --accept", small + ["--accept"])]:
        c.append(Case(f"{flag}: a select value mistyped", args + [files["select_typo.yaml"]], USAGE,
                      ["select_typo.yaml:2:26: 'collective': unknown value 'allreduc': it would select no row",
                       "(did you mean 'allreduce'?)"], launch="plain" if flag == "accept" else "mpi"))
    c.append(Case("accept: a select key mistyped", ["accept", good, "--rules", files["key_typo.yaml"]], USAGE,
                  ["key_typo.yaml:2:14: unknown key 'colective' in 'select'", "(did you mean 'collective'?)"],
                  launch="plain"))
    c.append(Case("compare: malformed quote under mpirun", ["compare", files["stray_quote.csv"], good], USAGE,
                  ["malformed CSV"]))
    for value, texts in [("2", ["--tolerance: '2' is not valid", "from 0 to below 1"]),
                         ("-0.1", ["--tolerance: '-0.1' is not valid", "from 0 to below 1"]),
                         ("abc", ["--tolerance: 'abc' is not a number", "from 0 to below 1"]),
                         ("nan", ["--tolerance: 'nan' is not a number"])]:
        c.append(Case(f"compare --tolerance {value}", ["compare", good, good, "--tolerance", value], USAGE, texts,
                      launch="plain"))
    # The same checks without mpirun (a plain start, as on a login node).
    for name, args, texts, env in [
        ("-b 0", ["-b", "0"], ["at least 1 byte"], {}),
        ("unknown flag --foo", ["--foo"], ["--foo"], {}),
        ("-n abc", ["-n", "abc"], ["-n/--iters: 'abc' is not valid"], {}),
        ("--out /proc/ccbench", ["--out", "/proc/ccbench"], ["cannot create the results folder"], {}),
        ("CCBENCH_FAULT unknown kind", small, ["unknown kind 'explode'"], {"CCBENCH_FAULT": "explode:rank=0"}),
        ("CCBENCH_CPU_SLOT_BYTES=65", small, ["CCBENCH_CPU_SLOT_BYTES='65' is invalid"], {"CCBENCH_CPU_SLOT_BYTES": "65"}),
        ("CCBENCH_CPU_SLOT_DEPTH=1", small, ["CCBENCH_CPU_SLOT_DEPTH='1' is invalid"], {"CCBENCH_CPU_SLOT_DEPTH": "1"}),
    ]:
        c.append(Case(f"plain: {name}", args, USAGE, texts, env=env, launch="plain"))
    c.append(Case("plain: --impl nccl --device cpu", ["--impl", "nccl", "--device", "cpu"] + small, PRECONDITION,
                  ["nccl runs on gpu ranks"], launch="plain", pre=False))
    return c


def store_cases(postgres_built):
    """--db as a URL, --metrics and `export` (results/store.h, results/metrics.h)."""
    c = [
        Case("--metrics without .prom", ["--metrics", "m.txt"], USAGE,
             ["--metrics m.txt: node_exporter's textfile collector reads only files named *.prom"]),
        Case("--metrics in a missing folder", ["--metrics", "no/such/folder/m.prom"], USAGE,
             ["--metrics no/such/folder/m.prom: its folder no/such/folder does not exist"]),
        Case("export --format prometheus", ["export", "--format", "prometheus", "x.csv"], USAGE,
             ["--format", "openmetrics"], launch="plain"),
    ]
    if postgres_built:
        c += [
            Case("--db a URL libpq cannot read", ["--db", "postgresql://[::1", "-n", "1"], USAGE,
                 ["history postgresql://[::1: not a PostgreSQL URL", "the form is postgresql://[USER@]HOST"]),
            Case("--db a server that is not there", ["--db", "postgresql://ops:pw0rd@127.0.0.1:1/x", "-n", "1"], PRECONDITION,
                 ["history postgresql://ops@127.0.0.1:1/x: cannot connect to PostgreSQL (host 127.0.0.1, port 1, "
                  "database x, user ops)"]),
        ]
    return c


def run_case(case, opts):
    cwd = tempfile.mkdtemp(prefix="case-", dir=opts.scratch)
    if case.launch == "mpi":
        r = launch(opts.mpiexec, 2, opts.ccbench, case.args, env=case.env, cwd=cwd, timeout=120)
    else:
        r = run([opts.ccbench] + case.args, env=case.env, cwd=cwd, timeout=120)
    rc, out, err, elapsed = ("hang" if r.timed_out else r.rc), r.out, r.err, r.seconds
    problems = []
    if rc != case.rc:
        problems.append(f"exit code {rc}, expected {case.rc.describe()}")
    text = err if case.where == "stderr" else out + err
    for t in case.texts:
        if t not in text:
            problems.append(f"the {case.where} lacks {t!r}")
    if SANITIZER_REPORT.search(err):
        problems.append("a sanitizer reported an error")
    if case.pre:
        if os.path.exists(os.path.join(cwd, "ccbench-results")):
            problems.append("a results folder was created: the input was not judged before MPI start-up")
        if out.strip():
            problems.append("stdout is not empty: something ran before the input was judged")
        if err.count("ccbench: error:") != 1:
            problems.append(f"the error was said {err.count('ccbench: error:')} times, expected once (rank 0)")
    for path in case.absent:
        if os.path.exists(path):
            problems.append(f"{path} was created")
    shutil.rmtree(cwd, ignore_errors=True)
    return case, rc, elapsed, problems, err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench", required=True)
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--golden", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--filter", default="", help="run only cases whose name contains this")
    opts = ap.parse_args()
    opts.ccbench = os.path.abspath(opts.ccbench)
    version = run([opts.ccbench, "--version"]).out
    cuda_built = "CUDA     built in" in version
    have_gpu = False
    if shutil.which("nvidia-smi"):
        have_gpu = any(l.startswith("GPU") for l in run(["nvidia-smi", "-L"]).out.splitlines())
    os.environ.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    with tempfile.TemporaryDirectory(prefix="ccbench-bad-input-") as scratch:
        opts.scratch = scratch
        files = make_files(scratch, opts.golden)
        every = cases(files, scratch, have_gpu, cuda_built) + store_cases("postgres built in" in version)
        selected = [c for c in every if opts.filter in c.name]
        failed = 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
            for case, rc, elapsed, problems, err in pool.map(lambda c: run_case(c, opts), selected):
                how = "mpirun -np 2" if case.launch == "mpi" else "plain"
                if problems:
                    failed += 1
                    print(f"FAIL {case.name} [{how}] rc={rc} ({elapsed:.1f} s): " + "; ".join(problems))
                    print("     stderr: " + "\n     stderr: ".join(err.strip().splitlines()[:12]))
                else:
                    print(f"ok   {case.name} [{how}] rc={rc} ({elapsed:.1f} s)")
    n_mpi = sum(c.launch == "mpi" for c in selected)
    print(f"bad inputs tried: {len(selected)} ({n_mpi} under mpirun -np 2, {len(selected) - n_mpi} plain); "
          f"{failed} misbehaved" + ("" if cuda_built else "; GPU tuning variables left out: built without CUDA"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
