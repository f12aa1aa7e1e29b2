"""Load shedding (tables/capacity.py): while a web process's database thread is full,
new seats are refused `room_busy`, changing nothing; seated players play on; seats are
taken again once it has room."""

import asyncio
import time

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
from tables.capacity import Occupancy, SeatAdmission, Seating
from tables.commands import Sit
from tables.exceptions import TableError, TableNotFound
from tables.models import Seat, SeatStatus
from tests.kit import TableFactory, funded_player, wallet
from tests.tables.test_consumers import connect_as
from tests.tables.test_play_bots import RestartableDaphne, _played


class Clock:
    """A clock that moves only when the test moves it, or (`real`) the monotonic clock
    moved on at will."""

    def __init__(self, *, real: bool = False) -> None:
        self.real = real
        self.offset = 1000.0

    def __call__(self) -> float:
        return (time.monotonic() if self.real else 0.0) + self.offset


@pytest.fixture
def clock(monkeypatch, settings) -> Clock:
    """A fresh measure of this process's database thread on a clock of the test's (the
    suite's other tests leave theirs in the process's), and the room's default
    thresholds (the suite's settings raise them out of the way)."""
    settings.SEATING_SHED_OCCUPANCY = 0.8
    settings.SEATING_SLOW_OCCUPANCY = 0.5
    settings.SEATING_SLOW_INTERVAL = 1.0
    clock = Clock()
    monkeypatch.setattr(capacity, "database_thread", Occupancy(clock=clock))
    monkeypatch.setattr(capacity, "seat_admission", SeatAdmission(clock=clock))
    return clock


def took(clock: Clock, seconds: float, count: int = 1) -> None:
    """`count` hops side by side (queued behind one another) that took `seconds`, done now."""
    starts = [capacity.database_thread.begin() for _ in range(count)]
    clock.offset += seconds
    for start in starts:
        capacity.database_thread.end(start)


def sit(user_id: int = 1, table_id: int = 1) -> None:
    """A sit asks whether it may take a seat (raises `RoomBusy` if not)."""
    capacity.refuse_new_seat_when_busy(user_id=user_id, table_id=table_id)


def test_the_share_is_the_part_of_the_window_with_a_hop_on_the_thread(clock):
    thread = capacity.database_thread
    assert thread.share() == 0.0
    took(clock, 0.75, count=5)  # queued hops overlap: the thread was occupied 0.75 s
    assert thread.share() == pytest.approx(0.75 / capacity.WINDOW)
    clock.offset += 0.25
    took(clock, 0.5)
    assert thread.share() == pytest.approx(1.25 / capacity.WINDOW)
    clock.offset += capacity.WINDOW - 1.125  # the first hops are half out of the window
    assert thread.share() == pytest.approx(0.875 / capacity.WINDOW)
    clock.offset += capacity.WINDOW
    assert thread.share() == 0.0


def test_a_saturated_thread_is_full_however_many_hops_it_ran(clock):
    thread = capacity.database_thread
    for _ in range(10_000):  # 0.3 ms each, back to back, over the whole window
        start = thread.begin()
        clock.offset += capacity.WINDOW / 10_000
        thread.end(start)
    assert thread.share() == pytest.approx(1.0)
    clock.offset += capacity.WINDOW / 2
    assert thread.share() == pytest.approx(0.5)


def test_the_end_of_a_hop_it_never_began_is_ignored(clock):
    capacity.database_thread.end(clock() - 1.0)
    capacity.database_thread.end(clock() - 1.0)
    assert capacity.database_thread.share() == 0.0
    took(clock, 0.3)
    assert capacity.database_thread.share() == pytest.approx(0.1)


def test_a_hop_stuck_for_the_whole_window_fills_it(clock):
    thread = capacity.database_thread
    start = thread.begin()
    clock.offset += capacity.WINDOW * 0.5
    assert thread.share() == pytest.approx(0.5)
    clock.offset += capacity.WINDOW
    assert thread.share() == pytest.approx(1.0)  # none finished, one is stuck
    thread.end(start)
    clock.offset += capacity.WINDOW + 0.01
    assert thread.share() == 0.0


def test_a_new_seat_is_refused_only_above_the_threshold_or_while_seating_is_closed(clock, settings):
    took(clock, capacity.WINDOW * 0.49)  # an arrival of players sitting down: busy, not full
    for user_id in range(10):
        sit(user_id)  # every one taken
    took(clock, capacity.WINDOW * 0.3)
    sit()  # filling up (below)
    took(clock, capacity.WINDOW * 0.1)
    with pytest.raises(capacity.RoomBusy) as refused:
        sit()
    assert refused.value.code == "room_busy"
    assert "30 seconds" in refused.value.message
    clock.offset += capacity.WINDOW + 0.01
    sit()
    settings.SEATING_OPEN = False  # drained before a restart
    with pytest.raises(capacity.RoomBusy):
        sit()


def test_a_filling_room_takes_one_new_seat_a_second(clock):
    took(clock, capacity.WINDOW * 0.6)
    assert capacity.seating_now() == (Seating.SLOWED, pytest.approx(0.6))
    sit(user_id=1)
    sit(user_id=1)  # the same sit asked again (the consumer, then the service): let in
    for user_id, table_id in ((2, 1), (1, 2)):  # another player, another table
        with pytest.raises(capacity.RoomBusy) as refused:
            sit(user_id, table_id)
    assert refused.value.code == "room_busy"
    assert "a few at a time" in refused.value.message and "30 seconds" in refused.value.message
    clock.offset += 0.99
    with pytest.raises(capacity.RoomBusy):
        sit(user_id=2)
    clock.offset += 0.01  # a second after the last seat taken; refusals spent nothing
    sit(user_id=2)
    with pytest.raises(capacity.RoomBusy):
        sit(user_id=1)
    clock.offset += 1.0
    sit(user_id=3)
    sit(user_id=3)


def test_a_room_below_the_slow_share_seats_all_who_ask_and_above_the_full_share_none(clock):
    took(clock, capacity.WINDOW * 0.5)
    assert capacity.seating_now()[0] is Seating.OPEN
    for user_id in range(10):
        sit(user_id)
    took(clock, capacity.WINDOW * 0.31)
    assert capacity.seating_now()[0] is Seating.CLOSED
    with pytest.raises(capacity.RoomBusy) as refused:
        sit()
    assert "full right now" in refused.value.message


def test_a_change_of_seating_is_logged_once_not_at_every_sit(clock, caplog, monkeypatch):
    monkeypatch.setattr(capacity, "_logged", capacity._Logged())
    took(clock, capacity.WINDOW * 0.9)
    for _ in range(5):
        with pytest.raises(capacity.RoomBusy):
            sit()
    lines = [r.getMessage() for r in caplog.records if r.name == "tables.capacity"]
    assert lines == ["new seats closed: the database thread was occupied 90% of the last 3 s"]
    clock.offset += capacity.WINDOW * 2
    sit()  # open again, within LOG_EVERY of the last line
    assert len([r for r in caplog.records if r.name == "tables.capacity"]) == 1
    capacity._logged.at -= capacity.LOG_EVERY
    sit()
    assert caplog.records[-1].getMessage().startswith("new seats open: ")


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
    took(clock, capacity.WINDOW * 0.6)  # the test's clock stands still meanwhile
    transactions = await database_sync_to_async(LedgerTransaction.objects.count)()

    assert (await first.send("sit", seat=1, buy_in=10_000))["type"] == "ack"
    # Without a key, refused before the thread; with one, by the service.
    for fields in ({}, {"key": "b"}):
        refused = await second.send("sit", seat=2, buy_in=10_000, **fields)
        assert refused["type"] == "error" and refused["code"] == "room_busy", refused
    # The seat of the next second goes to whichever sit asks first, even one then refused
    # for its own reason (asked before the thread, the service lets it through).
    clock.offset += 1.0
    took(clock, capacity.WINDOW * 0.3)  # still filling
    assert (await third.send("sit", seat=1, buy_in=10_000))["code"] == "seat_unavailable"
    assert (await second.send("sit", seat=2, buy_in=10_000, key="b"))["code"] == "room_busy"
    clock.offset += 1.0
    took(clock, capacity.WINDOW * 0.3)
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


@pytest.mark.django_db(transaction=True)
async def test_a_room_whose_thread_is_full_refuses_new_seats_and_plays_on(monkeypatch, settings):
    # A window of one second, so that the test fills it in one, and a threshold of half
    # of it, so that the refusals come well within it on a loaded machine.
    settings.SEATING_SHED_OCCUPANCY = 0.5
    clock = Clock(real=True)
    monkeypatch.setattr(capacity, "database_thread", Occupancy(clock=clock, window=1.0))
    table = await database_sync_to_async(TableFactory)(seats=6)
    seated_player, newcomer_player = [await database_sync_to_async(funded_player)() for _ in "ab"]
    crowd = [await database_sync_to_async(funded_player)() for _ in range(12)]
    seated, newcomer = connect_as(seated_player, table.id), connect_as(newcomer_player, table.id)
    lobby = [connect_as(user, table.id) for user in crowd]
    for client in (seated, newcomer, *lobby):
        await client.connect()
    assert (await seated.send("sit", seat=1, buy_in=10_000, key="first"))["type"] == "ack"
    transactions = await database_sync_to_async(LedgerTransaction.objects.count)()

    # The database thread is held (a long command, a storm of snapshots): the commands
    # of a dozen players queue behind it for the rest of the window.
    clock.offset += 1.0  # the connections' hops are past
    held = asyncio.ensure_future(database_sync_to_async(time.sleep)(1.0))
    await asyncio.sleep(0.02)
    answers = await asyncio.gather(*(client.send("sit_out") for client in lobby))
    assert {answer["code"] for answer in answers} == {"not_seated"}, answers
    await held
    assert capacity.database_thread.share() > 0.5

    for fields in ({}, {"key": "second"}):  # refused before the thread, and in the service
        refused = await newcomer.send("sit", seat=2, buy_in=10_000, **fields)
        assert refused["type"] == "error" and refused["code"] == "room_busy", refused
    assert (
        await database_sync_to_async(Seat.objects.filter(player=newcomer_player).exists)() is False
    )
    assert await database_sync_to_async(wallet)(newcomer_player) == 100_000
    assert await database_sync_to_async(LedgerTransaction.objects.count)() == transactions
    # A retry of a sit that was carried out is answered as the first time, not refused.
    assert (await seated.send("sit", seat=1, buy_in=10_000, key="first"))["type"] == "ack"
    # Seated players go on as before: sitting out and coming back, topping up.
    for cmd, fields in (("sit_out", {}), ("sit_in", {}), ("top_up", {"amount": 5_000})):
        assert (await seated.send(cmd, **fields))["type"] == "ack"

    clock.offset += 1.01  # the thread is free again
    assert (await newcomer.send("sit", seat=2, buy_in=10_000, key="second"))["type"] == "ack"
    seat = await database_sync_to_async(Seat.objects.get)(player=newcomer_player)
    assert seat.stack == 10_000 and seat.status != SeatStatus.SITTING_OUT
    assert await database_sync_to_async(wallet)(newcomer_player) == 90_000
    for client in (seated, newcomer, *lobby):
        await client.ws.disconnect()


@pytest.mark.django_db
def test_a_full_room_refuses_a_seat_over_http_with_retry_after(clock):
    table = TableFactory(seats=6)
    alice = funded_player()
    api = APIClient()
    api.force_authenticate(alice)
    transactions = LedgerTransaction.objects.count()
    took(clock, capacity.WINDOW * 0.9, count=3)
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
    took(clock, capacity.WINDOW * 0.9, count=3)
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
    took(clock, capacity.WINDOW * 0.6)
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
    played = await database_sync_to_async(_played)([table.id for table in report.tables])
    assert played["seated"] == 0 and played["table_chips"] == 0
