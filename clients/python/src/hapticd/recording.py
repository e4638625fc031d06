"""Tick recordings, CSV (`# hapticd-ticks: 2`) or MCAP, read into numpy
arrays, and the breakaway force of a push."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

#: The columns of a tick recording, in order (docs/daemon.md).
COLUMNS = (
    "tick,time_ns,x,y,z,qw,qx,qy,qz,fx,fy,fz,tx,ty,tz,contacts,state,cycle_time_ns,"
    "rendered_fx,rendered_fy,rendered_fz,rendered_tx,rendered_ty,rendered_tz,"
    "tool_x,tool_y,tool_z,tool_qw,tool_qx,tool_qy,tool_qz,verdict,quarantined"
).split(",")

#: The integer columns and their dtypes; every other column is float64.
INTEGER_COLUMNS = {
    "tick": np.int64,
    "time_ns": np.int64,
    "contacts": np.int64,
    "state": np.uint8,
    "cycle_time_ns": np.int64,
    "verdict": np.uint8,
    "quarantined": np.uint8,
}

#: `state` codes.
FREE, SLIDING, STATIC, NOT_RENDERED = 0, 1, 2, 255

#: The MCAP topic and schema of the tick messages.
TICK_TOPIC = "/ticks"
TICK_SCHEMA = "hapticd.Tick"

_MCAP_MAGIC = b"\x89MCAP0\r\n"
_CSV_VERSION = "# hapticd-ticks: 2"


class RecordingError(ValueError):
    """A file that is not a readable tick recording; the message names it."""


def _dtype(column: str):
    return INTEGER_COLUMNS.get(column, np.float64)


def _columns(rows: list[list]) -> dict[str, np.ndarray]:
    """Column arrays of `rows` (one list of values per tick, in [COLUMNS] order)."""
    table = list(zip(*rows)) if rows else [()] * len(COLUMNS)
    out = {}
    for name, values in zip(COLUMNS, table):
        dtype = _dtype(name)
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
                [int(f) if _dtype(c) is not np.float64 else float(f) for c, f in zip(COLUMNS, fields)]
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


def read_recording(path: os.PathLike | str) -> dict[str, np.ndarray]:
    """Reads a tick recording, CSV or MCAP (told apart by their first bytes),
    into one array per column, named as in the CSV; integer columns are
    integers (see [INTEGER_COLUMNS]), the rest float64, null as NaN."""
    path = Path(path)
    with path.open("rb") as f:
        start = f.read(len(_MCAP_MAGIC))
    if start == _MCAP_MAGIC:
        return _read_mcap(path)
    return _read_csv(path)


def breakaway_force(
    recording: dict[str, np.ndarray], normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
) -> float:
    """The breakaway force of a push (N): the largest tangential part (across
    `normal`, device frame) of the rendered force while the tool is static,
    before it first slides. Raises ValueError if it is never static."""
    n = np.asarray(normal, dtype=float)
    n = n / np.linalg.norm(n)
    force = np.stack([recording["rendered_fx"], recording["rendered_fy"], recording["rendered_fz"]], axis=1)
    tangential = np.linalg.norm(force - np.outer(force @ n, n), axis=1)
    state = recording["state"]
    static = np.flatnonzero(state == STATIC)
    if static.size == 0:
        raise ValueError("the tool is never static")
    sliding = np.flatnonzero((state == SLIDING) & (np.arange(state.size) > static[0]))
    end = sliding[0] if sliding.size else state.size
    before = state[:end] == STATIC
    return float(np.max(tangential[:end][before]))
