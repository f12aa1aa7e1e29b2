"""Fixtures shared by the whole suite: real services, started or found, never mocked."""

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest
from asgiref.sync import SyncToAsync
from django.conf import settings
from django.core.management.base import CommandError
from django.core.management.color import no_style
from django.core.management.sql import emit_post_migrate_signal
from django.db import OperationalError, connections
from django.test import TransactionTestCase

ROOT = Path(__file__).resolve().parent.parent

_django_flush = TransactionTestCase._fixture_teardown
# Rows that post_migrate writes when the database is built and finds again after each
# flush: kept, instead of truncated and written again (some 150 rows, a fifth of the
# time of every flush).
_KEPT_BY_FLUSH = frozenset({"django_content_type", "auth_permission"})


def _flush(self: TransactionTestCase) -> None:
    """TransactionTestCase's flush (every table truncated, then post_migrate), but for
    the content types and permissions; post_migrate still runs, so that one a test
    removed is there again for the next."""
    if self.available_apps is not None or self.serialized_rollback:
        _django_flush(self)
        return
    for name in self._databases_names(include_mirrors=False):
        connection = connections[name]
        tables = [
            table
            for table in connection.introspection.django_table_names(
                only_existing=True, include_views=False
            )
            if table not in _KEPT_BY_FLUSH
        ]
        connection.ops.execute_sql_flush(connection.ops.sql_flush(no_style(), tables))
        emit_post_migrate_signal(verbosity=0, interactive=False, db=name)


def _flush_retrying(self: TransactionTestCase) -> None:
    """Flush after a transactional test, again if PostgreSQL aborted it for a deadlock.

    The suite's timer loop may still be running a command an earlier test made due (a
    turn timeout, a deal), or a pass's query, when the flush's TRUNCATE asks for its
    exclusive locks; one of the two is then chosen as the deadlock victim. The TRUNCATE
    rolls back whole, so it is safe to try again once the command is done.
    """
    for attempt in range(5):
        try:
            _flush(self)
            return
        except (OperationalError, CommandError) as exc:
            # flush wraps the database's error in a CommandError of its own.
            deadlock = "deadlock detected" in f"{exc} {exc.__cause__}"
            if not deadlock or attempt == 4:
                raise
            time.sleep(0.2 * (attempt + 1))


TransactionTestCase._fixture_teardown = _flush_retrying


@pytest.fixture(autouse=True)
def channel_layer_per_test() -> Iterator[None]:
    """Give each test channel layers of its own.

    A layer keeps per-loop state (channels-redis's receive lock and count, our group
    refresher), and each async test runs on an event loop of its own: a layer shared by
    the whole process carried one test's half-finished receive into the next test's loop
    ("bound to a different event loop"). A room process has one loop, as each test now
    has one layer.
    """
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture(autouse=True)
def viewer_limits_per_test(monkeypatch):
    """Give each test fresh limits per viewer (tables/viewer_limits.py), in a namespace of
    its own in Redis: the room's counts its sockets and spends its tokens, which would
    otherwise carry into the next test (a socket a test left open would hold a place
    until its lease ended). Returns them."""
    from tables import viewer_limits

    fresh = viewer_limits.ViewerLimits(namespace=f":test-{uuid.uuid4().hex[:12]}")
    monkeypatch.setattr(viewer_limits, "limits", fresh)
    return fresh


@pytest.fixture
def player(db):
    """A new player (no money yet)."""
    from tests.kit import UserFactory

    return UserFactory()


@pytest.fixture
def other_player(db):
    """Another new player."""
    from tests.kit import UserFactory

    return UserFactory()


@pytest.fixture
def fund(db):
    """`fund(user, cents)`: a real deposit to the user's wallet."""
    from cashier.services import deposit_create

    def fund(user, amount: int) -> None:
        deposit_create(user=user, amount=amount, idempotency_key=f"fund:{uuid.uuid4()}")

    return fund


@pytest.fixture
def ledger_state():
    """`ledger_state()`: the ledger's counts and every wallet (tests/kit.py)."""
    from tests.kit import ledger_state

    return ledger_state


@pytest.fixture
def auditor(db):
    """A member of the ``auditor`` group: reads every hand and ledger entry, plays not."""
    from accounts.services import auditor_create

    user, _password, _token = auditor_create(username=f"auditor-{uuid.uuid4().hex[:8]}")
    return user


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup) -> Iterator[None]:
    """pytest-django's, and before the test database is dropped, the connection of the
    one thread where `sync_to_async` (channels' `database_sync_to_async` too) runs the
    async tests' database calls is closed: Django closes only the main thread's, and the
    one left there kept the database from being dropped ("being accessed by other
    users")."""
    yield
    SyncToAsync.single_thread_executor.submit(connections.close_all).result()


@pytest.fixture(scope="session")
def stream_recording(django_db_setup, django_db_blocker):
    """The stream scenarios of tests/streams.py, recorded once for the tests that check
    them (they take a while), in a transaction rolled back after: only the recorded
    snapshots and messages outlive it."""
    from tests.streams import recording_rolled_back

    with django_db_blocker.unblock():
        return recording_rolled_back()


def database_url_for(db: dict) -> str:
    """A DATABASE_URL for the given Django database settings (the test database, say)."""
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


@contextmanager
def room_process(
    args: list[str], *, log_name: str, append: bool = False, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen]:
    """Run a process of the room (worker, server) on the test database; stop it after
    (killed if it will not stop), whatever the test did to it.

    Its output goes to `log_name` in the repository root, for when it will not start;
    `append` keeps what an earlier process of the same test wrote there (a restart).
    `env` sets variables over those (another DATABASE_URL, say).
    """
    environment = dict(os.environ)
    environment["DJANGO_SETTINGS_MODULE"] = "poker_room.settings.test"
    environment["DATABASE_URL"] = database_url_for(settings.DATABASES["default"])
    env = {**environment, **(env or {})}
    with open(ROOT / log_name, "a" if append else "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", *args], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            yield proc
        finally:
            processes_stop([proc])


def processes_stop(procs: list[subprocess.Popen]) -> None:
    """Stop processes of the room: every one is told to stop first, then each is waited
    for (killed if it will not stop), so that they shut down side by side. One that has
    already ended and been waited for is left alone."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_until_up(proc: subprocess.Popen, is_up: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not is_up():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start; see its .pytest-*.log")
        time.sleep(0.2)


def wait_for(
    predicate: Callable[[], object], *, timeout: float = 20.0, what: str = "the condition"
) -> object:
    """Poll `predicate` until it returns something true, and return that; fail the test
    if it has not within `timeout` seconds (what a worker or beat process does is seen
    only by polling the database or the process)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s")


@pytest.fixture
def queue(monkeypatch) -> Iterator[str]:
    """A Celery queue of the test's own: the processes it starts (their environment) and
    this process send and take there, never the suite's worker."""
    import redis

    from poker_room.celery import app

    name = f"{settings.CELERY_TASK_DEFAULT_QUEUE}-own-{uuid.uuid4().hex[:6]}"
    monkeypatch.setenv("CELERY_TASK_DEFAULT_QUEUE", name)  # for the processes it starts
    before = app.conf.task_default_queue
    app.conf.task_default_queue = name
    yield name
    app.conf.task_default_queue = before
    # What the stopped workers left in Redis: this queue's own keys, nothing else.
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    try:
        client.delete(name, f"_kombu.binding.{name}", f"_kombu.binding_permanent.{name}")
    finally:
        client.close()


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker) -> Iterator[str]:
    """A real Celery worker process on the suite's own queue, using the test database.

    Yields the worker's node name. Tasks it runs see only committed data, so tests that
    rely on it use `transactional_db`.
    """
    from poker_room.celery import app

    node = f"test-{uuid.uuid4().hex[:8]}@{os.uname().nodename}"
    args = ["celery", "-A", "poker_room", "worker", "--pool=solo", "--loglevel=INFO",
            "-Q", settings.CELERY_TASK_DEFAULT_QUEUE, "-n", node]  # fmt: skip
    with room_process(args, log_name=".pytest-celery.log") as proc:
        wait_until_up(
            proc, lambda: bool(app.control.ping(destination=[node], timeout=0.5)), "Celery"
        )
        yield node


class TimerLoop:
    """A timer loop process (`manage.py run_timers`) on the test database, that a test may
    stop and start again (tests/foundation/test_process_kills.py runs loops of its own)."""

    def __init__(self, django_db_blocker) -> None:
        self._blocker = django_db_blocker
        self._stack = ExitStack()
        self.proc: subprocess.Popen | None = None

    def _beating_since(self, since: datetime) -> bool:
        from tables.models import Heartbeat
        from tables.timers import HEARTBEAT

        with self._blocker.unblock():
            return Heartbeat.objects.filter(name=HEARTBEAT, at__gte=since).exists()

    def start(self) -> None:
        """Start it, and return once it leads (it recorded a heartbeat)."""
        since = datetime.now(tz=UTC)
        self.proc = self._stack.enter_context(
            room_process(["manage", "run_timers"], log_name=".pytest-timers.log", append=True)
        )
        try:
            wait_until_up(self.proc, lambda: self._beating_since(since), "the timer loop")
        except BaseException:
            self.stop()  # a loop that never led is not left running after the suite
            raise

    def stop(self) -> None:
        self._stack.close()
        self.proc = None


_suite_loops: list[TimerLoop] = []
# Modules whose tests must find no suite timer loop running (`timers_stopped`).
_loops_held: set[str] = set()


@pytest.fixture(scope="session")
def timer_process(django_db_setup, django_db_blocker) -> Iterator[TimerLoop]:
    """The room's timer loop on the test database, for the whole session: it times out
    the turns and deals the hands of every committed table. Tests that rely on it use
    `transactional_db`: it sees only committed data.
    """
    loop = TimerLoop(django_db_blocker)
    loop.start()
    _suite_loops.append(loop)
    yield loop
    _suite_loops.remove(loop)
    loop.stop()


@pytest.fixture(scope="module")
def timers_stopped(request) -> Iterator[None]:
    """No suite timer loop runs during the module's tests: for tests that run the loop's
    passes themselves or loops of their own, whose tables must move only when they say
    so. The loop is started again by the next test that needs it (`suite_timer_loop_up`),
    not at once: a test that does not need it pays nothing for it."""
    for loop in _suite_loops:
        if loop.proc is not None:
            loop.stop()
    _loops_held.add(request.module.__name__)
    yield
    _loops_held.discard(request.module.__name__)


@pytest.fixture(autouse=True)
def suite_timer_loop_up(request) -> None:
    """A test that uses the suite's timer loop (`timer_process`, through `live_room` too)
    finds it running, started again if a module before it stopped it."""
    if "timer_process" not in request.fixturenames or _loops_held:
        return
    for loop in _suite_loops:
        if loop.proc is None:
            loop.start()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=2)  # noqa: S310 - our own server
    except urllib.error.HTTPError:
        return True  # it answers (a 503 still means it is up)
    except OSError:
        return False
    return True


@pytest.fixture(scope="session")
def live_room(celery_worker_process, timer_process) -> Iterator[str]:
    """The whole room on a free port: daphne (HTTP + WebSockets), the timer loop and a
    Celery worker, on the test database and the suite's own Redis prefix and queue.
    Yields the base URL.

    Tests that use it see only committed data, so they use `transactional_db`.
    """
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = ["daphne", "-b", "127.0.0.1", "-p", str(port), "poker_room.asgi:application"]
    with room_process(args, log_name=".pytest-daphne.log") as proc:
        wait_until_up(proc, lambda: answers(f"{url}/healthz"), "daphne")
        yield url


# --- a redis-server of a test's own, to stop and restart ----------------------------


class PrivateRedis:
    """A redis-server of this test alone, on a free port, that it may stop and restart."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.folder = folder
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", str(self.folder)]  # fmt: skip
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while not self.ping():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the private redis-server did not start")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=20)
        self.proc = None

    def ping(self) -> bool:
        import redis

        try:
            return bool(redis.Redis.from_url(self.url, socket_connect_timeout=0.5).ping())
        except redis.exceptions.RedisError:
            return False


@pytest.fixture
def private_redis(tmp_path) -> Iterator[PrivateRedis]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    server = PrivateRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()
