"""A cluster in a box for a test: scripts/cluster-in-a-box.sh driven from Python.

    with Box("coll", hosts=3) as box:          # up (Slurm too with slurm=True), down on any exit
        cmd = box.mpirun(3) + [CCBENCH, ...]   # mpirun from h1, one rank per host
        box.shape("h2", "1gbit"); box.cut("h3"); box.heal("h3"); box.exec("h1", ["sbatch", ...])

Where this machine cannot host a box (not root, no namespaces, tc or packages missing) entering
the box prints "SKIPPED: <reason>" and exits 77 (ctest's SKIP_RETURN_CODE): a skip, never a pass.
The box is taken down however the test ends: an exception, a failed check (sys.exit), SIGTERM or
SIGINT, or the test's own deadline (`deadline_s`, SIGALRM), which must be shorter than ctest's
TIMEOUT since ctest kills a test that outlives it without letting it clean up.

Box names: "c" + 4 hex digits of this build folder + the test's short name, so the same test of
two build trees never shares a box and `tier_prefix()` finds what one tree left behind.
"""
import hashlib
import os
import re
import signal
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "cluster-in-a-box.sh")
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SKIP = 77
UNAVAILABLE = 3  # cluster-in-a-box.sh: this machine cannot host a box


def tier_prefix(build_dir):
    """The box-name prefix of the cluster tests run from `build_dir`."""
    return "c" + hashlib.sha1(os.path.abspath(build_dir).encode()).hexdigest()[:4]


class Deadline(Exception):
    pass


def share_args(*folders):
    """`up --share` for the source tree and `folders` where they lie under /tmp or /dev/shm, which
    every host replaces with its own (a CI clone in /tmp: the hosts would not see ccbench)."""
    out = []
    for d in {os.path.realpath(SOURCE), *(os.path.realpath(f) for f in folders if f)}:
        if d.startswith(("/tmp/", "/dev/shm/")):
            out += ["--share", d]
    return out


class Box:
    def __init__(self, short, hosts, slurm=False, build_dir=None, deadline_s=None):
        assert short.isalnum() and short.islower() and len(short) <= 7, short
        self.name = tier_prefix(build_dir or os.getcwd()) + short
        self.build_dir = build_dir or os.getcwd()
        self.hosts = hosts
        self.slurm = slurm
        self.deadline_s = deadline_s
        self.dir = f"/run/ccbench-box/{self.name}"
        self.up_seconds = None

    # ---- life cycle ----

    def __enter__(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._on_signal)
        if self.deadline_s:
            signal.signal(signal.SIGALRM, self._on_alarm)
            signal.alarm(int(self.deadline_s))
        self.box("down", check=False, quiet=True)  # what a killed earlier run of this test left
        up = ["up", str(self.hosts)] + (["--slurm"] if self.slurm else []) + share_args(self.build_dir)
        p = self.box(*up, check=False)
        if p.returncode == UNAVAILABLE:
            print(f"SKIPPED: cluster-in-a-box cannot run here: {p.stderr.strip()}")
            sys.exit(SKIP)
        if p.returncode != 0:
            self.down()
            sys.exit(f"FAIL: cluster-in-a-box up exited {p.returncode}: {p.stderr.strip()}")
        self.up_seconds = _seconds_in(p.stderr, "up:")
        return self

    def __exit__(self, *exc):
        signal.alarm(0)
        self.down()
        return False

    def down(self):
        p = self.box("down", check=False, quiet=True)
        if p.returncode != 0:
            print(f"FAIL: cluster-in-a-box down exited {p.returncode}: {p.stderr.strip()}")
            sys.exit(1)
        print(p.stderr.strip())
        self.down_seconds = _seconds_in(p.stderr, "down")

    def _on_signal(self, sig, _frame):
        raise SystemExit(f"FAIL: signal {sig}; the box is taken down")

    def _on_alarm(self, _sig, _frame):
        raise Deadline(f"the test's deadline of {self.deadline_s} s passed; the box is taken down")

    # ---- verbs ----

    def box(self, *args, check=True, quiet=False, timeout=120):
        p = subprocess.run(["bash", SCRIPT, "--name", self.name, *args], capture_output=True, text=True,
                           timeout=timeout)
        if check and p.returncode != 0:
            raise RuntimeError(f"cluster-in-a-box {' '.join(args)} exited {p.returncode}: {p.stderr.strip()}")
        if not quiet and p.stderr.strip():
            print(p.stderr.strip())
        return p

    def mpirun(self, np, *mpirun_args):
        """The command line prefix of an mpirun from h1 over the box's hosts: add the program."""
        return ["bash", SCRIPT, "--name", self.name, "run", "-np", str(np), *mpirun_args]

    def exec_cmd(self, host, argv):
        return ["bash", SCRIPT, "--name", self.name, "exec", host, *argv]

    def exec(self, host, argv, timeout=120, env=None):
        return subprocess.run(self.exec_cmd(host, argv), capture_output=True, text=True, timeout=timeout, env=env)

    def processes(self, host):
        """Command lines of the processes in `host` other than the one holding its namespaces."""
        p = subprocess.run(["ip", "netns", "pids", f"cbx-{self.name}-{host}"], capture_output=True, text=True)
        out = []
        for pid in p.stdout.split():
            try:
                with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except (OSError, IndexError):
                continue  # ended meanwhile
            if state != "Z" and not (cmd.startswith("unshare --uts --mount") or cmd == "sleep infinity"):
                out.append(f"{pid} {cmd}")  # a zombie has ended; only its parent has yet to see it
        return out

    def shape(self, host, rate, loss=None):
        self.box("shape", host, rate, *([str(loss)] if loss is not None else []))

    def cut(self, host):
        self.box("cut", host)

    def heal(self, host):
        self.box("heal", host)


def _seconds_in(text, what):
    """The seconds cluster-in-a-box reported for `what` ("box 'x' up: ... in 0.41 s"), or None."""
    m = re.search(re.escape(what) + r"[^\n]* in ([0-9.]+) s", text)
    return float(m.group(1)) if m else None
