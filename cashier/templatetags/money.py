"""`{{ cents|chips }}`: integer cents shown as chips, 123456 -> "1,234.56"."""

from django import template

register = template.Library()


@register.filter
def chips(cents: int | None) -> str:
    if cents is None:
        return ""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole:,}.{part:02d}"
