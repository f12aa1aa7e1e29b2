"""Cheap immutable records for what the engine builds on every hand.

A hand builds some fifty small records: its events, their seat and pot entries, the pots
and the result. They are values (compared, stored, turned into JSON, never changed), and
building them was a fifth of the cost of playing a hand when they were frozen
dataclasses, whose ``__init__`` stores each field through the generic attribute
machinery.

:class:`Record` is a tuple with named fields, like :func:`collections.namedtuple`, with
the differences a record of the engine needs:

* **Declared like a dataclass.** Fields are the class annotations, in order, after the
  base class's; a class attribute gives a default; ``ClassVar`` annotations are not
  fields. Every subclass declares ``__slots__ = ()`` (no per-instance dict).
* **Two constructors.** ``Acted(3, "raise", 200, 300, False)`` (keywords and defaults
  allowed) for readable code and tests, and ``Acted.of((3, "raise", 200, 300, False))``,
  which takes the values in field order as one tuple and stores them without a Python
  call: the hot paths of :mod:`tables.engine.state` use it.
* **Typed equality.** Two records are equal when they have the same class and the same
  values (plain tuples compare by value only, so a ``Mucked(3)`` would equal any
  one-field record of seat 3).
* **Frozen.** Assigning to a field raises :class:`dataclasses.FrozenInstanceError`, as
  for a frozen dataclass.

:func:`fast_init` keeps the few engine dataclasses that are built less often (limits,
actions, legal actions) cheaper to build than the ``__init__`` dataclasses writes.
"""

from __future__ import annotations

from dataclasses import MISSING, FrozenInstanceError, fields, is_dataclass
from operator import itemgetter
from types import MethodType
from typing import Any, ClassVar, TypeVar

T = TypeVar("T", bound=type)


class Record(tuple):
    """Base of the engine's records (see the module docstring)."""

    __slots__ = ()
    #: The field names, in order.
    fields: ClassVar[tuple[str, ...]] = ()
    #: The defaults of the trailing fields that have one.
    defaults: ClassVar[dict[str, Any]] = {}

    #: ``cls.of(values)``: a record from its values in field order, without checks.
    of = classmethod(tuple.__new__)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__slots__" not in vars(cls):
            raise TypeError(f"{cls.__name__} must declare __slots__ = ()")
        names = list(cls.fields)
        defaults = dict(cls.defaults)
        for name, annotation in vars(cls).get("__annotations__", {}).items():
            if "ClassVar" in str(annotation):
                continue
            if name in vars(cls):
                defaults[name] = vars(cls)[name]
            elif defaults:
                raise TypeError(f"{cls.__name__}.{name}: a field without default after one with")
            names.append(name)
        for k, name in enumerate(names):
            setattr(cls, name, property(itemgetter(k), doc=f"Field {k}: {name}."))
        cls.fields = tuple(names)
        cls.defaults = defaults
        cls.__new__ = _make_new(cls, names, defaults)  # type: ignore[method-assign]
        cls.__match_args__ = tuple(names)
        # ``of`` bound to this class once: a classmethod binds it on every call, which
        # costs a quarter of building the record.
        cls.of = MethodType(tuple.__new__, cls)  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        values = ", ".join(
            f"{name}={value!r}" for name, value in zip(self.fields, self, strict=True)
        )
        return f"{type(self).__name__}({values})"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __getnewargs__(self) -> tuple[Any, ...]:
        # pickle and copy call __new__ with these: the values in field order.
        return tuple(self)


def _make_new(cls: type, names: list[str], defaults: dict[str, Any]) -> Any:
    """``__new__`` with the fields as parameters, written out as namedtuple does."""
    namespace: dict[str, Any] = {"_tuple_new": tuple.__new__}
    params = []
    for name in names:
        if name in defaults:
            namespace[f"_default_{name}"] = defaults[name]
            params.append(f"{name}=_default_{name}")
        else:
            params.append(name)
    values = "".join(f"{name}, " for name in names)
    source = f"def __new__(_cls, {', '.join(params)}):\n    return _tuple_new(_cls, ({values}))\n"
    exec(source, namespace)  # noqa: S102 - our own source text, as namedtuple builds __new__
    new = namespace["__new__"]
    new.__qualname__ = f"{cls.__qualname__}.__new__"
    new.__module__ = cls.__module__
    return new


def fast_init(cls: T) -> T:
    """Replace the generated ``__init__`` of frozen, slotted dataclass ``cls``; return it.

    The replacement has the same signature (names, order and defaults) and stores each
    field through its slot's descriptor directly, at half the cost of dataclasses' own
    ``object.__setattr__`` calls. Everything else stays a frozen dataclass.
    """
    params = getattr(cls, "__dataclass_params__", None)
    if not is_dataclass(cls) or params is None or not params.frozen:
        raise TypeError(f"{cls.__name__} is not a frozen dataclass")
    namespace: dict[str, Any] = {}
    signature: list[str] = []
    body: list[str] = []
    for f in fields(cls):
        if not f.init or f.kw_only or f.default_factory is not MISSING:
            raise TypeError(f"{cls.__name__}.{f.name}: only plain fields are supported")
        descriptor = next(
            (vars(klass)[f.name] for klass in cls.__mro__ if f.name in vars(klass)), None
        )
        if descriptor is None or not hasattr(descriptor, "__set__"):
            raise TypeError(f"{cls.__name__} has no slot for {f.name}")
        namespace[f"_set_{f.name}"] = descriptor.__set__
        if f.default is MISSING:
            signature.append(f.name)
        else:
            namespace[f"_default_{f.name}"] = f.default
            signature.append(f"{f.name}=_default_{f.name}")
        body.append(f"    _set_{f.name}(self, {f.name})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    source = f"def __init__(self, {', '.join(signature)}):\n" + "\n".join(body or ["    pass"])
    exec(source, namespace)  # noqa: S102 - our own source text, as dataclasses builds __init__
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__init__ = init  # type: ignore[misc]
    return cls
