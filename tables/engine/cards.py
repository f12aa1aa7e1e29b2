"""Card encoding shared by the whole engine.

A card is a plain ``int`` from 0 to 51: ``card = rank * 4 + suit``, with ranks
``0='2' ... 12='A'`` and suits ``c=0, d=1, h=2, s=3``. These are the same ids as the
``phevaluator`` package uses, so evaluation needs no conversion. Text form is the usual
two characters, rank then suit: ``"As"``, ``"Td"``, ``"2c"``.
"""

from collections.abc import Iterable

RANKS = "23456789TJQKA"
SUITS = "cdhs"
FULL_DECK: tuple[int, ...] = tuple(range(52))

_CARD_NAMES: tuple[str, ...] = tuple(rank + suit for rank in RANKS for suit in SUITS)
_IDS_BY_NAME: dict[str, int] = {name: card for card, name in enumerate(_CARD_NAMES)}
# Every accepted spelling ("As", "as", "AS", "aS"): one dict look-up per card when parsing.
_IDS_ANY_CASE: dict[str, int] = {
    r + s: card
    for name, card in _IDS_BY_NAME.items()
    for r in {name[0], name[0].lower()}
    for s in (name[1], name[1].upper())
}


def parse_card(text: str) -> int:
    """Return the id of a card written as rank then suit, such as ``"As"`` or ``"Td"``.

    The rank letter may be upper or lower case, the suit letter too.

    >>> parse_card("As"), parse_card("2c"), parse_card("td")
    (51, 0, 33)
    """
    card = _IDS_ANY_CASE.get(text)
    if card is None:
        raise ValueError(
            f"invalid card {text!r}: expected a rank from {RANKS!r} followed by a suit "
            f"from {SUITS!r}, such as 'As' or 'Td'"
        )
    return card


def parse_cards(text: str) -> list[int]:
    """Return the ids of cards written together (``"AsKd"``) or spaced (``"As Kd"``).

    >>> parse_cards("AsKd 2c")
    [51, 45, 0]
    """
    compact = "".join(text.split())
    if len(compact) % 2:
        raise ValueError(f"invalid cards {text!r}: every card is two characters, like 'As'")
    ids = _IDS_ANY_CASE
    pairs = [compact[i : i + 2] for i in range(0, len(compact), 2)]
    try:
        return [ids[pair] for pair in pairs]
    except KeyError:
        return [parse_card(pair) for pair in pairs]  # raises the error naming the card


def card_str(card: int) -> str:
    """Return the two-character text of a card id.

    >>> card_str(51), card_str(0)
    ('As', '2c')
    """
    if not 0 <= card < 52:
        raise ValueError(f"invalid card id {card!r}: expected an int from 0 to 51")
    return _CARD_NAMES[card]


def cards_str(cards: Iterable[int]) -> str:
    """Return the texts of cards concatenated, such as ``"AsKd"``.

    >>> cards_str([51, 45])
    'AsKd'
    """
    return "".join(map(card_str, cards))


def rank_of(card: int) -> int:
    """Return the rank of a card id: 0 for a deuce up to 12 for an ace."""
    return card >> 2


def suit_of(card: int) -> int:
    """Return the suit of a card id: 0 clubs, 1 diamonds, 2 hearts, 3 spades."""
    return card & 3
