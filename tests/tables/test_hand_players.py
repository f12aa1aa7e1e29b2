"""Finding 10, table services: hands are linked to players by user id, not screen name.

Every check of "is this the player dealt in at that seat" compared the screen name in
the hand's engine state with the user's current one. A player renamed (by an admin)
during a hand could then no longer act, left the table at once in the middle of the hand
(cashed out at the stack they sat down with), lost the hand's result at settlement, lost
a kill they had won, and the hand's rake went to whoever holds the old name now (or the
hand could not settle at all). `HandPlayer` rows, written at the deal, answer by id.
"""

import importlib

import pytest
from django.apps import apps
from django.core.management import call_command

from accounts.services import user_sign_up
from tables.engine.state import HandState
from tables.exceptions import HandInProgress, NotYourTurn
from tables.ledger import table_account_get
from tables.models import Departure, Hand, HandPlayer, HandStatus, RakeContribution, Seat
from tables.selectors import table_snapshot
from tables.services import play, seating
from tests.kit import (
    StakeLevelFactory,
    TableFactory,
    act_passively,
    current,
    deal,
    funded_player,
    key,
    stake_for,
)

pytestmark = pytest.mark.django_db


def sit(table, user, number: int, buy_in: int = 10_000) -> Seat:
    return seating.seat_take(
        table_id=table.id, user=user, seat_number=number, buy_in=buy_in, idempotency_key=key()
    )


def rename(user, name: str) -> None:
    """What the admin's change form does to a user's screen name."""
    user.username = name
    user.save()


def a_new_account_named(name: str):
    return user_sign_up(username=name, password="a-long-enough-secret")


def assert_table_account_matches_seats(table) -> None:
    account = table_account_get(table=table)
    assert account.balance == sum(Seat.objects.filter(table=table).values_list("stack", flat=True))


@pytest.fixture
def heads_up(table):
    """Alice in seat 1 and Bob in seat 2, the first hand dealt."""
    alice = funded_player(username="alice")
    bob = funded_player(username="bob")
    sit(table, alice, 1)
    sit(table, bob, 2)
    deal(table)
    return table, alice, bob


def test_the_deal_records_each_seats_user_and_their_name_then(heads_up):
    table, alice, bob = heads_up
    hand, state = current(table)
    rows = list(HandPlayer.objects.filter(hand=hand).values_list("seat", "user_id", "screen_name"))
    assert rows == [(1, alice.id, "alice"), (2, bob.id, "bob")]
    assert list(state.players) == ["alice", "bob"]


def test_a_player_renamed_during_the_hand_still_acts_and_is_settled(heads_up):
    table, alice, bob = heads_up
    rename(alice, "alice-renamed")
    a_new_account_named("alice")
    hand = act_passively(table, {1: alice, 2: bob})
    assert hand.status == HandStatus.FINISHED
    state = HandState.from_dict(hand.state)
    # Alice's seat got the hand's result (before: left at her buy-in, chips lost).
    assert Seat.objects.get(table=table, player=alice).stack == state.stacks[state.index_of(1)]
    assert_table_account_matches_seats(table)
    call_command("audit_ledger")


def test_a_new_account_with_the_old_name_cannot_act_for_the_old_owner(heads_up):
    table, alice, _bob = heads_up
    rename(alice, "alice-renamed")
    impostor = funded_player()
    rename(impostor, "alice")
    sit(table, impostor, 3)
    # Seat 3 was not dealt in; the old name gives nothing.
    with pytest.raises(NotYourTurn):
        play.hand_act(table_id=table.id, user=impostor, kind="call")
    snapshot = table_snapshot(table=table, user=impostor)
    assert all(p["cards"] is None for p in snapshot["hand"]["players"])
    # The renamed owner still sees her own cards.
    mine = table_snapshot(table=table, user=alice)["hand"]["players"]
    assert [p["cards"] is not None for p in mine] == [True, False]


def test_a_player_renamed_during_the_hand_leaves_when_it_ends_not_at_once(heads_up):
    table, alice, bob = heads_up
    rename(alice, "alice-renamed")
    # Before: she was not "in the hand" any more, so she could top up mid-hand, and
    # left at once, mid-hand, with the stack she had before it.
    with pytest.raises(HandInProgress):
        seating.seat_top_up(table_id=table.id, user=alice, amount=1_000, idempotency_key=key())
    assert seating.seat_leave(table_id=table.id, user=alice) is False
    hand = Hand.objects.get(table=table)
    if hand.status == HandStatus.IN_PROGRESS:  # she was not the one to act: she folds later
        hand = act_passively(table, {1: alice, 2: bob})
    final = HandState.from_dict(hand.state)
    assert str(final.status[final.index_of(1)]) == "folded"
    assert not Seat.objects.filter(table=table, player=alice).exists()
    assert Departure.objects.get(player=alice).stack == final.stacks[final.index_of(1)]
    assert_table_account_matches_seats(table)


def test_the_rake_goes_to_the_user_dealt_in_not_to_whoever_has_the_name_now():
    table = TableFactory(stake_level=StakeLevelFactory(rake_percent_bp=1_000), seats=6)
    alice, bob = funded_player(username="alice"), funded_player(username="bob")
    sit(table, alice, 1)
    sit(table, bob, 2)
    deal(table)
    rename(alice, "alice-renamed")
    newcomer = a_new_account_named("alice")
    hand = act_passively(table, {1: alice, 2: bob})
    assert hand.rake > 0
    shares = dict(RakeContribution.objects.filter(hand=hand).values_list("player_id", "amount"))
    assert set(shares) == {alice.id, bob.id}
    assert newcomer.id not in shares
    assert sum(shares.values()) == hand.rake


def test_a_hand_settles_when_nobody_has_a_players_old_name_any_more():
    table = TableFactory(stake_level=StakeLevelFactory(rake_percent_bp=1_000), seats=6)
    alice, bob = funded_player(username="alice"), funded_player(username="bob")
    sit(table, alice, 1)
    sit(table, bob, 2)
    deal(table)
    rename(alice, "someone-else")
    # Before: the rake lookup by the old name failed and the hand never settled.
    hand = act_passively(table, {1: alice, 2: bob})
    assert hand.status == HandStatus.FINISHED
    assert RakeContribution.objects.filter(hand=hand, player=alice).exists()


def test_a_renamed_killer_keeps_the_kill():
    stake = stake_for("holdem", "FL")
    stake.kill = "full"
    stake.kill_min_pot = 0
    stake.save()
    table = TableFactory(stake_level=stake, seats=6, pause_between_hands_ms=0)
    alice, bob = funded_player(username="alice"), funded_player(username="bob")
    sit(table, alice, 1)
    sit(table, bob, 2)
    deal(table)
    hand, state = current(table)
    players = {1: alice, 2: bob}
    # Whoever acts first folds: the other scoops the pot and wins the kill.
    play.hand_act(table_id=table.id, user=players[state.actor], kind="fold")
    hand.refresh_from_db()
    kill = HandState.from_dict(hand.state).result.next_kill
    assert kill is not None
    killer = players[kill.seat]
    old_name = killer.username
    rename(killer, f"{old_name}-renamed")
    a_new_account_named(old_name)
    deal(table)
    _, second = current(table)
    assert second.kill is not None and second.kill.seat == kill.seat


def fill_hand_players() -> None:
    HandPlayer.objects.all().delete()
    importlib.import_module("tables.migrations.0005_hand_players").fill_hand_players(apps, None)


def test_the_migration_links_finished_hands_to_todays_owner_of_each_name(heads_up):
    """Best effort, as documented: names in old hands are matched to today's users."""
    table, alice, bob = heads_up
    hand = act_passively(table)
    assert hand.status == HandStatus.FINISHED
    fill_hand_players()
    rows = list(HandPlayer.objects.filter(hand=hand).values_list("seat", "user_id", "screen_name"))
    assert rows == [(1, alice.id, "alice"), (2, bob.id, "bob")]
    # A name nobody has any more gets no row (and never someone else's by a wrong case).
    rename(bob, "robert")
    fill_hand_players()
    assert list(HandPlayer.objects.filter(hand=hand).values_list("seat", "user_id")) == [
        (1, alice.id)
    ]


def test_the_migration_links_a_live_hand_to_the_players_in_its_seats(heads_up):
    """A hand in progress is matched by its seats, not by names: renamed players and a
    new owner of an old name cannot take its chips."""
    table, alice, bob = heads_up
    hand, _state = current(table)
    rename(bob, "robert")
    rename(alice, "bob")
    fill_hand_players()
    rows = list(HandPlayer.objects.filter(hand=hand).values_list("seat", "user_id", "screen_name"))
    assert rows == [(1, alice.id, "alice"), (2, bob.id, "bob")]
