"""An idle WebSocket stays open: nothing happening at a table for a while is normal."""

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from poker_room.routing import websocket_urlpatterns
from tests.kit import TableFactory

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_spectator_idle_for_longer_than_the_layers_poll_stays_connected():
    from channels.db import database_sync_to_async

    table = await database_sync_to_async(TableFactory)()
    communicator = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns), f"/ws/tables/{table.id}/"
    )
    communicator.scope["user"] = AnonymousUser()
    communicator.scope["url_route"] = {"kwargs": {"table_id": table.id}}
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from())["type"] == "snapshot"
    # channels-redis polls Redis in 5 s blocking reads; the connection must outlive them.
    assert await communicator.receive_nothing(timeout=7)
    await communicator.send_json_to({"cmd": "snapshot", "seq": 1})
    assert (await communicator.receive_json_from(timeout=5))["type"] == "snapshot"
    await communicator.disconnect()
