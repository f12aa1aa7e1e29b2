"""Pure-Python poker engine of the room: cards, decks, hand values, betting and pots.

Nothing in this package imports Django; it takes and returns plain ints and dataclasses.
"""
