"""The control API's replies (docs/protocol.md), as the `data` of each
`{"ok": true, "data": ...}` parses into: the components of
`/v1/openapi.json` of the same names."""

from __future__ import annotations

from dataclasses import dataclass

from .vocabulary import ForceDirection, Friction, FrictionState, FrictionVerdict, Gradient, ObjectRole, Solver


@dataclass(frozen=True)
class Percentiles:
    """Median, 99th percentile and largest of a latency (µs)."""

    p50: float
    p99: float
    max: float


@dataclass(frozen=True)
class Faults:
    """The servo's fault counts so far."""

    read: int
    render: int
    write: int
    solver_failed: int
    quarantined: int


@dataclass(frozen=True)
class Recording:
    """A recording in progress, or finished: its file and ticks so far."""

    path: str
    ticks: int


@dataclass(frozen=True)
class ClientStatus:
    """A stream client."""

    id: int
    peer: str
    connected_s: float
    rate_hz: float
    contacts: int
    #: Frames waiting to be sent.
    queued: int
    #: Tick frames dropped because the client read too slowly.
    dropped: int


@dataclass(frozen=True)
class ServerStatus:
    """Where the server listens, and its stream clients."""

    listen: str | None
    unix_socket: str | None
    clients: list[ClientStatus]


@dataclass(frozen=True)
class Status:
    """`GET /v1/status`: the run's live figures."""

    scene: str
    device: str
    uptime_s: float
    ticks: int
    servo_rate_hz: float
    rate_hz: float
    compute_us: Percentiles
    wake_latency_us: Percentiles
    deadline_misses: int
    dropped_records: int
    safety_trips: int
    faults: Faults
    #: Ticks per friction state, `NOT_RENDERED` included.
    states: dict[FrictionState, int]
    #: Ticks per friction verdict, `NOT_RENDERED` included.
    verdicts: dict[FrictionVerdict, int]
    generation: int
    recording: Recording | None
    server: ServerStatus


@dataclass(frozen=True)
class SceneObject:
    """One object of a scene."""

    index: int
    name: str
    role: ObjectRole
    tool: bool
    movable: bool
    material: str


@dataclass(frozen=True)
class SceneInfo:
    """`GET /v1/scene`: the scene running."""

    file: str
    servo_rate_hz: float
    objects: list[SceneObject]


@dataclass(frozen=True)
class HidIds:
    """A HID interface's identifiers."""

    vendor_id: int
    product_id: int
    manufacturer: str | None
    product: str | None
    interface_number: int
    usage_page: int
    usage: int


@dataclass(frozen=True)
class DeviceInfo:
    """A device a backend found: `id` picks it in the scene's `[device]`
    table; `error` says why it cannot be opened."""

    id: str
    name: str
    detail: str
    profile: str | None
    error: str | None
    hid: HidIds | None = None


@dataclass(frozen=True)
class BackendDevices:
    """What one device backend (`hid`, `forcedim`, `falcon`, `openhaptics`)
    finds: what it loaded, why it found nothing, and its devices."""

    backend: str
    name: str
    source: str | None
    error: str | None
    devices: list[DeviceInfo]


@dataclass(frozen=True)
class Material:
    """A `[materials.NAME]` table."""

    friction_coefficient: float
    contact_stiffness_n_per_m: float


@dataclass(frozen=True)
class RenderingParameters:
    """The `[rendering]` table."""

    coupling_stiffness_n_per_m: float
    coupling_torsional_stiffness_n_m_per_rad: float
    static_damping: float
    pyramid_sides: int
    #: None when stiffness scaling is off (`inf` in the config).
    stiffness_scaling_contacts: float | None
    anti_stickiness: bool
    gradient: Gradient
    force_direction: ForceDirection
    friction: Friction
    pre_sliding_displacement_m: float
    friction_spring_stiffness_n_per_m: float
    solver: Solver
    #: The rendering stage's compute budget per tick (µs).
    cycle_budget_us: float
    #: The part of the budget the collision stage may use.
    collision_budget_share: float


@dataclass(frozen=True)
class Parameters:
    """`GET` and `PATCH /v1/parameters`: the rendering parameters in force."""

    #: Rises by one with each change; 0 as the scene started.
    generation: int
    materials: dict[str, Material]
    rendering: RenderingParameters
    #: In the reply to a change: the first tick that rendered it.
    applied_tick: int | None = None
