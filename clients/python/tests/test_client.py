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
    Client,
    Event,
    Geometry,
    Hello,
    StreamError,
    StreamFormatError,
    Tick,
    decode,
)
from hapticd.client import _ws_url


def reply(request: httpx.Request) -> httpx.Response:
    """A daemon that echoes the request, and refuses one value."""
    body = json.loads(request.content) if request.content else None
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
    data = {
        "method": request.method,
        "path": request.url.path,
        "body": body,
        "auth": request.headers.get("authorization"),
    }
    return httpx.Response(200, json={"ok": True, "data": data})


ENDPOINTS = [
    ("status", (), "GET", "/v1/status", None),
    ("parameters", (), "GET", "/v1/parameters", None),
    (
        "patch_parameters",
        ({"rendering": {"pyramid_sides": 6}},),
        "PATCH",
        "/v1/parameters",
        {"rendering": {"pyramid_sides": 6}},
    ),
    (
        "set_friction_coefficient",
        ("wood", 0.4),
        "PATCH",
        "/v1/parameters",
        {"materials": {"wood": {"friction_coefficient": 0.4}}},
    ),
    ("scene", (), "GET", "/v1/scene", None),
    ("load_scene", ("config/peg-in-hole.toml",), "POST", "/v1/scene", {"path": "config/peg-in-hole.toml"}),
    ("recording", (), "GET", "/v1/recording", None),
    ("start_recording", ("run.mcap",), "POST", "/v1/recording", {"path": "run.mcap"}),
    ("stop_recording", (), "DELETE", "/v1/recording", None),
    ("devices", (), "GET", "/v1/devices", None),
    ("openapi", (), "GET", "/v1/openapi.json", None),
]


@pytest.mark.parametrize("method,args,verb,path,body", ENDPOINTS)
def test_every_endpoint(method, args, verb, path, body):
    with Client("http://daemon", token="s3cret", transport=httpx.MockTransport(reply)) as client:
        data = getattr(client, method)(*args)
    assert data == {"method": verb, "path": path, "body": body, "auth": "Bearer s3cret"}


@pytest.mark.parametrize("method,args,verb,path,body", ENDPOINTS)
async def test_every_endpoint_async(method, args, verb, path, body):
    async with AsyncClient("http://daemon", transport=httpx.MockTransport(reply)) as client:
        data = await getattr(client, method)(*args)
    assert data == {"method": verb, "path": path, "body": body, "auth": None}


def test_a_refusal_raises_with_code_message_and_field():
    with Client("http://daemon", transport=httpx.MockTransport(reply)) as client:
        with pytest.raises(ApiError) as caught:
            client.patch_parameters({"rendering": {"static_damping": 7.0}})
    error = caught.value
    assert (error.status, error.code, error.field) == (422, "invalid_parameter", "rendering.static_damping")
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
                "objects": [{"index": 0, "name": "cube", "tool": True}],
            }
        )
    )
    assert isinstance(hello, Hello) and hello.objects[0]["name"] == "cube"
    tick = decode(
        json.dumps(
            {
                "type": "tick",
                "tick": 1234,
                "time_s": 1.234,
                "state": "static",
                "verdict": "static_in_band",
                "contacts": 12,
                "generation": 3,
                "force_n": [0.1, 0.2, 2.0],
                "tool": {"position_m": [0, 0, 0.01], "orientation_wijk": [1, 0, 0, 0]},
            }
        )
    )
    assert isinstance(tick, Tick) and (tick.tick, tick.state, tick.generation) == (1234, "static", 3)
    np.testing.assert_array_equal(tick.vector("force_n"), [0.1, 0.2, 2.0])
    position, orientation = tick.pose("tool")
    np.testing.assert_array_equal(position, [0, 0, 0.01])
    event = decode('{"type": "event", "tick": 1250, "event": "state_change", "from": "free", "to": "static"}')
    assert isinstance(event, Event) and event.data["to"] == "static"
    assert decode('{"type": "error", "code": "bad_request", "message": "no"}') == StreamError(
        "bad_request", "no"
    )
    with pytest.raises(StreamFormatError):
        decode('{"type": "gossip"}')
