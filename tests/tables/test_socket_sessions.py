"""A table socket acts for its player only while their session lives and their account
may play (tables/session_watch.py; issue #46, finding 5), over real WebSockets: the
room's ASGI application, sessions of real log-ins, the accounts' notices over the real
Redis, the database's sessions and users.

Each change goes through the path a person takes: the site's log-out and password
change, the admin's user form (a ban, a promotion to staff, the auditors' group). A
change that sends no notice (a bulk update) is found by the watch's periodic check, and
by a command itself when the watch is behind.
"""

import asyncio
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async as sync
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from accounts.models import AUDITOR_GROUP, User
from poker_room.asgi import application
from poker_room.socket_auth import SocketSession, socket_sessions_check
from tables import session_watch as watch_module
from tables.engine.state import HandState
from tables.models import ChatMessage, Hand, Seat
from tables.services import play
from tables.session_watch import CLOSE_SIGNED_OUT, session_watch
from tests.accounts.test_confusable_names import admin_user_form_data
from tests.kit import (
    PASSWORD,
    UserFactory,
    current,
    deal,
    funded_player,
    stake_for,
    table_with_players,
    wallet,
)
from tests.tables.test_consumers import Client_

pytestmark = pytest.mark.django_db(transaction=True)

SITE = [(b"origin", b"http://localhost"), (b"host", b"localhost")]
NEW_PASSWORD = "a brand new secret 4821"


async def browser(user: User) -> Client:
    """A browser signed in as `user` (a session of its own)."""
    client = Client()
    await sync(client.force_login)(user)
    return client


async def table_socket(table_id: int, client: Client) -> Client_:
    """A table socket of that browser (its session cookie), past its snapshot."""
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    headers = [*SITE, (b"cookie", cookie)]
    socket = Client_(WebsocketCommunicator(application, f"/ws/tables/{table_id}/", headers), "")
    await socket.connect()
    # The notices are heard from now on (tables/feed.py `listen`).
    await asyncio.wait_for(session_watch().listening.wait(), 10)
    return socket


async def close_code(socket: Client_, timeout: float = 10) -> int:
    """The code the server closes the socket with (the messages before it set aside);
    the connection then ends, as a browser's does once it has seen the close."""
    async with asyncio.timeout(timeout):
        while True:
            output = await socket.ws.receive_output(timeout=timeout)
            if output["type"] == "websocket.close":
                await socket.ws.disconnect()
                return output["code"]


async def staff_changes(user: User, **changes) -> None:
    """A staff member changes the user in the admin's user form."""
    staff = Client()
    root = await sync(UserFactory)(username="root", is_staff=True, is_superuser=True)
    await sync(staff.force_login)(root)

    def save() -> None:
        data = admin_user_form_data(staff, user, **changes)
        response = staff.post(f"/admin/accounts/user/{user.pk}/change/", data)
        assert response.status_code == 302, response.content.decode()[:2000]

    await sync(save)()


def watched(user: User) -> list[SocketSession]:
    return [s for s in session_watch()._sockets.values() if s.user_id == user.pk]


async def until(condition, timeout: float = 10, *, database: bool = False) -> None:
    """Wait for `condition`: asked on the loop, or in a thread for a question to the
    database."""
    async with asyncio.timeout(timeout):
        while not (await sync(condition)() if database else condition()):
            await asyncio.sleep(0.02)


def dropped(user: User):
    return lambda: Seat.objects.get(player=user).dropped_at is not None


@pytest.fixture
def heads_up(transactional_db):
    """Two players seated at a table whose hands are dealt by the test alone."""
    table, players = table_with_players(stake_for("holdem", "NL"), count=2)
    return table, players


async def test_logging_out_everywhere_closes_every_other_sessions_socket_at_once(table):
    """Changing the password ends every other session of the player (Django's "log out
    everywhere"): their sockets close, and this browser's new session plays on."""
    alice = await sync(funded_player)()
    elsewhere, here = await browser(alice), await browser(alice)
    socket = await table_socket(table.id, elsewhere)
    assert (await socket.send("sit", seat=3, buy_in=10_000))["type"] == "ack"
    response = await sync(here.post)(
        "/accounts/password_change/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.status_code == 302
    assert await close_code(socket) == CLOSE_SIGNED_OUT
    # Her seat is hers still, the drop recorded; this browser's session plays on.
    await until(dropped(alice), database=True)
    mine = await table_socket(table.id, here)
    assert (await mine.send("leave"))["type"] == "ack"
    await mine.ws.disconnect()


async def test_a_log_out_closes_that_sessions_sockets_and_no_other(heads_up):
    """A log-out in another tab ends the browser's session, this tab's socket with it
    (a browser has one session for all its tabs); the player's session in another
    browser plays on."""
    table, (alice, _bob) = heads_up
    tabs, phone = await browser(alice), await browser(alice)
    this_tab = await table_socket(table.pk, tabs)
    on_phone = await table_socket(table.pk, phone)
    await sync(tabs.post)("/accounts/logout/")  # the other tab of this browser
    assert await close_code(this_tab) == CLOSE_SIGNED_OUT
    assert (await on_phone.send("sit_out"))["type"] == "ack"  # open, and still hers
    await on_phone.ws.disconnect()


async def test_a_ban_closes_a_seated_players_socket_and_their_chips_go_home(heads_up):
    """Deactivated in the admin mid-hand: the socket closes, the drop is recorded, and
    the table's rules take over for the hand (RULES §5: her turns time out). No chip
    moves for the ban itself; when the hand ends her seat is given up and her stack
    goes back to her wallet (tables/services/hands.py), rather than hold a seat and
    chips for ever. The ledger audit passes (tests/tables/conftest.py)."""
    table, (alice, bob) = heads_up
    hand = await sync(deal)(table)
    assert hand is not None
    her_browser = await browser(alice)
    socket = await table_socket(table.pk, her_browser)
    seat = await sync(Seat.objects.get)(player=alice)
    before = (await sync(wallet)(alice), seat.stack)

    await staff_changes(alice, is_active=False)
    assert await close_code(socket) == CLOSE_SIGNED_OUT
    await until(dropped(alice), database=True)
    seat = await sync(Seat.objects.get)(player=alice)
    assert (await sync(wallet)(alice), seat.stack) == before  # the ban moved nothing
    # Her cookie opens nothing any more: a spectator's socket.
    again = await table_socket(table.pk, her_browser)
    assert (await again.send("act", action="fold"))["code"] == "login_required"
    await again.ws.disconnect()

    def the_hand_timing_her_out() -> int:
        """Her final stack of the hand."""
        hand, state = current(table)
        while not state.over:
            if state.actor == seat.number:
                Hand.objects.filter(pk=hand.pk).update(
                    turn_deadline=timezone.now() - timedelta(seconds=5)
                )
                play.turn_timeout(table_id=table.pk, hand_id=hand.pk, turn=hand.turn_version)
            else:
                kind = "check" if state.legal_actions().can_check else "call"
                play.hand_act(table_id=table.pk, user=bob, kind=kind)
            hand.refresh_from_db()
            state = HandState.from_dict(hand.state)
        return dict(zip(state.seats, state.stacks, strict=True))[seat.number]

    final = await sync(the_hand_timing_her_out)()
    assert not await sync(Seat.objects.filter(player=alice).exists)()
    assert await sync(wallet)(alice) == before[0] + final


@pytest.mark.parametrize("role", ["staff", "auditor"])
async def test_a_player_made_staff_or_auditor_no_longer_plays_from_any_socket(heads_up, role):
    """Promoted in the admin with a seat, mid-hand: the socket stays (it shows the
    table) and every command that plays is refused `cannot_play`, on a socket opened
    afterwards too; `snapshot`, and `sit_out` and `leave`, which only take a player out
    of play, are carried out."""
    table, (alice, _bob) = heads_up
    await sync(deal)(table)
    socket = await table_socket(table.pk, her_browser := await browser(alice))
    assert watched(alice)[0].may_play
    if role == "staff":
        await staff_changes(alice, is_staff=True)
    else:
        group, _ = await sync(Group.objects.get_or_create)(name=AUDITOR_GROUP)
        await staff_changes(alice, groups=[group])
    await until(lambda: not watched(alice)[0].may_play)
    later = await table_socket(table.pk, her_browser)
    for client in (socket, later):
        for cmd, fields in [
            ("act", {"action": "fold"}),
            ("chat", {"text": "gg"}),
            ("sit", {"seat": 4, "buy_in": 10_000}),
            ("top_up", {"amount": 1_000}),
        ]:
            answer = await client.send(cmd, **fields)
            assert answer.get("code") == "cannot_play", (cmd, answer)
        assert (await client.send("snapshot"))["type"] == "ack"
    _, state = await sync(current)(table)
    her_turn = state.actor == (await sync(Seat.objects.get)(player=alice)).number
    assert (await later.send("leave"))["type"] == "ack"
    for client in (socket, later):
        await client.ws.disconnect()
    seat = await sync(Seat.objects.filter(player=alice).first)()
    if her_turn:  # heads up, her leave folded the hand, and she left with it
        assert seat is None
    else:  # dealt in: she leaves when the hand ends
        assert seat.leave_after_hand
    assert not await sync(ChatMessage.objects.exists)()


async def test_a_change_that_sent_no_notice_is_found_by_the_periodic_check(heads_up):
    """Notices travel at most once (a bulk update sends none; one published while Redis
    is away is lost): the watch checks every socket every CHECK_SECONDS all the same."""
    table, (alice, _bob) = heads_up
    socket = await table_socket(table.pk, await browser(alice))
    await sync(User.objects.filter(pk=alice.pk).update)(is_active=False)  # no signal
    assert await close_code(socket, timeout=watch_module.CHECK_SECONDS + 10) == CLOSE_SIGNED_OUT


async def test_a_command_checks_its_session_itself_when_the_watch_is_behind(heads_up, monkeypatch):
    """The watch kept off the database thread (or failing): a command whose socket was
    last checked more than STALE_SECONDS ago checks it on its way."""
    monkeypatch.setattr(watch_module, "CHECK_SECONDS", 3600.0)
    monkeypatch.setattr(watch_module, "STALE_SECONDS", 0.0)
    table, (alice, _bob) = heads_up
    socket = await table_socket(table.pk, await browser(alice))
    keys = await sync(lambda: list(Session.objects.values_list("session_key", flat=True)))()
    await sync(Session.objects.filter(session_key__in=keys).delete)()  # no log-out, no notice
    answer = await socket.send("leave")
    assert (answer["type"], answer["code"]) == ("error", "signed_out")
    assert await close_code(socket) == CLOSE_SIGNED_OUT
    assert await sync(Seat.objects.filter(player=alice).exists)()  # the leave never ran


async def test_a_feed_connection_replaced_has_every_socket_checked(heads_up, monkeypatch):
    """Notices published while the feed's connection was away are lost: once it is
    replaced, every socket of the process is checked."""
    from tables.feed import table_feed

    monkeypatch.setattr(watch_module, "CHECK_SECONDS", 3600.0)
    table, (alice, _bob) = heads_up
    socket = await table_socket(table.pk, await browser(alice))
    await sync(User.objects.filter(pk=alice.pk).update)(is_staff=True)  # no notice
    await table_feed()._resubscribe()  # as when Redis is back
    await until(lambda: not watched(alice)[0].may_play)
    assert (await socket.send("chat", text="gg"))["code"] == "cannot_play"
    await socket.ws.disconnect()


def test_the_check_reads_any_number_of_sockets_in_two_queries(
    transactional_db, django_assert_num_queries
):
    players = [funded_player() for _ in range(5)]
    sessions = []
    for player in players:
        client = Client()
        client.force_login(player)
        key = client.cookies["sessionid"].value
        sessions.append(
            SocketSession(
                user_id=player.pk,
                session_key=key,
                session_digest=None,
                password=player.password,
                may_play=True,
                checked_at=0.0,
            )
        )
    players[1].is_staff = True
    players[1].save()
    Session.objects.filter(session_key=sessions[2].session_key).delete()
    User.objects.filter(pk=players[3].pk).update(password="changed")
    with django_assert_num_queries(2):
        ended = socket_sessions_check(sessions)
    assert ended == [sessions[2], sessions[3]]
    assert [s.may_play for s in sessions] == [True, False, True, True, True]
    assert [s.checked_at > 0 for s in sessions] == [True, True, False, False, True]
