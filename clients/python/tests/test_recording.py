"""read_recording on recordings hapticd writes, CSV and MCAP, and the
breakaway force they show."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hapticd import COLUMNS, RecordingError, breakaway_force, read_recording, run_hapticd
from hapticd.recording import FORMAT_VERSION, INTEGER_COLUMNS, SCHEMA, SLIDING, STATIC

#: The tick message's JSON Schema, as the Rust side writes it into MCAP files.
TICK_SCHEMA_FILE = Path(__file__).resolve().parents[3] / "crates/recording/src/tick.schema.json"


@pytest.fixture(scope="module")
def replays(push_scene):
    """The push at μ = 0.5 replayed into a CSV and an MCAP recording."""
    config = push_scene.config(0.5)
    out = {}
    for suffix in ("csv", "mcap"):
        path = push_scene.directory / f"replay.{suffix}"
        run_hapticd("replay", "--config", config, "--trajectory", push_scene.trajectory, "--out", path)
        out[suffix] = path
    return out


def test_csv_and_mcap_read_to_the_same_arrays(replays):
    csv = read_recording(replays["csv"])
    mcap = read_recording(replays["mcap"])
    assert list(csv) == COLUMNS and list(mcap) == COLUMNS
    ticks = len(csv["tick"])
    assert ticks > 3000
    for name in COLUMNS:
        assert csv[name].dtype == mcap[name].dtype == INTEGER_COLUMNS.get(name, np.float64), name
        assert csv[name].shape == (ticks,)
        np.testing.assert_array_equal(csv[name], mcap[name], err_msg=name)
    np.testing.assert_array_equal(csv["tick"], np.arange(ticks))
    # A replay leaves compute times at 0; the tool touched, stuck and slid.
    assert not csv["cycle_time_ns"].any()
    assert csv["contacts"].max() > 0
    assert {STATIC, SLIDING} <= set(np.unique(csv["state"]).tolist())


def test_the_columns_are_the_documented_schema():
    schema = json.loads(TICK_SCHEMA_FILE.read_text())
    assert schema["required"] == COLUMNS
    assert len(SCHEMA) == len(COLUMNS) == 33
    for name, dtype in SCHEMA:
        types = schema["properties"][name]["type"]
        integer = types == "integer"
        assert integer == (name in INTEGER_COLUMNS), name
        assert integer or types == ["number", "null"], name


def test_another_version_of_the_format_is_refused(replays, tmp_path):
    assert FORMAT_VERSION == 2
    csv = tmp_path / "future.csv"
    csv.write_text(replays["csv"].read_text().replace("# hapticd-ticks: 2", "# hapticd-ticks: 3", 1))
    with pytest.raises(RecordingError, match="unsupported tick format `3` \\(supported: 2\\)"):
        read_recording(csv)
    # The metadata's `version` value `2` becomes `3`, every length kept.
    data = replays["mcap"].read_bytes()
    key = b"version\x01\x00\x00\x002"
    assert data.count(key) == 1
    mcap = tmp_path / "future.mcap"
    mcap.write_bytes(data.replace(key, key[:-1] + b"3"))
    with pytest.raises(RecordingError, match="unsupported tick format `3`"):
        read_recording(mcap)


def test_mcap_carries_the_tool_and_handle_as_frame_transforms(replays):
    from mcap.reader import make_reader

    ticks = read_recording(replays["mcap"])
    frames = {"/tf/tool": [], "/tf/handle": [], "/tf/manipulandum": []}
    with replays["mcap"].open("rb") as f:
        for schema, channel, message in make_reader(f).iter_messages(topics=list(frames)):
            assert (schema.name, schema.encoding, channel.message_encoding) == (
                "foxglove.FrameTransform",
                "jsonschema",
                "json",
            )
            frames[channel.topic].append(json.loads(message.data))
    assert {len(f) for f in frames.values()} == {len(ticks["tick"])}
    last = frames["/tf/tool"][-1]
    assert (last["parent_frame_id"], last["child_frame_id"]) == ("world", "tool")
    assert [last["translation"][k] for k in "xyz"] == [ticks[f"tool_{k}"][-1] for k in "xyz"]
    assert last["rotation"]["w"] == ticks["tool_qw"][-1]
    time_ns = ticks["time_ns"][-1]
    assert (last["timestamp"]["sec"], last["timestamp"]["nsec"]) == divmod(int(time_ns), 10**9)
    handle = frames["/tf/handle"][-1]
    assert (handle["parent_frame_id"], handle["translation"]["z"]) == ("device", ticks["z"][-1])
    # The scene's mapping is an offset to the tool's start: the manipulandum
    # is the handle raised by it.
    manipulandum = frames["/tf/manipulandum"][-1]
    assert manipulandum["parent_frame_id"] == "world"
    assert manipulandum["translation"]["z"] == pytest.approx(ticks["z"][-1] + 0.0145 + 3e-4, abs=1e-12)


def test_the_breakaway_is_near_mu_times_the_press(replays):
    recording = read_recording(replays["mcap"])
    force = breakaway_force(recording)
    # μ = 0.5 on a press of about 2.5 N, within the pyramid's 1/cos(π/8).
    assert 0.5 * 2.2 < force < 0.5 * 2.8 / np.cos(np.pi / 8), force


def test_truncated_mcap_is_an_error_naming_the_file(replays, tmp_path):
    data = replays["mcap"].read_bytes()
    for length in (len(data) - 1, len(data) // 2, 12):
        cut = tmp_path / f"cut-{length}.mcap"
        cut.write_bytes(data[:length])
        with pytest.raises(RecordingError, match=str(cut)):
            read_recording(cut)


def test_a_file_of_neither_format_is_an_error(tmp_path):
    binary = tmp_path / "noise.csv"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(RecordingError, match="neither an MCAP recording"):
        read_recording(binary)
    text = tmp_path / "other.csv"
    text.write_text("a,b\n1,2\n")
    with pytest.raises(RecordingError, match="hapticd-ticks: 2"):
        read_recording(text)


def test_breakaway_is_the_largest_static_tangential_force_before_sliding():
    state = np.array([0, 2, 2, 2, 1, 2, 2], dtype=np.uint8)
    fx = np.array([9.0, 0.1, 0.4, 0.3, 0.2, 5.0, 5.0])
    recording = {
        "state": state,
        "rendered_fx": fx,
        "rendered_fy": np.zeros(7),
        "rendered_fz": np.full(7, -2.0),
    }
    assert breakaway_force(recording) == 0.4
    # Never sliding: every static tick counts.
    recording["state"] = np.array([0, 2, 2, 2, 2, 2, 2], dtype=np.uint8)
    assert breakaway_force(recording) == 5.0
    recording["state"] = np.zeros(7, dtype=np.uint8)
    with pytest.raises(ValueError):
        breakaway_force(recording)
