"""The state stream, `/v1/stream`: a WebSocket of text frames (hello, ticks,
events, errors) and binary geometry frames, parsed into small dataclasses."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np
from websockets.asyncio.client import connect as async_connect
from websockets.asyncio.client import unix_connect as async_unix_connect
from websockets.exceptions import ConnectionClosedOK
from websockets.sync.client import connect, unix_connect

#: Magic and version of a binary geometry frame.
GEOMETRY_MAGIC = b"HGEO"
GEOMETRY_VERSION = 1
_GEOMETRY_HEADER = struct.Struct("<4sIIII")


@dataclass(frozen=True)
class Hello:
    """The first frame of a connection, again after a scene change."""

    protocol: int
    scene: str
    servo_rate_hz: float
    rate_hz: float
    contacts: int
    generation: int
    objects: list[dict[str, Any]]


@dataclass(frozen=True)
class Geometry:
    """One object's triangle mesh: vertices `(V, 3)` float32 in the object's
    frame (m), triangles `(T, 3)` uint32, counter-clockwise from outside."""

    index: int
    vertices: np.ndarray
    triangles: np.ndarray


@dataclass(frozen=True)
class Tick:
    """A decimated tick frame; `data` holds every field of the frame."""

    tick: int
    time_s: float
    state: str
    verdict: str
    contacts: int
    generation: int | None
    data: dict[str, Any] = field(repr=False)

    def vector(self, key: str) -> np.ndarray:
        """A vector field (`force_n`, `rendered_force_n`, ...) as an array."""
        return np.asarray(self.data[key], dtype=float)

    def pose(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """`tool` or `manipulandum` as (position m, quaternion w i j k)."""
        pose = self.data[key]
        return np.asarray(pose["position_m"], dtype=float), np.asarray(pose["orientation_wijk"], dtype=float)


@dataclass(frozen=True)
class Event:
    """An event frame: `event` names it, `data` holds every field."""

    tick: int
    event: str
    data: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class StreamError:
    """The server's reply to a malformed client message."""

    code: str
    message: str


Message = Union[Hello, Geometry, Tick, Event, StreamError]


class StreamFormatError(ValueError):
    """A frame that does not follow docs/protocol.md."""


def decode_geometry(frame: bytes) -> Geometry:
    """Decodes a binary geometry frame (little-endian, docs/protocol.md)."""
    if len(frame) < _GEOMETRY_HEADER.size:
        raise StreamFormatError(f"geometry frame of {len(frame)} bytes is shorter than its header")
    magic, version, index, vertices, triangles = _GEOMETRY_HEADER.unpack_from(frame)
    if magic != GEOMETRY_MAGIC or version != GEOMETRY_VERSION:
        raise StreamFormatError(f"not a geometry frame: magic {magic!r}, version {version}")
    expected = _GEOMETRY_HEADER.size + 12 * (vertices + triangles)
    if len(frame) != expected:
        raise StreamFormatError(f"geometry frame of {len(frame)} bytes, expected {expected}")
    offset = _GEOMETRY_HEADER.size
    v = np.frombuffer(frame, dtype="<f4", count=3 * vertices, offset=offset).reshape(vertices, 3)
    t = np.frombuffer(frame, dtype="<u4", count=3 * triangles, offset=offset + 12 * vertices).reshape(
        triangles, 3
    )
    return Geometry(index, v.astype(np.float32), t.astype(np.uint32))


def decode(frame: str | bytes) -> Message:
    """Parses one frame of the stream."""
    if isinstance(frame, bytes):
        return decode_geometry(frame)
    data = json.loads(frame)
    kind = data.get("type")
    if kind == "tick":
        return Tick(
            tick=data["tick"],
            time_s=data["time_s"],
            state=data["state"],
            verdict=data["verdict"],
            contacts=data["contacts"],
            generation=data.get("generation"),
            data=data,
        )
    if kind == "event":
        return Event(tick=data["tick"], event=data["event"], data=data)
    if kind == "hello":
        return Hello(
            protocol=data["protocol"],
            scene=data["scene"],
            servo_rate_hz=data["servo_rate_hz"],
            rate_hz=data["rate_hz"],
            contacts=data["contacts"],
            generation=data["generation"],
            objects=data["objects"],
        )
    if kind == "error":
        return StreamError(code=data["code"], message=data["message"])
    raise StreamFormatError(f"unknown frame type {kind!r}")


def _subscribe(rate_hz: float | None, contacts: int | None) -> str:
    message: dict[str, Any] = {"type": "subscribe"}
    if rate_hz is not None:
        message["rate_hz"] = rate_hz
    if contacts is not None:
        message["contacts"] = contacts
    return json.dumps(message)


class Stream:
    """A blocking connection to `/v1/stream`; a context manager and an
    iterator of [Message]s that ends when the server closes."""

    def __init__(self, url: str, unix_socket: str | None = None):
        self.url = url
        self._connection = (
            unix_connect(unix_socket, url, max_size=None) if unix_socket else connect(url, max_size=None)
        )
        self._socket = self._connection.__enter__()

    def __iter__(self):
        return self

    def __next__(self) -> Message:
        try:
            return decode(self._socket.recv())
        except ConnectionClosedOK:
            raise StopIteration from None

    def receive(self, timeout: float | None = None) -> Message:
        """The next message, waiting at most `timeout` seconds (TimeoutError)."""
        return decode(self._socket.recv(timeout=timeout))

    def subscribe(self, rate_hz: float | None = None, contacts: int | None = None) -> None:
        """Changes the frame rate and the contact points per frame."""
        self._socket.send(_subscribe(rate_hz, contacts))

    def close(self) -> None:
        self._connection.__exit__(None, None, None)

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class AsyncStream:
    """The asyncio twin of [Stream]: `async with` it, then `async for`."""

    def __init__(self, url: str, unix_socket: str | None = None):
        self.url = url
        self._unix_socket = unix_socket
        self._socket = None

    async def __aenter__(self) -> AsyncStream:
        if self._unix_socket:
            self._socket = await async_unix_connect(self._unix_socket, self.url, max_size=None)
        else:
            self._socket = await async_connect(self.url, max_size=None)
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    def __aiter__(self):
        return self

    async def __anext__(self) -> Message:
        try:
            return decode(await self._socket.recv())
        except ConnectionClosedOK:
            raise StopAsyncIteration from None

    async def subscribe(self, rate_hz: float | None = None, contacts: int | None = None) -> None:
        """Changes the frame rate and the contact points per frame."""
        await self._socket.send(_subscribe(rate_hz, contacts))

    async def close(self) -> None:
        if self._socket is not None:
            await self._socket.close()
