"""The versioned stream reaches each client in order, whatever order the processes that
committed the events publish them in; a lost message shows as a gap after a short wait;
and an action meant for a turn of an earlier hand never applies to a later one."""

import asyncio

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
from tests.kit import TableFactory, current, deal
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
    received = [(await communicator.receive_json_from())["v"] for _ in range(3)]
    assert received == [v + 1, v + 2, v + 3]
    assert await communicator.receive_nothing(timeout=0.7)
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
