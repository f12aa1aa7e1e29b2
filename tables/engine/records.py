"""A cheaper ``__init__`` for the engine's frozen, slotted dataclasses (events, pots).

A hand builds some fifty frozen records (its events, their seat and pot entries, the
pots and the result). The ``__init__`` that :mod:`dataclasses` writes for a frozen class
stores every field with ``object.__setattr__``, which goes through the generic attribute
machinery and costs about as much as building the rest of the instance. :func:`fast_init`
replaces it with an ``__init__`` of the same signature (same names, order and defaults)
that stores each field through its slot's descriptor directly, at half the cost.

Nothing else changes: the class stays a frozen dataclass (assigning to a field still
raises ``FrozenInstanceError``; equality, hashing, ``repr``, ``fields()`` and
``__post_init__`` are dataclasses' own). ``tests/engine/test_records.py`` checks it.
"""

from __future__ import annotations

from dataclasses import MISSING, fields, is_dataclass
from typing import Any, TypeVar

T = TypeVar("T", bound=type)


def fast_init(cls: T) -> T:
    """Replace the generated ``__init__`` of frozen, slotted dataclass ``cls``; return it."""
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
