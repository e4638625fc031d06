"""Parsed JSON into the package's typed values, by their annotations."""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from enum import Enum
from typing import Any, TypeVar, Union

T = TypeVar("T")


def wire(name: str, **kwargs: Any) -> Any:
    """A dataclass field sent as `name` on the wire (`from`, a Python keyword)."""
    return dataclasses.field(metadata={"wire": name}, **kwargs)


def raw(**kwargs: Any) -> Any:
    """A dataclass field that holds the whole JSON object, as sent."""
    return dataclasses.field(metadata={"raw": True}, **kwargs)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_json(cls: type[T], value: Any) -> T:
    """`value`, as `json.loads` gives it, as a `cls`: a dataclass (its fields
    by name; keys it does not have are ignored, so that a newer daemon's
    additions do no harm), `list[X]`, `dict[K, V]`, `X | None`, an enum (by
    value), `float` (from any JSON number), `int`, `str`, `bool` or `Any`.
    Raises `ValueError` naming what does not fit."""
    origin = typing.get_origin(cls)
    if cls is Any:
        return value
    if origin in (Union, types.UnionType):
        others = [a for a in typing.get_args(cls) if a is not type(None)]
        if value is None and len(others) < len(typing.get_args(cls)):
            return None
        if len(others) != 1:
            raise TypeError(f"cannot parse into {cls}")
        return from_json(others[0], value)
    if origin is list:
        (item,) = typing.get_args(cls)
        return [from_json(item, v) for v in _expect(value, list, cls)]
    if origin is dict:
        key, item = typing.get_args(cls)
        return {from_json(key, k): from_json(item, v) for k, v in _expect(value, dict, cls).items()}
    if isinstance(cls, type) and issubclass(cls, Enum):
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"{value!r} is not a {cls.__name__}") from None
    if dataclasses.is_dataclass(cls):
        return _dataclass(cls, _expect(value, dict, cls))
    if cls is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if cls in (int, str, bool) and type(value) is cls:
        return value
    raise ValueError(f"{value!r} is not a {getattr(cls, '__name__', cls)}")


def _dataclass(cls: type[T], value: dict[str, Any]) -> T:
    hints = _hints(cls)
    arguments = {}
    for f in dataclasses.fields(cls):
        if f.metadata.get("raw"):
            arguments[f.name] = value
            continue
        name = f.metadata.get("wire", f.name)
        if name in value:
            try:
                arguments[f.name] = from_json(hints[f.name], value[name])
            except ValueError as e:
                raise ValueError(f"{cls.__name__}.{name}: {e}") from None
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ValueError(f"{cls.__name__} without `{name}`")
    return cls(**arguments)


def _expect(value: Any, kind: type, cls: Any) -> Any:
    if not isinstance(value, kind):
        raise ValueError(f"{value!r} is not a {cls}")
    return value
