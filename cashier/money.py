"""Integer cents written for people: 123456 -> "1,234.56", or "$1,234.56".

One formatter for every page, message and export; the variants differ only in what
their readers expect (the lobby's "$2/$4", PokerStars' ungrouped "$2000").
"""


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
