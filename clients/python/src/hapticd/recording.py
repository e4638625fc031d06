"""Tick recordings, CSV (`# hapticd-ticks: 2`) or MCAP, read into numpy
arrays, and the breakaway force of a push."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

#: The format's name and the one schema version read, in either encoding:
#: the CSV's first line, an MCAP file's `hapticd` metadata (docs/protocol.md,
#: "Recordings"; `haptic_recording::FORMAT_VERSION` in Rust).
FORMAT_NAME = "hapticd-ticks"
FORMAT_VERSION = 2

#: The columns of a tick, in order, and their dtypes: the CSV's header and
#: the fields of the MCAP tick message `hapticd.Tick` (docs/daemon.md,
#: docs/protocol.md). Integers are integers; every number is float64,
#: null as NaN.
SCHEMA = (
    ("tick", np.int64),
    ("time_ns", np.int64),
    *((name, np.float64) for name in ("x", "y", "z", "qw", "qx", "qy", "qz")),
    *((name, np.float64) for name in ("fx", "fy", "fz", "tx", "ty", "tz")),
    ("contacts", np.int64),
    ("state", np.uint8),
    ("cycle_time_ns", np.int64),
    *((f"rendered_{axis}", np.float64) for axis in ("fx", "fy", "fz", "tx", "ty", "tz")),
    *((f"tool_{axis}", np.float64) for axis in ("x", "y", "z", "qw", "qx", "qy", "qz")),
    ("verdict", np.uint8),
    ("quarantined", np.uint8),
)

#: The column names, in order.
COLUMNS = [name for name, _ in SCHEMA]

#: The integer columns and their dtypes; every other column is float64.
INTEGER_COLUMNS = {name: dtype for name, dtype in SCHEMA if dtype is not np.float64}

#: `state` codes.
FREE, SLIDING, STATIC, NOT_RENDERED = 0, 1, 2, 255

#: The MCAP topic and schema of the tick messages, and the metadata record
#: naming the format and its version.
TICK_TOPIC = "/ticks"
TICK_SCHEMA = "hapticd.Tick"
METADATA_NAME = "hapticd"

_MCAP_MAGIC = b"\x89MCAP0\r\n"
_CSV_VERSION = f"# {FORMAT_NAME}: {FORMAT_VERSION}"


class RecordingError(ValueError):
    """A file that is not a readable tick recording; the message names it."""


def _columns(rows: list[list]) -> dict[str, np.ndarray]:
    """Column arrays of `rows` (one list of values per tick, in [SCHEMA] order)."""
    table = list(zip(*rows)) if rows else [()] * len(SCHEMA)
    out = {}
    for (name, dtype), values in zip(SCHEMA, table):
        if dtype is np.float64:
            out[name] = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        else:
            out[name] = np.array(values, dtype=dtype)
    return out


def _read_csv(path: Path) -> dict[str, np.ndarray]:
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise RecordingError(f"{path}: neither an MCAP recording nor the CSV tick format") from None
    lines = text.splitlines()
    version_key = f"# {FORMAT_NAME}:"
    if lines and lines[0].startswith(version_key) and lines[0].strip() != _CSV_VERSION:
        version = lines[0][len(version_key) :].strip()
        raise RecordingError(f"{path}:1: unsupported tick format `{version}` (supported: {FORMAT_VERSION})")
    if not lines or lines[0].strip() != _CSV_VERSION:
        raise RecordingError(f"{path}:1: the first line must be `{_CSV_VERSION}`")
    header = "# columns: " + ",".join(COLUMNS)
    if len(lines) < 2 or lines[1].strip() != header:
        raise RecordingError(f"{path}:2: expected `{header}`")
    rows = []
    for number, line in enumerate(lines[2:], start=3):
        fields = line.split(",")
        if len(fields) != len(COLUMNS):
            raise RecordingError(f"{path}:{number}: expected {len(COLUMNS)} columns, found {len(fields)}")
        try:
            rows.append(
                [float(f) if dtype is np.float64 else int(f) for (_, dtype), f in zip(SCHEMA, fields)]
            )
        except ValueError as e:
            raise RecordingError(f"{path}:{number}: {e}") from None
    return _columns(rows)


def _read_mcap(path: Path) -> dict[str, np.ndarray]:
    from mcap.exceptions import McapError
    from mcap.reader import make_reader

    rows = []
    try:
        with path.open("rb") as f:
            reader = make_reader(f)
            summary = reader.get_summary()
            if summary is None:
                raise RecordingError(f"{path}: not a complete MCAP recording (no summary)")
            topics = {c.topic for c in summary.channels.values()}
            if TICK_TOPIC not in topics:
                raise RecordingError(f"{path}: no `{TICK_TOPIC}` channel: not a hapticd tick recording")
            _check_version(path, reader)
            for schema, channel, message in reader.iter_messages(topics=[TICK_TOPIC]):
                if schema is None or schema.name != TICK_SCHEMA or channel.message_encoding != "json":
                    raise RecordingError(f"{path}: `{TICK_TOPIC}` is not `{TICK_SCHEMA}` in JSON")
                tick = json.loads(message.data)
                if list(tick) != COLUMNS:
                    raise RecordingError(f"{path}: tick message {message.sequence} has fields {list(tick)}")
                rows.append(list(tick.values()))
    except (McapError, EOFError, ValueError, OSError, KeyError) as e:
        if isinstance(e, RecordingError):
            raise
        raise RecordingError(f"{path}: not a complete MCAP recording ({type(e).__name__}: {e})") from e
    return _columns(rows)


def _check_version(path: Path, reader) -> None:
    """Refuses an MCAP recording whose metadata names no version of the
    format, or another than [FORMAT_VERSION]."""
    for metadata in reader.iter_metadata():
        if metadata.name == METADATA_NAME and metadata.metadata.get("format") == FORMAT_NAME:
            version = metadata.metadata.get("version")
            if version != str(FORMAT_VERSION):
                raise RecordingError(
                    f"{path}: unsupported tick format `{version}` (supported: {FORMAT_VERSION})"
                )
            return
    raise RecordingError(f"{path}: no `{METADATA_NAME}` metadata with `format = {FORMAT_NAME}` and its version")


def read_recording(path: os.PathLike | str) -> dict[str, np.ndarray]:
    """Reads a tick recording, CSV or MCAP (told apart by their first bytes),
    into one array per column, named and typed as [SCHEMA] says: integer
    columns are integers, the rest float64, null as NaN. A file of another
    version of the format is refused."""
    path = Path(path)
    with path.open("rb") as f:
        start = f.read(len(_MCAP_MAGIC))
    if start == _MCAP_MAGIC:
        return _read_mcap(path)
    return _read_csv(path)


def _before_first_slide(
    recording: dict[str, np.ndarray], normal: tuple[float, float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """The rendered force's tangential part (across `normal`) and the size
    of its normal part, over the ticks where the tool is static before it
    first slides."""
    n = np.asarray(normal, dtype=float)
    n = n / np.linalg.norm(n)
    force = np.stack([recording["rendered_fx"], recording["rendered_fy"], recording["rendered_fz"]], axis=1)
    along = force @ n
    tangential = np.linalg.norm(force - np.outer(along, n), axis=1)
    state = recording["state"]
    static = np.flatnonzero(state == STATIC)
    if static.size == 0:
        raise ValueError("the tool is never static")
    sliding = np.flatnonzero((state == SLIDING) & (np.arange(state.size) > static[0]))
    end = sliding[0] if sliding.size else state.size
    before = state[:end] == STATIC
    return tangential[:end][before], np.abs(along[:end][before])


def breakaway_force(
    recording: dict[str, np.ndarray], normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
) -> float:
    """The breakaway force of a push (N): the largest tangential part (across
    `normal`, device frame) of the rendered force while the tool is static,
    before it first slides. Raises ValueError if it is never static."""
    tangential, _ = _before_first_slide(recording, normal)
    return float(np.max(tangential))


def breakaway_ratio(
    recording: dict[str, np.ndarray], normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
) -> float:
    """The breakaway ratio of a push, Coulomb's `F_t / F_n`: the largest
    ratio of the rendered force's tangential part to its part along
    `normal` while the tool is static, before it first slides. Unlike
    [breakaway_force] it holds whatever the press was. Raises ValueError
    if it is never static."""
    tangential, pressed = _before_first_slide(recording, normal)
    loaded = pressed > 0.0
    if not loaded.any():
        raise ValueError("the tool is never pressed while static")
    return float(np.max(tangential[loaded] / pressed[loaded]))
