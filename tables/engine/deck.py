"""Shuffling and the deck commitment published before every hand (RULES.md section 9).

Every hand gets a fresh 52-card deck shuffled by Fisher-Yates with
``secrets.SystemRandom``. Before the first card is dealt the room publishes::

    deck_commitment = sha256((cards_str(deck) + salt_hex).encode("ascii")).hexdigest()

where ``cards_str(deck)`` is the 52 two-character card codes in deal order, concatenated
with no separator (``"As2c9h..."``; ranks ``23456789TJQKA``, suits ``cdhs``), and
``salt_hex`` is the hand's secret salt: 32 random bytes written as 64 lowercase hex
digits. After the hand the deck order and the salt are revealed in the hand history, so
an auditor recomputes the digest with any SHA-256 tool, for example::

    printf '%s%s' "$DECK_CODES" "$SALT_HEX" | sha256sum
"""

import hashlib
import hmac
import random
import secrets
from collections.abc import Sequence

from tables.engine.cards import FULL_DECK, cards_str


def shuffled_deck(rng: random.Random | None = None) -> list[int]:
    """Return the 52 card ids in a uniformly random order (Fisher-Yates).

    The generator defaults to a fresh ``secrets.SystemRandom()``; tests may pass a seeded
    ``random.Random`` to get a reproducible deck.
    """
    generator = rng if rng is not None else secrets.SystemRandom()
    deck = list(FULL_DECK)
    for i in range(len(deck) - 1, 0, -1):
        j = generator.randrange(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def new_salt() -> str:
    """Return a fresh secret salt: 32 random bytes as 64 lowercase hex digits."""
    return secrets.token_hex(32)


def deck_commitment(deck: Sequence[int], salt_hex: str) -> str:
    """Return the SHA-256 hex digest of the deck's card codes followed by the salt."""
    return hashlib.sha256((cards_str(deck) + salt_hex).encode("ascii")).hexdigest()


def verify_commitment(deck: Sequence[int], salt_hex: str, commitment: str) -> bool:
    """Tell whether ``commitment`` is the commitment of this deck and salt.

    The comparison takes constant time; a commitment that is not even text of the right
    form simply does not match.
    """
    expected = deck_commitment(deck, salt_hex).encode("ascii")
    return hmac.compare_digest(expected, commitment.encode("utf-8", "replace"))
