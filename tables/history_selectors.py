"""Finished hands as each user may read them: the hand-history API's queries.

Visibility (RULES.md §9; README "Hand-history API"):

- Only finished hands exist for this API: a hand in progress is "not found" for
  everyone, auditors included (they see everything, but after the hand).
- Auditors (group ``auditor``) read every hand whole: every hole card, the deck and salt.
- A player reads the hands they were dealt into (found by their user id in the hand's
  `HandPlayer` rows, never by screen name: a name can be renamed and taken again), and
  in them their own hole cards and the cards shown at showdown. The deck and the salt
  would reveal every other hand, so players get only the commitment (and the server's
  `/verify` answer). Any other hand is "not found" for them.

Which events a player sees is decided by the engine's own rule
(`tables.engine.events.Event.visible_to`), the one the live table stream uses.
"""

import datetime
from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet
from django.http import Http404

from accounts.models import User
from accounts.selectors import user_is_auditor
from tables.engine.deck import verify_commitment
from tables.engine.events import EVENT_TYPES, Event, event_from_dict
from tables.engine.state import HandState
from tables.formats import HandRecord
from tables.models import Hand, HandEvent, HandPlayer, HandStatus

# What the room's integer cents are hundredths of (the PokerStars and OHH formats say it).
HISTORY_CURRENCY = "USD"
HISTORY_SITE_NAME = "Poker Room"
COMMITMENT_ALGORITHM = "sha256(card codes + salt hex)"


@dataclass(frozen=True)
class HandFilters:
    """The filters of the hand list and export (all optional)."""

    table: int | None = None
    stake_level: int | None = None
    game: str | None = None
    player: str | None = None  # the screen name a player had in the hand
    player_id: int | None = None  # a player's user id: who they are, whatever their name
    since: datetime.datetime | None = None
    until: datetime.datetime | None = None


@dataclass(frozen=True)
class HandAccess:
    """One finished hand as one user may read it.

    ``seat`` is the user's seat in the hand (None when they were not dealt in: an
    auditor); ``auditor`` whether they read it whole.
    """

    hand: Hand
    state: HandState
    rows: tuple[HandEvent, ...]
    seat: int | None
    auditor: bool

    def row_visible(self, row: HandEvent) -> bool:
        """Whether this user may see one logged event (unknown types: auditors only)."""
        if self.auditor:
            return True
        if row.type not in EVENT_TYPES:
            return False
        return event_from_dict(row.data).visible_to(self.seat)

    def visible_rows(self) -> list[HandEvent]:
        return [row for row in self.rows if self.row_visible(row)]

    def cards_known(self, seat: int) -> bool:
        """Whether this user may see the hole cards of ``seat``."""
        return self.auditor or seat == self.seat or self.state.shown[self.state.index_of(seat)]

    def record(self) -> HandRecord:
        """The hand for the text formatters, with this user's view of the cards."""
        return HandRecord(
            state=self.state,
            events=tuple(self.engine_events()),
            hand_id=self.hand.id,
            table_name=self.hand.table.name,
            seat_count=self.hand.table.seats,
            started_at=self.hand.started_at,
            currency=HISTORY_CURRENCY,
            hero=self.seat,
            all_cards=self.auditor,
        )

    def engine_events(self) -> list[Event]:
        return [event_from_dict(row.data) for row in self.rows]


def hand_list(*, user: User, filters: HandFilters) -> QuerySet[Hand]:
    """The finished hands the user may read, newest first, filtered."""
    hands = Hand.objects.filter(status=HandStatus.FINISHED)
    if not user_is_auditor(user=user):
        hands = hands.filter(players__user=user)
    if filters.table is not None:
        hands = hands.filter(table_id=filters.table)
    if filters.stake_level is not None:
        hands = hands.filter(table__stake_level_id=filters.stake_level)
    if filters.game is not None:
        hands = hands.filter(state__config__game=filters.game)
    if filters.player is not None:
        hands = hands.filter(players__screen_name=filters.player)
    if filters.player_id is not None:
        hands = hands.filter(players__user_id=filters.player_id)
    if filters.since is not None:
        hands = hands.filter(started_at__gte=filters.since)
    if filters.until is not None:
        hands = hands.filter(started_at__lt=filters.until)
    # `players` (by seat: user id and screen name then) for the serializers' seat lists.
    return hands.select_related("table__stake_level").prefetch_related("players").order_by("-id")


def hand_access_get(*, user: User, hand_id: int) -> HandAccess:
    """The finished hand ``hand_id`` as the user may read it; Http404 if they may not."""
    hand = (
        Hand.objects.filter(pk=hand_id, status=HandStatus.FINISHED)
        .select_related("table__stake_level")
        .prefetch_related(Prefetch("events", queryset=HandEvent.objects.order_by("seq")), "players")
        .first()
    )
    auditor = user_is_auditor(user=user)
    access = None if hand is None else _access(hand=hand, user=user, auditor=auditor)
    if access is None:
        raise Http404("No such finished hand among those you may read.")
    return access


def hand_export_iter(*, user: User, filters: HandFilters, chunk: int = 100) -> Iterator[HandAccess]:
    """Every hand of the filtered list, oldest first, read in chunks of ``chunk`` hands
    with their events (for streaming exports)."""
    hands = (
        hand_list(user=user, filters=filters)
        .order_by("id")
        .prefetch_related(Prefetch("events", queryset=HandEvent.objects.order_by("seq")), "players")
    )
    auditor = user_is_auditor(user=user)
    for hand in hands.iterator(chunk_size=chunk):
        access = _access(hand=hand, user=user, auditor=auditor)
        if access is not None:
            yield access


def hand_commitment_check(*, access: HandAccess) -> dict[str, object]:
    """Recompute the hand's deck commitment from its revealed deck and salt."""
    hand = access.hand
    return {
        "commitment": hand.deck_commitment,
        "matches": verify_commitment(access.state.deck, hand.salt, hand.deck_commitment),
        "algorithm": COMMITMENT_ALGORITHM,
    }


def _access(*, hand: Hand, user: User, auditor: bool) -> HandAccess | None:
    state = HandState.from_dict(hand.state)
    # By user id (the callers prefetch `players`): the screen names in the state are
    # only what the players were called then.
    seat = next((row.seat for row in hand.players.all() if row.user_id == user.pk), None)
    if seat is None and not auditor:
        return None
    rows = tuple(hand.events.all())
    return HandAccess(hand=hand, state=state, rows=rows, seat=seat, auditor=auditor)


@dataclass(frozen=True)
class RecentHand:
    id: int
    number: int  # the table's own hand number, the one the hand history shows
    table: str
    game: str
    started_at: datetime.datetime
    net: int  # cents won (positive) or lost in the hand


def recent_hands_for(*, user: User, limit: int = 10) -> list[RecentHand]:
    """The player's last finished hands with what each won or lost them."""
    dealt = (
        HandPlayer.objects.filter(user_id=user.pk, hand__status=HandStatus.FINISHED)
        .select_related("hand__table")
        .order_by("-hand_id")[:limit]
    )
    recent = []
    for row in dealt:
        hand = row.hand
        state = hand.state
        i = state["seats"].index(row.seat)
        recent.append(
            RecentHand(
                id=hand.id,
                number=hand.number,
                table=hand.table.name,
                game=state["config"]["game"],
                started_at=hand.started_at,
                net=state["stacks"][i] - state["starting_stacks"][i],
            )
        )
    return recent
