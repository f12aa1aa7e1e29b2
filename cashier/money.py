"""Integer cents written for people: 123456 -> "1,234.56", or "$1,234.56"."""


def chips_text(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole:,}.{part:02d}"


def dollars(cents: int) -> str:
    text = chips_text(cents)
    return f"-${text[1:]}" if text.startswith("-") else f"${text}"
