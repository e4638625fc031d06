"""The closed sets of names the daemon sends, as str-valued enums: each
value equals its wire name (`FrictionState.STATIC == "static"`), so code
that compares with strings keeps working. They follow the enums of
`/v1/openapi.json` (docs/protocol.md)."""

from __future__ import annotations

from enum import Enum


class WireName(str, Enum):
    """A value of a closed set; `str()` and formatting give its wire name."""

    __str__ = str.__str__
    __format__ = str.__format__


class FrictionState(WireName):
    """What the tool did in a tick; `NOT_RENDERED` when the tick rendered
    nothing (its device read failed)."""

    FREE = "free"
    SLIDING = "sliding"
    STATIC = "static"
    NOT_RENDERED = "not_rendered"


class FrictionVerdict(WireName):
    """What the friction stage decided in a tick, and how surely;
    `NOT_RENDERED` when the tick rendered nothing."""

    FREE = "free"
    SLIDING = "sliding"
    STATIC = "static"
    STATIC_IN_BAND = "static_in_band"
    SLIDING_IN_BAND = "sliding_in_band"
    SOLVER_FAILED = "solver_failed"
    NOT_RENDERED = "not_rendered"


class SafetyState(WireName):
    """What the safety layer lets through."""

    TRIPPED = "tripped"
    WAITING_FOR_SMALL_REQUEST = "waiting_for_small_request"
    RAMPING = "ramping"
    NORMAL = "normal"
    SHUTTING_DOWN = "shutting_down"
    OFF = "off"


class TripCause(WireName):
    """Why the safety layer zeroed the output."""

    STALE = "stale"
    SAMPLE_NOT_FINITE = "sample_not_finite"
    REQUEST_NOT_FINITE = "request_not_finite"
    OVERRUN = "overrun"
    DISCONNECTED = "disconnected"
    DEVICE_ERROR = "device_error"
    SHUTDOWN = "shutdown"


class ObjectRole(WireName):
    """What a scene object contributes to contact."""

    POINT_SHELL = "point_shell"
    FIELD = "field"
    BOTH = "both"


class EventKind(WireName):
    """What an event frame reports."""

    STATE_CHANGE = "state_change"
    SAFETY_TRIP = "safety_trip"
    PARAMETERS = "parameters"
    RECORDING = "recording"
    EVENTS_OMITTED = "events_omitted"


class ErrorCode(WireName):
    """Why a request was refused; each has one HTTP status."""

    BAD_REQUEST = "bad_request"
    UNAUTHORIZED = "unauthorized"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    CONFLICT = "conflict"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    INVALID_PARAMETER = "invalid_parameter"
    RATE_LIMITED = "rate_limited"
    BUSY = "busy"
    INTERNAL = "internal"


class Gradient(WireName):
    """`rendering.gradient`: the penalty force's gradient."""

    EXACT = "exact"
    NORMAL_DIRECTION = "normal_direction"


class ForceDirection(WireName):
    """`rendering.force_direction`: along which direction a penalty
    contact pushes the tool when its point shell meets a field."""

    FIELD_GRADIENT = "field_gradient"
    SHELL_NORMAL = "shell_normal"


class Friction(WireName):
    """`rendering.friction`: how friction enters the cycle."""

    PRE_SLIDING = "pre_sliding"
    STATIC_LP = "static_lp"
    YAMANE_SPRINGS = "yamane_springs"


class Solver(WireName):
    """`rendering.solver`: the friction solver."""

    FAST = "fast"
    REFERENCE = "reference"
