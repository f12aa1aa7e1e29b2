"""A finished hand in the PokerStars hand-history text that tracking software imports.

The layout is PokerStars' cash-game history::

    PokerStars Hand #1234: Omaha Pot Limit ($0.50/$1 USD) - 2026/11/29 20:00:00 ET
    Table 'Aurora' 9-max Seat #3 is the button
    Seat 1: alice ($100 in chips)
    alice: posts small blind $0.50
    *** HOLE CARDS ***
    Dealt to alice [Ah Kd Qs Jc]
    bob: raises $2 to $3
    *** FLOP *** [Jc 3d 5c]
    *** SHOW DOWN ***
    alice: shows [Ah Kd Qs Jc] (a straight, Ace high)
    alice collected $10 from pot
    *** SUMMARY ***
    Total pot $10.50 | Rake $0.50
    Board [Jc 3d 5c Th 9s]
    Seat 1: alice (small blind) showed [Ah Kd Qs Jc] and won ($10) with a straight, Ace high

Amounts are dollars here and only here (the room's cents / 100: ``$1``, ``$0.50``); the
time is Eastern Time as PokerStars writes it. Limit and spread-limit games are both
"Limit" (PokerStars has no spread limit); their header shows the small and big bet,
the other games the blinds. "Dealt to" is the reader's own cards, or everyone's for an
auditor; a mucked hand shows its cards in the summary only to its owner and auditors. Rules
PokerStars lacks use plain lines in the same style: ``posts straddle``, ``posts kill
blind``, ``posts overblind``, ``has timed out``, ``is all-in protected``, ``takes back``
(a chop), ``agrees to run it twice`` / ``refuses to run it twice``.

A hand run twice is written as PokerStars writes one: ``*** FIRST FLOP ***`` ...
``*** SECOND RIVER ***`` (the second run's lines repeat the cards both runs share), then
``*** FIRST SHOW DOWN ***`` and ``*** SECOND SHOW DOWN ***`` each with its hands and what
was collected on that board, and in the summary ``Hand was run twice``, ``FIRST Board``
and ``SECOND Board``.
"""

import datetime
from functools import partial
from zoneinfo import ZoneInfo

from cashier.money import dollars as format_dollars
from tables.engine.cards import card_str
from tables.engine.events import (
    Acted,
    Chopped,
    DealtBoard,
    HoleCards,
    Mucked,
    Posted,
    Protected,
    RunTwiceAnswered,
    RunTwiceDecided,
    Shown,
    TimedOut,
    UncalledReturned,
    Won,
)
from tables.formats import HandRecord

EASTERN = ZoneInfo("America/New_York")
GAME_NAMES = {"holdem": "Hold'em", "omaha": "Omaha", "omaha8": "Omaha Hi/Lo"}
LIMIT_NAMES = {"FL": "Limit", "SL": "Limit", "PL": "Pot Limit", "NL": "No Limit"}
POST_WORDS = {
    "ante": "posts the ante",
    "small_blind": "posts small blind",
    "big_blind": "posts big blind",
    "newcomer_big_blind": "posts big blind",
    "straddle": "posts straddle",
    "kill_blind": "posts kill blind",
    "overblind": "posts overblind",
}
STREET_TITLES = {"flop": "Flop", "turn": "Turn", "river": "River"}
RUN_WORDS = {1: "FIRST", 2: "SECOND"}


# PokerStars writes "$1", "$0.50", "$2000": whole amounts bare, no thousands commas.
dollars = partial(format_dollars, compact=True, grouped=False)


def eastern_time(when: datetime.datetime) -> str:
    """``2026/11/29 20:00:00 ET`` (the hour is not zero-padded, as PokerStars writes it)."""
    local = when.astimezone(EASTERN)
    return f"{local:%Y/%m/%d} {local.hour}:{local:%M:%S} ET"


def _cards(cards: tuple[int, ...] | list[int]) -> str:
    return "[" + " ".join(card_str(c) for c in cards) + "]"


class _Writer:
    """Walks the events once, keeping what the summary needs."""

    def __init__(self, record: HandRecord) -> None:
        self.record = record
        self.lines: list[str] = []
        self.street = "preflop"
        self.board: list[int] = []
        self.committed: dict[int, int] = {}
        self.to_match = 0
        self.put_in: set[int] = set()
        self.folded: dict[int, str] = {}
        self.shown: dict[int, Shown] = {}
        self.mucked: set[int] = set()
        self.hole_cards_started = False
        self.showdown_started = False
        # Run twice: the second run's board (it starts as the cards both runs share) and
        # each run's showdown lines, written once both are known (the engine shows both
        # runs' hands before it awards any pot).
        self.second_board: list[int] | None = None
        self.run_lines: dict[int, list[str]] = {1: [], 2: []}
        self.pot_count = len(record.state.result.pots) if record.state.result else 0

    def name(self, seat: int) -> str:
        return self.record.player(seat)

    def header(self) -> None:
        record, state = self.record, self.record.state
        config = state.config
        if config.structure.is_limit:
            low, high = state.limits.small_bet, state.limits.big_bet
        else:
            low, high = config.small_blind, config.big_blind
        game = f"{GAME_NAMES[str(config.game)]} {LIMIT_NAMES[str(config.structure)]}"
        self.lines.append(
            f"PokerStars Hand #{record.hand_id}: {game} ({dollars(low)}/{dollars(high)} "
            f"{record.currency}) - {eastern_time(record.started_at)}"
        )
        self.lines.append(
            f"Table '{record.table_name}' {record.seat_count}-max "
            f"Seat #{state.button} is the button"
        )
        for seat, stack in zip(state.seats, state.starting_stacks, strict=True):
            self.lines.append(f"Seat {seat}: {self.name(seat)} ({dollars(stack)} in chips)")

    def event(self, e: object) -> None:
        if isinstance(e, Posted):
            self.posted(e)
        elif isinstance(e, HoleCards):
            if not self.hole_cards_started:
                self.lines.append("*** HOLE CARDS ***")
                self.hole_cards_started = True
            cards = self.record.dealt_cards(e.seat)
            if cards is not None:
                self.lines.append(f"Dealt to {self.name(e.seat)} {_cards(cards)}")
        elif isinstance(e, Acted):
            self.acted(e)
        elif isinstance(e, TimedOut):
            self.lines.append(f"{self.name(e.seat)} has timed out")
        elif isinstance(e, Protected):
            self.lines.append(
                f"{self.name(e.seat)} is all-in protected ({dollars(e.amount_in)} in the pot)"
            )
        elif isinstance(e, UncalledReturned):
            self.lines.append(f"Uncalled bet ({dollars(e.amount)}) returned to {self.name(e.seat)}")
        elif isinstance(e, DealtBoard):
            self.dealt_board(e)
        elif isinstance(e, Shown | Mucked):
            self.showdown(e)
        elif isinstance(e, Won):
            self.out(e.run).append(
                f"{self.name(e.seat)} collected {dollars(e.amount)} from {self.pot(e)}"
            )
        elif isinstance(e, RunTwiceAnswered):
            word = "agrees" if e.agree else "refuses"
            timed_out = " (timed out)" if e.timed_out else ""
            self.lines.append(f"{self.name(e.seat)}: {word} to run it twice{timed_out}")
        elif isinstance(e, RunTwiceDecided) and e.runs == 2:
            self.second_board = list(self.board)
        elif isinstance(e, Chopped):
            for returned in e.returned:
                self.lines.append(
                    f"{self.name(returned.seat)} takes back {dollars(returned.amount)} (chop)"
                )

    def posted(self, e: Posted) -> None:
        all_in = " and is all-in" if e.all_in else ""
        self.lines.append(f"{self.name(e.seat)}: {POST_WORDS[e.kind]} {dollars(e.amount)}{all_in}")
        self.put_in.add(e.seat)
        if e.kind != "ante":
            self.committed[e.seat] = self.committed.get(e.seat, 0) + e.amount
            self.to_match = max(self.to_match, self.committed[e.seat])

    def acted(self, e: Acted) -> None:
        name = self.name(e.seat)
        all_in = " and is all-in" if e.all_in else ""
        if e.action == "fold":
            self.lines.append(f"{name}: folds")
            self.folded[e.seat] = self.street
        elif e.action == "check":
            self.lines.append(f"{name}: checks")
        elif e.action == "call":
            self.lines.append(f"{name}: calls {dollars(e.amount)}{all_in}")
        elif e.action == "bet":
            self.lines.append(f"{name}: bets {dollars(e.amount)}{all_in}")
        else:
            by = e.street_total - self.to_match
            self.lines.append(f"{name}: raises {dollars(by)} to {dollars(e.street_total)}{all_in}")
        if e.amount:
            self.put_in.add(e.seat)
        self.committed[e.seat] = e.street_total
        self.to_match = max(self.to_match, e.street_total)

    def out(self, run: int) -> list[str]:
        """Where a showdown line of ``run`` goes: the text, or that run's section."""
        return self.lines if self.second_board is None else self.run_lines[run]

    def dealt_board(self, e: DealtBoard) -> None:
        board = self.board if e.run == 1 or self.second_board is None else self.second_board
        before = list(board)
        board.extend(e.cards)
        self.street = e.street
        self.committed = {}
        self.to_match = 0
        run = f"{RUN_WORDS[e.run]} " if self.second_board is not None else ""
        title = f"*** {run}{e.street.upper()} ***"
        if before:
            self.lines.append(f"{title} {_cards(before)} {_cards(e.cards)}")
        else:
            self.lines.append(f"{title} {_cards(e.cards)}")

    def showdown(self, e: Shown | Mucked) -> None:
        run = e.run if isinstance(e, Shown) else 1
        lines = self.out(run)
        if self.second_board is not None:
            if not lines:
                lines.append(f"*** {RUN_WORDS[run]} SHOW DOWN ***")
        elif not self.showdown_started:
            lines.append("*** SHOW DOWN ***")
            self.showdown_started = True
        name = self.name(e.seat)
        if isinstance(e, Shown):
            if run == 1:
                self.shown[e.seat] = e
            lines.append(f"{name}: shows {_cards(e.cards)} ({self.description(e)})")
        else:
            self.mucked.add(e.seat)
            lines.append(f"{name}: mucks hand")

    def description(self, shown: Shown) -> str:
        """The hand's words; Hi-Lo as PokerStars writes them (``HI: ...; LO: ...``)."""
        if not self.record.state.config.game.hi_lo:
            return shown.high
        low = "" if shown.low is None else f"; LO: {shown.low}"
        return f"HI: {shown.high}{low}"

    def pot(self, e: Won) -> str:
        if self.pot_count <= 1:
            return "pot"
        return "main pot" if e.pot == 0 else f"side pot-{e.pot}"

    def summary(self) -> None:
        state = self.record.state
        result = state.result
        if result is None:
            raise ValueError("only a finished hand has a summary")
        for run in (1, 2):
            self.lines.extend(self.run_lines[run])
        self.lines.append("*** SUMMARY ***")
        total = sum(p.amount for p in result.pots)
        pots = ""
        if len(result.pots) > 1:
            parts = [f"Main pot {dollars(result.pots[0].amount)}."]
            parts += [f"Side pot-{k} {dollars(p.amount)}." for k, p in enumerate(result.pots) if k]
            pots = " " + " ".join(parts)
        self.lines.append(f"Total pot {dollars(total)}{pots} | Rake {dollars(result.rake)}")
        if self.second_board is not None:
            self.lines.append("Hand was run twice")
            self.lines.append(f"FIRST Board {_cards(self.board)}")
            self.lines.append(f"SECOND Board {_cards(self.second_board)}")
        elif self.board:
            self.lines.append(f"Board {_cards(self.board)}")
        for i, seat in enumerate(state.seats):
            self.lines.append(f"Seat {seat}: {self.name(seat)}{self.position(i)} {self.fate(i)}")

    def position(self, i: int) -> str:
        state = self.record.state
        marks = []
        if state.seats[i] == state.button:
            marks.append("(button)")
        if i == state.small_blind_index:
            marks.append("(small blind)")
        elif i == state.big_blind_index:
            marks.append("(big blind)")
        return "".join(f" {mark}" for mark in marks)

    def fate(self, i: int) -> str:
        state = self.record.state
        seat = state.seats[i]
        won = state.result.winnings[i] if state.result else 0
        if seat in self.folded:
            street = self.folded[seat]
            where = "before Flop" if street == "preflop" else f"on the {STREET_TITLES[street]}"
            bet = "" if seat in self.put_in else " (didn't bet)"
            return f"folded {where}{bet}"
        if seat in self.shown:
            shown = self.shown[seat]
            if won:
                return (
                    f"showed {_cards(shown.cards)} and won ({dollars(won)}) "
                    f"with {self.description(shown)}"
                )
            return f"showed {_cards(shown.cards)} and lost with {self.description(shown)}"
        if seat in self.mucked:
            cards = self.record.known_cards(seat)
            return "mucked" if cards is None else f"mucked {_cards(cards)}"
        if won:
            return f"collected ({dollars(won)})"
        return "did not show"


def hand_to_pokerstars(record: HandRecord) -> str:
    """The PokerStars text of a finished hand, as ``record``'s reader may see it."""
    writer = _Writer(record)
    writer.header()
    for event in record.events:
        writer.event(event)
    writer.summary()
    return "\n".join(writer.lines) + "\n"
