"""Contributed rake (RULES.md §6, finer point 13): recorded per hand and player when the
hand settles, equal to the engine's shares, given to the user dealt in at each seat (by
user id), summing to the hand's rake; audited.

The tests that break a hand's shares on purpose do it in a savepoint they roll back, so
that the ledger audit after each test of this folder still passes."""

import random

import pytest
from django.db import transaction

from cashier.audit import ledger_audit
from cashier.models import AccountKind, LedgerAccount
from tables.engine.state import HandState
from tables.models import Hand, HandPlayer, HandStatus, RakeContribution
from tables.services import play as play_services
from tests.kit import current, deal, play_hand, play_passively, stake_for, table_with_players

pytestmark = pytest.mark.django_db


def test_each_raked_hand_records_the_engines_shares_per_player():
    table, users = table_with_players(stake_for("omaha", "PL"), count=4)
    rng = random.Random("rake-shares")
    hands = [play_hand(table, rng) for _ in range(6)]
    raked = [h for h in hands if h.rake]
    assert raked, "no hand paid rake"
    for hand in hands:
        state = HandState.from_dict(hand.state)
        dealt = dict(HandPlayer.objects.filter(hand=hand).values_list("seat", "user_id"))
        assert set(dealt.values()) <= {u.pk for u in users}
        expected = {
            (dealt[seat], seat, share)
            for seat, share in zip(state.seats, state.result.contributed_rake, strict=True)
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
    with transaction.atomic():
        RakeContribution.objects.filter(hand=hand).order_by("seat").first().delete()
        report = ledger_audit()
        transaction.set_rollback(True)
    assert [d.check for d in report.discrepancies] == ["rake_contributions_match_hands"]
    assert f"hand #{hand.pk} raked 30 but its players' shares sum to 20" in str(
        report.discrepancies[0]
    )


def test_every_finished_hand_is_checked_even_without_rows():
    table, _users = table_with_players(stake_for("holdem", "NL"))
    hand = play_passively(table)
    with transaction.atomic():
        RakeContribution.objects.filter(hand=hand).delete()
        messages = [d.message for d in ledger_audit().discrepancies]
        transaction.set_rollback(True)
    assert messages == [f"hand #{hand.pk} raked 30 but its players' shares sum to 0"]
    assert Hand.objects.filter(rake__gt=0).count() == 1
