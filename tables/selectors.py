"""Read-only views of tables, filtered for the viewer (STYLE §7, §8)."""

import json
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import cached_property
from typing import Any

from django.db.models import Exists
from django.utils import timezone

from accounts.models import User
from cashier.models import LedgerTransaction
from tables import rows
from tables.engine.events import event_from_dict
from tables.engine.presets import advance_options, bet_presets
from tables.engine.state import HandState
from tables.hand_helper import best_hand_now
from tables.messages import ChatSent, HandEventMessage
from tables.models import (
    AutoTopUp,
    ChatMessage,
    ChatMute,
    Departure,
    Hand,
    HandPlayer,
    PlayerSettings,
    Seat,
    SeatStatus,
    StakeLevel,
    Table,
)

# Lines of chat a snapshot carries.
CHAT_RECENT = 30


def hand_in_progress(*, table: Table) -> Hand | None:
    return rows.hand_in_progress(table)


def hand_players_by_seat(*, hand: Hand) -> dict[int, int]:
    """The user id dealt in at each seat of the hand (tables.models.HandPlayer)."""
    return rows.hand_players_by_seat(hand)


def hand_dealt_to(*, hand: Hand, seat: int, user_id: int) -> bool:
    """Whether this user was dealt into the hand at this seat (by id, never by name)."""
    return HandPlayer.objects.filter(hand=hand, seat=seat, user_id=user_id).exists()


def table_seats(*, table: Table) -> list[Seat]:
    """The table's seats by number, with their players."""
    return rows.seats_with_players(table)


def seats_public(seats: list[Seat]) -> list[dict]:
    """What anyone at the table may know of its seats.

    `disconnected`: the player's last connection to the table closed and they have not
    come back yet (`Seat.dropped_at`, services/play.py); everyone sees it, with their clock.
    `posts_big_blind`: waiting, they asked to come in with a big blind at the next deal.
    """
    return [
        {
            "seat": s.number,
            "player": s.player.username,
            "user_id": s.player_id,
            "stack": s.stack,
            "status": s.status,
            "leaving": s.leave_after_hand,
            "sitting_out_next": s.sit_out_after_hand,
            "disconnected": s.dropped_at is not None,
            "posts_big_blind": s.status == SeatStatus.WAITING and s.post_big_blind,
        }
        for s in sorted(seats, key=lambda s: s.number)
    ]


def hand_log_for(*, hand: Hand, seat: int | None) -> list[dict[str, Any]]:
    """The hand's events so far as the viewer at `seat` (None: a spectator, or a player
    not dealt in) saw them on the stream (`HandEventMessage` decides, as it did then).

    A page reopened mid-hand rebuilds its hand log from this.
    """
    return [
        HandEventMessage(hand=hand.id, event=event_from_dict(row.data)).form_for_seat(seat)
        for row in hand.events.order_by("seq")
    ]


def rathole_departure(*, table: Table, user: User, lock: bool = False) -> Departure | None:
    """The departure that this player's next sit at the table's stake level must honour
    (RULES §4, no ratholing), if any: they must bring at least its stack, capped at the
    maximum buy-in (`buy_in_limits`).

    The rule, across every table of the stake level (issue 46: it used to be the latest
    departure alone, so leaving a big stack at one table and a small one at another, in
    that order, left only the small one owed):

    * Every departure from the stake level (a seat left, with its stack) within the last
      `rathole_minutes` (finer point 15: inclusive) is owed, until a sit honours it.
    * A sit at the stake level honours one departure: the largest still owed when it is
      made (the one its minimum came from; ties: the earliest). It brought at least that
      stack, or the maximum buy-in when the stack was above it: a sit capped at the
      maximum honours the departure in full.
    * The next sit must bring at least the largest departure still owed.

    So a player who left A with $500 and B with $100 brings $500 to the next sit (capped),
    and $100 to the one after: each of the two returns to the stake level answers one
    departure. One who left A with $500, sat at C with $500 and left C with $50 owes $50:
    the $500 was honoured by C. A player seated at two tables at once is no different:
    leaving A while still seated at B owes A's stack to the next sit (B's sit, made
    before, honoured nothing of A's), and leaving B later owes B's. A sit with nothing
    owed (a player adding a table) honours nothing.

    Why not "the departures since the player's latest sit": one sit would then honour
    every departure before it, and a player who left A with $500 and B with $100 could
    sit at C with $500 and at D with $40, taking $60 off the stake level.

    The buy-in range shown (`buy_in_range`: the snapshot's `buy_in`) and the sit
    (`seat_take`, which marks the departure honoured in its own transaction) read it
    here alike. `lock` (the sit) locks that departure's row until the sit commits: two
    sits of the player at two tables at once cannot both honour it; the second finds the
    next one owed (under READ COMMITTED, a row honoured meanwhile is re-checked and
    skipped).
    """
    stake = table.stake_level
    # Finer point 15: a return exactly `rathole_minutes` later is still inside the window.
    since = timezone.now() - timedelta(minutes=stake.rathole_minutes)
    owed = Departure.objects.filter(
        player=user, stake_level=stake, left_at__gte=since, honoured_by__isnull=True
    ).order_by("-stack", "left_at", "id")
    if lock:
        owed = owed.select_for_update(of=("self",))
    return owed.first()


def table_and_key_unused(*, table_id: int, idempotency_key: str) -> bool:
    """Whether the table is there and no movement was posted under this key (committed,
    as this session sees), in one read."""
    key_used = LedgerTransaction.objects.filter(idempotency_key=idempotency_key)
    found = Table.objects.filter(pk=table_id).values_list(~Exists(key_used), flat=True)
    return bool(found.first())


def buy_in_range(*, table: Table, user: User) -> tuple[int, int]:
    """The smallest and largest buy-in this player may bring to this table now."""
    return buy_in_limits(
        stake=table.stake_level, departure=rathole_departure(table=table, user=user)
    )


def buy_in_limits(*, stake: StakeLevel, departure: Departure | None) -> tuple[int, int]:
    """The stake level's buy-in range, raised to what the player left with when they
    left within the rathole window (`departure`, capped at the maximum)."""
    low, high = stake.buy_in_min, stake.buy_in_max
    if departure is not None:
        low = max(low, min(departure.stack, high))
    return low, high


def table_public(*, table: Table) -> dict[str, Any]:
    stake = table.stake_level
    return {
        "id": table.id,
        "name": table.name,
        "status": table.status,
        "seats": table.seats,
        "stake": {
            "name": stake.name,
            "game": stake.game,
            "structure": stake.structure,
            "small_blind": stake.small_blind,
            "big_blind": stake.big_blind,
            "small_bet": stake.small_bet,
            "big_bet": stake.big_bet,
            "ante": stake.ante,
            "buy_in_min": stake.buy_in_min,
            "buy_in_max": stake.buy_in_max,
        },
        "action_seconds": table.action_seconds,
        "time_bank_seconds": table.time_bank_seconds,
    }


def table_snapshot(*, table: Table, user: User | None) -> dict[str, Any]:
    """Everything a viewer may see of the table now, at stream version `v`.

    A seated player sees their own hole cards; nobody sees anyone else's before they are
    shown; the deck and salt never appear. A viewer without a seat sees what a spectator
    sees, with their own part added (`snapshot_for_viewer`).
    """
    seats = table_seats(table=table)
    mine = next((s for s in seats if user is not None and s.player_id == user.id), None)
    if mine is None:
        return snapshot_for_viewer(_public_snapshot(table=table, seats=seats), user=user)
    chat = chat_recent(table=table, seats=seats, user=user)
    body = _snapshot_body(table=table, seats=seats, mine=mine, user=user, chat=chat)
    body["muted"] = chat_muted(user=user)
    body["auto_top_up"] = auto_top_up_of(user=user)
    return body


@dataclass(frozen=True)
class PublicSnapshot:
    """The table as an anonymous spectator sees it at one version (`body`, the snapshot
    they are sent), and what a signed-in viewer without a seat adds to it
    (`snapshot_for_viewer`): the players seated at that version, the table (its stake
    level: their buy-in range), the chat's lines with their authors (their mutes). The
    web processes keep one a table and version for every spectator (tables/snapshot_cache.py).
    """

    body: dict[str, Any]
    seated: frozenset[int]
    table: Table
    chat: list[tuple[int, ChatSent]]  # (author's user id, line as no one muted it)

    @property
    def version(self) -> int:
        return self.body["v"]

    @cached_property
    def text(self) -> str:
        """`body` as the JSON text sent, encoded once for every spectator sent it."""
        return json.dumps(self.body)


def table_snapshot_public(*, table: Table) -> PublicSnapshot:
    """The table as an anonymous spectator sees it now (read in one transaction's
    snapshot by the caller, as `table_snapshot`)."""
    return _public_snapshot(table=table, seats=table_seats(table=table))


def _public_snapshot(*, table: Table, seats: list[Seat]) -> PublicSnapshot:
    lines = _chat_lines(table=table, seats=seats)
    chat = [line.form_for(None) for _, line in lines]
    return PublicSnapshot(
        body=_snapshot_body(table=table, seats=seats, mine=None, user=None, chat=chat),
        seated=frozenset(s.player_id for s in seats),
        table=table,
        chat=lines,
    )


def snapshot_for_viewer(public: PublicSnapshot, *, user: User | None) -> dict[str, Any]:
    """The snapshot of a viewer without a seat at `public`'s version: the spectator's,
    with their buy-in range, their mutes (the lines of authors they muted shown so) and
    their auto top-up order; read now (none of it is the table's stream). An anonymous
    viewer's is the spectator's as it is."""
    if user is None or not user.is_authenticated:
        return public.body
    mutes = list(ChatMute.objects.filter(muter=user).select_related("muted"))
    muted = {m.muted_id for m in mutes}
    low, high = buy_in_range(table=public.table, user=user)
    return {
        **public.body,
        "buy_in": {"min": low, "max": high},
        "chat": [
            (replace(line, muted_by=[user.id]) if author in muted else line).form_for(user.id)
            for author, line in public.chat
        ],
        "muted": sorted(m.muted.username for m in mutes),
        "auto_top_up": auto_top_up_of(user=user),
    }


def _snapshot_body(
    *, table: Table, seats: list[Seat], mine: Seat | None, user: User | None, chat: list[dict]
) -> dict[str, Any]:
    """A snapshot as `mine` (None: a viewer without a seat) sees the table, `chat` its
    lines as they read them; a viewer without a seat's own part left as a spectator's."""
    hand = hand_in_progress(table=table)
    hand_view = None
    if hand is not None:
        state = HandState.from_dict(hand.state)
        # The viewer's seat shows its hole cards only if the viewer is the user who was
        # dealt them there (by user id: a screen name can be renamed and taken again).
        in_hand = (
            mine is not None
            and mine.number in state.seats
            and hand_dealt_to(hand=hand, seat=mine.number, user_id=mine.player_id)
        )
        viewer_seat = mine.number if in_hand else None
        hand_view = state.view(viewer_seat)
        if in_hand:
            hand_view["best_hand"] = best_hand_now(state, mine.number)
        if in_hand and not state.over and not state.asking_run_twice:
            # What the page offers: the actor's bet shortcuts, a waiting player's options.
            if state.actor == mine.number:
                hand_view["presets"] = bet_presets(state, state.legal_actions())
            waiting = {e["seat"]: e for e in advance_options(state)}.get(mine.number)
            if waiting is not None:
                hand_view["advance_options"] = {k: v for k, v in waiting.items() if k != "seat"}
        hand_view["id"] = hand.id
        hand_view["number"] = hand.number
        hand_view["turn"] = hand.turn_version
        hand_view["deadline"] = hand.turn_deadline.isoformat() if hand.turn_deadline else None
        hand_view["log"] = hand_log_for(hand=hand, seat=viewer_seat)
    return {
        "type": "snapshot",
        "v": table.event_seq,
        "table": table_public(table=table),
        "seats": seats_public(seats),
        "you": None
        if mine is None
        else {
            "seat": mine.number,
            "status": mine.status,
            "stack": mine.stack,
            "leaving": mine.leave_after_hand,
            "sitting_out_next": mine.sit_out_after_hand,
            "advance": mine.advance,
            "blind_options": _blind_options(table=table, seats=seats, seat=mine),
        },
        "hand": hand_view,
        # What this viewer may bring if they sit down (the no-ratholing rule included):
        # a viewer without a seat's (`snapshot_for_viewer`).
        "buy_in": None,
        "chat": chat,
        # The players this viewer muted (their chat reaches them as "muted" only).
        "muted": [],
        "auto_top_up": None,
    }


def _blind_options(*, table: Table, seats: list[Seat], seat: Seat) -> dict[str, Any] | None:
    """The straddle and overblind options open to this seat for the next hand."""
    # Imported here: the rules live with the table services, which import this module.
    from tables.services.blind_options import blind_options_of
    from tables.services.dealing import next_hand_outlook

    if not (table.stake_level.allow_straddle or table.stake_level.allow_overblind):
        return None  # the common case costs nothing
    in_hand = hand_in_progress(table=table) is not None
    outlook = next_hand_outlook(table=table, seats=seats, in_hand=in_hand)
    return blind_options_of(stake=table.stake_level, seat=seat, outlook=outlook)


def chat_sent(message: ChatMessage, *, readers: list[int] | None, muted_by: list[int]) -> ChatSent:
    """The `chat` message of a stored line (who may read it: see ChatSent)."""
    return ChatSent(
        id=message.id,
        seat=message.seat,
        player=message.author.username,
        text=message.text,
        at=message.created_at.isoformat(),
        readers=readers,
        muted_by=muted_by,
    )


def chat_muted(*, user: User | None) -> list[str]:
    if user is None or not user.is_authenticated:
        return []
    mutes = ChatMute.objects.filter(muter=user).select_related("muted")
    return sorted(m.muted.username for m in mutes)


def chat_recent(*, table: Table, seats: list[Seat], user: User | None) -> list[dict[str, Any]]:
    """The table's last lines of chat as this viewer may read them, oldest first. When
    the chat is kept from spectators, a line is read by the players seated now who were
    seated when it was written (as on the stream): sitting down must not uncover the
    lines written while one watched."""
    viewer = user.id if user is not None and user.is_authenticated else None
    lines = _chat_lines(table=table, seats=seats)
    if not lines:
        return []
    muted = set(ChatMute.objects.filter(muter_id=viewer).values_list("muted_id", flat=True))
    return [
        (replace(line, muted_by=[viewer]) if author in muted else line).form_for(viewer)
        for author, line in lines
    ]


def _chat_lines(*, table: Table, seats: list[Seat]) -> list[tuple[int, ChatSent]]:
    """The table's last lines of chat, oldest first, with their readers and as muted by
    no one, each with its author's user id."""
    lines = ChatMessage.objects.filter(table=table).select_related("author").order_by("-id")
    recent = list(lines[:CHAT_RECENT])[::-1]
    return [
        (
            line.author_id,
            chat_sent(
                line,
                readers=None
                if table.chat_for_spectators
                else [s.player_id for s in seats if s.sat_down_at <= line.created_at],
                muted_by=[],
            ),
        )
        for line in recent
    ]


def auto_top_up_of(*, user: User | None) -> dict[str, Any] | None:
    """The viewer's auto top-up order (None for an anonymous spectator)."""
    if user is None or not user.is_authenticated:
        return None
    settings = PlayerSettings.objects.filter(user=user).first()
    if settings is None:
        return {"mode": AutoTopUp.OFF, "big_blinds": None}
    below = settings.auto_top_up_below if settings.auto_top_up == AutoTopUp.BELOW else None
    return {"mode": settings.auto_top_up, "big_blinds": below}
