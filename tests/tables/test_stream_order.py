"""The versioned stream reaches each client in order, whatever order the processes that
committed the events publish them in; a lost message shows as a gap after a short wait;
and an action meant for a turn of an earlier hand never applies to a later one."""

import asyncio
import itertools

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from poker_room.routing import websocket_urlpatterns
from tables import events
from tables.events import TableMessage
from tables.exceptions import StaleCommand
from tables.services import play
from tests.kit import TableFactory, current, deal, funded_player, sit
from tests.tables.test_services import heads_up, play_passively, users_at


async def spectator(table_id: int) -> tuple[WebsocketCommunicator, int]:
    communicator = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns), f"/ws/tables/{table_id}/"
    )
    communicator.scope["user"] = AnonymousUser()
    communicator.scope["url_route"] = {"kwargs": {"table_id": table_id}}
    connected, _ = await communicator.connect()
    assert connected
    snapshot = await communicator.receive_json_from()
    return communicator, snapshot["v"]


def probe(version: int) -> dict:
    return TableMessage(version=version, public={"type": "probe"}).to_wire()


async def publish(table_id: int, version: int) -> None:
    # Through the table's feed, as a command publishes (a sync call, after the commit).
    await asyncio.to_thread(events._publish, table_id, [TableMessage(version, {"type": "probe"})])


@pytest.mark.django_db(transaction=True)
async def test_messages_published_out_of_order_arrive_in_order():
    table = await database_sync_to_async(TableFactory)()
    communicator, v = await spectator(table.id)
    for version in (v + 3, v + 1, v + 2, v):  # v itself is in the snapshot already
        await publish(table.id, version)
    # v + 1 goes out alone; v + 2 frees v + 3, and the two go in one frame, in order.
    assert (await communicator.receive_json_from())["v"] == v + 1
    assert [m["v"] for m in await communicator.receive_json_from()] == [v + 2, v + 3]
    assert await communicator.receive_nothing(timeout=0.7)
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_commands_messages_reach_each_socket_in_one_frame():
    """The deal's dozen messages (the hand, the blinds, each player's cards, the turn) are
    one frame to a watching socket, as a JSON array in version order, not one each."""
    table = await database_sync_to_async(TableFactory)()
    alice, bob = await database_sync_to_async(lambda: (funded_player(), funded_player()))()
    await database_sync_to_async(sit)(table, alice, 1)
    await database_sync_to_async(sit)(table, bob, 2)
    communicator, v = await spectator(table.id)
    await database_sync_to_async(deal)(table)
    frame = await communicator.receive_json_from(timeout=5)
    assert isinstance(frame, list) and len(frame) > 3, frame
    assert [m["v"] for m in frame] == list(range(v + 1, v + 1 + len(frame)))
    types = [m["type"] for m in frame]
    assert types[0] == "hand_started" and types[-1] == "turn", types
    assert "posted" in types and types.count("hole_cards") == 2, types
    assert await communicator.receive_nothing(timeout=0.2)
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_lost_message_leaves_a_gap_for_the_client_to_see():
    table = await database_sync_to_async(TableFactory)()
    communicator, v = await spectator(table.id)
    await publish(table.id, v + 2)
    assert await communicator.receive_nothing(timeout=0.2)  # waiting for v + 1...
    assert (await communicator.receive_json_from(timeout=2))["v"] == v + 2
    await communicator.disconnect()


@pytest.mark.django_db
def test_hands_are_numbered_on_and_their_turns_go_on_from_the_last_hands(table):
    # The deal reads the last hand alone (tables/rows.py, `hand_numbers_next`).
    heads_up(table)
    seen = []
    for _ in range(3):
        hand, _ = current(table)
        first_turn = hand.turn_version
        play_passively(table)
        hand.refresh_from_db()
        seen.append((hand.number, first_turn, hand.turn_version))
        deal(table)
    numbers = [number for number, _, _ in seen]
    assert numbers == [1, 2, 3]
    for (_, _, last_turn), (_, first_turn, _) in itertools.pairwise(seen):
        assert first_turn == last_turn + 1


@pytest.mark.django_db
def test_an_action_for_a_turn_of_an_earlier_hand_is_stale(table):
    heads_up(table)
    hand, _ = current(table)
    first_turn = hand.turn_version
    play_passively(table)
    deal(table)
    hand, state = current(table)
    assert hand.turn_version > first_turn
    with pytest.raises(StaleCommand):
        play.hand_act(
            table_id=table.id, user=users_at(table)[state.actor], kind="fold", turn=first_turn
        )
