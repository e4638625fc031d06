"""The control API of docs/protocol.md over HTTP/JSON: every endpoint
defined once ([Endpoints]), sent by a blocking [Client] or an asyncio
[AsyncClient], its reply parsed into the dataclasses of `replies`."""

from __future__ import annotations

from typing import Any

import httpx

from ._json import from_json
from .replies import BackendDevices, Parameters, Recording, SceneInfo, Status
from .stream import AsyncStream, Stream
from .vocabulary import ErrorCode

#: The daemon's default address (`[server] listen`).
DEFAULT_URL = "http://127.0.0.1:7878"


class ApiError(Exception):
    """A refused request: the reply's error `code`, `message` and, when a
    value was refused, the config `field` that names it."""

    def __init__(self, status: int, code: ErrorCode | str, message: str, field: str | None = None):
        self.status = status
        self.code = _error_code(code)
        self.message = message
        self.field = field
        where = f" ({field})" if field else ""
        super().__init__(f"{status} {self.code}{where}: {message}")


def _error_code(code: ErrorCode | str) -> ErrorCode | str:
    """`code` as an [ErrorCode]; a code this client does not know stays a string."""
    try:
        return ErrorCode(code)
    except ValueError:
        return code


def _data(response: httpx.Response, reply: Any, enveloped: bool = True) -> Any:
    """The `data` of an `{"ok": true}` reply as a `reply` (the body itself
    when not `enveloped`: the OpenAPI document); raises [ApiError] otherwise."""
    try:
        body = response.json()
    except ValueError:
        raise ApiError(response.status_code, ErrorCode.INTERNAL, f"not JSON: {response.text[:200]!r}") from None
    if not isinstance(body, dict):
        raise ApiError(response.status_code, ErrorCode.INTERNAL, f"not a reply: {response.text[:200]!r}")
    if not enveloped and response.is_success:
        return body
    if body.get("ok"):
        try:
            return from_json(reply, body.get("data"))
        except ValueError as e:
            raise ApiError(response.status_code, ErrorCode.INTERNAL, f"malformed reply: {e}") from None
    error = body.get("error") or {}
    raise ApiError(
        response.status_code,
        error.get("code", ErrorCode.INTERNAL),
        error.get("message", ""),
        error.get("field"),
    )


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _ws_url(base_url: str, rate_hz: float | None, contacts: int | None, token: str | None) -> str:
    url = httpx.URL(base_url.replace("http", "ws", 1)).join("/v1/stream")
    params = {
        key: value
        for key, value in (("rate_hz", rate_hz), ("contacts", contacts), ("token", token))
        if value is not None
    }
    return str(url.copy_merge_params(params))


def friction_patch(material: str, mu: float) -> dict[str, Any]:
    """The parameter patch that sets `material`'s friction coefficient."""
    return {"materials": {material: {"friction_coefficient": mu}}}


class Endpoints:
    """Every endpoint of the API, once: each method names its request and
    the type of its reply, and `_send` (the transport) sends it. With
    [Client] a method returns the reply; with [AsyncClient] a coroutine
    of it."""

    def _send(
        self, method: str, path: str, reply: Any, body: dict[str, Any] | None = None, enveloped: bool = True
    ) -> Any:
        raise NotImplementedError

    def status(self) -> Status:
        """`GET /v1/status`: the run's live figures."""
        return self._send("GET", "/v1/status", Status)

    def parameters(self) -> Parameters:
        """`GET /v1/parameters`: the rendering parameters in force, with their `generation`."""
        return self._send("GET", "/v1/parameters", Parameters)

    def patch_parameters(self, patch: dict[str, Any]) -> Parameters:
        """`PATCH /v1/parameters`: changes some parameters; returns once the servo took them,
        with `applied_tick`."""
        return self._send("PATCH", "/v1/parameters", Parameters, patch)

    def set_friction_coefficient(self, material: str, mu: float) -> Parameters:
        """Sets one material's friction coefficient through `PATCH /v1/parameters`."""
        return self.patch_parameters(friction_patch(material, mu))

    def scene(self) -> SceneInfo:
        """`GET /v1/scene`: the scene's file, objects and servo rate."""
        return self._send("GET", "/v1/scene", SceneInfo)

    def load_scene(self, path: str) -> SceneInfo:
        """`POST /v1/scene`: loads another scene (relative to the daemon's working directory)."""
        return self._send("POST", "/v1/scene", SceneInfo, {"path": str(path)})

    def recording(self) -> Recording | None:
        """`GET /v1/recording`: the recording in progress, or None."""
        return self._send("GET", "/v1/recording", Recording | None)

    def start_recording(self, path: str) -> Recording:
        """`POST /v1/recording`: records ticks to `path`, MCAP if it ends in `.mcap`, else CSV."""
        return self._send("POST", "/v1/recording", Recording, {"path": str(path)})

    def stop_recording(self) -> Recording:
        """`DELETE /v1/recording`: finishes the recording; its path and tick count."""
        return self._send("DELETE", "/v1/recording", Recording)

    def devices(self) -> list[BackendDevices]:
        """`GET /v1/devices`: what every device backend finds, as `hapticd devices` lists it."""
        return self._send("GET", "/v1/devices", list[BackendDevices])

    def openapi(self) -> dict[str, Any]:
        """`GET /v1/openapi.json`: the API in OpenAPI 3.1, as parsed JSON."""
        return self._send("GET", "/v1/openapi.json", Any, enveloped=False)


class Client(Endpoints):
    """A blocking client of one daemon.

    `base_url` is the daemon's `http://host:port`; `token` its bearer token
    when it has one; `unix_socket` a path to reach it by instead of TCP;
    `transport` an httpx transport to send the requests through instead.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        token: str | None = None,
        unix_socket: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ):
        self.base_url = base_url
        self.token = token
        self.unix_socket = unix_socket
        if unix_socket:
            transport = httpx.HTTPTransport(uds=unix_socket)
        self._http = httpx.Client(
            base_url=base_url, headers=_headers(token), timeout=timeout, transport=transport
        )

    def _send(
        self, method: str, path: str, reply: Any, body: dict[str, Any] | None = None, enveloped: bool = True
    ) -> Any:
        return _data(self._http.request(method, path, json=body), reply, enveloped)

    def stream(self, rate_hz: float | None = None, contacts: int | None = None) -> Stream:
        """Connects to `/v1/stream`; iterate the result for its messages."""
        return Stream(_ws_url(self.base_url, rate_hz, contacts, self.token), self.unix_socket)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class AsyncClient(Endpoints):
    """The asyncio twin of [Client]: the same methods, each returning a
    coroutine of its reply."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        token: str | None = None,
        unix_socket: str | None = None,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        self.base_url = base_url
        self.token = token
        self.unix_socket = unix_socket
        if unix_socket:
            transport = httpx.AsyncHTTPTransport(uds=unix_socket)
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=_headers(token), timeout=timeout, transport=transport
        )

    async def _send(
        self, method: str, path: str, reply: Any, body: dict[str, Any] | None = None, enveloped: bool = True
    ) -> Any:
        return _data(await self._http.request(method, path, json=body), reply, enveloped)

    def stream(self, rate_hz: float | None = None, contacts: int | None = None) -> AsyncStream:
        """Connects to `/v1/stream`; `async for` over the result."""
        return AsyncStream(_ws_url(self.base_url, rate_hz, contacts, self.token), self.unix_socket)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()
