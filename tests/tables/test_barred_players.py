"""A seated player whose account may no longer play (banned, made staff) gives up the
seat: not dealt in, the stack back to the wallet, at the next deal or when their hand
ends (tables/services/hands.py; issue #46, finding 5). Their socket is closed or
refused meanwhile (tests/tables/test_socket_sessions.py)."""

import pytest

from accounts.models import User
from tables.models import Departure, Hand, Seat
from tests.kit import current, deal, stake_for, table_with_players, wallet

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("change", [{"is_active": False}, {"is_staff": True}])
def test_a_barred_player_between_hands_is_not_dealt_in_and_gets_the_stack_back(change):
    table, (alice, bob, carol) = table_with_players(stake_for("holdem", "NL"), count=3)
    before = wallet(alice)
    stack = Seat.objects.get(player=alice).stack
    User.objects.filter(pk=alice.pk).update(**change)  # no signal: the deal finds it itself

    hand = deal(table)

    assert hand is not None
    _, state = current(table)
    assert set(state.player_ids) == {bob.pk, carol.pk}  # dealt out
    assert not Seat.objects.filter(player=alice).exists()
    assert wallet(alice) == before + stack
    # Remembered as any leave is, for the no-ratholing rule (RULES §4).
    assert Departure.objects.get(player=alice).stack == stack


def test_a_barred_player_alone_with_one_other_leaves_no_hand_to_deal():
    table, (alice, bob) = table_with_players(stake_for("holdem", "NL"), count=2)
    User.objects.filter(pk=alice.pk).update(is_active=False)

    assert deal(table) is None

    assert not Seat.objects.filter(player=alice).exists()
    assert Seat.objects.filter(player=bob).exists()
    assert not Hand.objects.filter(table=table).exists()
