"""Events and the engine's small values are frozen, slotted dataclasses (tables.engine.events)."""

import copy
import dataclasses
import pickle

import pytest

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
from tables.engine.settle import HandResult
from tables.engine.start import SeatEntry


def test_keyword_construction_equality_hash_repr_and_frozenness() -> None:
    a = Acted(seat=3, action="raise", amount=200, street_total=300, all_in=False)
    assert a == Acted(seat=3, action="raise", amount=200, street_total=300, all_in=False)
    assert hash(a) == hash(
        Acted(seat=3, action="raise", amount=200, street_total=300, all_in=False)
    )
    assert repr(a).startswith(
        "Acted(seat=3, action='raise', amount=200, street_total=300, all_in=False, stack=None"
    )
    assert a != dataclasses.replace(a, all_in=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.amount = 1  # type: ignore[misc]
    with pytest.raises((AttributeError, TypeError)):
        a.note = "x"  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        Acted(seat=3, action="raise", amount=200, street_total=300)  # type: ignore[call-arg]


def test_an_event_stored_before_its_results_were_added_still_loads() -> None:
    stored = {"type": "acted", "seat": 3, "action": "call", "amount": 200, "street_total": 200,
              "all_in": False}  # fmt: skip
    event = Acted.from_dict(stored)
    assert event.stack is None and event.pot_total is None
    assert Acted.from_dict(event.to_dict()) == event


def test_equality_needs_the_same_class() -> None:
    assert UncalledReturned(seat=3, amount=100) != SeatAmount(seat=3, amount=100)
    assert Mucked(seat=3) != (3,)


def test_json_round_trip_with_nested_values() -> None:
    ended = HandEnded(
        stacks=(SeatAmount(seat=1, amount=5),),
        rake=0,
        winners=(),
        scooped_by=None,
        next_kill=None,
        chopped=False,
    )
    assert ended.to_dict()["stacks"] == [{"seat": 1, "amount": 5}]
    assert HandEnded.from_dict(ended.to_dict()) == ended


def test_pickle_and_copy() -> None:
    a = Acted(seat=3, action="call", amount=50, street_total=100, all_in=True)
    assert pickle.loads(pickle.dumps(a)) == a  # noqa: S301 - our own bytes
    assert copy.deepcopy(a) == a


def test_every_value_is_a_frozen_slotted_dataclass() -> None:
    for cls in (*EVENT_TYPES.values(), SeatAmount, SeatInfo, Pot, HandResult, SeatEntry):
        assert dataclasses.is_dataclass(cls) and "__slots__" in vars(cls)
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
