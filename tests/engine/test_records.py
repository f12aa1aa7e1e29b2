"""records: the engine's tuple records behave as frozen values; fast_init keeps dataclasses."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import ClassVar

import pytest

from tables.engine.actions import Action, ActionKind, LegalActions
from tables.engine.betting import Limits
from tables.engine.config import Structure
from tables.engine.events import (
    EVENT_TYPES,
    Acted,
    HandEnded,
    Mucked,
    SeatAmount,
    SeatInfo,
    UncalledReturned,
)
from tables.engine.pots import Pot
from tables.engine.records import Record, fast_init
from tables.engine.settle import HandResult
from tables.engine.state import SeatEntry


def test_positional_keyword_equality_hash_repr_and_frozenness() -> None:
    a = Acted(3, "raise", 200, 300, False)
    b = Acted(seat=3, action="raise", amount=200, street_total=300, all_in=False)
    assert a == b and hash(a) == hash(b)
    assert a == Acted.of((3, "raise", 200, 300, False))
    assert repr(a) == "Acted(seat=3, action='raise', amount=200, street_total=300, all_in=False)"
    assert a != Acted(3, "raise", 200, 300, True)
    assert (a.seat, a.action, a.amount, a.street_total, a.all_in) == (3, "raise", 200, 300, False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.amount = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.note = "x"  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        Acted(3, "raise", 200, 300)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Acted(3, "raise", 200, 300, False, seat=4)  # type: ignore[misc]


def test_equality_needs_the_same_record_type() -> None:
    # Plain tuples would call these equal: same values, different meanings.
    assert UncalledReturned(3, 100) != SeatAmount(3, 100)
    assert Mucked(3) != (3,)
    assert Pot(10, (1, 2)) != SeatInfo(10, (1, 2), 0)


def test_defaults_and_nested_records() -> None:
    limits = Limits(Structure.NL, 100, 100, 200, 100, 300, False)
    assert limits.multiplier == "1"
    ended = HandEnded((SeatAmount(1, 5),), 0, (), None, None, False)
    assert HandEnded.from_dict(ended.to_dict()) == ended
    assert Pot(10, (1, 2)) == Pot(amount=10, eligible=(1, 2))

    class Tagged(Record):
        __slots__ = ()
        kind: ClassVar[str] = "not a field"
        x: int
        y: int = 7

    assert Tagged.fields == ("x", "y")
    assert Tagged(1) == Tagged(x=1, y=7) and Tagged(1, 2).y == 2


def test_records_pickle_and_copy() -> None:
    a = Acted(3, "call", 50, 100, True)
    assert pickle.loads(pickle.dumps(a)) == a  # noqa: S301 - our own bytes
    assert copy.deepcopy(a) == a and copy.copy(a) is not None


def test_every_record_has_no_instance_dict() -> None:
    for cls in (*EVENT_TYPES.values(), SeatAmount, SeatInfo, Pot, HandResult, SeatEntry):
        assert issubclass(cls, Record)
        assert "__slots__" in vars(cls)
        built = cls.of(tuple(range(len(cls.fields))))
        assert type(built) is cls and not hasattr(built, "__dict__")
        assert built == cls(*range(len(cls.fields)))


def test_a_record_without_slots_or_with_misordered_defaults_is_refused() -> None:
    with pytest.raises(TypeError, match="__slots__"):

        class NoSlots(Record):
            x: int

    with pytest.raises(TypeError, match="without default"):

        class Misordered(Record):
            __slots__ = ()
            x: int = 0
            y: int


def test_fast_init_dataclasses_stay_frozen_slotted_dataclasses() -> None:
    for cls in (Limits, LegalActions, Action):
        assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
        assert "__slots__" in vars(cls)
    assert Action("fold", 3).kind is ActionKind.FOLD


def test_fast_init_refuses_classes_it_cannot_speed_up() -> None:
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
