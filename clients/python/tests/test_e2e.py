"""End to end against a daemon on 127.0.0.1: the friction coefficient
patched through the API before the push, the breakaway force over μ,
an MCAP recording started and stopped through the API, and the stream."""

from __future__ import annotations

import asyncio
import dataclasses
import time

import numpy as np
import pytest
from push_scene import PUSH_START_S

import hapticd
from hapticd import (
    COLUMNS,
    ApiError,
    Daemon,
    ErrorCode,
    FrictionState,
    FrictionVerdict,
    Geometry,
    Hello,
    ObjectRole,
    Recording,
    SafetyState,
    Status,
    Tick,
    breakaway_force,
    breakaway_ratio,
    read_recording,
)

#: The μ of the config; every run patches its own before the push.
CONFIG_MU = 0.05


def wait_for(read, done, timeout: float = 1.0):
    """Reads `read()` until `done` holds of it or `timeout` passes; whether it held."""
    deadline = time.monotonic() + timeout
    while not done(read()):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def push_with_mu(push_scene, mu: float, tmp_path) -> dict[str, np.ndarray]:
    """Plays the push on a live daemon whose config says μ = [CONFIG_MU],
    patched to `mu` through `PATCH /v1/parameters` before the push starts;
    the recording the daemon wrote."""
    record = tmp_path / f"push-{mu}.csv"
    config = push_scene.config(CONFIG_MU)
    with Daemon(config, "--until-end", "--record", record) as daemon:
        with daemon.client() as client:
            patched = client.set_friction_coefficient("floor", mu)
            assert patched.materials["floor"].friction_coefficient == mu
            push_start_tick = PUSH_START_S * client.scene().servo_rate_hz
            assert patched.applied_tick < push_start_tick, "the patch came after the push began"
        assert daemon.wait(timeout=60) == 0, daemon.stderr()
    return read_recording(record)


def test_the_breakaway_grows_with_mu(push_scene, tmp_path):
    mus = [0.2, 0.5, 1.0]
    recordings = [push_with_mu(push_scene, mu, tmp_path) for mu in mus]
    forces = [breakaway_force(r) for r in recordings]
    ratios = [breakaway_ratio(r) for r in recordings]
    print("breakaway force over μ:", dict(zip(mus, forces)), "F_t/F_n:", dict(zip(mus, ratios)))
    for mu, ratio in zip(mus, ratios):
        # Coulomb's μ, within the friction pyramid's 1/cos(π/8). The ratio,
        # not the force: a hand pushed by a zeroed tick presses harder.
        assert 0.85 * mu < ratio < 1.2 * mu / np.cos(np.pi / 8), (mu, ratio)
    assert forces == sorted(forces) and forces[-1] > 3 * forces[0]


def test_a_refused_patch_names_the_field_and_changes_nothing(push_scene):
    with Daemon(push_scene.config(0.5)) as daemon, daemon.client() as client:
        before = client.parameters()
        with pytest.raises(ApiError) as caught:
            client.patch_parameters({"materials": {"floor": {"friction_coefficient": -1.0}}})
        assert caught.value.code == ErrorCode.INVALID_PARAMETER
        assert caught.value.field == "materials.floor.friction_coefficient"
        assert client.parameters() == before


def test_an_mcap_recording_through_the_api(push_scene, tmp_path):
    path = tmp_path / "api.mcap"
    with Daemon(push_scene.config(0.5)) as daemon, daemon.client() as client:
        assert client.recording() is None
        started = client.start_recording(str(path))
        assert started == Recording(str(path), 0)
        # GET /v1/recording shows the live status, refreshed 4 times a second.
        assert wait_for(client.recording, lambda r: r is not None and r.path == str(path))
        time.sleep(1.0)
        stopped = client.stop_recording()
        assert wait_for(client.recording, lambda r: r is None)
    assert stopped.path.endswith("api.mcap")
    recording = read_recording(path)
    assert list(recording) == COLUMNS
    ticks = len(recording["tick"])
    assert stopped.ticks == ticks
    # About a second at 1 kHz, every tick in order.
    assert 500 < ticks < 2000, ticks
    assert (np.diff(recording["tick"]) >= 1).all()
    assert (np.diff(recording["time_ns"]) > 0).all()
    assert recording["cycle_time_ns"].max() > 0
    assert np.isfinite(recording["tool_z"]).all()


def test_the_stream_sends_hello_geometry_then_ticks(push_scene):
    with Daemon(push_scene.config(0.5)) as daemon, daemon.client() as client:
        with client.stream(rate_hz=50, contacts=8) as stream:
            hello = stream.receive(timeout=10)
            assert isinstance(hello, Hello) and hello.protocol == 1
            names = [o.name for o in hello.objects]
            assert names == ["tool", "floor"]
            assert [o.role for o in hello.objects] == [ObjectRole.POINT_SHELL, ObjectRole.FIELD]
            for expected in hello.objects:
                geometry = stream.receive(timeout=10)
                assert isinstance(geometry, Geometry) and geometry.index == expected.index
                assert geometry.vertices.shape == (expected.vertices, 3)
                assert geometry.triangles.shape == (expected.triangles, 3)
                assert geometry.triangles.max() < expected.vertices
            ticks = []
            while len(ticks) < 5:
                message = stream.receive(timeout=10)
                if isinstance(message, Tick):
                    ticks.append(message)
            assert [t.tick for t in ticks] == sorted(t.tick for t in ticks)
            assert all(len(t.contact_points) <= 8 for t in ticks)
            assert all(t.safety_state in SafetyState for t in ticks)


async def test_the_async_client_and_stream(push_scene):
    with Daemon(push_scene.config(0.5)) as daemon:
        async with daemon.async_client() as client:
            status = await client.status()
            assert isinstance(status, Status) and status.ticks >= 0
            # The live status is refreshed 4 times a second.
            for _ in range(50):
                if status.states:
                    break
                await asyncio.sleep(0.05)
                status = await client.status()
            assert set(status.states) == set(FrictionState)
            assert set(status.verdicts) == set(FrictionVerdict)
            assert (await client.scene()).objects[1].role == ObjectRole.FIELD
            async with client.stream(rate_hz=20) as stream:
                async for message in stream:
                    if isinstance(message, Tick):
                        break
                await stream.subscribe(rate_hz=10, contacts=0)


#: The component of `/v1/openapi.json` each of the client's closed sets
#: follows: the friction state and verdict with `not_rendered`.
CLOSED_SETS = [
    (hapticd.FrictionState, "OrNotRendered_FrictionState"),
    (hapticd.FrictionVerdict, "OrNotRendered_FrictionVerdict"),
    (hapticd.SafetyState, "SafetyState"),
    (hapticd.TripCause, "TripCause"),
    (hapticd.ObjectRole, "ObjectRole"),
    (hapticd.ErrorCode, "ErrorCode"),
    (hapticd.Gradient, "Gradient"),
    (hapticd.Friction, "Friction"),
    (hapticd.Solver, "Solver"),
]

#: The reply and frame dataclasses and the component each follows.
TYPES = [
    (hapticd.Status, "StatusReply"),
    (hapticd.ServerStatus, "ServerStatus"),
    (hapticd.ClientStatus, "ClientStatus"),
    (hapticd.Percentiles, "Percentiles"),
    (hapticd.Faults, "Faults"),
    (hapticd.Recording, "Recording"),
    (hapticd.SceneInfo, "SceneInfo"),
    (hapticd.SceneObject, "SceneObject"),
    (hapticd.DeviceInfo, "DeviceInfo"),
    (hapticd.Material, "Material"),
    (hapticd.RenderingParameters, "Rendering"),
    (hapticd.Parameters, "Parameters"),
    (hapticd.Hello, "Hello"),
    (hapticd.HelloObject, "HelloObject"),
    (hapticd.Pose, "Pose"),
    (hapticd.ContactPoint, "ContactPoint"),
    (hapticd.Tick, "ClientTick"),
    (hapticd.StreamError, "ApiError"),
]


def resolve(schemas: dict, schema: dict) -> dict:
    """`schema`, or the component its `$ref` names."""
    return schemas[schema["$ref"].rsplit("/", 1)[1]] if "$ref" in schema else schema


def enum_values(schemas: dict, schema: dict) -> set[str]:
    """The strings `schema` allows, through `oneOf` and `$ref`s."""
    schema = resolve(schemas, schema)
    if "enum" in schema:
        return set(schema["enum"])
    return set().union(*(enum_values(schemas, item) for item in schema["oneOf"]))


def properties(schemas: dict, schema: dict) -> set[str]:
    """The properties of an object schema, through `allOf` and `$ref`s."""
    schema = resolve(schemas, schema)
    found = set(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        found |= properties(schemas, part)
    return found


def test_the_client_follows_the_openapi_document(push_scene):
    with Daemon(push_scene.config(0.5)) as daemon, daemon.client() as client:
        schemas = client.openapi()["components"]["schemas"]
    for enum, name in CLOSED_SETS:
        assert {e.value for e in enum} == enum_values(schemas, schemas[name]), name
    for cls, name in TYPES:
        fields = {f.metadata.get("wire", f.name) for f in dataclasses.fields(cls) if not f.metadata.get("raw")}
        assert fields == properties(schemas, schemas[name]), name
    events = {
        next(iter(variant["properties"]["event"]["enum"])): properties(schemas, variant) - {"event"}
        for variant in schemas["Event"]["oneOf"]
    }
    assert set(events) == {kind.value for kind in hapticd.EventKind}
    for kind, cls in hapticd.stream.EVENTS.items():
        fields = {f.metadata.get("wire", f.name) for f in dataclasses.fields(cls) if not f.metadata.get("raw")}
        assert fields - {"tick", "event"} == events[kind], kind
