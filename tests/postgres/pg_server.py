#!/usr/bin/env python3
"""A PostgreSQL server of its own for one test, started and removed by the test itself.

Usage: pg_server.py [--databases NAME,...] [--durable] [--listen ADDR] -- COMMAND [ARGS...]

initdb and postgres in a temporary folder under /tmp, listening on a Unix socket in that folder
and on 127.0.0.1 only (and on ADDR with --listen, an address of the network namespace it runs in,
from 198.18.0.0/15 only, taking password logins from that range: a host of a cluster in a box),
at a free port chosen at random; run as an unprivileged user when started
as root (initdb refuses root): `postgres` where it exists, else `nobody`, through setpriv. The
server dies with this script (setpriv --pdeathsig: also when the test runner kills it with
SIGKILL on a timeout); the folder is removed in a finally block, and folders of servers whose
owner died without removing them are removed at the next start. COMMAND runs with

  PG_FIXTURE_URL        postgresql://ccbench@/postgres?host=SOCKET_DIR&port=PORT (no password:
                        the socket trusts its local users)
  PG_FIXTURE_SOCKET, PG_FIXTURE_PORT, PG_FIXTURE_USER (ccbench, a superuser),
  PG_FIXTURE_PASSWORD   ccbench's password, which TCP connections to 127.0.0.1 need (scram-sha-256)
  PG_FIXTURE_BIN        the server's bin folder (psql, createdb, ...)

and the databases named by --databases made (owned by ccbench); its exit code is this script's.
The server runs with fsync off (a test's data need not survive a power cut), except with
--durable (benchmarks: the settings a real server has). Where the server binaries are absent it prints "SKIPPED:"
with the reason and exits 77 (ctest's SKIP_RETURN_CODE), running nothing.
"""
import glob
import ipaddress
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
PREFIX = "ccbench-pg-"
READY_TIMEOUT_S = 60  # a cold start on the loaded 2-core machine took 4 s; initdb 3-5 s


def find_bin():
    """The folder holding initdb, postgres and pg_isready, or None."""
    candidates = [os.environ.get("CCBENCH_PG_BIN", "")]
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        candidates.append(out.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    if shutil.which("initdb"):
        candidates.append(os.path.dirname(shutil.which("initdb")))
    for d in candidates:
        if d and all(os.access(os.path.join(d, b), os.X_OK) for b in ("initdb", "postgres", "pg_isready")):
            return d
    return None


def server_user():
    """(name, uid, gid) to run the server as: ourselves, or an unprivileged user when root."""
    if os.geteuid() != 0:
        p = pwd.getpwuid(os.geteuid())
        return p.pw_name, p.pw_uid, p.pw_gid
    for name in ("postgres", "nobody"):
        try:
            p = pwd.getpwnam(name)
            return p.pw_name, p.pw_uid, p.pw_gid
        except KeyError:
            continue
    return None


def as_user(user, argv, pdeathsig=False):
    if os.geteuid() != 0:
        return argv
    wrap = ["setpriv", f"--reuid={user[1]}", f"--regid={user[2]}", "--clear-groups"]
    if pdeathsig:
        wrap.append("--pdeathsig=INT")  # fast shutdown: sessions ended, server gone
    return wrap + ["--"] + argv


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def remove_stale():
    """Folders of earlier fixtures whose owning process is gone (it was killed before cleaning up)."""
    for d in glob.glob(os.path.join(tempfile.gettempdir(), PREFIX + "*")):
        try:
            owner = int(open(os.path.join(d, "owner.pid")).read())
            os.kill(owner, 0)
        except (OSError, ValueError):
            shutil.rmtree(d, ignore_errors=True)


# --listen takes addresses of the benchmarking range only (RFC 2544), the one the cluster in a box uses.
BOX_RANGE = "198.18.0.0/15"


def start(bindir, user, root, durable, listen=None):
    data, sock = os.path.join(root, "data"), os.path.join(root, "sock")
    password = secrets.token_hex(12)
    pwfile = os.path.join(root, "pw")
    with open(pwfile, "w") as f:
        f.write(password + "\n")
    os.mkdir(sock)
    for p in (root, sock, pwfile):
        os.chown(p, user[1], user[2])
    subprocess.run(as_user(user, [os.path.join(bindir, "initdb"), "-D", data, "-U", "ccbench", f"--pwfile={pwfile}",
                                  "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C",
                                  "-N"]),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=root)
    os.remove(pwfile)
    if listen:
        with open(os.path.join(data, "pg_hba.conf"), "a") as f:
            f.write(f"host all all {BOX_RANGE} scram-sha-256\n")
    addresses = "127.0.0.1" + (f",{listen}" if listen else "")
    for attempt in range(3):  # a port taken between choosing it and binding it: another
        port = free_port()
        log = open(os.path.join(root, "server.log"), "w")
        server = subprocess.Popen(
            as_user(user, [os.path.join(bindir, "postgres"), "-D", data, "-p", str(port), "-k", sock,
                           "-c", f"listen_addresses={addresses}", "-c", "fsync=" + ("on" if durable else "off"),
                           "-c", "max_connections=80",
                           "-c", "unix_socket_permissions=0777"], pdeathsig=True),
            stdout=log, stderr=subprocess.STDOUT, cwd=root)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline and server.poll() is None:
            ready = subprocess.run([os.path.join(bindir, "pg_isready"), "-q", "-h", sock, "-p", str(port)])
            if ready.returncode == 0:
                return server, port, password
            time.sleep(0.2)
        stop(server)
    raise RuntimeError("PostgreSQL did not start: " + open(os.path.join(root, "server.log")).read()[-2000:])


def stop(server):
    if server.poll() is None:
        server.send_signal(signal.SIGINT)  # fast shutdown
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def main():
    if "--" not in sys.argv:
        print(__doc__, file=sys.stderr)
        return 2
    command = sys.argv[sys.argv.index("--") + 1:]
    ours = sys.argv[1:sys.argv.index("--")]
    databases = ours[ours.index("--databases") + 1].split(",") if "--databases" in ours else []
    listen = ours[ours.index("--listen") + 1] if "--listen" in ours else None
    if listen and ipaddress.ip_address(listen) not in ipaddress.ip_network(BOX_RANGE):
        print(f"pg_server.py: --listen {listen}: only addresses of {BOX_RANGE} (the cluster in a box's range)",
              file=sys.stderr)
        return 2
    bindir = find_bin()
    if not bindir:
        print("SKIPPED: the PostgreSQL server's binaries (initdb, postgres, pg_isready) were not found: install "
              "the Debian package postgresql (scripts/setup.sh does), or set CCBENCH_PG_BIN")
        return SKIP
    user = server_user()
    if not user or (os.geteuid() == 0 and not shutil.which("setpriv")):
        print("SKIPPED: running as root, and no unprivileged user (postgres, nobody) or no setpriv to start the "
              "PostgreSQL server as one (initdb refuses root)")
        return SKIP
    # SIGTERM (a runner stopping the test) ends us through the finally below, as SIGINT does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    remove_stale()
    root = tempfile.mkdtemp(prefix=PREFIX)
    server = None
    try:
        with open(os.path.join(root, "owner.pid"), "w") as f:
            f.write(str(os.getpid()))
        server, port, password = start(bindir, user, root, "--durable" in ours, listen)
        sock = os.path.join(root, "sock")
        env = dict(os.environ, PG_FIXTURE_URL=f"postgresql://ccbench@/postgres?host={sock}&port={port}",
                   PG_FIXTURE_SOCKET=sock, PG_FIXTURE_PORT=str(port), PG_FIXTURE_USER="ccbench",
                   PG_FIXTURE_PASSWORD=password, PG_FIXTURE_BIN=bindir)
        for var in ("PGPASSWORD", "PGPASSFILE", "PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGSERVICE"):
            env.pop(var, None)  # the test says where to connect, not the caller's environment
        for db in databases:
            subprocess.run([os.path.join(bindir, "createdb"), "-h", sock, "-p", str(port), "-U", "ccbench", db],
                           check=True, env=env)
        print(f"# PostgreSQL {bindir} on {sock} and {'127.0.0.1' + (', ' + listen if listen else '')} port {port} "
              f"as {user[0]}", flush=True)
        return subprocess.run(command, env=env).returncode
    finally:
        if server:
            stop(server)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
