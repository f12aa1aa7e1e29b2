"""Run it twice: the agreement phase, and dealing the rest of the board once or twice.

A stake-level option (``TableConfig.run_it_twice``, off by default). When a betting round
closes before the river and nobody can bet any more (every player still in is all-in,
or all but one, who has matched), :func:`offered` says whether to ask; :func:`ask` puts
the hand in the agreement phase instead of running the board out: ``state.run_twice``
holds the seats asked and those that agreed, nobody is to act (``actor`` is None) and
the hand is not over.

Every player asked answers with ``Action.run_twice(seat, agree=...)``, in any order (not
turn-based). The first refusal, or a ``timeout`` (the table layer sends one for an
undecided seat when the agreement's deadline passes), runs the board once; when the last
one agrees, the rest of the board is dealt twice from the same deck: run 1 takes the next
cards, run 2 the cards after those (no burn cards, as the engine deals). Both runs share
the cards already on the board.

Settling (:func:`tables.engine.settle.showdown`): the rake is taken once from the whole
pot; then every pot (main and side pots) is split in two halves, the odd chip to the
first run, and each half is awarded on its own board by the usual rules (hi-lo halves,
odd chips clockwise from the button's left).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from tables.engine import errors, settle
from tables.engine.actions import Action, ActionKind
from tables.engine.betting import BOARD_CARDS, NEXT_STREET, Street
from tables.engine.cards import card_str
from tables.engine.events import (
    DealtBoard,
    Event,
    RunTwiceAnswered,
    RunTwiceAsked,
    RunTwiceDecided,
)
from tables.engine.pots import build_pots, clockwise_from_button

if TYPE_CHECKING:
    from tables.engine.hand_state import HandState

#: Cards on a complete board.
FULL_BOARD = 5


@dataclass(frozen=True, slots=True)
class RunTwice:
    """The agreement to run it twice: the seats ``asked`` (clockwise from the button's
    left), those that ``agreed`` so far, ``runs`` once decided (0 while asking, then 1
    or 2) and the second run's whole board (``second_board``, empty unless run twice)."""

    asked: tuple[int, ...]
    agreed: tuple[int, ...] = ()
    runs: int = 0
    second_board: tuple[int, ...] = ()

    @property
    def undecided(self) -> tuple[int, ...]:
        """The seats still to answer (none once decided)."""
        if self.runs:
            return ()
        return tuple(s for s in self.asked if s not in self.agreed)

    def view(self) -> dict[str, Any]:
        """What everyone may see of it (cards as codes)."""
        return {
            "asked": list(self.asked),
            "agreed": list(self.agreed),
            "undecided": list(self.undecided),
            "runs": self.runs,
            "second_board": [card_str(c) for c in self.second_board],
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form (cards as ints, as the state keeps them)."""
        return {
            "asked": list(self.asked),
            "agreed": list(self.agreed),
            "runs": self.runs,
            "second_board": list(self.second_board),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunTwice:
        """Inverse of :meth:`to_dict`."""
        return cls(
            asked=tuple(d["asked"]),
            agreed=tuple(d["agreed"]),
            runs=int(d["runs"]),
            second_board=tuple(d["second_board"]),
        )


def offered(st: HandState, live: list[bool]) -> bool:
    """Whether a run-out about to start is offered twice: the table plays it, the river
    is still to come and at least two players contest the pot."""
    return st.config.run_it_twice and st.street is not Street.RIVER and live.count(True) >= 2


def ask(st: HandState, live: list[bool], events: list[Event]) -> None:
    """Enter the agreement phase (the betting is over; the pots are collected)."""
    seats = [s for s, in_hand in zip(st.seats, live, strict=True) if in_hand]
    asked = tuple(clockwise_from_button(seats, st.button))
    st.run_twice = RunTwice(asked=asked)
    st.actor_index = None
    st.to_match = 0  # the betting is over: nothing is left to match
    events.append(RunTwiceAsked(seats=asked))


def verify_answer(st: HandState, action: Action) -> None:
    """Raise the precise IllegalAction if ``action`` is not an answer allowed now."""
    agreement = st.run_twice
    if agreement is None or agreement.runs:
        if action.kind is ActionKind.RUN_TWICE:
            raise errors.NoSuchAction("Nobody is being asked to run it twice.")
        return
    if action.kind not in (ActionKind.RUN_TWICE, ActionKind.TIMEOUT):
        raise errors.NotYourTurn("The players all-in are deciding whether to run it twice.")
    if action.seat not in agreement.undecided:
        if action.seat in agreement.agreed:
            raise errors.NoSuchAction("You have already agreed to run it twice.")
        raise errors.NotYourTurn("You are not asked whether to run it twice.")


def answer_in_place(st: HandState, action: Action) -> list[Event]:
    """Record the answer (a timeout refuses); run the board once on a refusal, twice when
    the last player asked agrees, and settle the hand. Returns the events."""
    agreement = st.run_twice
    if agreement is None or agreement.runs:
        raise errors.NoSuchAction("Nobody is being asked to run it twice.")
    verify_answer(st, action)
    agree = action.kind is ActionKind.RUN_TWICE and action.agree
    if agree:
        agreement = replace(agreement, agreed=(*agreement.agreed, action.seat))
    undecided = agreement.undecided if agree else ()
    events: list[Event] = [
        RunTwiceAnswered(
            seat=action.seat,
            agree=agree,
            timed_out=action.kind is ActionKind.TIMEOUT,
            undecided=undecided,
        )
    ]
    st.run_twice = agreement
    if undecided:
        return events
    runs = 2 if agree else 1
    events.append(RunTwiceDecided(runs=runs))
    common, street = len(st.board), st.street
    second: tuple[int, ...] = ()
    deal_rest(st, st.board, after=street, run=1, skip=0, events=events)
    if runs == 2:
        board = st.board[:common]
        skip = FULL_BOARD - common
        second = tuple(deal_rest(st, board, after=street, run=2, skip=skip, events=events))
    st.run_twice = replace(agreement, runs=runs, second_board=second)
    live = st.live()
    settle.showdown(st, events, build_pots(st.seats, st.contributed, live), live)
    return events


def deal_rest(
    st: HandState, board: list[int], *, after: Street, run: int, skip: int, events: list[Event]
) -> list[int]:
    """Deal ``board`` from the street ``after`` up to the river, from the deck after the
    hole cards, the cards on the board and ``skip`` more (those of an earlier run); a
    DealtBoard each street."""
    start = len(st.seats) * len(st.hole[0]) + len(board) + skip
    street = NEXT_STREET.get(after)
    while street is not None:
        count = BOARD_CARDS[street] - len(board)
        cards = st.deck[start : start + count]
        start += count
        board.extend(cards)
        events.append(DealtBoard(street=str(street), cards=cards, run=run))
        street = NEXT_STREET.get(street)
    st.street = Street.RIVER
    return board
