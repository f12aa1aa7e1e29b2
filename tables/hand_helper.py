"""The hand helper: what a player holds, named as the board changes, and the five cards
of each hand shown down.

`best_hand(game, hole, board)` names the best high hand (and, in Omaha hi-lo, the best
qualifying low) a player makes with the board so far, with its five cards. The table
sends each player theirs privately whenever board cards are dealt (`BestHandNote`, see
`TableCommand.hand_events`) and in their snapshot; at a showdown everyone gets the five
cards of every hand shown (`ShowdownHands`, on each board when it was run twice), so the
page can light up the winning ones.
Nothing here is new poker: the engine's evaluator decides, this only asks it.
"""

from collections.abc import Sequence
from typing import Any

from tables.engine.cards import card_str
from tables.engine.evaluator import (
    best_high_cards,
    best_low_cards,
    describe_high,
    describe_low,
    high_value,
    low_value,
)
from tables.engine.rounds import PlayerStatus
from tables.engine.state import HandState

# The board a street leaves behind: a hand is named from the flop on.
BOARD_AFTER = {"flop": 3, "turn": 4, "river": 5}


def best_hand(game: str, hole: Sequence[int], board: Sequence[int]) -> dict[str, Any] | None:
    """The best high (and low) hand of `hole` with `board` (None before the flop)."""
    if len(board) < 3:
        return None
    out: dict[str, Any] = {
        "high": describe_high(high_value(game, hole, board)),
        "high_cards": [card_str(c) for c in best_high_cards(game, hole, board)],
        "low": None,
        "low_cards": None,
    }
    if game == "omaha8":
        low = low_value(hole, board)
        cards = best_low_cards(hole, board)
        if low is not None and cards is not None:
            out["low"] = describe_low(low)
            out["low_cards"] = [card_str(c) for c in cards]
    return out


def best_hand_now(state: HandState, seat: int, *, cards: int = 5) -> dict[str, Any] | None:
    """The best hand of the player at `seat` with the first `cards` of the board, while
    they are still in the hand (None once they folded, or before the flop)."""
    index = state.index_of(seat)
    if state.status[index] not in (PlayerStatus.IN, PlayerStatus.ALL_IN, PlayerStatus.PROTECTED):
        return None
    return best_hand(str(state.config.game), state.hole[index], state.board[:cards])


def best_hands_after(state: HandState, street: str) -> dict[int, dict[str, Any]]:
    """Seat -> the best hand of each player still in, with the board as of `street`."""
    hands = {seat: best_hand_now(state, seat, cards=BOARD_AFTER[street]) for seat in state.seats}
    return {seat: hand for seat, hand in hands.items() if hand is not None}


def shown_hands(state: HandState, *, second: bool = False) -> list[dict[str, Any]]:
    """The five cards of every hand shown at the end of a hand (empty when none was),
    on the board, or (`second`) on the second run's board (empty unless run twice)."""
    game = str(state.config.game)
    board: Sequence[int] = state.board
    if second:
        agreement = state.run_twice
        if agreement is None or agreement.runs != 2:
            return []
        board = agreement.second_board
    return [
        {"seat": seat, **best}
        for index, seat in enumerate(state.seats)
        if state.shown[index] and (best := best_hand(game, state.hole[index], board)) is not None
    ]
