"""Schemathesis against the daemon's OpenAPI description.

Every operation is called with generated inputs, valid and invalid
(schemathesis's positive and negative modes), and each reply goes through
schemathesis's standard checks (status code documented, response schema,
content type, no server error). Around every call the test reads the
state a request could change: the parameters (with their generation), the
scene and whether a recording runs. A reply with `ok: false` must leave
all of them as they were.

Valid calls may change state. They are kept within bounds: a recording's
path is moved into a temporary directory, and a scene load's path is
replaced: the first HAPTICD_FUZZ_SCENE_LOADS (2) by `config/default.toml`
(a real load), the others by one of a missing file, a file that is not
TOML, a scene that fails validation and a directory.
"""

import hashlib
import os
import tempfile
import time
from pathlib import Path

import requests
import schemathesis
from hypothesis import HealthCheck, settings

from schemathesis.specs.openapi.checks import positive_data_acceptance

from conftest import BASE, FIGURES, PACER, time_left

SCRATCH = Path(os.environ.get("HAPTICD_FUZZ_TMP") or tempfile.mkdtemp(prefix="hapticd-fuzz-"))
SCRATCH.mkdir(parents=True, exist_ok=True)
(SCRATCH / "not-toml.toml").write_text("this is [not toml\n")
(SCRATCH / "invalid-scene.toml").write_text("[rendering]\nstatic_damping = -3.0\n")
SCENE_PATHS = [
    str(SCRATCH / "missing.toml"),
    str(SCRATCH / "not-toml.toml"),
    str(SCRATCH / "invalid-scene.toml"),
    str(SCRATCH),
]
REAL_SCENE = "config/default.toml"
scene_loads_left = int(os.environ.get("HAPTICD_FUZZ_SCENE_LOADS", "2"))
recordings = 0

SEMANTIC = {("PATCH", "/v1/parameters"), ("POST", "/v1/scene"), ("POST", "/v1/recording")}
EXAMPLES = int(os.environ.get("HAPTICD_FUZZ_EXAMPLES", "60"))

schema = schemathesis.openapi.from_url(f"{BASE}/v1/openapi.json", wait_for_schema=30.0)
schema.config.generation.update(modes=["positive", "negative"], max_examples=EXAMPLES, no_shrink=True)

http = requests.Session()


def get(path: str):
    """GET `path`'s `data`, waiting out a rate limit or a scene still starting."""
    for _ in range(100):
        PACER.wait()
        reply = http.get(f"{BASE}{path}", timeout=30)
        if reply.status_code in (429, 503):
            time.sleep(0.1)
            continue
        reply.raise_for_status()
        body = reply.json()
        assert body["ok"] is True, body
        return body["data"]
    raise AssertionError(f"GET {path} kept answering busy or rate limited")


def snapshot() -> dict:
    """What a refused request must not change. `/v1/status` is refreshed 4
    times a second, so its generation may lag the parameters' by a refresh:
    it is read until it agrees (or for 2 s, after which it is compared as
    read)."""
    parameters = get("/v1/parameters")
    end = time.monotonic() + 2.0
    while True:
        status = get("/v1/status")
        if status["generation"] == parameters["generation"] or time.monotonic() > end:
            break
        time.sleep(0.05)
    recording = get("/v1/recording")
    return {
        "parameters": parameters,
        "scene": get("/v1/scene"),
        "recording": recording and recording["path"],
        "status.generation": status["generation"],
        "status.scene": status["scene"],
    }


def bound(case) -> None:
    """Keeps valid scene loads and recordings within bounds."""
    global scene_loads_left, recordings
    body = case.body
    # JSON Schema's integers include 8.0; serde's do not, and refuse it as
    # a wrong type (bad_request). Integral floats are sent as integers.
    if case.path == "/v1/parameters" and isinstance(body, dict) and isinstance(body.get("rendering"), dict):
        sides = body["rendering"].get("pyramid_sides")
        if isinstance(sides, float) and sides.is_integer():
            body["rendering"]["pyramid_sides"] = int(sides)
    if case.method != "POST" or not isinstance(body, dict) or not isinstance(body.get("path"), str):
        return
    given = body["path"]
    if case.path == "/v1/recording":
        recordings += 1
        suffix = ".mcap" if given.endswith(".mcap") else ".csv"
        body["path"] = str(SCRATCH / f"recording-{recordings}{suffix}")
        FIGURES["recordings_asked"] = recordings
    elif case.path == "/v1/scene":
        if scene_loads_left > 0:
            scene_loads_left -= 1
            FIGURES["scene_loads"] = FIGURES.get("scene_loads", 0) + 1
            body["path"] = REAL_SCENE
        else:
            pick = int(hashlib.sha256(given.encode()).hexdigest(), 16) % len(SCENE_PATHS)
            body["path"] = SCENE_PATHS[pick]


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck), print_blob=False)
def test_api(case):
    if time_left() <= 0:
        return
    bound(case)
    before = snapshot()
    PACER.wait()
    response = case.call(timeout=60)
    FIGURES["calls"] += 1
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.status_code == 429:
        # The pacer keeps under the limit; a burst from a slow machine may
        # still meet it. A refusal all the same: check it changed nothing.
        pass
    if isinstance(body, dict) and body.get("ok") is False:
        FIGURES["refusals"] += 1
        after = snapshot()
        changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
        if changed:
            FIGURES["state_changes_on_refusal"] += 1
        assert not changed, f"{case.method} {case.path} was refused ({body}) but changed {changed}"
    # A 422 names a value refused by what the schema cannot say: the whole
    # scene's validation of a patch, a scene file's contents, a file that
    # cannot be created. Every other check still applies to it.
    excluded = []
    if response.status_code == 422 and (case.method, case.path) in SEMANTIC:
        excluded.append(positive_data_acceptance)
    # OpenAPI cannot describe a WebSocket handshake: a plain GET of the
    # stream is refused for its missing upgrade (test_stream.py covers it).
    if (case.method, case.path) == ("GET", "/v1/stream") and response.status_code == 400 \
            and "upgrade" in response.text.lower():
        excluded.append(positive_data_acceptance)
    try:
        case.validate_response(response, excluded_checks=excluded)
    except BaseException:
        FIGURES["check_failures"] += 1
        raise


def test_no_recording_left_running():
    """Stops a recording the fuzzing started, so the daemon exits cleanly."""
    PACER.wait()
    reply = http.delete(f"{BASE}/v1/recording", timeout=30)
    assert reply.status_code in (200, 409), reply.text
