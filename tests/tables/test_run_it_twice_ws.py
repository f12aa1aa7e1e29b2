"""Run it twice over the WebSocket (issue #16), on the real PostgreSQL and Redis channel
layer: the players all-in are asked (`run_twice_ask`, with its clock), answer with the
`run_twice` command, and the board is run twice only when every one of them agrees in
time; a refusal or the clock running out (the real timer loop fires it) runs it once."""

import pytest
from channels.db import database_sync_to_async as db
from django.utils import timezone

from tables.models import Hand, HandEvent, Seat
from tables.services import play, seating
from tests.kit import StakeLevelFactory, current, deal, stacked_deck_forced, table_with_players
from tests.tables.test_consumer_hardening import communicator, connected
from tests.tables.test_consumers import Client_

pytestmark = pytest.mark.django_db(transaction=True)

HOLES = {1: "AhAd", 2: "KhKd"}
# Run 1 leaves the aces ahead; run 2 gives the kings four of a kind.
BOARD = "2s5c9c3h8d" + "KsKc7d4s6h"


def all_in_heads_up(*, action_seconds: int = 20) -> tuple:
    """A heads-up table playing run it twice, both players all-in preflop (seat 1, the
    button, with the aces): the hand waits for their answers."""
    stake = StakeLevelFactory(run_it_twice=True, rake_cap_2=300)
    table, users = table_with_players(stake, 2)
    table.action_seconds = action_seconds
    table.save(update_fields=["action_seconds"])
    with stacked_deck_forced(HOLES, BOARD, button=1, seats=[1, 2]):
        deal(table)
    play.hand_act(table_id=table.id, user=users[0], kind="bet_raise", amount=10_000)
    play.hand_act(table_id=table.id, user=users[1], kind="call")
    return table, users


def won(messages: list[dict]) -> list[tuple[int, int, int]]:
    return [(m["run"], m["seat"], m["amount"]) for m in messages if m.get("type") == "won"]


async def test_every_player_agreeing_runs_the_board_twice():
    table, (alice, bob) = await db(all_in_heads_up)()
    a = await connected(alice, table.id)
    b = await connected(bob, table.id)
    spectator = Client_(communicator(None, table.id), "spectator")
    snapshot = await spectator.connect()
    assert snapshot["hand"]["run_twice"]["undecided"] == [2, 1]
    assert snapshot["hand"]["actor"] is None and snapshot["hand"]["deadline"] is not None
    assert (await a.send("run_twice", agree=True)) == {"type": "ack", "seq": 1}
    answered = await b.until(lambda m: m.get("type") == "run_twice_answered")
    assert answered["seat"] == 1 and answered["agree"] is True and answered["undecided"] == [2]
    assert (await b.send("run_twice", agree=True))["type"] == "ack"
    decided = await a.until(lambda m: m.get("type") == "run_twice_decided")
    assert decided["runs"] == 2
    ended = await a.until(lambda m: m.get("type") == "hand_ended")
    boards = [(m["run"], m["street"]) for m in a.messages if m.get("type") == "dealt_board"]
    assert boards == [
        (1, "flop"),
        (1, "turn"),
        (1, "river"),
        (2, "flop"),
        (2, "turn"),
        (2, "river"),
    ]
    # 20000 in the pot, rake 300 (the cap) once: 19700 = 9850 + 9850.
    rake = next(m for m in a.messages if m.get("type") == "rake")
    assert rake["amount"] == 300
    assert won(a.messages) == [(1, 1, 9850), (2, 2, 9850)]
    assert {s["seat"]: s["amount"] for s in ended["stacks"]} == {1: 9850, 2: 9850}
    for client in (a, b, spectator):
        await client.ws.disconnect()


async def test_one_refusal_runs_the_board_once():
    table, (alice, bob) = await db(all_in_heads_up)()
    a = await connected(alice, table.id)
    assert (await a.send("run_twice", agree=True))["type"] == "ack"
    b = await connected(bob, table.id)
    assert b.messages == []
    assert (await b.send("run_twice", agree=False))["type"] == "ack"
    decided = await a.until(lambda m: m.get("type") == "run_twice_decided")
    assert decided["runs"] == 1
    await a.until(lambda m: m.get("type") == "hand_ended")
    assert {m["run"] for m in a.messages if m.get("type") == "dealt_board"} == {1}
    assert won(a.messages) == [(1, 1, 19_700)]
    # Asked no more: a late answer is refused with its reason.
    late = await b.send("run_twice", agree=True)
    assert late["type"] == "error" and late["code"] == "not_your_turn"
    for client in (a, b):
        await client.ws.disconnect()


async def test_answers_out_of_place_come_back_as_error_codes():
    table, (alice, _) = await db(all_in_heads_up)()
    a = await connected(alice, table.id)
    assert (await a.send("run_twice"))["code"] == "malformed"
    assert (await a.send("run_twice", agree="yes"))["code"] == "malformed"
    assert (await a.send("run_twice", agree=True))["type"] == "ack"
    again = await a.send("run_twice", agree=True)
    assert again["code"] == "no_such_action" and "already agreed" in again["message"]
    spectator = await connected(None, table.id)
    assert (await spectator.send("run_twice", agree=True))["code"] == "login_required"
    acting = await a.send("act", action="call")
    assert acting["type"] == "error" and acting["code"] == "not_your_turn"
    for client in (a, spectator):
        await client.ws.disconnect()


async def test_an_answer_for_another_question_is_stale_and_changes_nothing():
    """An answer carries its question's turn (as `act` does): one delayed past its hand
    can never count for the next hand's question."""
    table, (alice, _) = await db(all_in_heads_up)()
    a = await connected(alice, table.id)
    hand = await db(lambda: current(table)[0])()
    stale = await a.send("run_twice", agree=True, turn=hand.turn_version - 1)
    assert stale["code"] == "stale"
    assert (await a.send("run_twice", agree=True, turn=str(hand.turn_version)))["code"] == (
        "malformed"
    )
    assert (await a.send("run_twice", agree=True, turn=2**80))["type"] == "error"
    assert (await db(lambda: current(table)[0])()).events_logged == hand.events_logged
    assert (await a.send("run_twice", agree=True, turn=hand.turn_version))["type"] == "ack"
    await a.ws.disconnect()


@pytest.mark.usefixtures("timer_process")
async def test_a_player_who_does_not_answer_in_time_refuses():
    table, (alice, _) = await db(all_in_heads_up)(action_seconds=1)
    a = await connected(alice, table.id)
    hand = (await db(current)(table))[0]
    assert hand.turn_deadline is not None
    assert (await a.send("run_twice", agree=True))["type"] == "ack"
    # Bob never answers: the timer loop's turn timeout refuses for him.
    answered = await a.until(
        lambda m: m.get("type") == "run_twice_answered" and m["seat"] == 2, timeout=30
    )
    assert answered["agree"] is False and answered["timed_out"] is True
    assert (await a.until(lambda m: m.get("type") == "run_twice_decided"))["runs"] == 1
    await a.until(lambda m: m.get("type") == "hand_ended")
    assert won(a.messages) == [(1, 1, 19_700)]
    finished = await db(lambda: Hand.objects.get(pk=hand.pk))()
    assert finished.status == "finished"
    timed_out = await db(lambda: HandEvent.objects.filter(hand=hand, type="timed_out").count())()
    assert timed_out == 0  # a refusal by the clock, not a betting timeout (RULES §5)
    await a.ws.disconnect()


def test_the_question_is_a_turn_on_the_action_clock_without_the_time_bank():
    table, _ = all_in_heads_up(action_seconds=7)
    hand, state = current(table)
    assert state.asking_run_twice and state.actor is None
    ask = HandEvent.objects.filter(hand=hand, type="run_twice_asked").get()
    assert ask.data["seats"] == [2, 1]
    assert hand.turn_deadline is not None
    assert 0 < (hand.turn_deadline - timezone.now()).total_seconds() <= 7


def test_a_player_who_leaves_while_asked_refuses_at_once():
    table, (alice, bob) = all_in_heads_up()
    assert seating.seat_leave(table_id=table.id, user=bob) is False  # (in the hand)
    hand = Hand.objects.get(table=table)
    assert hand.status == "finished"
    answered = HandEvent.objects.get(hand=hand, type="run_twice_answered").data
    assert (answered["seat"], answered["agree"], answered["timed_out"]) == (2, False, False)
    assert HandEvent.objects.get(hand=hand, type="run_twice_decided").data["runs"] == 1
    assert Seat.objects.get(table=table, player=alice).stack == 10_000 + 9_700
    assert not Seat.objects.filter(table=table, player=bob).exists()
