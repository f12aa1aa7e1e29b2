"""Contributed rake (RULES.md §6, finer point 13): recorded per hand and player when the
hand settles, equal to the engine's shares, summing to the hand's rake; audited."""

import random

import pytest

from cashier.audit import ledger_audit
from cashier.models import AccountKind, LedgerAccount, RakeContribution
from tables.engine.state import HandState
from tables.models import Hand, HandStatus
from tables.services import play as play_services
from tests.api.play import play_hand, play_passively, stake_for, table_with_players
from tests.tables.conftest import current, deal

pytestmark = pytest.mark.django_db


def test_each_raked_hand_records_the_engines_shares_per_player():
    table, users = table_with_players(stake_for("omaha", "PL"), count=4)
    rng = random.Random("rake-shares")
    hands = [play_hand(table, rng) for _ in range(6)]
    by_name = {u.username: u for u in users}
    raked = [h for h in hands if h.rake]
    assert raked, "no hand paid rake"
    for hand in hands:
        state = HandState.from_dict(hand.state)
        expected = {
            (by_name[player].pk, seat, share)
            for seat, player, share in zip(
                state.seats, state.players, state.result.contributed_rake, strict=True
            )
            if share
        }
        rows = set(
            RakeContribution.objects.filter(hand=hand).values_list("player_id", "seat", "amount")
        )
        assert rows == expected
        assert sum(amount for *_, amount in rows) == hand.rake
    house = LedgerAccount.objects.get(kind=AccountKind.HOUSE)
    assert house.balance == sum(h.rake for h in hands)
    assert ledger_audit().ok


def test_a_hand_without_rake_records_nothing():
    table, _users = table_with_players(stake_for("holdem", "NL"), count=2)
    deal(table)
    hand, state = current(table)
    # Heads-up preflop: the button (small blind) folds; no flop, no drop.
    user = table.seat_set.get(number=state.actor).player
    play_services.hand_act(table_id=table.id, user=user, kind="fold")
    hand.refresh_from_db()
    assert hand.status == HandStatus.FINISHED and hand.rake == 0
    assert not RakeContribution.objects.filter(hand=hand).exists()


def test_the_audit_reports_shares_that_do_not_sum_to_the_rake():
    table, _users = table_with_players(stake_for("holdem", "NL"))
    hand = play_passively(table)
    assert hand.rake == 30
    assert ledger_audit().ok
    RakeContribution.objects.filter(hand=hand).order_by("seat").first().delete()
    report = ledger_audit()
    assert [d.check for d in report.discrepancies] == ["rake_contributions_match_hands"]
    assert f"hand #{hand.pk} raked 30 but its players' shares sum to 20" in str(
        report.discrepancies[0]
    )


def test_every_finished_hand_is_checked_even_without_rows():
    table, _users = table_with_players(stake_for("holdem", "NL"))
    hand = play_passively(table)
    RakeContribution.objects.filter(hand=hand).delete()
    messages = [d.message for d in ledger_audit().discrepancies]
    assert messages == [f"hand #{hand.pk} raked 30 but its players' shares sum to 0"]
    assert Hand.objects.filter(rake__gt=0).count() == 1
