"""Finding 5 of issue 12: one broken table stopped the room's safety net.

`tables.sweep` stopped at the first exception, so after one frozen table no lost
timeout or deal was recovered anywhere. The timer loop's pass (which does the sweep's
work now) isolates each table, and a table whose commands fail twice in a row (a bug,
not a refusal) is paused with a reason the admin and the room status show; re-opening it in the
admin clears the reason.

A "broken table" here is a hand whose saved engine state cannot be read (as a bug that
wrote a bad state would leave it): every command on it raises. A "stuck table" is one
whose row another session holds locked, as a process frozen inside a command's
transaction would leave it: its commands give up after `TABLE_LOCK_TIMEOUT_MS`, refused
`table_busy`, instead of holding a web process's database thread (or the timer loop's
pass) for as long as it stays stuck. These tests commit (the failure is recorded in its
own transaction after the failing one rolled back), so they use the transactional
database.
"""

import contextlib
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from django.db import DataError, connection
from django.utils import timezone
from django.utils.html import escape
from rest_framework.test import APIClient

from tables.exceptions import NotYourTurn, TableBusy, TableError
from tables.models import (
    AutoTopUp,
    Hand,
    HandEvent,
    HandStatus,
    Seat,
    Structure,
    Table,
    TableStatus,
)
from tables.services import hands, play
from tables.services.chat import chat_mute_set, chat_send
from tables.services.command import FAILURES_BEFORE_PAUSE
from tables.services.seating import seat_take
from tables.services.top_up import auto_top_up_set
from tables.timers import timers_run_due
from tests.kit import (
    StakeLevelFactory,
    TableFactory,
    current,
    deal,
    funded_player,
    seat_players,
)

# The tests run the timer loop's passes themselves.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("timers_stopped")]

LONG_AGO = "2000-01-01T00:00Z"


def an_hour_from_now():
    return timezone.now() + timedelta(hours=1)


def table_with_hand(name: str, **stake: Any) -> Table:
    """A heads-up table (of a stake level with these fields) with its first hand dealt,
    that no timer touches during the test (players sit while the next hand is an hour
    away, so no deal is due; the test deals; timeouts are far away)."""
    table = TableFactory(
        name=name,
        stake_level=StakeLevelFactory(**stake),
        seats=6,
        action_seconds=600,
        pause_between_hands_ms=0,
        next_hand_at=an_hour_from_now(),
    )
    seat_players(table, 2)
    deal(table)
    return table


@pytest.fixture
def break_hand():
    """Make a table's hand state unreadable; returns the good state. The hands are
    repaired after the test, before the ledger audit (which reads every hand)."""
    broken: dict[int, dict] = {}

    def breaks(table: Table, **fields) -> dict:
        hand, _state = current(table)
        broken[hand.pk] = hand.state
        Hand.objects.filter(pk=hand.pk).update(state={"broken": True}, **fields)
        return hand.state

    yield breaks
    for pk, state in broken.items():
        Hand.objects.filter(pk=pk).update(state=state)


def overdue(table: Table, since: str = LONG_AGO) -> Hand:
    hand = Hand.objects.get(table=table, status=HandStatus.IN_PROGRESS)
    Hand.objects.filter(pk=hand.pk).update(turn_deadline=since)
    hand.refresh_from_db()
    return hand


def timed_out(table: Table) -> bool:
    return HandEvent.objects.filter(hand__table=table, type="timed_out").exists()


def a_pass():
    return timers_run_due(now=timezone.now())


def test_a_pass_goes_on_past_a_broken_table_and_serves_the_others(break_hand):
    broken = table_with_hand("Broken")
    healthy = table_with_hand("Healthy")
    # Players sit while the next hand is an hour away, then it is due.
    idle = TableFactory(
        name="Idle", seats=6, pause_between_hands_ms=0, next_hand_at=an_hour_from_now()
    )
    seat_players(idle, 2)
    Table.objects.filter(pk=idle.pk).update(next_hand_at=timezone.now())
    break_hand(broken)
    overdue(broken)  # the earlier deadline: the pass meets the broken table first
    overdue(healthy, since="2000-01-01T00:01Z")
    result = a_pass()
    assert result.failed == 1
    assert result.timeouts == 1 and timed_out(healthy)
    assert result.deals == 1 and Hand.objects.filter(table=idle).exists()
    broken.refresh_from_db()
    assert broken.failure_count == 1 and broken.status == TableStatus.OPEN


def test_a_table_failing_twice_in_a_row_is_paused_with_a_reason_and_reopening_clears_it(
    admin_client, break_hand
):
    table = table_with_hand("Frozen")
    good_state = break_hand(table)
    hand = overdue(table)
    assert a_pass().failed == 1
    table.refresh_from_db()
    assert (table.failure_count, table.status, table.paused_reason) == (1, TableStatus.OPEN, "")
    a_pass()
    table.refresh_from_db()
    assert table.failure_count == 2
    assert table.status == TableStatus.PAUSED
    assert "turn_timeout failed 2 times in a row" in table.paused_reason
    assert "KeyError" in table.paused_reason
    # The admin sees why, on the list and on the table's page.
    listing = admin_client.get("/admin/tables/table/").content.decode()
    assert escape(table.paused_reason) in listing
    page = admin_client.get(f"/admin/tables/table/{table.id}/change/").content.decode()
    assert "failed 2 times in a row" in page
    # The timer loop leaves a table paused by failures to the admin.
    assert a_pass().failed == 0
    # The admin repairs the hand and re-opens the table: a fresh start, and it plays on.
    Hand.objects.filter(pk=hand.pk).update(state=good_state)
    response = admin_client.post(
        "/admin/tables/table/", {"action": "table_open", "_selected_action": [table.id]}
    )
    assert response.status_code == 302
    table.refresh_from_db()
    assert (table.failure_count, table.status, table.paused_reason) == (0, TableStatus.OPEN, "")
    assert a_pass().timeouts == 1
    assert timed_out(table)


def test_refusals_and_no_ops_neither_count_nor_clear_a_failure_but_a_move_clears_it():
    table = table_with_hand("Refusals")
    hand, state = current(table)
    waiting = Seat.objects.exclude(number=state.actor).get(table=table).player
    actor = Seat.objects.get(table=table, number=state.actor).player
    Table.objects.filter(pk=table.pk).update(failure_count=1)  # one failure before
    for _ in range(3):
        with pytest.raises(NotYourTurn):
            play.hand_act(table_id=table.id, user=waiting, kind="call")
    # A command with nothing to do (the timeout of a turn already played) proves nothing.
    assert play.turn_timeout(table_id=table.id, hand_id=hand.id, turn=0) is False
    table.refresh_from_db()
    assert (table.failure_count, table.status) == (1, TableStatus.OPEN)
    # A command that moves the table on: the count starts again.
    play.hand_act(table_id=table.id, user=actor, kind="call")
    table.refresh_from_db()
    assert table.failure_count == 0


@pytest.mark.parametrize(
    "raw_key", ["nul\x00key", "\ud800"], ids=["NUL (DataError)", "surrogate (UnicodeEncodeError)"]
)
def test_a_value_the_database_refuses_neither_counts_nor_pauses_the_table(raw_key):
    """Finding (issue #12): a NUL in a mute's player name (PostgreSQL refuses it:
    DataError) counted as the table's failure, so any logged-in viewer paused any table
    with two frames; issue #46, finding 1: a lone surrogate (psycopg cannot encode it)
    did the same. The commands check their fields now (tests/tables/
    test_hostile_commands.py); here a value nothing checked reaches the database from
    a player's command, called without those checks: it fails that command alone."""
    table = table_with_hand("Values")
    viewer = funded_player()
    for _ in range(FAILURES_BEFORE_PAUSE + 1):
        with pytest.raises((DataError, UnicodeEncodeError)):
            seat_take(
                table_id=table.id,
                user=viewer,
                seat_number=3,
                buy_in=10_000,
                idempotency_key=raw_key,
            )
        # A name no player can have is refused before any query.
        with pytest.raises(TableError) as refused:
            chat_mute_set(table_id=table.id, user=viewer, player="a\x00b", muted=True)
        assert refused.value.code == "no_such_player"
    table.refresh_from_db()
    assert (table.failure_count, table.status, table.paused_reason) == (0, TableStatus.OPEN, "")


def test_chat_and_a_dropped_connection_do_not_clear_a_run_of_failures():
    """Finding: a chat line (or a player's socket closing) published, and so counted as
    the table moving on: players asking in the chat why a stuck table does not move kept
    it from ever reaching its second failure in a row, and from being paused."""
    table = table_with_hand("Talk")
    ann = Seat.objects.get(table=table, number=1).player
    Table.objects.filter(pk=table.pk).update(failure_count=1)  # one failure before
    chat_send(table_id=table.id, user=ann, text="is this table stuck?")
    play.seat_disconnected(table_id=table.id, user=ann)
    play.seat_reconnected(table_id=table.id, user=ann)
    table.refresh_from_db()
    assert table.failure_count == 1


def test_a_players_command_failing_changes_nothing_and_is_not_counted(break_hand):
    """Issue #46: only the room's own work counts toward pausing a table. A player's
    act on a hand that cannot be read fails that act alone, however often it is sent;
    the timeout of the same turn, the room's work, fails and is counted."""
    table = table_with_hand("Rollback")
    hand, state = current(table)
    actor = Seat.objects.get(table=table, number=state.actor).player
    break_hand(table)
    seq = Table.objects.get(pk=table.pk).event_seq
    for _ in range(FAILURES_BEFORE_PAUSE + 1):
        with pytest.raises(KeyError):
            play.hand_act(table_id=table.id, user=actor, kind="call")
    table.refresh_from_db()
    hand.refresh_from_db()
    assert (table.failure_count, table.status) == (0, TableStatus.OPEN)
    assert table.event_seq == seq and hand.state == {"broken": True}
    overdue(table)
    assert a_pass().failed == 1
    table.refresh_from_db()
    assert table.failure_count == 1


def test_a_hand_that_cannot_be_settled_counts_inside_a_players_command(monkeypatch):
    """A player's last action settles the hand inside their own command: the settling is
    the room's work (the same hand fails to settle whoever acts), so its failure counts,
    and the second in a row pauses the table."""
    table = table_with_hand("Settle")
    _hand, state = current(table)
    actor = Seat.objects.get(table=table, number=state.actor).player

    def broken(*args, **kwargs):
        raise RuntimeError("a bug of the settling")

    monkeypatch.setattr(hands, "auto_top_up_after_hand", broken)
    for count in range(1, FAILURES_BEFORE_PAUSE + 1):
        with pytest.raises(RuntimeError):
            play.hand_act(table_id=table.id, user=actor, kind="fold")  # ends the hand
        table.refresh_from_db()
        assert table.failure_count == count
    assert table.status == TableStatus.PAUSED
    assert "hand_act (settling the hand) failed 2 times in a row" in table.paused_reason


def test_a_deal_that_fails_is_isolated_and_counted_too(break_hand):
    kills = {"structure": Structure.FIXED_LIMIT, "small_bet": 200, "big_bet": 400, "kill": "full"}
    table = table_with_hand("Deal", **kills)
    # The last hand's state is unreadable: the next deal reads it (for a kill) and fails.
    break_hand(table, status=HandStatus.FINISHED)
    Table.objects.filter(pk=table.pk).update(next_hand_at=timezone.now())
    result = a_pass()
    assert (result.deals, result.failed) == (0, 1)
    table.refresh_from_db()
    assert table.failure_count == 1


@contextlib.contextmanager
def locked_elsewhere(sql: str, args: list) -> Iterator[None]:
    """The rows `sql` selects FOR UPDATE, locked by another session until the block ends
    (a command stuck inside its transaction)."""
    params = connection.get_connection_params()
    params = {k: v for k, v in params.items() if k not in {"cursor_factory", "context"}}
    with psycopg.connect(**params) as other:
        other.execute(sql, args)
        yield
        other.rollback()


def row_held(table: Table) -> contextlib.AbstractContextManager[None]:
    return locked_elsewhere("SELECT 1 FROM tables_table WHERE id = %s FOR UPDATE", [table.pk])


def actor_of(table: Table):
    _hand, state = current(table)
    return Seat.objects.get(table=table, number=state.actor).player


def in_a_thread(run) -> list:
    """Run `run` on a thread of its own and wait up to 30 s for it: what it returned (or
    nothing, when it never came back: it waited on the lock for good)."""
    done: list = []

    def target() -> None:
        try:
            done.append(run())
        finally:
            connection.close()

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(30)
    return done


def test_a_command_on_a_stuck_table_is_refused_busy_and_changes_nothing(settings):
    settings.TABLE_LOCK_TIMEOUT_MS = 200
    table = table_with_hand("Stuck")
    hand, _state = current(table)
    actor = actor_of(table)
    seq = Table.objects.get(pk=table.pk).event_seq

    def act() -> Exception | None:
        try:
            play.hand_act(table_id=table.id, user=actor, kind="call")
        except TableBusy as exc:
            return exc
        return None

    with row_held(table):
        refused = in_a_thread(act)
    assert len(refused) == 1 and isinstance(refused[0], TableBusy)
    assert refused[0].code == "table_busy"
    table.refresh_from_db()
    assert (table.event_seq, table.failure_count, table.paused_reason) == (seq, 0, "")
    assert Hand.objects.get(pk=hand.pk).turn_version == hand.turn_version
    # Nothing was done, and the same command goes through once the table is free.
    play.hand_act(table_id=table.id, user=actor, kind="call")
    assert Table.objects.get(pk=table.pk).event_seq > seq


def test_a_pass_goes_on_past_a_stuck_table_and_times_it_out_once_it_is_free(settings):
    settings.TABLE_LOCK_TIMEOUT_MS = 200
    stuck = table_with_hand("Stuck")
    other = table_with_hand("Other")
    overdue(stuck)  # the earlier deadline: the pass meets the stuck table first
    overdue(other, since="2000-01-01T00:01Z")
    with row_held(stuck):
        passes = in_a_thread(a_pass)
    assert len(passes) == 1, "the pass waited for the stuck table for good"
    assert (passes[0].timeouts, passes[0].failed, passes[0].busy) == (1, 1, {stuck.id})
    assert timed_out(other) and not timed_out(stuck)
    stuck.refresh_from_db()
    assert stuck.failure_count == 0  # busy is no failure of the table's own
    # The loop rests a busy table for a while (or every pass would wait for it), then
    # tries it again.
    with row_held(stuck):
        rested = timers_run_due(now=timezone.now(), resting={stuck.id})
    assert (rested.timeouts, rested.failed, rested.busy) == (0, 0, frozenset())
    assert a_pass().timeouts == 1 and timed_out(stuck)


def test_the_api_answers_a_stuck_table_503_busy_with_retry_after(settings):
    settings.TABLE_LOCK_TIMEOUT_MS = 200
    table = table_with_hand("Stuck")
    api = APIClient()
    api.force_authenticate(actor_of(table))
    with row_held(table):
        answers = in_a_thread(lambda: api.post(f"/api/tables/{table.id}/leave", {}, format="json"))
    assert len(answers) == 1
    response = answers[0]
    assert response.status_code == 503, response.content
    assert response.json()["code"] == "table_busy"
    assert response["Retry-After"] == "1"
    assert Seat.objects.filter(table=table, leave_after_hand=False).count() == 2


def test_an_admin_action_on_a_stuck_table_says_so_and_does_the_others(admin_client, settings):
    settings.TABLE_LOCK_TIMEOUT_MS = 200
    stuck, other = table_with_hand("Stuck"), table_with_hand("Other")
    with row_held(stuck):
        answers = in_a_thread(
            lambda: admin_client.post(
                "/admin/tables/table/",
                {"action": "table_paused", "_selected_action": [stuck.id, other.id]},
                follow=True,
            )
        )
    assert len(answers) == 1 and answers[0].status_code == 200
    page = answers[0].content.decode()
    assert "The table is busy" in page and "1 table(s) paused" in page
    assert Table.objects.get(pk=stuck.pk).status == TableStatus.OPEN
    assert Table.objects.get(pk=other.pk).status == TableStatus.PAUSED


def test_a_wallet_stuck_past_the_lock_timeout_skips_its_top_up_not_the_hands_end(settings):
    settings.TABLE_LOCK_TIMEOUT_MS = 200
    table = table_with_hand("Wallet")
    actor = actor_of(table)
    auto_top_up_set(table_id=table.id, user=actor, mode=AutoTopUp.MAX)  # for after the hand
    before = Seat.objects.get(table=table, player=actor).stack
    wallet = "SELECT 1 FROM cashier_ledgeraccount WHERE user_id = %s FOR UPDATE"
    with locked_elsewhere(wallet, [actor.pk]):
        # Folding ends the hand, and its settling runs the order: the wallet cannot pay.
        done = in_a_thread(lambda: play.hand_act(table_id=table.id, user=actor, kind="fold"))
    assert done == [None]
    assert not Hand.objects.filter(table=table, status=HandStatus.IN_PROGRESS).exists()
    assert Seat.objects.get(table=table, player=actor).stack < before  # the blind, not topped up
