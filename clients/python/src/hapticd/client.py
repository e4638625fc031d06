"""The control API of docs/protocol.md over HTTP/JSON, sync and async."""

from __future__ import annotations

from typing import Any

import httpx

from .stream import AsyncStream, Stream

#: The daemon's default address (`[server] listen`).
DEFAULT_URL = "http://127.0.0.1:7878"


class ApiError(Exception):
    """A refused request: the reply's error `code`, `message` and, when a
    value was refused, the config `field` that names it."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None):
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        where = f" ({field})" if field else ""
        super().__init__(f"{status} {code}{where}: {message}")


def _data(response: httpx.Response) -> Any:
    """The `data` of an `{"ok": true}` reply; raises [ApiError] otherwise."""
    try:
        body = response.json()
    except ValueError:
        raise ApiError(response.status_code, "internal", f"not JSON: {response.text[:200]!r}") from None
    if body.get("ok"):
        return body.get("data")
    error = body.get("error") or {}
    raise ApiError(
        response.status_code,
        error.get("code", "internal"),
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


class _Endpoints:
    """Requests of every endpoint, shared by [Client] and [AsyncClient]:
    each returns `(method, path, json body)`."""

    @staticmethod
    def status():
        return "GET", "/v1/status", None

    @staticmethod
    def parameters():
        return "GET", "/v1/parameters", None

    @staticmethod
    def patch_parameters(patch: dict[str, Any]):
        return "PATCH", "/v1/parameters", patch

    @staticmethod
    def scene():
        return "GET", "/v1/scene", None

    @staticmethod
    def load_scene(path: str):
        return "POST", "/v1/scene", {"path": str(path)}

    @staticmethod
    def recording():
        return "GET", "/v1/recording", None

    @staticmethod
    def start_recording(path: str):
        return "POST", "/v1/recording", {"path": str(path)}

    @staticmethod
    def stop_recording():
        return "DELETE", "/v1/recording", None

    @staticmethod
    def devices():
        return "GET", "/v1/devices", None

    @staticmethod
    def openapi():
        return "GET", "/v1/openapi.json", None


def friction_patch(material: str, mu: float) -> dict[str, Any]:
    """The parameter patch that sets `material`'s friction coefficient."""
    return {"materials": {material: {"friction_coefficient": mu}}}


class Client:
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

    def _call(self, request) -> Any:
        method, path, body = request
        return _data(self._http.request(method, path, json=body))

    def status(self) -> dict[str, Any]:
        """`GET /v1/status`: the run's live figures."""
        return self._call(_Endpoints.status())

    def parameters(self) -> dict[str, Any]:
        """`GET /v1/parameters`: the rendering parameters in force, with their `generation`."""
        return self._call(_Endpoints.parameters())

    def patch_parameters(self, patch: dict[str, Any]) -> dict[str, Any]:
        """`PATCH /v1/parameters`: changes some parameters; returns once the servo took them."""
        return self._call(_Endpoints.patch_parameters(patch))

    def set_friction_coefficient(self, material: str, mu: float) -> dict[str, Any]:
        """Sets one material's friction coefficient through `PATCH /v1/parameters`."""
        return self.patch_parameters(friction_patch(material, mu))

    def scene(self) -> dict[str, Any]:
        """`GET /v1/scene`: the scene's file, objects and servo rate."""
        return self._call(_Endpoints.scene())

    def load_scene(self, path: str) -> dict[str, Any]:
        """`POST /v1/scene`: loads another scene (relative to the daemon's working directory)."""
        return self._call(_Endpoints.load_scene(path))

    def recording(self) -> dict[str, Any] | None:
        """`GET /v1/recording`: the recording in progress, or None."""
        return self._call(_Endpoints.recording())

    def start_recording(self, path: str) -> dict[str, Any]:
        """`POST /v1/recording`: records ticks to `path`, MCAP if it ends in `.mcap`, else CSV."""
        return self._call(_Endpoints.start_recording(path))

    def stop_recording(self) -> dict[str, Any]:
        """`DELETE /v1/recording`: finishes the recording; its path and tick count."""
        return self._call(_Endpoints.stop_recording())

    def devices(self) -> list[dict[str, Any]]:
        """`GET /v1/devices`: connected HID devices and the profile each matches."""
        return self._call(_Endpoints.devices())

    def openapi(self) -> dict[str, Any]:
        """`GET /v1/openapi.json`: the API in OpenAPI 3.1."""
        return self._call(_Endpoints.openapi())

    def stream(self, rate_hz: float | None = None, contacts: int | None = None) -> Stream:
        """Connects to `/v1/stream`; iterate the result for its messages."""
        return Stream(_ws_url(self.base_url, rate_hz, contacts, self.token), self.unix_socket)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class AsyncClient:
    """The asyncio twin of [Client], with the same methods as coroutines."""

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

    async def _call(self, request) -> Any:
        method, path, body = request
        return _data(await self._http.request(method, path, json=body))

    async def status(self) -> dict[str, Any]:
        """`GET /v1/status`."""
        return await self._call(_Endpoints.status())

    async def parameters(self) -> dict[str, Any]:
        """`GET /v1/parameters`."""
        return await self._call(_Endpoints.parameters())

    async def patch_parameters(self, patch: dict[str, Any]) -> dict[str, Any]:
        """`PATCH /v1/parameters`."""
        return await self._call(_Endpoints.patch_parameters(patch))

    async def set_friction_coefficient(self, material: str, mu: float) -> dict[str, Any]:
        """Sets one material's friction coefficient."""
        return await self.patch_parameters(friction_patch(material, mu))

    async def scene(self) -> dict[str, Any]:
        """`GET /v1/scene`."""
        return await self._call(_Endpoints.scene())

    async def load_scene(self, path: str) -> dict[str, Any]:
        """`POST /v1/scene`."""
        return await self._call(_Endpoints.load_scene(path))

    async def recording(self) -> dict[str, Any] | None:
        """`GET /v1/recording`."""
        return await self._call(_Endpoints.recording())

    async def start_recording(self, path: str) -> dict[str, Any]:
        """`POST /v1/recording`."""
        return await self._call(_Endpoints.start_recording(path))

    async def stop_recording(self) -> dict[str, Any]:
        """`DELETE /v1/recording`."""
        return await self._call(_Endpoints.stop_recording())

    async def devices(self) -> list[dict[str, Any]]:
        """`GET /v1/devices`."""
        return await self._call(_Endpoints.devices())

    async def openapi(self) -> dict[str, Any]:
        """`GET /v1/openapi.json`."""
        return await self._call(_Endpoints.openapi())

    def stream(self, rate_hz: float | None = None, contacts: int | None = None) -> AsyncStream:
        """Connects to `/v1/stream`; `async for` over the result."""
        return AsyncStream(_ws_url(self.base_url, rate_hz, contacts, self.token), self.unix_socket)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()
