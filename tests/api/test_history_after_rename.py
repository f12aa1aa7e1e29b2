"""Finding 10, end to end: rename a user in the admin, sign up a new account with the old
name, and the new account read the old owner's hole cards.

Hands are now linked to the user dealt in (`HandPlayer`), so the new account sees
nothing of the old owner's hands (REST history and its formats, hole cards, profile,
the table's WebSocket snapshot), and the renamed owner still sees all of theirs.
"""

import pytest
from channels.db import database_sync_to_async as db
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.db import close_old_connections

from accounts.models import User
from cashier.services import deposit_create
from poker_room.routing import websocket_urlpatterns
from tables.exceptions import SeatUnavailable
from tables.models import Seat
from tables.services import seating
from tests.accounts.test_confusable_names import admin_rename
from tests.accounts.test_signup_and_login import sign_up
from tests.api.conftest import ALICE, BOB, CAROL, Showdown
from tests.api.test_hand_history_visibility import SUFFIXES, assert_never_leaks, body_of
from tests.kit import (
    UserFactory,
    api_for,
    current,
    deal,
    key,
    sit,
    stacked_deck_forced,
    stake_for,
    table_with_players,
)


def rename_in_admin_and_reuse_the_name(client, old_owner: User) -> tuple[User, User]:
    """An admin renames ``old_owner``; a visitor then signs up with the freed name."""
    old_name = old_owner.username
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    assert admin_rename(client, old_owner, f"{old_name}-was").status_code == 302
    client.logout()
    assert sign_up(client, old_name).status_code == 302
    client.logout()
    old_owner.refresh_from_db()
    return old_owner, User.objects.get(username=old_name)


# -- the REST history and the profile ---------------------------------------------------


@pytest.mark.django_db
def test_a_new_account_with_a_renamed_players_old_name_reads_none_of_their_hands(
    client, showdown: Showdown
):
    hand = showdown.hand
    alice, newcomer = rename_in_admin_and_reuse_the_name(client, showdown.alice)
    assert newcomer.pk != alice.pk

    api = api_for(newcomer)
    assert api.get("/api/hands/").json()["results"] == []
    assert api.get("/api/hands/", {"player": newcomer.username}).json()["results"] == []
    for suffix in SUFFIXES:
        response = api.get(f"/api/hands/{hand.id}/{suffix}")
        assert response.status_code == 404, suffix
        assert_never_leaks(body_of(response), ALICE + CAROL)

    client.force_login(newcomer)
    profile = client.get("/accounts/profile/").content.decode()
    assert f"#{hand.id}" not in profile
    assert "No hands yet" in profile


@pytest.mark.django_db
def test_the_renamed_player_still_reads_their_hands_and_hole_cards(client, showdown: Showdown):
    hand = showdown.hand
    old_name = showdown.alice.username
    alice, _newcomer = rename_in_admin_and_reuse_the_name(client, showdown.alice)

    api = api_for(alice)
    assert [h["id"] for h in api.get("/api/hands/").json()["results"]] == [hand.id]
    detail = api.get(f"/api/hands/{hand.id}/").json()
    cards = {s["seat"]: s["hole_cards"] for s in detail["seats"]}
    assert "".join(cards[1]) == ALICE  # her own
    assert "".join(cards[2]) == BOB  # shown at showdown
    assert cards[3] is None  # mucked
    # The record keeps the name she played under (display only), beside who she is.
    assert {s["seat"]: s["player"] for s in detail["seats"]}[1] == old_name
    assert {s["seat"]: s["user_id"] for s in detail["seats"]}[1] == alice.pk
    mine = api.get("/api/hands/", {"player_id": alice.pk}).json()["results"]
    assert [h["id"] for h in mine] == [hand.id]
    assert api.get(f"/api/hands/{hand.id}/text").status_code == 200

    client.force_login(alice)
    assert f'#hand-{hand.id}"' in client.get("/accounts/profile/").content.decode()


# -- the WebSocket snapshot of a hand in progress ---------------------------------------


router = URLRouter(websocket_urlpatterns)


async def snapshot_of(user: User, table_id: int) -> dict:
    communicator = WebsocketCommunicator(router, f"/ws/tables/{table_id}/")
    communicator.scope["user"] = user
    communicator.scope["url_route"] = {"kwargs": {"table_id": table_id}}
    connected, _ = await communicator.connect()
    assert connected
    try:
        snapshot = await communicator.receive_json_from(timeout=10)
    finally:
        await communicator.disconnect()
    assert snapshot["type"] == "snapshot"
    return snapshot


def cards_by_seat(snapshot: dict) -> dict[int, list[str] | None]:
    return {p["seat"]: p["cards"] for p in snapshot["hand"]["players"]}


@pytest.mark.django_db(transaction=True)
async def test_the_new_account_gets_no_hole_card_in_the_table_snapshot(client):
    @db
    def set_up():
        # Alice (seat 1) is on the button and acts first three-handed.
        table, (alice, _bob, _carol) = table_with_players(stake_for("holdem", "NL"))
        with stacked_deck_forced({1: ALICE, 2: BOB, 3: CAROL}, "", button=1, seats=[1, 2, 3]):
            deal(table)
        old_name = alice.username
        alice, newcomer = rename_in_admin_and_reuse_the_name(client, alice)
        deposit_create(user=newcomer, amount=100_000, idempotency_key=key())
        # The renamed Alice leaves: she is still in the hand, so her seat stays hers
        # until it ends (before, she left at once and the newcomer could take seat 1).
        assert seating.seat_leave(table_id=table.id, user=alice) is False
        assert Seat.objects.filter(table=table, player=alice, number=1).exists()
        with pytest.raises(SeatUnavailable):
            sit(table, newcomer, 1)
        sit(table, newcomer, 4)
        _hand, state = current(table)
        assert state.players[state.index_of(1)] == old_name == newcomer.username
        close_old_connections()
        return table, alice, newcomer

    table, alice, newcomer = await set_up()
    seen_by_newcomer = cards_by_seat(await snapshot_of(newcomer, table.id))
    assert seen_by_newcomer == {1: None, 2: None, 3: None}
    seen_by_alice = cards_by_seat(await snapshot_of(alice, table.id))
    assert "".join(seen_by_alice[1]) == ALICE
    assert seen_by_alice[2] is None and seen_by_alice[3] is None
