"""Python client of hapticd: the control API (`Client`, `AsyncClient`), the
state stream (`Stream`, `AsyncStream`), tick recordings (`read_recording`)
and the daemon as a subprocess (`Daemon`, `run_hapticd`)."""

from .client import DEFAULT_URL, ApiError, AsyncClient, Client, friction_patch
from .daemon import Daemon, DaemonError, find_hapticd, run_hapticd
from .recording import COLUMNS, RecordingError, breakaway_force, read_recording
from .stream import (
    AsyncStream,
    Event,
    Geometry,
    Hello,
    Message,
    Stream,
    StreamError,
    StreamFormatError,
    Tick,
    decode,
    decode_geometry,
)

__all__ = [
    "DEFAULT_URL",
    "ApiError",
    "AsyncClient",
    "AsyncStream",
    "COLUMNS",
    "Client",
    "Daemon",
    "DaemonError",
    "Event",
    "Geometry",
    "Hello",
    "Message",
    "RecordingError",
    "Stream",
    "StreamError",
    "StreamFormatError",
    "Tick",
    "breakaway_force",
    "decode",
    "decode_geometry",
    "find_hapticd",
    "friction_patch",
    "read_recording",
    "run_hapticd",
]
