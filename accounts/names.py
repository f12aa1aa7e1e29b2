"""Screen names that look alike: the skeleton two confusable names share.

A player must not be able to sign up as `alice` spelt with a Cyrillic a (U+0430) beside
`alice`, nor as `ALICE`, `a1ice` or `bob` spelt `b0b`. Each name is reduced to a
*skeleton*, and two names are confusable exactly when their skeletons are equal.
`User.name_skeleton` keeps each user's under a unique constraint, so the database
refuses a look-alike even when two sign-ups race.

The skeleton follows Unicode's UTS #39 ("Security Mechanisms", §4 skeleton), made
insensitive to case because screen names already are (`accounts_user_username_ci_unique`):

1. NFKC, as Django normalizes every username (full-width and mathematical letters
   become plain ones);
2. case-fold, decompose (NFD), replace every character by the prototype of its class in
   Unicode's confusables table (Cyrillic a -> `a`, `0` -> `O`, `1` -> `l`, `m` -> `rn`),
   decompose again; repeat until nothing changes (a prototype may be an upper-case
   letter, which the next round folds: `b0b` -> `bOb` -> `bob`).

The table is Unicode's `confusables.txt` as the `confusable-homoglyphs` package ships it
(pinned in requirements.txt; its maintainers regenerate it for new Unicode versions).
That package stores the table as a symmetric graph, every source beside its prototype
and every prototype beside its sources (right-to-left ones wrapped in direction marks),
so `_prototype` reads the direction back: in UTS #39 a prototype is never itself a
source, so each class is a star around its prototype.

Known limit: folding case first means a capital `I` (confusable with `l` only in upper
case) folds to `i`, so `aIice` is not refused beside `alice`. Refusing it too would need
`i` and `l` in one class (case-folding makes `I` ~ `i`), which would refuse `bill`
beside `bili`. The case-insensitive uniqueness and the Cyrillic, Greek, digit and
full-width look-alikes are covered.
"""

import functools
import unicodedata

from confusable_homoglyphs import confusables

# Direction marks the package keeps around right-to-left characters in its table.
_MARKS = "\u200e\u200f"
_MAX_ROUNDS = 5


@functools.cache
def _graph() -> dict[str, frozenset[str]]:
    """The package's table, each entry and partner with its direction marks taken off."""
    graph: dict[str, set[str]] = {}
    for key, glyphs in confusables.confusables_data.items():
        partners = graph.setdefault(key.strip(_MARKS), set())
        partners.update(glyph["c"].strip(_MARKS) for glyph in glyphs)
    return {key: frozenset(partners) for key, partners in graph.items()}


def _neighbours(char: str) -> frozenset[str]:
    """The characters (or strings) the table pairs with ``char``, either way."""
    return _graph().get(char, frozenset())


@functools.cache
def _prototype(char: str) -> str:
    """The prototype of ``char``'s confusable class (``char`` itself if it is one)."""
    neighbours = _neighbours(char)
    if len(neighbours) != 1:
        # Unpaired, or a prototype beside its several sources.
        return char
    (other,) = neighbours
    if len(other) > 1 or len(_neighbours(other)) > 1:
        # Sources are single characters: a longer partner, or a partner with other
        # sources around it, is the prototype.
        return other
    # A class of two single characters: either may be the prototype; the smaller code
    # point stands for both, so both map to the same skeleton.
    return min(char, other)


def name_skeleton(name: str) -> str:
    """The skeleton of a screen name: equal for names a reader could take for each other.

    >>> name_skeleton("alice") == name_skeleton("\u0430lice") == name_skeleton("ALICE")
    True
    >>> name_skeleton("b0b") == name_skeleton("bob")
    True
    >>> name_skeleton("alice") == name_skeleton("alicia")
    False
    """
    text = unicodedata.normalize("NFKC", name)
    for _ in range(_MAX_ROUNDS):
        folded = unicodedata.normalize("NFD", text.casefold())
        mapped = unicodedata.normalize("NFD", "".join(_prototype(c) for c in folded))
        if mapped == text:
            break
        text = mapped
    return text
