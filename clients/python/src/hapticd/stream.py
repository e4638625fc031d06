"""The state stream, `/v1/stream`: a WebSocket of text frames (hello, ticks,
events, errors) and binary frames (objects' geometry, deformable bodies'
surfaces), parsed into small dataclasses."""

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

from ._json import from_json, raw, wire
from .replies import Recording
from .vocabulary import ErrorCode, EventKind, FrictionState, FrictionVerdict, ObjectRole, SafetyState, TripCause

#: Magic and version of a binary geometry frame.
GEOMETRY_MAGIC = b"HGEO"
GEOMETRY_VERSION = 1
_GEOMETRY_HEADER = struct.Struct("<4sIIII")
#: Magic of a binary surface frame: a deformable body's surface vertices.
SURFACE_MAGIC = b"HDEF"
_SURFACE_HEADER = struct.Struct("<4sIIQ")


@dataclass(frozen=True)
class HelloObject:
    """One object as `hello` lists it."""

    index: int
    name: str
    tool: bool
    role: ObjectRole
    movable: bool
    vertices: int
    triangles: int


@dataclass(frozen=True)
class HelloDeformable:
    """One deformable body as `hello` lists it: its surface's triangles,
    three indices each into the vertices of its [Surface] frames."""

    index: int
    name: str
    vertices: int
    triangles: list[list[int]]

    def triangle_array(self) -> np.ndarray:
        """The triangles as a `(T, 3)` uint32 array."""
        return np.asarray(self.triangles, dtype=np.uint32).reshape(-1, 3)


@dataclass(frozen=True)
class Hello:
    """The first frame of a connection, again after a scene change."""

    protocol: int
    scene: str
    servo_rate_hz: float
    #: This client's tick frame rate (Hz) and cap on contact points per frame.
    rate_hz: float
    contacts: int
    generation: int
    objects: list[HelloObject]
    #: The deformable bodies, whose [Surface] frames come at this client's rate.
    deformables: list[HelloDeformable] = field(default_factory=list)


@dataclass(frozen=True)
class Geometry:
    """One object's triangle mesh: vertices `(V, 3)` float32 in the object's
    frame (m), triangles `(T, 3)` uint32, counter-clockwise from outside."""

    index: int
    vertices: np.ndarray
    triangles: np.ndarray


@dataclass(frozen=True)
class Surface:
    """A deformable body's surface after physics step `step`: vertices
    `(V, 3)` float32 in world coordinates (m), in the order the triangles
    of its [HelloDeformable] index."""

    index: int
    step: int
    vertices: np.ndarray


@dataclass(frozen=True)
class Pose:
    """A position (m) and unit quaternion (w, i, j, k)."""

    position_m: list[float]
    orientation_wijk: list[float]


@dataclass(frozen=True)
class ContactPoint:
    """One contact point of a tick, world frame: the force on the tool there,
    split into its normal and friction parts."""

    #: Index of the object in `Hello.objects` the tool touches.
    object: int
    position_m: list[float]
    normal: list[float]
    normal_force_n: list[float]
    friction_force_n: list[float]
    #: Held by static friction.
    static: bool


@dataclass(frozen=True)
class Tick:
    """A decimated tick frame; `data` holds the frame as sent."""

    tick: int
    #: Since the scene's servo started (s).
    time_s: float
    tool: Pose
    manipulandum: Pose
    #: Every object but the tool, in `Hello.objects` order.
    environment: list[Pose]
    #: The physics steps taken when the step whose poses `environment`
    #: shows was published.
    physics_sequence: int
    #: Written to the device, device frame.
    force_n: list[float]
    torque_n_m: list[float]
    #: Rendered, before the safety layer.
    rendered_force_n: list[float]
    rendered_torque_n_m: list[float]
    contacts: int
    state: FrictionState
    verdict: FrictionVerdict
    safety_state: SafetyState
    clutched: bool
    compute_us: float
    wake_latency_us: float
    deadline_misses: int
    #: The rendering parameters' generation the tick ran with.
    generation: int
    #: Tick records the telemetry thread missed.
    servo_dropped: int
    #: The passivity observer's energy through the force port (J): what the
    #: scene has taken in from the device, negative when it gave out more.
    passivity_energy_j: float
    #: The same through the torque port (J).
    passivity_rotational_energy_j: float
    #: Damping the passivity controller added this tick (N·s/m).
    passivity_damping_n_s_per_m: float
    #: Rotational damping it added (N·m·s/rad).
    passivity_rotational_damping_n_m_s_per_rad: float
    #: Bodies moved by local models this tick.
    local_bodies: int
    #: The first of the tick's contacts, at most the subscription's cap.
    contact_points: list[ContactPoint]
    contact_points_omitted: int
    #: Tick frames this client dropped because it read too slowly.
    dropped: int
    data: dict[str, Any] = raw(repr=False)

    def vector(self, key: str) -> np.ndarray:
        """A vector field (`force_n`, `rendered_force_n`, ...) as an array."""
        return np.asarray(self.data[key], dtype=float)

    def pose(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """`tool` or `manipulandum` as (position m, quaternion w i j k)."""
        pose = self.data[key]
        return np.asarray(pose["position_m"], dtype=float), np.asarray(pose["orientation_wijk"], dtype=float)


@dataclass(frozen=True)
class Event:
    """An event frame: `event` names it, `data` holds the frame as sent; each
    kind is a subclass with its fields."""

    tick: int
    event: EventKind
    data: dict[str, Any] = raw(repr=False)


@dataclass(frozen=True)
class StateChange(Event):
    """The friction state changed."""

    from_state: FrictionState = wire("from")
    to_state: FrictionState = wire("to")


@dataclass(frozen=True)
class SafetyTrip(Event):
    """The safety layer forced the output to zero; `trips` so far."""

    cause: TripCause = wire("cause")
    trips: int = wire("trips")


@dataclass(frozen=True)
class ParametersChanged(Event):
    """New rendering parameters are in force."""

    generation: int = wire("generation")


@dataclass(frozen=True)
class RecordingChanged(Event):
    """A recording started (`recording`) or stopped (None)."""

    recording: Recording | None = wire("recording")


@dataclass(frozen=True)
class EventsOmitted(Event):
    """Events left out of one frame period."""

    count: int = wire("count")


@dataclass(frozen=True)
class StreamError:
    """The server's reply to a malformed client message."""

    code: ErrorCode
    message: str
    #: The refused field, for a value out of range.
    field: str | None = None


Message = Union[Hello, Geometry, Surface, Tick, Event, StreamError]

#: The class of each kind of event.
EVENTS: dict[EventKind, type[Event]] = {
    EventKind.STATE_CHANGE: StateChange,
    EventKind.SAFETY_TRIP: SafetyTrip,
    EventKind.PARAMETERS: ParametersChanged,
    EventKind.RECORDING: RecordingChanged,
    EventKind.EVENTS_OMITTED: EventsOmitted,
}


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


def decode_surface(frame: bytes) -> Surface:
    """Decodes a binary surface frame (little-endian, docs/protocol.md)."""
    if len(frame) < _SURFACE_HEADER.size:
        raise StreamFormatError(f"surface frame of {len(frame)} bytes is shorter than its header")
    magic, index, vertices, step = _SURFACE_HEADER.unpack_from(frame)
    if magic != SURFACE_MAGIC:
        raise StreamFormatError(f"not a surface frame: magic {magic!r}")
    expected = _SURFACE_HEADER.size + 12 * vertices
    if len(frame) != expected:
        raise StreamFormatError(f"surface frame of {len(frame)} bytes, expected {expected}")
    v = np.frombuffer(frame, dtype="<f4", count=3 * vertices, offset=_SURFACE_HEADER.size).reshape(vertices, 3)
    return Surface(index, step, v.astype(np.float32))


def _text_frame_class(data: Any) -> type:
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "event":
        try:
            return EVENTS[EventKind(data.get("event"))]
        except ValueError:
            raise StreamFormatError(f"unknown event {data.get('event')!r}") from None
    frames = {"hello": Hello, "tick": Tick, "error": StreamError}
    if kind not in frames:
        raise StreamFormatError(f"unknown frame type {kind!r}")
    return frames[kind]


def decode(frame: str | bytes) -> Message:
    """Parses one frame of the stream."""
    if isinstance(frame, bytes):
        if frame[:4] == SURFACE_MAGIC:
            return decode_surface(frame)
        return decode_geometry(frame)
    data = json.loads(frame)
    cls = _text_frame_class(data)
    try:
        return from_json(cls, data)
    except ValueError as e:
        raise StreamFormatError(f"malformed {data['type']} frame: {e}") from None


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
