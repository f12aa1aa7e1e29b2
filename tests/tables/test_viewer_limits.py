"""Limits per viewer on the table WebSocket (tables/viewer_limits.py): the sockets a user
or an address holds open, and one token bucket per viewer over all their sockets, spent
by connects and frames. Over a cap or out of tokens, a connect is closed 4429 and a frame
is answered `rate_limited`; nothing else is done for either.

The limiter alone on the real Redis (two of them, with one namespace, are two web
processes of one room), then the real consumer through Channels' communicator on the
real PostgreSQL and Redis, as the neighbouring tests. Each test gets fresh limits, in a
namespace of its own (tests/conftest.py, `viewer_limits_per_test`).
"""

import asyncio
import uuid

import pytest
from channels.db import database_sync_to_async as db
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.test import Client, override_settings

from poker_room.asgi import application
from poker_room.routing import websocket_urlpatterns
from tables import capacity, consumers, viewer_limits
from tables.capacity import PlayerPace, SeatAdmission, SeatedPlay
from tables.consumers import CLOSE_TOO_MANY, TableConsumer
from tables.hop_order import HopOrder
from tables.models import Seat
from tables.viewer_limits import SocketPlace, ViewerLimits
from tests.kit import TableFactory, UserFactory, funded_player, wallet
from tests.tables.test_consumers import Client_

HOME = "203.0.113.7"  # one address (a NAT, say)
ELSEWHERE = "198.51.100.9"


@pytest.fixture
def limits(settings) -> ViewerLimits:
    """Small caps and a bucket that never refills (exact counts on any machine), in a
    namespace of the test's own in Redis."""
    settings.TABLE_SOCKETS_PER_USER = 2
    settings.TABLE_SOCKETS_PER_ADDRESS = 3
    settings.TABLE_VIEWER_BURST = 4
    settings.TABLE_VIEWER_PER_SECOND = 0
    return process_of(namespace())


def namespace() -> str:
    return f":test-{uuid.uuid4().hex[:12]}"


def process_of(room: str) -> ViewerLimits:
    """The limits of one web process of the room whose Redis keys are under `room`."""
    return ViewerLimits(namespace=room)


async def connected(
    limits: ViewerLimits, user_id: int | None = None, address: str = HOME, *, cookie: bool = False
) -> SocketPlace | None:
    """A socket's connect as the consumer makes it (a spectator's without `user_id`;
    `cookie`: carrying a session that names nobody): its place, None if refused."""
    place = await limits.socket_opens(address, maybe_signed_in=user_id is not None or cookie)
    if place is None:
        return None
    if not await place.identify(user_id):
        await place.release()
        return None
    return place


async def frames(place: SocketPlace, count: int) -> list[bool]:
    """`count` frames of the socket's viewer: which were let through."""
    return [await place.take() for _ in range(count)]


USER, ADDRESS = ("user", 1), ("address", HOME)


# -- the limiter -------------------------------------------------------------------------


async def test_a_user_and_an_address_each_have_a_cap_and_a_user_counts_under_both(limits):
    alice = [await connected(limits, 1) for _ in range(3)]
    assert [place is not None for place in alice] == [True, True, False]  # the user's cap
    assert limits.sockets(USER) == 2 and limits.sockets(ADDRESS) == 2  # refused: no place
    assert await limits.sockets_everywhere(USER) == 2
    assert await connected(limits, 2) is not None  # bob, same address: its third place
    assert await connected(limits, 2) is None  # the address's cap, bob is under his own
    assert await connected(limits) is None
    assert limits.sockets(("user", 2)) == 1 and limits.sockets(ADDRESS) == 3
    assert await connected(limits, None, ELSEWHERE) and await connected(limits, 3, ELSEWHERE)
    await alice[0].release()  # closing one frees a place under both caps
    assert limits.sockets(ADDRESS) == 2 and await limits.sockets_everywhere(ADDRESS) == 2
    assert await connected(limits, 1) is not None


async def test_a_viewers_sockets_share_one_bucket_for_connects_and_frames(limits, settings):
    settings.TABLE_SOCKETS_PER_USER = 5
    first, second = await connected(limits, 1), await connected(limits, 1)  # two tokens
    assert [await first.take(), await second.take(), await first.take()] == [True, True, False]
    assert await connected(limits, 1, ELSEWHERE) is None  # a connect needs a token too
    assert await (await connected(limits, 2)).take()  # another user has a bucket of their own


async def test_a_bucket_refills_at_its_rate_up_to_its_burst(limits, settings):
    settings.TABLE_VIEWER_PER_SECOND = 20
    place = await connected(limits, 1)
    assert await frames(place, 4) == [True, True, True, False]  # the connect took one
    # Once dry, the process asks again when a lease's worth can be there (4, the burst).
    await asyncio.sleep(4 / 20 + 0.05)
    assert await frames(place, 4) == [True] * 4
    while await place.take():  # what refilled meanwhile
        pass
    await asyncio.sleep(1.0)  # refilled, up to the burst only
    passed = await frames(place, 10)
    assert passed[:4] == [True] * 4 and passed.count(True) <= 4 + 1  # what came meanwhile


async def test_spectators_spend_their_address_bucket_and_players_their_own(limits):
    one, two = await connected(limits), await connected(limits)  # two connects
    assert [await one.take(), await two.take(), await one.take()] == [True, True, False]
    assert one.viewer == two.viewer == ADDRESS
    assert await connected(limits) is None  # no token: refused before anything else
    assert await connected(limits, None, ELSEWHERE) is not None
    assert await connected(limits, 1) is None  # the address holds no token for its read


async def test_sessions_that_name_nobody_cannot_buy_a_read_each_once_the_address_is_dry(limits):
    # A cookie is read (one database hop) before it is known to name nobody; the
    # spectator it makes then pays the address's token. Once the address has none left,
    # any socket that may be signed in is refused before the read.
    for _ in range(2):
        assert await (await connected(limits, cookie=True)).take()  # a connect and a frame
    assert await connected(limits, cookie=True) is None
    assert await limits.socket_opens(HOME, maybe_signed_in=True) is None  # before the read
    assert await connected(limits, 1, ELSEWHERE) is not None


async def test_a_place_is_given_back_once_however_often_asked(limits):
    kept, closed = await connected(limits, 1), await connected(limits, 1)
    await closed.release()
    await closed.release()
    closed.give_back()
    assert limits.sockets(USER) == 1 and limits.sockets(ADDRESS) == 1
    assert await limits.sockets_everywhere(USER) == 1
    await kept.release()
    assert limits.sockets(USER) == 0 and limits.sockets(ADDRESS) == 0
    assert await limits.sockets_everywhere(ADDRESS) == 0
    # Refused by the user's cap after its address's place was taken: that one back too.
    assert await connected(limits, 1) and await connected(limits, 1)
    place = await limits.socket_opens(HOME, maybe_signed_in=True)
    assert limits.sockets(ADDRESS) == 3
    assert not await place.identify(1)
    await place.release()
    assert limits.sockets(ADDRESS) == 2 and await limits.sockets_everywhere(ADDRESS) == 2


async def test_idle_viewers_are_forgotten_when_the_map_has_doubled(monkeypatch, settings):
    settings.TABLE_VIEWER_PER_SECOND = 20
    monkeypatch.setattr(viewer_limits, "SWEEP_FROM", 8)
    limits = process_of(namespace())
    held = await connected(limits, 1)  # a socket open: remembered
    for i in range(5):
        await (await connected(limits, None, f"10.0.0.{i}")).release()  # gone
    busy = await connected(limits, None, "10.0.0.9")
    assert await busy.take()  # tokens leased and unspent: remembered
    await busy.release()
    assert len(limits) == 8  # alice, HOME and the six addresses
    await (await connected(limits, None, "10.0.1.1")).release()  # the ninth: swept first
    # alice and HOME (her socket's), the busy address (its lease), and the new one.
    assert len(limits) == 4
    assert limits.sockets(USER) == 1 and await held.take()
    # Many passing viewers: the map stays bounded.
    monkeypatch.setattr(viewer_limits, "SWEEP_FROM", 64)
    limits = process_of(namespace())
    for i in range(1_000):
        await (await connected(limits, None, f"10.1.{i // 256}.{i % 256}")).release()
    assert len(limits) <= 2 * 64


# -- over the room's processes -----------------------------------------------------------------


async def test_a_viewers_caps_hold_over_all_the_rooms_processes(limits):
    """Finding 8: two web processes each counted their own. Now a user's sockets and an
    address's, wherever they are open, share one cap."""
    other = process_of(limits.namespace)  # another web process
    a = await connected(limits, 1)
    b = await connected(other, 1)
    assert a is not None and b is not None
    assert await connected(limits, 1) is None and await connected(other, 1) is None
    assert await other.sockets_everywhere(USER) == 2
    assert await connected(other, 2) is not None  # the address's third place
    assert await connected(limits, 3) is None  # its cap, over both processes
    await a.release()  # closed on one process: a place on the other
    assert await connected(other, 1) is not None


async def test_a_viewers_bucket_holds_over_all_the_rooms_processes_leased_in_batches(
    limits, settings, monkeypatch
):
    """Every frame spends a token of the one bucket in Redis, leased a few at a time:
    over two processes the viewer gets exactly its burst (the rate is 0 here), and the
    processes ask Redis far less often than once a frame."""
    settings.TABLE_VIEWER_BURST = 12
    other = process_of(limits.namespace)
    asked = []
    for process in (limits, other):
        lease = process._lease

        async def counted(viewer, lease=lease):
            asked.append(viewer)
            return await lease(viewer)

        monkeypatch.setattr(process, "_lease", counted)
    a, b = await connected(limits, 1), await connected(other, 1)  # two of the twelve
    passed = 0
    for _ in range(20):  # both keep sending, turn about
        passed += await a.take() + await b.take()
    assert passed == 10
    assert len(asked) <= 2 * (10 // viewer_limits.LEASE_TOKENS + 2)
    # An empty bucket is not asked again while no token can be there (a rate of 0: never).
    asked.clear()
    assert not await a.take() and not await b.take()
    assert asked == []


async def test_a_dead_processs_places_last_only_their_lease(limits, monkeypatch):
    monkeypatch.setattr(viewer_limits, "LEASE", 0.3)
    dead = process_of(limits.namespace)
    assert await connected(dead, 1) and await connected(dead, 1)
    dead._renewal.cancel()  # killed outright: nothing given back, nothing renewed
    assert await connected(limits, 1) is None
    await asyncio.sleep(0.5)  # past their lease
    assert await connected(limits, 1) is not None


async def test_a_live_process_renews_its_places_leases(limits, monkeypatch):
    place = await connected(limits, 1)
    key = limits._key(USER, "sockets")
    client = limits._scripts().client
    first = await client.zscore(key, place.member)
    await asyncio.sleep(0.01)
    await limits._renew_leases()
    assert await client.zscore(key, place.member) > first
    # One Redis lost (a restart): the renewal puts it back.
    await client.delete(key)
    await limits._renew_leases()
    assert await limits.sockets_everywhere(USER) == 1
    assert limits._renewal is not None  # the next one is due
    await place.release()
    assert limits._renewal is None  # none while nothing is held


async def test_while_redis_is_away_each_process_counts_its_own(
    limits, settings, private_redis, caplog, monkeypatch
):
    """An outage closes no socket: each process goes on with its own caps and buckets
    (as before the limits were shared), says so in its log once, and counts in Redis
    again once it is back."""
    settings.REDIS_URL = private_redis.url
    settings.TABLE_SOCKETS_PER_USER = 3
    monkeypatch.setattr(viewer_limits, "RETRY_AFTER", 0.2)
    other = process_of(limits.namespace)
    here = [await connected(limits, 1), await connected(other, 1)]
    private_redis.stop()
    here += [await connected(limits, 1), await connected(limits, 1)]  # its own three
    assert None not in here and await connected(limits, 1) is None
    here.append(await connected(other, 1))  # and the other's
    assert here[-1] is not None
    warnings = [r.getMessage() for r in caplog.records if r.name == "tables.viewer_limits"]
    assert len(warnings) == 2 and "Redis unavailable" in warnings[0]  # a line a process
    private_redis.start()  # empty: the places it held are gone with it
    await asyncio.sleep(0.3)
    here.append(await connected(limits, 2))  # shared again
    assert here[-1] is not None and await limits.sockets_everywhere(("user", 2)) == 1
    await asyncio.gather(*(place.release() for place in here))


# -- the table socket --------------------------------------------------------------------

router = URLRouter(websocket_urlpatterns)
SITE = [(b"origin", b"http://localhost"), (b"host", b"localhost")]
on_sockets = pytest.mark.django_db(transaction=True)


def communicator(user, table_id: int, address: str | None = HOME, app=router):
    ws = WebsocketCommunicator(app, f"/ws/tables/{table_id}/")
    ws.scope["user"] = user if user is not None else AnonymousUser()
    if address is not None:
        ws.scope["client"] = [address, 50_000]
    return ws


async def opened(user, table_id: int, address: str | None = HOME) -> Client_:
    client = Client_(communicator(user, table_id, address), getattr(user, "username", "-"))
    await client.connect()
    return client


async def closed_with(ws: WebsocketCommunicator) -> int:
    """Connect `ws`; the code the server closed it with after the accept."""
    assert await ws.connect() == (True, None)
    output = await ws.receive_output(timeout=5)
    assert output["type"] == "websocket.close", output
    return output["code"]


async def still_open(client: Client_) -> None:
    assert (await client.send("snapshot"))["type"] == "ack"


async def close_all(clients) -> None:
    await asyncio.gather(*(client.ws.disconnect() for client in clients))


@pytest.fixture
def table(transactional_db):
    return TableFactory(seats=6)


@on_sockets
async def test_a_users_seventeenth_socket_is_closed_4429_and_closing_one_frees_a_place(table):
    alice = await db(UserFactory)()
    sockets = [await opened(alice, table.id) for _ in range(16)]
    assert await closed_with(communicator(alice, table.id)) == CLOSE_TOO_MANY
    for client in sockets:
        await still_open(client)  # the sixteen work on
    assert viewer_limits.limits.sockets(("user", alice.id)) == 16
    await sockets.pop().ws.disconnect()
    sockets.append(await opened(alice, table.id))  # a place again
    await close_all(sockets)
    assert viewer_limits.limits.sockets(("user", alice.id)) == 0


@on_sockets
async def test_an_addresss_sixty_fifth_socket_is_closed_4429_players_and_spectators_alike(table):
    players = [await db(UserFactory)() for _ in range(5)]
    sockets = [await opened(user, table.id) for user in players[:4] for _ in range(16)]
    assert await closed_with(communicator(players[4], table.id)) == CLOSE_TOO_MANY
    assert await closed_with(communicator(None, table.id)) == CLOSE_TOO_MANY
    others = [
        await opened(None, table.id, ELSEWHERE),
        await opened(players[4], table.id, ELSEWHERE),
    ]
    await sockets.pop().ws.disconnect()
    sockets.append(await opened(players[4], table.id))
    await close_all(sockets + others)


@on_sockets
async def test_commands_spread_over_sockets_share_the_viewers_bucket(table, settings):
    settings.TABLE_VIEWER_BURST = 6
    settings.TABLE_VIEWER_PER_SECOND = 0  # no refill: the count is exact on any machine
    alice, bob = await db(funded_player)(), await db(funded_player)()
    tabs = [await opened(alice, table.id) for _ in range(3)]  # three connects
    for tab in tabs:
        await still_open(tab)  # three frames: six spent, two on each socket at most
    refused = await tabs[0].send("sit", seat=1, buy_in=10_000)
    assert (refused["code"], refused["seq"]) == ("rate_limited", 2)
    assert "over all your connections" in refused["message"]
    assert (await tabs[1].send("snapshot"))["code"] == "rate_limited"
    assert await db(wallet)(alice) == 100_000
    assert not await db(Seat.objects.filter(table=table).exists)()
    other = await opened(bob, table.id)  # another viewer, its own bucket
    assert (await other.send("sit", seat=1, buy_in=10_000))["type"] == "ack"
    await close_all([*tabs, other])


@on_sockets
async def test_a_connect_without_a_token_is_closed_4429(table):
    with override_settings(TABLE_VIEWER_BURST=3, TABLE_VIEWER_PER_SECOND=0):
        alice = await db(UserFactory)()
        tabs = [await opened(alice, table.id) for _ in range(3)]
        assert await closed_with(communicator(alice, table.id)) == CLOSE_TOO_MANY
        watchers = [await opened(None, table.id) for _ in range(3)]  # the address's bucket
        assert await closed_with(communicator(None, table.id)) == CLOSE_TOO_MANY
        await close_all(tabs + watchers)


@on_sockets
async def test_caps_from_the_settings_are_honoured(table):
    with override_settings(TABLE_SOCKETS_PER_USER=1, TABLE_SOCKETS_PER_ADDRESS=2):
        alice, bob = await db(UserFactory)(), await db(UserFactory)()
        first = await opened(alice, table.id)
        assert await closed_with(communicator(alice, table.id, ELSEWHERE)) == CLOSE_TOO_MANY
        second = await opened(bob, table.id)
        assert await closed_with(communicator(None, table.id)) == CLOSE_TOO_MANY
        await close_all([first, second])


class Counting(HopOrder):
    """The order of hops to the database thread, counting the hops that ask for a turn."""

    def __init__(self) -> None:
        super().__init__()
        self.hops = 0

    def turn(self, urgency):
        self.hops += 1
        return super().turn(urgency)


def site_socket(table_id: int, session_key: str | None, address: str = HOME):
    """A socket through the whole application: origin check, session cookie, routing."""
    headers = list(SITE)
    if session_key is not None:
        headers.append((b"cookie", f"sessionid={session_key}".encode()))
    ws = WebsocketCommunicator(application, f"/ws/tables/{table_id}/", headers=headers)
    ws.scope["client"] = [address, 50_000]
    return ws


async def logged_in(user) -> str:
    client = Client()
    await db(client.force_login)(user)
    return client.cookies["sessionid"].value


@on_sockets
async def test_a_refused_connect_does_no_database_work(table, settings, monkeypatch):
    settings.TABLE_SOCKETS_PER_ADDRESS = 1
    alice, bob = await db(UserFactory)(), await db(UserFactory)()
    first = site_socket(table.id, await logged_in(alice))
    assert await first.connect() == (True, None)
    assert (await first.receive_json_from(timeout=5))["type"] == "snapshot"
    bobs = await logged_in(bob)
    thread = Counting()
    monkeypatch.setattr(capacity, "hop_order", thread)
    # Over the address's cap: refused before the session's user is read.
    refused = site_socket(table.id, bobs)
    assert await closed_with(refused) == CLOSE_TOO_MANY
    # and what it sends meanwhile is not read.
    await refused.send_json_to({"cmd": "snapshot", "seq": 1})
    assert await refused.receive_nothing(timeout=0.3)
    await refused.disconnect()
    assert thread.hops == 0
    assert await closed_with(site_socket(table.id, None)) == CLOSE_TOO_MANY  # a spectator
    assert thread.hops == 0
    # A place again: bob's socket is read, checked and sent its snapshot (the count works).
    await first.disconnect()
    again = site_socket(table.id, bobs)
    assert await again.connect() == (True, None)
    assert (await again.receive_json_from(timeout=5))["type"] == "snapshot"
    assert thread.hops >= 3
    await again.disconnect()


@on_sockets
async def test_sessions_that_name_nobody_are_read_until_the_address_is_out_of_tokens(
    table, settings, monkeypatch
):
    settings.TABLE_VIEWER_BURST = 2
    settings.TABLE_VIEWER_PER_SECOND = 0
    thread = Counting()
    monkeypatch.setattr(capacity, "hop_order", thread)
    watchers = []
    for _ in range(2):  # read, found anonymous: the address's token spent after the read
        ws = site_socket(table.id, "no-such-session-key")
        assert await ws.connect() == (True, None)
        assert (await ws.receive_json_from(timeout=5))["type"] == "snapshot"
        watchers.append(ws)
    hops = thread.hops
    assert await closed_with(site_socket(table.id, "another-unknown-key")) == CLOSE_TOO_MANY
    assert thread.hops == hops  # refused before the read
    await asyncio.gather(*(ws.disconnect() for ws in watchers))


@on_sockets
async def test_a_rate_limited_sit_does_not_take_the_seat_of_a_slowed_second(
    table, settings, monkeypatch
):
    settings.SEATING_SHED_CPU = 0.15
    settings.SEATING_SLOW_CPU = 0.09
    settings.SEATING_SLOW_INTERVAL = 1.0
    settings.TABLE_VIEWER_BURST = 2  # a connect and one command each
    settings.TABLE_VIEWER_PER_SECOND = 0
    frozen = lambda: 1000.0  # noqa: E731 - the test's clock, standing still
    monkeypatch.setattr(capacity, "seated_play", SeatedPlay(clock=frozen))
    monkeypatch.setattr(capacity, "player_pace", PlayerPace(clock=frozen))
    monkeypatch.setattr(capacity, "seat_admission", SeatAdmission(clock=frozen))
    alice, bob = await db(funded_player)(), await db(funded_player)()
    a, b = await opened(alice, table.id), await opened(bob, table.id)
    await still_open(a)  # alice's last token
    capacity.seated_play.add(0.12 * capacity.WINDOW)  # filling up: one new seat this second
    assert capacity.seating_now()[0] is capacity.Seating.SLOWED
    assert (await a.send("sit", seat=1, buy_in=10_000))["code"] == "rate_limited"
    assert (await b.send("sit", seat=2, buy_in=10_000))["type"] == "ack"  # the seat was free
    seats = await db(lambda: list(Seat.objects.values_list("player", flat=True)))()
    assert seats == [bob.id]
    await close_all([a, b])


@on_sockets
async def test_nothing_sent_after_a_close_for_an_unknown_table_is_read(transactional_db):
    alice = await db(UserFactory)()
    table = await db(TableFactory)(seats=6)
    tab = await opened(alice, table.id)
    ws = communicator(alice, table.id + 1000)
    assert await ws.connect() == (True, None)
    await ws.send_json_to({"cmd": "snapshot", "seq": 1})  # before it sees the close
    output = await ws.receive_output(timeout=5)
    assert (output["type"], output["code"]) == ("websocket.close", 4404)
    assert await ws.receive_nothing(timeout=0.3)  # no answer: the frame was never read
    # Its place was given back as it closed, and only once (alice's other tab keeps hers).
    assert viewer_limits.limits.sockets(("user", alice.id)) == 1
    await ws.disconnect()
    assert viewer_limits.limits.sockets(("user", alice.id)) == 1
    await tab.ws.disconnect()


@on_sockets
async def test_nothing_sent_after_a_4429_or_a_1013_is_carried_out(table, settings, monkeypatch):
    settings.TABLE_SOCKETS_PER_USER = 1
    alice = await db(funded_player)()
    tab = await opened(alice, table.id)
    ws = communicator(alice, table.id)
    assert await ws.connect() == (True, None)
    await ws.send_json_to({"cmd": "sit", "seq": 1, "seat": 1, "buy_in": 10_000})
    assert (await ws.receive_output(timeout=5))["code"] == CLOSE_TOO_MANY
    assert await ws.receive_nothing(timeout=0.3)
    assert not await db(Seat.objects.filter(table=table).exists)()
    await tab.ws.disconnect()

    def down(*args):
        raise ConnectionError("Redis went away")

    monkeypatch.setattr(TableConsumer, "_snapshot", down)
    monkeypatch.setattr(consumers, "public_snapshot_read", down)
    ws = communicator(alice, table.id)
    assert await ws.connect() == (True, None)
    await ws.send_json_to({"cmd": "sit", "seq": 1, "seat": 1, "buy_in": 10_000})
    assert (await ws.receive_output(timeout=5))["code"] == 1013
    assert await ws.receive_nothing(timeout=0.3)
    assert not await db(Seat.objects.filter(table=table).exists)()
    assert viewer_limits.limits.sockets(("user", alice.id)) == 0  # given back as it closed
    await ws.disconnect()


@on_sockets
async def test_an_ipv6_clients_sockets_count_under_its_64_whichever_address_it_picks(table):
    # A subscriber may use any of its /64's addresses: one socket from each of them is
    # still one client's. An IPv4 address written as IPv6 is that IPv4 address.
    with override_settings(TABLE_SOCKETS_PER_ADDRESS=3):
        sockets = [
            await opened(None, table.id, f"2001:db8:1:2::{host}") for host in ("a", "b", "c")
        ]
        same_64 = communicator(None, table.id, "2001:db8:1:2:ffff::1")
        assert await closed_with(same_64) == CLOSE_TOO_MANY
        sockets.append(await opened(None, table.id, "2001:db8:1:3::a"))  # the next /64
        sockets += [await opened(None, table.id, HOME) for _ in range(3)]
        mapped = communicator(None, table.id, f"::ffff:{HOME}")
        assert await closed_with(mapped) == CLOSE_TOO_MANY
        assert viewer_limits.limits.sockets(("address", "2001:db8:1:2::/64")) == 3
        await close_all(sockets)
