"""records.fast_init: the engine's frozen records keep every dataclass behaviour."""

from __future__ import annotations

import dataclasses

import pytest

from tables.engine.actions import LegalActions
from tables.engine.betting import Limits
from tables.engine.config import Structure
from tables.engine.events import EVENT_TYPES, Acted, HandEnded, SeatAmount
from tables.engine.pots import Pot
from tables.engine.records import fast_init
from tables.engine.settle import HandResult


def test_positional_keyword_equality_hash_repr_and_frozenness() -> None:
    a = Acted(3, "raise", 200, 300, False)
    b = Acted(seat=3, action="raise", amount=200, street_total=300, all_in=False)
    assert a == b and hash(a) == hash(b)
    assert repr(a) == "Acted(seat=3, action='raise', amount=200, street_total=300, all_in=False)"
    assert a != Acted(3, "raise", 200, 300, True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.amount = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        Acted(3, "raise", 200, 300)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Acted(3, "raise", 200, 300, False, seat=4)  # type: ignore[misc]


def test_defaults_and_nested_records() -> None:
    limits = Limits(Structure.NL, 100, 100, 200, 100, 300, False)
    assert limits.multiplier == "1"
    ended = HandEnded((SeatAmount(1, 5),), 0, (), None, None, False)
    assert HandEnded.from_dict(ended.to_dict()) == ended
    assert Pot(10, (1, 2)) == Pot(amount=10, eligible=(1, 2))


def test_every_fast_record_is_still_a_frozen_slotted_dataclass() -> None:
    for cls in (*EVENT_TYPES.values(), SeatAmount, Pot, Limits, LegalActions, HandResult):
        assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
        assert "__slots__" in vars(cls)


def test_refuses_classes_it_cannot_speed_up() -> None:
    @dataclasses.dataclass
    class Plain:
        x: int

    with pytest.raises(TypeError, match="not a frozen dataclass"):
        fast_init(Plain)

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        x: int

    with pytest.raises(TypeError, match="no slot"):
        fast_init(NoSlots)


def test_post_init_still_runs() -> None:
    @fast_init
    @dataclasses.dataclass(frozen=True, slots=True)
    class Doubled:
        x: int
        y: int = 0

        def __post_init__(self) -> None:
            object.__setattr__(self, "y", 2 * self.x)

    assert Doubled(4).y == 8 and Doubled(x=1, y=5) == Doubled(1)
