"""Issue #16: what a page reopened mid-hand needs from the snapshot and the stream.

- The snapshot carries the hand's log so far, as this viewer saw it on the stream: their
  own hole cards, nobody else's (a spectator's, another player's, a seated player not
  dealt in).
- The public seats say who is disconnected; a drop and a return each publish `seats`.
- The `turn` message of a reconnect bonus says how many seconds it added.
"""

import json

import pytest
from django.utils import timezone

from tables.engine.cards import card_str
from tables.engine.state import HandState
from tables.models import Seat
from tables.selectors import table_snapshot
from tables.services import play
from tests.kit import current, deal, funded_player
from tests.tables.test_services import sit, users_at

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(monkeypatch):
    """The messages the table commands hand over for publishing (a test transaction
    never commits, so nothing would be sent)."""
    import tables.services.command as recorder

    sent: list = []
    monkeypatch.setattr(
        recorder, "publish_on_commit", lambda *, table_id, messages: sent.extend(messages)
    )
    return sent


@pytest.fixture
def heads_up(table):
    """Alice (seat 1) and Bob (seat 2) in a hand, the first decision made."""
    alice, bob = funded_player(), funded_player()
    sit(table, alice, 1)
    sit(table, bob, 2)
    deal(table)
    _, state = current(table)
    play.hand_act(table_id=table.id, user=users_at(table)[state.actor], kind="call")
    return alice, bob


def hole_codes(state: HandState, seat: int) -> set[str]:
    return {card_str(c) for c in state.hole[state.index_of(seat)]}


def test_the_snapshot_carries_the_hand_log_with_only_the_viewers_own_hole_cards(table, heads_up):
    alice, bob = heads_up
    late = funded_player()
    sit(table, late, 3)  # seated now, not dealt into this hand
    _, state = current(table)
    views = {"alice": (alice, 1), "bob": (bob, 2), "spectator": (None, None), "late": (late, None)}
    for name, (user, seat) in views.items():
        snapshot = table_snapshot(table=table, user=user)
        log = snapshot["hand"]["log"]
        types = [e["type"] for e in log]
        assert types[0] == "hand_started", name
        assert "acted" in types, name
        dealt = [e for e in log if e["type"] == "hole_cards"]
        assert sorted(e["seat"] for e in dealt) == [1, 2], name
        for event in dealt:
            if event["seat"] == seat:
                assert event["cards"] == [card_str(c) for c in state.hole[state.index_of(seat)]]
            else:
                assert "cards" not in event, name
        # No other seat's hole card anywhere in what this viewer gets.
        text = json.dumps(snapshot)
        for other in (1, 2):
            if other != seat:
                assert not any(f'"{code}"' in text for code in hole_codes(state, other)), name


def test_the_spectators_log_is_what_the_stream_sent_them(table, published, heads_up):
    hand, _ = current(table)
    sent = [m.for_user(None) for m in published if m.public.get("hand") == hand.id]
    streamed = [{k: v for k, v in m.items() if k != "v"} for m in sent if m["type"] != "turn"]
    assert table_snapshot(table=table, user=None)["hand"]["log"] == streamed


def test_the_public_seats_say_who_is_disconnected(table, heads_up):
    alice, _bob = heads_up
    Seat.objects.filter(table=table, player=alice).update(dropped_at=timezone.now())
    assert [s["disconnected"] for s in table_snapshot(table=table, user=None)["seats"]] == [
        True,
        False,
    ]


def test_a_drop_and_a_return_show_in_the_public_seats_for_everyone(table, heads_up, published):
    alice, _bob = heads_up
    published.clear()
    play.seat_disconnected(table_id=table.id, user=alice)
    [message] = published
    seats = {s["seat"]: s for s in message.for_user(None)["seats"]}
    assert message.public["type"] == "seats"
    assert (seats[1]["disconnected"], seats[2]["disconnected"]) == (True, False)
    spectator = table_snapshot(table=table, user=None)
    assert [s["disconnected"] for s in spectator["seats"]] == [True, False]

    published.clear()
    play.seat_reconnected(table_id=table.id, user=alice)
    seats_messages = [m for m in published if m.public["type"] == "seats"]
    assert [s["disconnected"] for s in seats_messages[0].public["seats"]] == [False, False]
    assert Seat.objects.get(table=table, player=alice).dropped_at is None


def test_a_return_without_a_drop_publishes_nothing(table, heads_up, published):
    alice, _bob = heads_up
    published.clear()
    play.seat_reconnected(table_id=table.id, user=alice)
    assert published == []


def test_the_turn_of_a_reconnect_bonus_says_how_many_seconds_it_added(table, heads_up, published):
    _, state = current(table)
    actor = users_at(table)[state.actor]
    play.seat_disconnected(table_id=table.id, user=actor)
    published.clear()
    assert play.seat_reconnected(table_id=table.id, user=actor)
    [turn] = [m for m in published if m.public["type"] == "turn"]
    assert turn.public["reconnect_bonus_seconds"] == table.reconnect_bonus_seconds
    assert turn.for_user(actor.id)["reconnect_bonus_seconds"] == table.reconnect_bonus_seconds
    # An ordinary turn says nothing of a bonus.
    published.clear()
    play.hand_act(table_id=table.id, user=actor, kind="check")
    assert all("reconnect_bonus_seconds" not in m.public for m in published)
