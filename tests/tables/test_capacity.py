"""Load shedding (tables/capacity.py): while a web process's seated players' play fills
it (the CPU its database thread spends on their decisions and table commands), new seats
are refused `room_busy`, changing nothing; seated players play on; seats are taken again
once it has room. What viewers without a seat send, and other programs on the machine's
cores, fill nothing (issue #46, finding 2)."""

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from cashier.models import LedgerTransaction
from tables import capacity
from tables.bots import player
from tables.bots.player import Pace
from tables.bots.runner import run_bots
from tables.capacity import PlayerPace, SeatAdmission, SeatedPlay, Seating
from tables.commands import Sit
from tables.exceptions import TableError, TableNotFound
from tables.hop_order import Urgency
from tables.models import Hand, HandStatus, Seat, SeatStatus
from tests.conftest import wait_for
from tests.kit import TableFactory, UserFactory, current, deal, funded_player, sit, wallet
from tests.tables.test_consumers import Client_, connect_as
from tests.tables.test_play_bots import RestartableDaphne, _played
from tests.tables.test_viewer_limits import opened


class Clock:
    """A clock that moves only when the test moves it, or (`real`) the monotonic clock
    moved on at will."""

    def __init__(self, *, real: bool = False) -> None:
        self.real = real
        self.offset = 1000.0

    def __call__(self) -> float:
        return (time.monotonic() if self.real else 0.0) + self.offset


def fresh_measure(monkeypatch, clock) -> None:
    """A fresh measure of this process's seated play, players' paces and seat admission
    on `clock` (the suite's other tests leave theirs in the process's)."""
    monkeypatch.setattr(capacity, "seated_play", SeatedPlay(clock=clock))
    monkeypatch.setattr(capacity, "player_pace", PlayerPace(clock=clock))
    monkeypatch.setattr(capacity, "seat_admission", SeatAdmission(clock=clock))


@pytest.fixture
def clock(monkeypatch, settings) -> Clock:
    """A fresh measure on a clock of the test's, and the room's default thresholds (the
    suite's settings raise them out of the way)."""
    settings.SEATING_SHED_CPU = 0.15
    settings.SEATING_SLOW_CPU = 0.09
    settings.SEATING_SLOW_INTERVAL = 1.0
    clock = Clock()
    fresh_measure(monkeypatch, clock)
    return clock


def played(share: float) -> None:
    """Seated play that took `share` of a core over the window, done now."""
    capacity.seated_play.add(share * capacity.WINDOW)


def sit_asks(user_id: int = 1, table_id: int = 1) -> None:
    """A sit asks whether it may take a seat (raises `RoomBusy` if not)."""
    capacity.refuse_new_seat_when_busy(user_id=user_id, table_id=table_id)


def burn(seconds: float) -> None:
    """Run on the CPU for `seconds` of this thread's time."""
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


# -- the measure -------------------------------------------------------------------------


def test_the_measure_is_the_cpu_of_seated_play_over_the_window_as_a_cores_share(clock):
    play = capacity.seated_play
    assert play.share() == 0.0
    play.add(0.3)
    play.add(0.15)
    assert play.share() == pytest.approx(0.45 / capacity.WINDOW)
    clock.offset += capacity.WINDOW - 0.5
    play.add(0.3)
    assert play.share() == pytest.approx(0.75 / capacity.WINDOW)
    clock.offset += 1.0  # the first two are out of the window
    assert play.share() == pytest.approx(0.3 / capacity.WINDOW)
    clock.offset += capacity.WINDOW
    assert play.share() == 0.0


@pytest.mark.django_db
async def test_seated_play_counts_its_cpu_on_the_thread_and_nothing_of_its_waits(clock):
    """A hop that waits (for PostgreSQL, for a core another program holds, for the GIL:
    here a sleep) counts nothing; what it runs counts, raised or not; and only seated
    play's hops count at all."""
    play = capacity.seated_play
    await capacity.on_database_thread(time.sleep, 0.3, urgency=Urgency.TABLE)
    assert play.share() * capacity.WINDOW < 0.01
    await capacity.on_database_thread(burn, 0.05, urgency=Urgency.CLOCK)
    counted = play.share() * capacity.WINDOW
    assert counted >= 0.05
    for urgency in (Urgency.OTHER, Urgency.VIEW):  # a viewer's, a connection check
        await capacity.on_database_thread(burn, 0.05, urgency=urgency)
    assert play.share() * capacity.WINDOW == pytest.approx(counted)

    def burn_then_fail() -> None:
        burn(0.05)
        raise ValueError("refused")

    with pytest.raises(ValueError):
        await capacity.on_database_thread(burn_then_fail, urgency=Urgency.TABLE)
    assert play.share() * capacity.WINDOW >= counted + 0.05


def test_a_seated_player_counts_up_to_a_players_pace(clock):
    urgencies = [capacity.play_urgency(user_id=1, decision=n % 2 == 0) for n in range(30)]
    assert urgencies[:4] == [Urgency.CLOCK, Urgency.TABLE] * 2
    assert urgencies.count(Urgency.OTHER) == 30 - capacity.PACE_BURST
    assert capacity.play_urgency(user_id=2, decision=True) is Urgency.CLOCK  # their own
    clock.offset += 1 / capacity.PACE_PER_SECOND
    assert capacity.play_urgency(user_id=1, decision=True) is Urgency.CLOCK
    assert capacity.play_urgency(user_id=1, decision=True) is Urgency.OTHER


def test_players_back_at_their_pace_are_forgotten_when_the_map_has_doubled(clock, monkeypatch):
    monkeypatch.setattr(capacity, "PACE_SWEEP_FROM", 4)
    pace = PlayerPace(clock=clock)
    for user_id in range(4):
        pace.take(user_id)
    pace.take(3)
    clock.offset += 1 / capacity.PACE_PER_SECOND  # all full again but the fourth
    pace.take(10)  # the fifth player: the map is swept first
    assert sorted(pace._buckets) == [3, 10]
    # Many passing players (a new one each tenth of a second): the map stays bounded.
    for user_id in range(100, 1100):
        pace.take(user_id)
        clock.offset += 0.1
    assert len(pace._buckets) <= 2 * 4 + capacity.PACE_BURST / capacity.PACE_PER_SECOND * 10


# -- seating by the measure ----------------------------------------------------------------


def test_a_new_seat_is_refused_only_above_the_threshold_or_while_seating_is_closed(clock, settings):
    played(0.08)  # an arrival of players sitting down: busy, not full
    for user_id in range(10):
        sit_asks(user_id)  # every one taken
    played(0.04)
    sit_asks()  # filling up (below)
    played(0.04)
    with pytest.raises(capacity.RoomBusy) as refused:
        sit_asks()
    assert refused.value.code == "room_busy"
    assert "30 seconds" in refused.value.message
    clock.offset += capacity.WINDOW + 0.01
    sit_asks()
    settings.SEATING_OPEN = False  # drained before a restart
    with pytest.raises(capacity.RoomBusy):
        sit_asks()


def test_a_filling_room_takes_one_new_seat_a_second(clock):
    played(0.12)
    assert capacity.seating_now() == (Seating.SLOWED, pytest.approx(0.12))
    sit_asks(user_id=1)
    sit_asks(user_id=1)  # the same sit asked again (the consumer, then the service): let in
    for user_id, table_id in ((2, 1), (1, 2)):  # another player, another table
        with pytest.raises(capacity.RoomBusy) as refused:
            sit_asks(user_id, table_id)
    assert refused.value.code == "room_busy"
    assert "a few at a time" in refused.value.message and "30 seconds" in refused.value.message
    clock.offset += 0.99
    with pytest.raises(capacity.RoomBusy):
        sit_asks(user_id=2)
    clock.offset += 0.01  # a second after the last seat taken; refusals spent nothing
    sit_asks(user_id=2)
    with pytest.raises(capacity.RoomBusy):
        sit_asks(user_id=1)
    clock.offset += 1.0
    sit_asks(user_id=3)
    sit_asks(user_id=3)


def test_a_room_below_the_slow_share_seats_all_who_ask_and_above_the_full_share_none(clock):
    played(0.08)
    assert capacity.seating_now()[0] is Seating.OPEN
    for user_id in range(10):
        sit_asks(user_id)
    played(0.08)
    assert capacity.seating_now()[0] is Seating.CLOSED
    with pytest.raises(capacity.RoomBusy) as refused:
        sit_asks()
    assert "full right now" in refused.value.message


def test_a_change_of_seating_is_logged_once_not_at_every_sit(clock, caplog, monkeypatch):
    monkeypatch.setattr(capacity, "_logged", capacity._Logged())
    played(0.9)
    for _ in range(5):
        with pytest.raises(capacity.RoomBusy):
            sit_asks()
    lines = [r.getMessage() for r in caplog.records if r.name == "tables.capacity"]
    assert lines == [
        "new seats closed: seated play took 90% of a core on the database thread over the last 3 s"
    ]
    clock.offset += capacity.WINDOW * 2
    sit_asks()  # open again, within LOG_EVERY of the last line
    assert len([r for r in caplog.records if r.name == "tables.capacity"]) == 1
    capacity._logged.at -= capacity.LOG_EVERY
    sit_asks()
    assert caplog.records[-1].getMessage().startswith("new seats open: ")


# -- over the socket ---------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_filling_room_seats_one_player_a_second_over_the_socket(clock):
    """Between the slow and the full share: of two players asking at once, one is
    seated; the other is refused with nothing moved, and seated a second later."""
    table = await database_sync_to_async(TableFactory)(seats=6)
    alice, bob, carol = [await database_sync_to_async(funded_player)() for _ in "abc"]
    clients = [connect_as(user, table.id) for user in (alice, bob, carol)]
    for client in clients:
        await client.connect()
    first, second, third = clients
    played(0.12)  # the test's clock stands still meanwhile
    transactions = await database_sync_to_async(LedgerTransaction.objects.count)()

    assert (await first.send("sit", seat=1, buy_in=10_000))["type"] == "ack"
    # Without a key, refused before the thread; with one, by the service.
    for fields in ({}, {"key": "b"}):
        refused = await second.send("sit", seat=2, buy_in=10_000, **fields)
        assert refused["type"] == "error" and refused["code"] == "room_busy", refused
    # The seat of the next second goes to whichever sit asks first, even one then refused
    # for its own reason (asked before the thread, the service lets it through).
    clock.offset += 1.0  # still filling: the play is still in the window
    assert (await third.send("sit", seat=1, buy_in=10_000))["code"] == "seat_unavailable"
    assert (await second.send("sit", seat=2, buy_in=10_000, key="b"))["code"] == "room_busy"
    clock.offset += 1.0
    assert capacity.seating_now()[0] is Seating.SLOWED
    assert (await second.send("sit", seat=2, buy_in=10_000, key="b"))["type"] == "ack"
    assert (await third.send("sit", seat=3, buy_in=10_000))["code"] == "room_busy"

    seats = await database_sync_to_async(
        lambda: sorted(Seat.objects.values_list("number", "player"))
    )()
    assert seats == [(1, alice.id), (2, bob.id)]
    assert [await database_sync_to_async(wallet)(user) for user in (alice, bob, carol)] == [
        90_000, 90_000, 100_000
    ]  # fmt: skip
    assert await database_sync_to_async(LedgerTransaction.objects.count)() == transactions + 2
    for client in clients:
        await client.ws.disconnect()


def _heads_up(table) -> tuple:
    """Two players seated at `table`, a hand dealt."""
    alice, bob = funded_player(), funded_player()
    sit(table, alice, 1)
    sit(table, bob, 2)
    deal(table)
    return alice, bob


def _turn(table) -> tuple[int, int, str]:
    """The user whose turn it is, the turn's number and a legal passive action, dealing
    the next hand first when none is in progress."""
    if not Hand.objects.filter(table=table, status=HandStatus.IN_PROGRESS).exists():
        deal(table)
    hand, state = current(table)
    actor = Seat.objects.get(table=table, number=state.actor).player_id
    return actor, hand.turn_version, "check" if state.legal_actions().can_check else "call"


async def decide(table, clients: dict[int, Client_]) -> None:
    """The player whose turn it is checks or calls, from their socket: acknowledged."""
    actor, turn, action = await database_sync_to_async(_turn)(table)
    answer = await clients[actor].send("act", action=action, turn=turn)
    assert answer["type"] == "ack", answer


@pytest.mark.django_db(transaction=True)
async def test_a_viewers_commands_are_seated_play_while_the_table_says_they_sit(clock):
    """A socket learns that its viewer sits from its snapshot and the table's `seats`
    messages, whichever socket took the seat: from then on their table commands count,
    their own settings (`mute`, `auto_top_up`) never; once they left, nothing."""
    table = await database_sync_to_async(TableFactory)(seats=6)
    alice, bob = [await database_sync_to_async(funded_player)() for _ in "ab"]
    tab, other_tab = connect_as(alice, table.id), connect_as(alice, table.id)
    for client in (tab, other_tab):
        await client.connect()
    play = capacity.seated_play
    assert (await tab.send("sit_out"))["code"] == "not_seated"
    assert (await other_tab.send("sit", seat=1, buy_in=10_000))["type"] == "ack"
    assert play.share() == 0.0  # a viewer's, both
    await tab.until(lambda m: m.get("type") == "seats")
    for cmd, fields in (
        ("mute", {"player": bob.username, "on": True}),
        ("auto_top_up", {"mode": "max"}),
    ):
        assert (await tab.send(cmd, **fields))["type"] == "ack"
    assert play.share() == 0.0  # her own settings
    assert (await tab.send("sit_out"))["type"] == "ack"
    assert play.share() > 0.0  # a table command of a seated player
    assert (await other_tab.send("leave"))["type"] == "ack"
    await tab.until(lambda m: m.get("type") == "seats" and not m["seats"])
    counted = play.share()
    assert (await tab.send("sit_in"))["code"] == "not_seated"
    assert play.share() == counted
    for client in (tab, other_tab):
        await client.ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_room_full_of_seated_players_decisions_refuses_new_seats_and_plays_on(
    clock, settings, monkeypatch
):
    """Seated players deciding as fast as they can fill the measure (a twentieth of a
    core here: a heads-up table's decisions reach it on any machine); then a newcomer's
    sit is refused, keyed or not, with nothing moved, while the seated play on; once the
    window has passed, the newcomer sits."""
    settings.SEATING_SHED_CPU = 0.05
    settings.SEATING_SLOW_CPU = 0.03
    monkeypatch.setattr(capacity, "PACE_BURST", 100_000)  # every decision of theirs counts
    table = await database_sync_to_async(TableFactory)(
        seats=6, pause_between_hands_ms=0, action_seconds=60
    )
    alice, bob = await database_sync_to_async(_heads_up)(table)
    newcomer_player = await database_sync_to_async(funded_player)()
    clients = {user.id: connect_as(user, table.id) for user in (alice, bob)}
    newcomer = connect_as(newcomer_player, table.id)
    for client in (*clients.values(), newcomer):
        await client.connect()

    decisions = 0
    while capacity.seated_play.share() <= settings.SEATING_SHED_CPU:
        await decide(table, clients)
        decisions += 1
        assert decisions < 5_000, "the decisions never filled the measure"
    transactions = await database_sync_to_async(LedgerTransaction.objects.count)()

    for fields in ({}, {"key": "second"}):  # refused before the thread, and in the service
        refused = await newcomer.send("sit", seat=3, buy_in=10_000, **fields)
        assert refused["type"] == "error" and refused["code"] == "room_busy", refused
    assert await database_sync_to_async(Seat.objects.filter(player=newcomer_player).exists)() is (
        False
    )
    assert await database_sync_to_async(wallet)(newcomer_player) == 100_000
    assert await database_sync_to_async(LedgerTransaction.objects.count)() == transactions
    # The seated go on deciding, and sitting out, while the room is full.
    await decide(table, clients)
    assert (await clients[alice.id].send("sit_out"))["type"] == "ack"

    clock.offset += capacity.WINDOW + 0.01  # the window has passed
    assert (await newcomer.send("sit", seat=3, buy_in=10_000, key="second"))["type"] == "ack"
    seat = await database_sync_to_async(Seat.objects.get)(player=newcomer_player)
    assert seat.stack == 10_000 and seat.status != SeatStatus.SITTING_OUT
    for client in (*clients.values(), newcomer):
        await client.ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_viewers_without_a_seat_cannot_fill_the_room(clock, settings):
    """Issue #46, finding 2: four accounts with four sockets each send `snapshot`, `mute`,
    `auto_top_up` (and `act`, `sit_out` at a table they do not play) as fast as their
    budgets let them, and an anonymous client floods `snapshot` over sixteen sockets:
    with a threshold any counted hop would pass (a thousandth of a core), a new
    player's sit is still taken. The same threshold then closes the room to seated play."""
    settings.SEATING_SHED_CPU = 0.001
    settings.SEATING_SLOW_CPU = 0.0005
    table = await database_sync_to_async(TableFactory)(
        seats=6, pause_between_hands_ms=0, action_seconds=60
    )
    alice, bob = await database_sync_to_async(_heads_up)(table)  # a hand under way
    accounts = [await database_sync_to_async(UserFactory)() for _ in range(4)]
    attackers = [await opened(user, table.id) for user in accounts for _ in range(4)]
    anonymous = [await opened(None, table.id) for _ in range(16)]
    floods = (
        ("snapshot", {}),
        ("mute", {"player": alice.username, "on": True}),
        ("auto_top_up", {"mode": "max"}),
        ("act", {"action": "call"}),
        ("mute", {"player": alice.username, "on": False}),
        ("auto_top_up", {"mode": "off"}),
        ("sit_out", {}),
    )
    answers: dict[str, list[str]] = {}

    async def flood(client: Client_, frames: list[tuple[str, dict]]) -> None:
        for cmd, fields in frames:
            answer = await client.send(cmd, **fields)
            answers.setdefault(cmd, []).append(answer.get("code", answer["type"]))

    await asyncio.gather(
        *(flood(client, list(floods) * 3) for client in attackers),
        *(flood(client, [("snapshot", {})] * 10) for client in anonymous),
    )
    # The flood was served (the budgets let part of it through), and counted for nothing.
    for cmd in ("snapshot", "mute", "auto_top_up"):
        assert "ack" in answers[cmd], answers[cmd]
    assert "ack" not in answers["act"], answers["act"]
    assert capacity.seated_play.share() == 0.0

    newcomer_player = await database_sync_to_async(funded_player)()
    newcomer = await opened(newcomer_player, table.id, address="198.51.100.9")
    assert (await newcomer.send("sit", seat=3, buy_in=10_000))["type"] == "ack"

    # Seated play counts: the same threshold closes the room once theirs passes it.
    clients = {user.id: connect_as(user, table.id) for user in (alice, bob)}
    for client in clients.values():
        await client.connect()
    while capacity.seated_play.share() <= settings.SEATING_SHED_CPU:
        await decide(table, clients)
    late = await opened(await database_sync_to_async(funded_player)(), table.id, "192.0.2.1")
    assert (await late.send("sit", seat=4, buy_in=10_000))["code"] == "room_busy"
    for client in (*attackers, *anonymous, newcomer, *clients.values(), late):
        await client.ws.disconnect()


def _cpu_ticks(pid: int) -> int:
    """The CPU a process has used, in clock ticks (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads Linux's /proc")
@pytest.mark.django_db(transaction=True)
async def test_programs_loading_the_cores_do_not_make_the_room_refuse_a_seat(settings, monkeypatch):
    """Four CPU-bound processes take the machine's cores (waited for until each has run
    a while) while two players play at a table: every hop of the room waits for a core,
    and the measure, the CPU the seated play itself spends, stays where it was: a new
    player sits, at the room's default thresholds."""
    settings.SEATING_SHED_CPU = 0.15
    settings.SEATING_SLOW_CPU = 0.09
    fresh_measure(monkeypatch, time.monotonic)
    table = await database_sync_to_async(TableFactory)(
        seats=6, pause_between_hands_ms=0, action_seconds=60
    )
    alice, bob = await database_sync_to_async(_heads_up)(table)
    clients = {user.id: connect_as(user, table.id) for user in (alice, bob)}
    for client in clients.values():
        await client.connect()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(4)]
    try:
        # Each has run for a tenth of a second at least (clock ticks are hundredths).
        await asyncio.to_thread(
            wait_for,
            lambda: all(_cpu_ticks(hog.pid) >= 10 for hog in hogs),
            timeout=120,
            what="the CPU-bound processes running",
        )
        for _ in range(10):
            await decide(table, clients)
        newcomer = connect_as(await database_sync_to_async(funded_player)(), table.id)
        await newcomer.connect()
        assert (await newcomer.send("sit", seat=3, buy_in=10_000))["type"] == "ack"
        assert all(hog.poll() is None for hog in hogs)  # they ran all along
        assert capacity.seating_now()[0] is Seating.OPEN
        await newcomer.ws.disconnect()
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    for client in clients.values():
        await client.ws.disconnect()


# -- over HTTP, and the service's own check --------------------------------------------------


@pytest.mark.django_db
def test_a_full_room_refuses_a_seat_over_http_with_retry_after(clock):
    table = TableFactory(seats=6)
    alice = funded_player()
    api = APIClient()
    api.force_authenticate(alice)
    transactions = LedgerTransaction.objects.count()
    played(0.9)
    url = f"/api/tables/{table.id}/seat"
    response = api.post(url, {"seat": 1, "buy_in": 10_000}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert response.status_code == 503
    assert response.json()["code"] == "room_busy" and response.json()["detail"]
    assert response["Retry-After"] == "30"
    assert not Seat.objects.exists() and wallet(alice) == 100_000
    assert LedgerTransaction.objects.count() == transactions

    clock.offset += capacity.WINDOW + 0.01
    response = api.post(url, {"seat": 1, "buy_in": 10_000}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert response.status_code == 201, response.json()
    assert wallet(alice) == 90_000


@pytest.mark.django_db
def test_a_full_room_refuses_a_fresh_sit_with_one_read_and_no_lock_and_answers_a_retry(clock):
    """A refusal is what a full room does most (its players keep asking): it must not
    cost a table command on the database thread that is full already."""
    table = TableFactory(seats=6)
    alice, bob = funded_player(), funded_player()
    Sit(seat=1, buy_in=10_000).run(table_id=table.id, user=alice, idempotency_key="ws:a:sit:k")
    played(0.9)
    with CaptureQueriesContext(connection) as queries, pytest.raises(capacity.RoomBusy):
        Sit(seat=2, buy_in=10_000).run(table_id=table.id, user=bob, idempotency_key="ws:b:sit:k")
    [read] = queries.captured_queries
    assert "ws:b:sit:k" in read["sql"] and "FOR" not in read["sql"]
    assert not Seat.objects.filter(player=bob).exists() and wallet(bob) == 100_000
    # The retry of a sit carried out (its answer lost) is answered with its seat.
    seat = Sit(seat=1, buy_in=10_000).run(
        table_id=table.id, user=alice, idempotency_key="ws:a:sit:k"
    )
    assert seat.player == alice and wallet(alice) == 90_000
    # Those who could not sit anyway are told why, not that the room is full.
    for missing in (table.id + 1, 2**70):  # a URL's digits may name no bigint at all
        with pytest.raises(TableNotFound):
            Sit(seat=2, buy_in=10_000).run(table_id=missing, user=bob, idempotency_key="ws:b:x")
    bob.is_staff = True
    with pytest.raises(TableError) as refused:
        Sit(seat=2, buy_in=10_000).run(table_id=table.id, user=bob, idempotency_key="ws:b:y")
    assert refused.value.code == "cannot_play"


@pytest.mark.django_db
def test_a_sit_a_filling_room_let_in_is_not_asked_again_under_the_lock(clock, monkeypatch):
    """The lock's wait could outlast the interval, and the seat go to another sit."""
    table = TableFactory(seats=6)
    alice = funded_player()
    played(0.12)
    asked = []
    ask = capacity.refuse_new_seat_when_busy
    monkeypatch.setattr(
        capacity, "refuse_new_seat_when_busy", lambda **sit: asked.append(sit) or ask(**sit)
    )
    Sit(seat=1, buy_in=10_000).run(table_id=table.id, user=alice, idempotency_key="ws:a:sit:k")
    assert asked == [{"user_id": alice.pk, "table_id": table.id}]
    assert Seat.objects.get(player=alice).number == 1


@pytest.mark.django_db(transaction=True)
async def test_bots_refused_by_a_full_room_ask_again_and_the_run_ends_cleanly(
    timer_process, tmp_path, monkeypatch
):
    """The load test against a room that takes no new seat: every bot asks again now
    and then, none counts the refusals as the room's fault, and the run winds down on
    time although its tables never deal (nothing to wait for)."""
    monkeypatch.setattr(player, "SEAT_RETRY", 0.5)
    daphne = RestartableDaphne(tmp_path / "daphne.log", env={"SEATING_OPEN": "0"})
    await asyncio.to_thread(daphne.start)
    try:
        report = await run_bots(
            daphne.url, 1, 3, None, prefix="fullroom", seed=3, misbehave=False,
            pace=Pace(think=(0.05, 0.2)), duration=3, warmup=1, quick=True,
            timeout_seconds=60, stall_seconds=20,
        )  # fmt: skip
    finally:
        await asyncio.to_thread(daphne.stop)
    assert report.ok, report.render()
    assert report.errors_expected["room_busy"] > 3, report.render()  # some asked again
    assert not report.errors_unexpected and report.decisions == 0
    played_out = await database_sync_to_async(_played)([table.id for table in report.tables])
    assert played_out["seated"] == 0 and played_out["table_chips"] == 0
