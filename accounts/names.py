"""Screen names that look alike: the skeletons two confusable names share.

A player must not be able to sign up as `alice` spelt with a Cyrillic a (U+0430) beside
`alice`, nor as `ALICE`, `a1ice`, `aIice` (a capital I for the l), `alicė` (a dot on the
e) or `bob` spelt `b0b`. Each name is reduced to two *skeletons*, and two names are
confusable when either of their skeletons is equal. `User.name_skeleton` and
`User.name_skeleton_cased` keep each user's under unique constraints, so the database
refuses a look-alike even when two sign-ups race.

Both follow Unicode's UTS #39 ("Security Mechanisms", §4 skeleton):

1. NFKC, as Django normalizes every username (full-width and mathematical letters
   become plain ones);
2. decompose (NFD), replace every character by the prototype of its class in Unicode's
   confusables table (Cyrillic a -> `a`, `0` -> `O`, `1` -> `l`, `I` -> `l`,
   `m` -> `rn`), decompose again; repeat until nothing changes;
3. drop the diacritics: the nonspacing marks of the Combining Diacritical Marks blocks
   (`_DIACRITICS`), which Latin, Greek and Cyrillic letters carry (accents, dots,
   cedillas, the strokes of `ł` and `ø` once the table has decomposed them).

They differ in case:

* `name_skeleton` folds case first, in every round (a prototype may be an upper-case
  letter, which the next round folds: `b0b` -> `bOb` -> `bob`): screen names are one
  name whatever their case (`accounts_user_username_ci_unique`), so `ALICE`, `Alice`
  and `a1ice` all meet `alice` here.
* `name_skeleton_cased` keeps case, as a reader sees the name: a capital `I` is an `l`
  there (the table's own mapping), so `aIice` meets `alice`. Folding case first cannot
  see that (`I` folds to `i`), and putting `i` and `l` in one class instead would refuse
  `bill` beside `bili`; kept apart, `bill` and `bili` differ in both skeletons, and so do
  `BILL` and `BILI` (`l`, `L` and `I` -> `l` are not folded together).

Dropping the diacritics is the choice of issue #46 (finding 12): a name that differs
from another only by a mark (a dot above or below, an accent) is too easily taken for
it at a table, where an impersonator plays for money. So `renée` and `renee` cannot both
be taken: whoever comes second picks another name. Script-specific marks outside those
blocks (Devanagari vowel signs, Hebrew and Arabic points) are letters' parts and stay.
A mark that does not compose with its letter is no part of a screen name at all: sign-up
refuses it (Django's username validator, `screen_name_possible`), and were one stored
anyway, its skeletons would still meet the bare name's.

The table is Unicode's `confusables.txt` as the `confusable-homoglyphs` package ships it
(pinned in requirements.txt; its maintainers regenerate it for new Unicode versions).
That package stores the table as a symmetric graph, every source beside its prototype
and every prototype beside its sources (right-to-left ones wrapped in direction marks),
so `_prototype` reads the direction back: in UTS #39 a prototype is never itself a
source, so each class is a star around its prototype.
"""

import functools
import re
import unicodedata

from confusable_homoglyphs import confusables
from django.contrib.auth.validators import UnicodeUsernameValidator

# Direction marks the package keeps around right-to-left characters in its table.
_MARKS = "\u200e\u200f"
_MAX_ROUNDS = 5
# The Combining Diacritical Marks blocks: basic, extended, supplement, for symbols, half
# marks (the marks step 3 above drops).
_DIACRITICS = (
    (0x0300, 0x036F),
    (0x1AB0, 0x1AFF),
    (0x1DC0, 0x1DFF),
    (0x20D0, 0x20FF),
    (0xFE20, 0xFE2F),
)
# What sign-up takes as a screen name: Django's `AbstractUser.username`, at most 150
# characters of the username validator's (letters, digits and `.@+-_`).
SCREEN_NAME_MAX = 150
_SCREEN_NAME = re.compile(UnicodeUsernameValidator.regex, UnicodeUsernameValidator.flags)


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


def screen_name_possible(name: str) -> bool:
    """Whether `name` could be somebody's screen name: the shape sign-up takes (no
    control, format or separator character, no lone mark or surrogate, not too long).
    Anything else names nobody, and need not be looked for."""
    return len(name) <= SCREEN_NAME_MAX and _SCREEN_NAME.match(name) is not None


def name_skeleton(name: str) -> str:
    """The case-folded skeleton of a screen name: equal for names a reader could take
    for each other, whatever their case.

    >>> name_skeleton("alice") == name_skeleton("\u0430lice") == name_skeleton("ALICE")
    True
    >>> name_skeleton("b0b") == name_skeleton("bob")
    True
    >>> name_skeleton("alic\u0117") == name_skeleton("alice")
    True
    >>> name_skeleton("alice") == name_skeleton("alicia")
    False
    """
    return _skeleton(name, fold=True)


def name_skeleton_cased(name: str) -> str:
    """The skeleton of a screen name as it is written, case kept (see above).

    >>> name_skeleton_cased("aIice") == name_skeleton_cased("alice")
    True
    >>> name_skeleton_cased("bill") == name_skeleton_cased("bili")
    False
    """
    return _skeleton(name, fold=False)


def _skeleton(name: str, *, fold: bool) -> str:
    text = unicodedata.normalize("NFKC", name)
    for _ in range(_MAX_ROUNDS):
        source = _without_diacritics(
            unicodedata.normalize("NFD", text.casefold() if fold else text)
        )
        mapped = unicodedata.normalize("NFD", "".join(_prototype(c) for c in source))
        if mapped == text:
            break
        text = mapped
    # A prototype may bring a mark of its own (`ł` -> `l` and a stroke).
    return _without_diacritics(text)


def _without_diacritics(text: str) -> str:
    return "".join(c for c in text if not _diacritic(c))


def _diacritic(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _DIACRITICS) and (
        unicodedata.category(char) == "Mn"
    )
