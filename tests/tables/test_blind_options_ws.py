"""The `straddle` and `overblind` WebSocket commands (issue #13): command -> ack or an
error with its code, the player's own `blind_options` in the snapshot and on the
`blind_option` message, on the real PostgreSQL and the real Redis channel layer."""

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async as db
from django.utils import timezone

from tables.models import Seat, Structure
from tests.kit import StakeLevelFactory, TableFactory
from tests.tables.test_blind_options import seated
from tests.tables.test_consumer_hardening import communicator, connected
from tests.tables.test_consumers import Client_

pytestmark = pytest.mark.django_db(transaction=True)


def quiet_table(stake) -> object:
    """A table whose first hand is an hour away: the suite's Celery worker (these tests
    commit) must not deal while a test looks at the next hand's options."""
    return TableFactory(
        stake_level=stake, seats=6, next_hand_at=timezone.now() + timedelta(hours=1)
    )


@pytest.fixture
def straddle_table():
    return quiet_table(StakeLevelFactory(allow_straddle=True))


async def test_a_straddle_from_the_seat_left_of_the_big_blind_is_acked_and_shown(straddle_table):
    players = await db(seated)(straddle_table, 4)
    client = Client_(communicator(players[3], straddle_table.id), "straddler")
    snapshot = await client.connect()
    assert snapshot["you"]["blind_options"]["straddle"]["open"] is True
    answer = await client.send("straddle", on=True)
    assert answer == {"type": "ack", "seq": 1}
    message = await client.until(lambda m: m.get("type") == "blind_option")
    assert message["seat"] == 4 and message["wanted"] is True
    assert message["blind_options"]["straddle"]["asked"] is True
    assert await db(lambda: Seat.objects.get(player=players[3]).wants_straddle)()
    assert (await client.send("straddle", on=False))["type"] == "ack"
    assert not await db(lambda: Seat.objects.get(player=players[3]).wants_straddle)()
    await client.ws.disconnect()


async def test_straddle_and_overblind_refusals_come_back_as_error_codes(straddle_table):
    players = await db(seated)(straddle_table, 4)
    client = await connected(players[0], straddle_table.id)
    refused = await client.send("straddle", on=True)
    assert refused["type"] == "error" and refused["code"] == "blind_option_seat"
    assert "seat 4" in refused["message"]
    refused = await client.send("overblind", on=True)
    assert refused["code"] == "blind_option_not_allowed"
    assert (await client.send("straddle"))["code"] == "malformed"
    assert (await client.send("straddle", on="yes"))["code"] == "malformed"
    spectator = await connected(None, straddle_table.id)
    assert (await spectator.send("straddle", on=True))["code"] == "login_required"
    stranger = await db(lambda: seated(TableFactory(), 1)[0])()
    away = await connected(stranger, straddle_table.id)
    assert (await away.send("straddle", on=True))["code"] == "not_seated"
    for each in (client, spectator, away):
        await each.ws.disconnect()


@pytest.fixture
def short_overblind_table():
    stake = StakeLevelFactory(
        structure=Structure.FIXED_LIMIT, allow_overblind=True, buy_in_min=300, big_bet=400
    )
    return quiet_table(stake)


async def test_an_overblind_the_stack_cannot_cover_is_refused(short_overblind_table):
    table = short_overblind_table
    players = await db(seated)(table, 3, buy_in=350)
    client = await connected(players[1], table.id)
    refused = await client.send("overblind", on=True)
    assert refused["code"] == "blind_option_cannot_cover"
    await client.ws.disconnect()
