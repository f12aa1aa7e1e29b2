"""Integer cents written for people: 123456 -> "1,234.56", or "$1,234.56"; and read back.

One formatter for every page, message and export; the variants differ only in what
their readers expect (the lobby's "$2/$4", PokerStars' ungrouped "$2000").

`chips_parse` reads what a player types into the cashier. Our players write 12.50 or,
in Spain and Italy, 12,50; so the one separator allowed is the decimal one, a point or
a comma, with at most two decimals. Thousands separators are refused, never guessed:
"1.234" is 1234 to a Spaniard and 1.234 to others, and "1,234.50" invites "1.234,50".
Digits are ASCII only (full-width or Arabic-Indic digits are refused, not converted).
"""

import re

_CHIPS_RE = re.compile(r"([0-9]{1,13})(?:[.,]([0-9]{1,2}))?")
_GROUPED_RE = re.compile(r"[0-9]*(?:[.,][0-9]*){2,}|[0-9]+[.,][0-9]{3,}")

CHIPS_FORMAT_MESSAGE = "Enter an amount like 25 or 12.50 (at most two decimals; 12,50 works too)."
CHIPS_GROUPED_MESSAGE = (
    "Write the amount without thousands separators and with at most two decimals: "
    "1234.50 or 1234,50, not 1,234.50 or 1.234,50."
)
CHIPS_DIGITS_MESSAGE = "Type the amount with the digits 0 to 9."


class ChipsTextInvalid(ValueError):
    """What a player typed is not an amount of chips; the message says why, for them."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def chips_parse(text: str) -> int:
    """The cents of an amount typed in chips: "12.50", "12,50" and "12,5" are 1250.

    Parsed as text, never through float or Decimal; the cashier services decide which
    amounts they accept (at least 1 cent, at most their maximum).
    """
    text = text.strip()
    if any(char.isdigit() and not char.isascii() for char in text):
        raise ChipsTextInvalid(CHIPS_DIGITS_MESSAGE, code="non_ascii_digits")
    match = _CHIPS_RE.fullmatch(text)
    if match is None:
        if _GROUPED_RE.fullmatch(text):
            raise ChipsTextInvalid(CHIPS_GROUPED_MESSAGE, code="ambiguous")
        raise ChipsTextInvalid(CHIPS_FORMAT_MESSAGE, code="invalid")
    whole, part = match.groups()
    return int(whole) * 100 + int((part or "").ljust(2, "0"))


def chips_text(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole:,}.{part:02d}"


def dollars(cents: int, *, compact: bool = False, grouped: bool = True) -> str:
    """ "$1,234.50"; `compact` drops ".00" from whole amounts, `grouped=False` the commas."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    units = f"{whole:,}" if grouped else str(whole)
    if compact and part == 0:
        return f"{sign}${units}"
    return f"{sign}${units}.{part:02d}"
