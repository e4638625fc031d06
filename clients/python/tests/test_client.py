"""The client's requests and replies, and the stream's frames, without a
daemon: httpx's mock transport and frames built by hand."""

from __future__ import annotations

import json
import struct

import httpx
import numpy as np
import pytest

from hapticd import (
    ApiError,
    AsyncClient,
    BackendDevices,
    Client,
    ClientStatus,
    ContactPoint,
    DeviceInfo,
    ErrorCode,
    Event,
    EventKind,
    EventsOmitted,
    Faults,
    ForceDirection,
    Friction,
    FrictionState,
    FrictionVerdict,
    Geometry,
    Gradient,
    Hello,
    HelloDeformable,
    HelloObject,
    HidIds,
    Material,
    ObjectRole,
    Parameters,
    Percentiles,
    Pose,
    Recording,
    RecordingChanged,
    RenderingParameters,
    SafetyState,
    SafetyTrip,
    SceneInfo,
    SceneObject,
    ServerStatus,
    Solver,
    StateChange,
    Status,
    StreamError,
    StreamFormatError,
    Surface,
    Tick,
    TripCause,
    decode,
    decode_surface,
)
from hapticd.client import _ws_url


PERCENTILES = {"p50": 31.0, "p99": 48.0, "max": 90.0}
RECORDING = {"path": "run.mcap", "ticks": 1200}
STATUS = {
    "scene": "config/default.toml",
    "device": "simulated",
    "uptime_s": 12.5,
    "ticks": 12000,
    "servo_rate_hz": 1000.0,
    "rate_hz": 999.9,
    "compute_us": PERCENTILES,
    "wake_latency_us": PERCENTILES,
    "deadline_misses": 0,
    "dropped_records": 0,
    "safety_trips": 1,
    "faults": {"read": 0, "render": 0, "write": 0, "solver_failed": 0, "quarantined": 0},
    "states": {"free": 10, "sliding": 2, "static": 11987, "not_rendered": 1},
    "verdicts": {
        "free": 10,
        "sliding": 2,
        "static": 11980,
        "static_in_band": 7,
        "sliding_in_band": 0,
        "solver_failed": 0,
        "not_rendered": 1,
    },
    "generation": 2,
    "recording": RECORDING,
    "server": {
        "listen": "127.0.0.1:7878",
        "unix_socket": None,
        "clients": [
            {
                "id": 1,
                "peer": "127.0.0.1:50000",
                "connected_s": 3.0,
                "rate_hz": 60.0,
                "contacts": 64,
                "queued": 0,
                "dropped": 0,
            }
        ],
    },
}
PARAMETERS = {
    "generation": 3,
    "applied_tick": 1234,
    "materials": {"wood": {"friction_coefficient": 0.4, "contact_stiffness_n_per_m": 200.0}},
    "rendering": {
        "coupling_stiffness_n_per_m": 1000.0,
        "coupling_torsional_stiffness_n_m_per_rad": 1.0,
        "static_damping": 0.6,
        "pyramid_sides": 8,
        "stiffness_scaling_contacts": None,
        "anti_stickiness": True,
        "gradient": "exact",
        "force_direction": "field_gradient",
        "friction": "pre_sliding",
        "pre_sliding_displacement_m": 5e-6,
        "friction_spring_stiffness_n_per_m": 200,
        "solver": "fast",
        "cycle_budget_us": 250.0,
        "collision_budget_share": 0.5,
        "a_field_from_a_newer_daemon": 1,
    },
}
SCENE = {
    "file": "config/default.toml",
    "servo_rate_hz": 1000.0,
    "objects": [
        {"index": 0, "name": "cube", "role": "point_shell", "tool": True, "movable": False, "material": "default"},
        {"index": 1, "name": "floor", "role": "both", "tool": False, "movable": False, "material": "wood"},
    ],
}
DEVICE = {
    "backend": "hid",
    "name": "HID",
    "source": "14 profiles from device-profiles",
    "error": None,
    "devices": [
        {
            "id": "/dev/hidraw0",
            "name": "3Dconnexion",
            "detail": "256f:c635, interface 0, usage 0001:0008",
            "profile": "spacemouse",
            "error": None,
            "hid": {
                "vendor_id": 0x256F,
                "product_id": 0xC635,
                "manufacturer": "3Dconnexion",
                "product": None,
                "interface_number": 0,
                "usage_page": 1,
                "usage": 8,
            },
        }
    ],
}
OPENAPI = {"openapi": "3.1.0"}

#: Per endpoint: the method called with its arguments, the request it
#: sends, the data its reply carries, and the typed value it returns.
ENDPOINTS = [
    ("status", (), "GET", "/v1/status", None, STATUS),
    ("parameters", (), "GET", "/v1/parameters", None, PARAMETERS),
    (
        "patch_parameters",
        ({"rendering": {"pyramid_sides": 6}},),
        "PATCH",
        "/v1/parameters",
        {"rendering": {"pyramid_sides": 6}},
        PARAMETERS,
    ),
    (
        "set_friction_coefficient",
        ("wood", 0.4),
        "PATCH",
        "/v1/parameters",
        {"materials": {"wood": {"friction_coefficient": 0.4}}},
        PARAMETERS,
    ),
    ("scene", (), "GET", "/v1/scene", None, SCENE),
    ("load_scene", ("config/peg-in-hole.toml",), "POST", "/v1/scene", {"path": "config/peg-in-hole.toml"}, SCENE),
    ("recording", (), "GET", "/v1/recording", None, None),
    ("start_recording", ("run.mcap",), "POST", "/v1/recording", {"path": "run.mcap"}, RECORDING),
    ("stop_recording", (), "DELETE", "/v1/recording", None, RECORDING),
    ("devices", (), "GET", "/v1/devices", None, [DEVICE]),
    ("openapi", (), "GET", "/v1/openapi.json", None, OPENAPI),
]

EXPECTED = {
    "status": Status(
        scene="config/default.toml",
        device="simulated",
        uptime_s=12.5,
        ticks=12000,
        servo_rate_hz=1000.0,
        rate_hz=999.9,
        compute_us=Percentiles(31.0, 48.0, 90.0),
        wake_latency_us=Percentiles(31.0, 48.0, 90.0),
        deadline_misses=0,
        dropped_records=0,
        safety_trips=1,
        faults=Faults(0, 0, 0, 0, 0),
        states={
            FrictionState.FREE: 10,
            FrictionState.SLIDING: 2,
            FrictionState.STATIC: 11987,
            FrictionState.NOT_RENDERED: 1,
        },
        verdicts={
            FrictionVerdict.FREE: 10,
            FrictionVerdict.SLIDING: 2,
            FrictionVerdict.STATIC: 11980,
            FrictionVerdict.STATIC_IN_BAND: 7,
            FrictionVerdict.SLIDING_IN_BAND: 0,
            FrictionVerdict.SOLVER_FAILED: 0,
            FrictionVerdict.NOT_RENDERED: 1,
        },
        generation=2,
        recording=Recording("run.mcap", 1200),
        server=ServerStatus("127.0.0.1:7878", None, [ClientStatus(1, "127.0.0.1:50000", 3.0, 60.0, 64, 0, 0)]),
    ),
    "parameters": Parameters(
        generation=3,
        applied_tick=1234,
        materials={"wood": Material(0.4, 200.0)},
        rendering=RenderingParameters(
            coupling_stiffness_n_per_m=1000.0,
            coupling_torsional_stiffness_n_m_per_rad=1.0,
            static_damping=0.6,
            pyramid_sides=8,
            stiffness_scaling_contacts=None,
            anti_stickiness=True,
            gradient=Gradient.EXACT,
            force_direction=ForceDirection.FIELD_GRADIENT,
            friction=Friction.PRE_SLIDING,
            pre_sliding_displacement_m=5e-6,
            friction_spring_stiffness_n_per_m=200.0,
            solver=Solver.FAST,
            cycle_budget_us=250.0,
            collision_budget_share=0.5,
        ),
    ),
    "scene": SceneInfo(
        "config/default.toml",
        1000.0,
        [
            SceneObject(0, "cube", ObjectRole.POINT_SHELL, True, False, "default"),
            SceneObject(1, "floor", ObjectRole.BOTH, False, False, "wood"),
        ],
    ),
    "recording": None,
    "devices": [
        BackendDevices(
            "hid",
            "HID",
            "14 profiles from device-profiles",
            None,
            [
                DeviceInfo(
                    "/dev/hidraw0",
                    "3Dconnexion",
                    "256f:c635, interface 0, usage 0001:0008",
                    "spacemouse",
                    None,
                    HidIds(0x256F, 0xC635, "3Dconnexion", None, 0, 1, 8),
                )
            ],
        )
    ],
    "openapi": OPENAPI,
}
EXPECTED["patch_parameters"] = EXPECTED["set_friction_coefficient"] = EXPECTED["parameters"]
EXPECTED["load_scene"] = EXPECTED["scene"]
EXPECTED["start_recording"] = EXPECTED["stop_recording"] = Recording("run.mcap", 1200)


def daemon(data, sent: list) -> httpx.MockTransport:
    """A daemon that notes each request and replies with `data`, but
    refuses one value."""

    def reply(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        sent.append((request.method, request.url.path, body, request.headers.get("authorization")))
        if body == {"rendering": {"static_damping": 7.0}}:
            return httpx.Response(
                422,
                json={
                    "ok": False,
                    "error": {
                        "code": "invalid_parameter",
                        "message": "must be in [0, 1]",
                        "field": "rendering.static_damping",
                    },
                },
            )
        if request.url.path == "/v1/openapi.json":
            return httpx.Response(200, json=data)
        return httpx.Response(200, json={"ok": True, "data": data})

    return httpx.MockTransport(reply)


@pytest.mark.parametrize("method,args,verb,path,body,data", ENDPOINTS)
def test_every_endpoint(method, args, verb, path, body, data):
    sent = []
    with Client("http://daemon", token="s3cret", transport=daemon(data, sent)) as client:
        value = getattr(client, method)(*args)
    assert sent == [(verb, path, body, "Bearer s3cret")]
    assert value == EXPECTED[method]


@pytest.mark.parametrize("method,args,verb,path,body,data", ENDPOINTS)
async def test_every_endpoint_async(method, args, verb, path, body, data):
    sent = []
    async with AsyncClient("http://daemon", transport=daemon(data, sent)) as client:
        value = await getattr(client, method)(*args)
    assert sent == [(verb, path, body, None)]
    assert value == EXPECTED[method]


def test_replies_are_typed_and_their_names_still_compare_as_strings():
    with Client("http://daemon", transport=daemon(STATUS, [])) as client:
        status = client.status()
    assert status.states[FrictionState.STATIC] == 11987 and status.states["static"] == 11987
    assert isinstance(status.server.clients[0], ClientStatus)
    assert f"{FrictionVerdict.STATIC_IN_BAND:<16}|" == "static_in_band  |"
    assert str(ObjectRole.POINT_SHELL) == "point_shell"


def test_a_reply_that_does_not_fit_its_type_is_an_internal_error():
    broken = {**SCENE, "objects": [{**SCENE["objects"][0], "role": "ghost"}]}
    with Client("http://daemon", transport=daemon(broken, [])) as client:
        with pytest.raises(ApiError) as caught:
            client.scene()
    assert caught.value.code == ErrorCode.INTERNAL
    assert "SceneObject.role" in caught.value.message and "ghost" in caught.value.message
    with Client("http://daemon", transport=daemon({"file": "x.toml"}, [])) as client:
        with pytest.raises(ApiError, match="without `servo_rate_hz`"):
            client.scene()


def test_a_refusal_raises_with_code_message_and_field():
    with Client("http://daemon", transport=daemon(PARAMETERS, [])) as client:
        with pytest.raises(ApiError) as caught:
            client.patch_parameters({"rendering": {"static_damping": 7.0}})
    error = caught.value
    assert (error.status, error.code, error.field) == (422, "invalid_parameter", "rendering.static_damping")
    assert error.code is ErrorCode.INVALID_PARAMETER
    assert error.message == "must be in [0, 1]"
    assert "rendering.static_damping" in str(error)


def test_a_reply_that_is_not_json_is_an_internal_error():
    transport = httpx.MockTransport(lambda request: httpx.Response(502, text="bad gateway"))
    with Client("http://daemon", transport=transport) as client:
        with pytest.raises(ApiError) as caught:
            client.status()
    assert (caught.value.status, caught.value.code) == (502, "internal")


def test_the_stream_url_carries_its_parameters():
    assert (
        _ws_url("http://127.0.0.1:7878", 30, 16, None)
        == "ws://127.0.0.1:7878/v1/stream?rate_hz=30&contacts=16"
    )
    assert _ws_url("https://host", None, None, "t") == "wss://host/v1/stream?token=t"


def geometry_frame(index: int, vertices: np.ndarray, triangles: np.ndarray) -> bytes:
    header = struct.pack("<4sIIII", b"HGEO", 1, index, len(vertices), len(triangles))
    return header + vertices.astype("<f4").tobytes() + triangles.astype("<u4").tobytes()


def test_geometry_frames_decode_into_arrays():
    vertices = np.array([[0, 0, 0], [0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]], dtype=np.float32)
    triangles = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], dtype=np.uint32)
    geometry = decode(geometry_frame(2, vertices, triangles))
    assert isinstance(geometry, Geometry) and geometry.index == 2
    np.testing.assert_array_equal(geometry.vertices, vertices)
    np.testing.assert_array_equal(geometry.triangles, triangles)
    assert geometry.vertices.dtype == np.float32 and geometry.triangles.dtype == np.uint32
    with pytest.raises(StreamFormatError, match="expected"):
        decode(geometry_frame(2, vertices, triangles)[:-1])
    with pytest.raises(StreamFormatError, match="magic"):
        decode(b"HGEX" + geometry_frame(2, vertices, triangles)[4:])


def surface_frame(index: int, step: int, vertices: np.ndarray) -> bytes:
    return struct.pack("<4sIIQ", b"HDEF", index, len(vertices), step) + vertices.astype("<f4").tobytes()


def test_surface_frames_decode_into_arrays():
    vertices = np.array([[0, 0, 0.35], [0.5, -0.5, 0.3], [1e-3, 2, -7]], dtype=np.float32)
    surface = decode(surface_frame(1, 4097, vertices))
    assert isinstance(surface, Surface) and (surface.index, surface.step) == (1, 4097)
    np.testing.assert_array_equal(surface.vertices, vertices)
    assert surface.vertices.dtype == np.float32 and surface.vertices.shape == (3, 3)
    with pytest.raises(StreamFormatError, match="expected"):
        decode(surface_frame(1, 4097, vertices)[:-4])
    with pytest.raises(StreamFormatError, match="shorter than its header"):
        decode_surface(b"HDEF" + bytes(8))


POSE = {"position_m": [0, 0, 0.01], "orientation_wijk": [1, 0, 0, 0]}
TICK = {
    "type": "tick",
    "tick": 1234,
    "time_s": 1.234,
    "tool": POSE,
    "manipulandum": POSE,
    "environment": [POSE],
    "physics_sequence": 246,
    "force_n": [0.1, 0.2, 2.0],
    "torque_n_m": [0, 0, 0],
    "rendered_force_n": [0.1, 0.2, 2.0],
    "rendered_torque_n_m": [0, 0, 0],
    "contacts": 12,
    "state": "static",
    "verdict": "static_in_band",
    "safety_state": "normal",
    "clutched": False,
    "compute_us": 41.0,
    "wake_latency_us": 12.0,
    "deadline_misses": 0,
    "generation": 3,
    "contact_points": [
        {
            "object": 1,
            "position_m": [0, 0, 0],
            "normal": [0, 0, 1],
            "normal_force_n": [0, 0, 0.2],
            "friction_force_n": [0.01, 0, 0],
            "static": True,
        }
    ],
    "contact_points_omitted": 11,
    "dropped": 0,
    "servo_dropped": 0,
    "passivity_energy_j": 0.012,
    "passivity_rotational_energy_j": 1e-4,
    "passivity_damping_n_s_per_m": 0.0,
    "passivity_rotational_damping_n_m_s_per_rad": 0.0,
    "local_bodies": 1,
}


def test_text_frames_decode_by_type():
    hello = decode(
        json.dumps(
            {
                "type": "hello",
                "protocol": 1,
                "scene": "config/default.toml",
                "servo_rate_hz": 1000.0,
                "rate_hz": 60.0,
                "contacts": 64,
                "generation": 0,
                "objects": [
                    {
                        "index": 0,
                        "name": "cube",
                        "tool": True,
                        "role": "point_shell",
                        "movable": False,
                        "vertices": 8,
                        "triangles": 12,
                    }
                ],
            }
        )
    )
    assert isinstance(hello, Hello)
    assert hello.objects == [HelloObject(0, "cube", True, ObjectRole.POINT_SHELL, False, 8, 12)]
    assert hello.deformables == []
    cloth = decode(
        json.dumps(
            {
                "type": "hello",
                "protocol": 1,
                "scene": "cloth.toml",
                "servo_rate_hz": 1000.0,
                "rate_hz": 60.0,
                "contacts": 64,
                "generation": 0,
                "objects": [],
                "deformables": [{"index": 0, "name": "cloth", "vertices": 4, "triangles": [[0, 1, 2], [0, 2, 3]]}],
            }
        )
    )
    assert cloth.deformables == [HelloDeformable(0, "cloth", 4, [[0, 1, 2], [0, 2, 3]])]
    assert cloth.deformables[0].triangle_array().shape == (2, 3)
    tick = decode(json.dumps(TICK))
    assert isinstance(tick, Tick) and (tick.tick, tick.state, tick.generation) == (1234, "static", 3)
    assert (tick.state, tick.verdict, tick.safety_state) == (
        FrictionState.STATIC,
        FrictionVerdict.STATIC_IN_BAND,
        SafetyState.NORMAL,
    )
    assert tick.environment == [Pose([0.0, 0.0, 0.01], [1.0, 0.0, 0.0, 0.0])]
    assert tick.contact_points[0] == ContactPoint(1, [0, 0, 0], [0, 0, 1], [0, 0, 0.2], [0.01, 0, 0], True)
    np.testing.assert_array_equal(tick.vector("force_n"), [0.1, 0.2, 2.0])
    position, orientation = tick.pose("tool")
    np.testing.assert_array_equal(position, [0, 0, 0.01])
    event = decode('{"type": "event", "tick": 1250, "event": "state_change", "from": "free", "to": "static"}')
    assert isinstance(event, Event) and event.data["to"] == "static"
    assert isinstance(event, StateChange) and event.event == EventKind.STATE_CHANGE
    assert (event.from_state, event.to_state) == (FrictionState.FREE, FrictionState.STATIC)
    trip = decode('{"type": "event", "tick": 1300, "event": "safety_trip", "cause": "overrun", "trips": 1}')
    assert isinstance(trip, SafetyTrip) and (trip.cause, trip.trips) == (TripCause.OVERRUN, 1)
    stopped = decode('{"type": "event", "tick": 1500, "event": "recording", "recording": null}')
    assert isinstance(stopped, RecordingChanged) and stopped.recording is None
    started = decode(
        '{"type": "event", "tick": 1500, "event": "recording", "recording": {"path": "a.csv", "ticks": 0}}'
    )
    assert started.recording == Recording("a.csv", 0)
    omitted = decode('{"type": "event", "tick": 0, "event": "events_omitted", "count": 120}')
    assert isinstance(omitted, EventsOmitted) and omitted.count == 120
    assert decode('{"type": "error", "code": "bad_request", "message": "no"}') == StreamError(
        "bad_request", "no"
    )
    refused = decode('{"type": "error", "code": "invalid_parameter", "message": "no", "field": "rate_hz"}')
    assert (refused.code, refused.field) == (ErrorCode.INVALID_PARAMETER, "rate_hz")
    with pytest.raises(StreamFormatError):
        decode('{"type": "gossip"}')
    with pytest.raises(StreamFormatError, match="unknown event"):
        decode('{"type": "event", "tick": 0, "event": "gossip"}')
    with pytest.raises(StreamFormatError, match="Tick.state"):
        decode(json.dumps({**TICK, "state": "stuck"}))
