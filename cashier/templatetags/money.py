"""`{{ cents|chips }}`: integer cents shown as chips, 123456 -> "1,234.56"."""

from django import template

from cashier.money import chips_text

register = template.Library()


@register.filter
def chips(cents: int | None) -> str:
    return "" if cents is None else chips_text(cents)
