"""Finding 9: staff could play, and the admin showed a live hand's secrets.

An `admin` account could deposit and sit down, and `/admin/tables/hand/<id>/change/` of
a hand in progress showed every hole card, the deck and the salt. Now staff and
superusers neither sit nor move money (REST, pages, services), and the admin shows none
of a hand's secrets (engine state, deck, salt, hole-card events) until it is finished;
then it shows them all.
"""

import html
import json
import uuid

import pytest
from rest_framework.test import APIClient

from cashier.selectors import wallet_balance
from tables.engine.state import HandState
from tables.exceptions import TableError
from tables.models import Hand, HandStatus, Seat
from tables.services import play
from tables.services.seating import seat_take, seat_top_up
from tests.kit import (
    TableFactory,
    current,
    deal,
    funded_player,
    key,
    sit,
    stacked_deck_forced,
    stake_for,
)

pytestmark = pytest.mark.django_db

# Hole cards and a board with no card that reads like a word of the admin's pages.
HOLES = {1: "7c2d", 2: "9h8s"}
BOARD = "3c4d5h6sTd"


@pytest.fixture
def superuser():
    return funded_player(is_staff=True, is_superuser=True)


@pytest.fixture
def live_hand() -> Hand:
    """A heads-up hold'em hand dealt from a known deck, waiting for its first action."""
    table = TableFactory(stake_level=stake_for("holdem", "NL"), seats=6)
    sit(table, funded_player(), 1)
    sit(table, funded_player(), 2)
    with stacked_deck_forced(HOLES, BOARD, button=1, seats=[1, 2]):
        deal(table)
    hand, _state = current(table)
    return hand


def finish(hand: Hand) -> Hand:
    """Everyone checks or calls to the end."""
    players = {s.number: s.player for s in Seat.objects.filter(table=hand.table)}
    state = HandState.from_dict(hand.state)
    while not state.over:
        kind = "check" if state.legal_actions().can_check else "call"
        play.hand_act(table_id=hand.table_id, user=players[state.actor], kind=kind)
        hand.refresh_from_db()
        state = HandState.from_dict(hand.state)
    assert hand.status == HandStatus.FINISHED
    return hand


def page(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, url
    return html.unescape(response.content.decode())


def secrets_in(text: str, hand: Hand) -> list[str]:
    """Which of the hand's secrets appear in ``text``."""
    state = HandState.from_dict(hand.state)
    found = [name for name in ('"deck"', '"hole"', "hole_cards", hand.salt) if name in text]
    # Cards appear quoted in the hole-card events' JSON (unquoted, "7c" may be hex).
    found += [c for cards in HOLES.values() for c in (cards[:2], cards[2:]) if f'"{c}"' in text]
    # The deck itself, as the state stores it (card numbers).
    if json.dumps(list(state.deck)) in text or str(list(state.deck)) in text:
        found.append("deck list")
    return found


# -- the admin ---------------------------------------------------------------------------


def test_the_admin_change_page_of_a_live_hand_shows_no_secret(client, superuser, live_hand):
    client.force_login(superuser)
    text = page(client, f"/admin/tables/hand/{live_hand.id}/change/")
    assert secrets_in(text, live_hand) == []
    # What a spectator sees stands in for the state, and the public events are listed.
    assert "what a spectator sees" in text.lower()
    assert "hand_started" in text
    assert "posted" in text


def test_the_admin_list_of_hands_shows_no_secret_of_a_live_hand(client, superuser, live_hand):
    client.force_login(superuser)
    assert secrets_in(page(client, "/admin/tables/hand/"), live_hand) == []
    in_progress = page(client, "/admin/tables/hand/?status__exact=in_progress")
    assert secrets_in(in_progress, live_hand) == []
    assert str(live_hand) in in_progress


@pytest.mark.parametrize(
    "query",
    [
        "state__contains=7c",
        "state__icontains=7c2d",
        "state__players__0__hole__contains=7c",
        "state__isnull=False",
        "salt__startswith=a",
        "salt__gt=8",
    ],
)
def test_the_admin_list_cannot_filter_hands_on_their_secrets(client, superuser, live_hand, query):
    """A filter on the state or the salt would list a live hand only when it holds the
    card asked for: the list refuses such a lookup (400) instead of answering it."""
    client.force_login(superuser)
    response = client.get(f"/admin/tables/hand/?{query}")
    assert response.status_code == 400
    assert secrets_in(response.content.decode(), live_hand) == []


def test_hand_events_have_no_admin_page_of_their_own(client, superuser, live_hand):
    client.force_login(superuser)
    assert client.get("/admin/tables/handevent/").status_code == 404
    assert client.get("/admin/tables/handplayer/").status_code == 404


def test_the_admin_shows_everything_once_the_hand_is_finished(client, superuser, live_hand):
    hand = finish(live_hand)
    client.force_login(superuser)
    text = page(client, f"/admin/tables/hand/{hand.id}/change/")
    assert hand.salt in text
    assert '"deck"' in text and '"hole"' in text
    assert "hole_cards" in text and '"7c"' in text and '"9h"' in text
    assert "what a spectator sees" not in text.lower()


def test_the_admin_hides_the_secrets_of_every_live_hand_from_every_staff_member(client, live_hand):
    staff = funded_player(is_staff=True, is_superuser=False)
    staff.user_permissions.add(*_view_hand_permissions())
    client.force_login(staff)
    text = page(client, f"/admin/tables/hand/{live_hand.id}/change/")
    assert secrets_in(text, live_hand) == []


def _view_hand_permissions():
    from django.contrib.auth.models import Permission

    return Permission.objects.filter(codename__in=["view_hand", "view_handevent"])


# -- staff do not play ------------------------------------------------------------------


def test_staff_and_superusers_cannot_sit(superuser):
    table = TableFactory(seats=6)
    staff = funded_player(is_staff=True)
    for user in (superuser, staff):
        with pytest.raises(TableError) as refused:
            seat_take(
                table_id=table.id, user=user, seat_number=1, buy_in=5_000, idempotency_key=key()
            )
        assert refused.value.code == "cannot_play"
        assert wallet_balance(user=user) == 100_000
    assert not Seat.objects.filter(table=table).exists()


def test_a_player_made_staff_while_seated_cannot_top_up():
    table = TableFactory(seats=6)
    player = funded_player()
    sit(table, player, 1, buy_in=5_000)
    player.is_staff = True
    player.save(update_fields=["is_staff"])
    with pytest.raises(TableError) as refused:
        seat_top_up(table_id=table.id, user=player, amount=1_000, idempotency_key=key())
    assert refused.value.code == "cannot_play"
    assert Seat.objects.get(table=table, player=player).stack == 5_000
    assert wallet_balance(user=player) == 95_000


def test_a_superuser_cannot_sit_over_the_api(superuser):
    table = TableFactory(seats=6)
    api = APIClient()
    api.force_authenticate(superuser)
    response = api.post(
        f"/api/tables/{table.id}/seat",
        {"seat": 1, "buy_in": 5_000},
        format="json",
        headers={"Idempotency-Key": "k-1"},
    )
    # The seating API's permission refuses it (as for auditors) before the service would.
    assert response.status_code == 403, response.content
    assert response.json()["code"] == "auditors_cannot_move_money"
    assert not Seat.objects.filter(table=table).exists()
    assert wallet_balance(user=superuser) == 100_000


def test_a_superuser_cannot_move_money_over_the_cashier_api(superuser):
    api = APIClient()
    api.force_authenticate(superuser)
    for url, body in (
        ("/api/cashier/deposits/", {"amount": 2_500}),
        ("/api/cashier/withdrawals/", {"amount": 2_500}),
    ):
        response = api.post(
            url, body, format="json", headers={"Idempotency-Key": str(uuid.uuid4())}
        )
        assert response.status_code == 403, url
        assert response.json()["code"] == "auditors_cannot_move_money"
    assert wallet_balance(user=superuser) == 100_000
    # Reading stays allowed.
    assert api.get("/api/wallet/").status_code == 200


def test_a_superuser_cannot_move_money_in_the_cashier_pages(client, superuser):
    client.force_login(superuser)
    cashier = client.get("/cashier/").content.decode()
    assert "Request withdrawal" not in cashier
    assert "do not deposit or withdraw" in cashier
    for prefix in ("deposit", "withdraw"):
        response = client.post(
            f"/cashier/{prefix}/",
            {f"{prefix}-amount": "5", f"{prefix}-idempotency_key": str(uuid.uuid4())},
        )
        assert response.status_code == 403
    assert wallet_balance(user=superuser) == 100_000


def test_the_table_page_offers_no_seat_to_staff(client, superuser):
    table = TableFactory(seats=6)
    client.force_login(superuser)
    response = client.get(f"/tables/{table.id}/")
    assert response.context["config"]["canPlay"] is False
    client.force_login(funded_player())
    assert client.get(f"/tables/{table.id}/").context["config"]["canPlay"] is True
