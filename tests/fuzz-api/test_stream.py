"""Malformed input on the state stream (`/v1/stream`), at the WebSocket
level and below it, with an observer client that must keep receiving
frames throughout.

Each case checks the reply docs/protocol.md gives: an `error` frame
(`bad_request`, or `invalid_parameter` with `field`) that changes nothing,
close code 1009 for a text frame over 4 KiB, HTTP 503 beyond
`max_clients`. Frames the protocol says nothing about (invalid UTF-8,
garbage below the WebSocket framing, a peer gone mid-frame) must end that
connection without affecting the daemon or the other clients.
"""

import base64
import json
import os
import random
import socket
import struct
import threading
import time
from urllib.parse import urlparse

import pytest
import requests

from conftest import BASE, FIGURES, PACER, time_left

HOST, PORT = urlparse(BASE).hostname, urlparse(BASE).port
MAX_CLIENTS = int(os.environ.get("HAPTICD_FUZZ_MAX_CLIENTS", "32"))

TEXT, BINARY, CLOSE, PING, PONG, CONT = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0


class Closed(Exception):
    def __init__(self, code):
        super().__init__(f"closed with {code}")
        self.code = code


class Raw:
    """A WebSocket client on a bare socket, to send what a library would not."""

    def __init__(self, query: str = "", timeout: float = 10.0):
        PACER.wait()
        self.sock = socket.create_connection((HOST, PORT), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET /v1/stream{query} HTTP/1.1\r\nHost: {HOST}:{PORT}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        self.buffer = b""
        head = self._until(b"\r\n\r\n")
        self.status = int(head.split(b" ", 2)[1])
        self.head = head
        if self.status != 101:
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            self.body = self._exactly(length)

    def _recv(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise Closed(None)
        self.buffer += chunk

    def _until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            self._recv()
        head, self.buffer = self.buffer.split(marker, 1)
        return head

    def _exactly(self, n: int) -> bytes:
        while len(self.buffer) < n:
            self._recv()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def send_frame(self, opcode: int, payload: bytes, fin: bool = True, mask: bool = True, rsv: int = 0):
        head = bytes([(0x80 if fin else 0) | (rsv << 4) | opcode])
        n = len(payload)
        m = 0x80 if mask else 0
        if n < 126:
            head += bytes([m | n])
        elif n < 1 << 16:
            head += bytes([m | 126]) + struct.pack(">H", n)
        else:
            head += bytes([m | 127]) + struct.pack(">Q", n)
        if mask:
            key = os.urandom(4)
            head += key
            payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + payload)

    def send_text(self, text):
        self.send_frame(TEXT, text.encode() if isinstance(text, str) else text)

    def frame(self):
        """The next frame from the server: (opcode, payload); a close frame
        raises Closed with its code."""
        b0, b1 = self._exactly(2)
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack(">H", self._exactly(2))
        elif n == 127:
            (n,) = struct.unpack(">Q", self._exactly(8))
        payload = self._exactly(n)
        opcode = b0 & 0x0F
        if opcode == CLOSE:
            raise Closed(struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else None)
        return opcode, payload

    def reply(self, within: float = 5.0):
        """The next text frame that is not a tick or an event."""
        end = time.monotonic() + within
        while time.monotonic() < end:
            opcode, payload = self.frame()
            if opcode == TEXT:
                message = json.loads(payload)
                if message["type"] not in ("tick", "event", "hello"):
                    return message
        raise AssertionError("no reply")

    def close_code(self, within: float = 5.0):
        """Reads until the server closes; its close code, or None when the
        connection ended without a close frame."""
        self.sock.settimeout(within)
        try:
            while True:
                self.frame()
        except Closed as closed:
            return closed.code
        except (ConnectionResetError, BrokenPipeError):
            return None

    def tick(self, within: float = 5.0):
        end = time.monotonic() + within
        while time.monotonic() < end:
            opcode, payload = self.frame()
            if opcode == TEXT and json.loads(payload)["type"] == "tick":
                return json.loads(payload)
        raise AssertionError("no tick")

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Observer(threading.Thread):
    """A well-behaved client counting the tick frames it receives."""

    def __init__(self):
        super().__init__(daemon=True)
        self.ticks = 0
        self.error = None
        self.stop = threading.Event()
        self.client = Raw("?rate_hz=50&contacts=4", timeout=5.0)
        assert self.client.status == 101

    def run(self):
        try:
            while not self.stop.is_set():
                opcode, payload = self.client.frame()
                if opcode == TEXT and b'"type":"tick"' in payload:
                    self.ticks += 1
        except Exception as e:  # noqa: BLE001 - reported by receiving()
            if not self.stop.is_set():
                self.error = e

    def receiving(self, within: float = 5.0) -> bool:
        seen = self.ticks
        end = time.monotonic() + within
        while time.monotonic() < end and self.error is None:
            if self.ticks > seen:
                return True
            time.sleep(0.02)
        return False


@pytest.fixture(scope="module")
def observer():
    o = Observer()
    o.start()
    assert o.receiving(), "the observer gets no ticks before any fuzzing"
    yield o
    o.stop.set()
    o.client.close()


@pytest.fixture(autouse=True)
def still_served(request, observer):
    """After each case: the observer still receives, the daemon answers."""
    FIGURES["ws_cases"] += 1
    failed = True
    try:
        yield
        failed = False
    finally:
        if failed:
            FIGURES["ws_failures"] += 1
    assert observer.error is None, f"the observer lost its stream: {observer.error!r}"
    assert observer.receiving(), "the observer stopped receiving ticks"
    PACER.wait()
    assert requests.get(f"{BASE}/v1/status", timeout=10).json()["ok"] is True


def my_client():
    """The status entry of the newest stream client."""
    PACER.wait()
    clients = requests.get(f"{BASE}/v1/status", timeout=10).json()["data"]["server"]["clients"]
    return max(clients, key=lambda c: c["id"])


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "{",
        "",
        "[]",
        "null",
        '"subscribe"',
        '{"rate_hz": 30}',
        '{"type": "unsubscribe"}',
        '{"type": "hello"}',
        '{"type": 7}',
        '{"type": "subscribe", "rate_hz": "fast"}',
        '{"type": "subscribe", "contacts": -1}',
        '{"type": "subscribe", "contacts": 1.5}',
        '{"type": "subscribe", "contacts": 99999999999999999999}',
        '{"type": "subscribe", "rate_hz": null, "extra": 1}',
        '{"type": "subscribe", "rate_hz": [1]}',
        '{"type": "subscribe"' + "," * 4000 + "}",
        "\x00\x01\x02",
        '{"type": "subscribe", "rate_hz": 1e999}',
    ],
)
def test_malformed_message(text):
    client = Raw("?rate_hz=20&contacts=8")
    try:
        assert client.status == 101
        client.send_text(text)
        reply = client.reply()
        assert reply["type"] == "error" and reply["code"] == "bad_request", reply
        # Nothing changed, and the connection goes on.
        mine = my_client()
        assert (mine["rate_hz"], mine["contacts"]) == (20.0, 8), mine
        client.tick()
    finally:
        client.close()


@pytest.mark.parametrize(
    "message, field",
    [
        ({"type": "subscribe", "rate_hz": 0}, "rate_hz"),
        ({"type": "subscribe", "rate_hz": 1000.5}, "rate_hz"),
        ({"type": "subscribe", "rate_hz": -5, "contacts": 3}, "rate_hz"),
        ({"type": "subscribe", "contacts": 257}, "contacts"),
        ({"type": "subscribe", "rate_hz": 30, "contacts": 100000}, "contacts"),
    ],
)
def test_out_of_range(message, field):
    client = Raw("?rate_hz=20&contacts=8")
    try:
        client.send_text(json.dumps(message))
        reply = client.reply()
        assert reply == {"type": "error", "code": "invalid_parameter", "message": reply["message"], "field": field}
        mine = my_client()
        assert (mine["rate_hz"], mine["contacts"]) == (20.0, 8), mine
        client.tick()
    finally:
        client.close()


def test_valid_subscribe_after_errors():
    client = Raw("?rate_hz=20&contacts=8")
    try:
        client.send_text("garbage")
        assert client.reply()["code"] == "bad_request"
        client.send_text('{"type": "subscribe", "rate_hz": 30}')
        time.sleep(0.3)
        mine = my_client()
        assert (mine["rate_hz"], mine["contacts"]) == (30.0, 8), mine
    finally:
        client.close()


def test_binary_frame():
    client = Raw()
    try:
        client.send_frame(BINARY, b'{"type": "subscribe", "rate_hz": 30}')
        reply = client.reply()
        assert reply["type"] == "error" and reply["code"] == "bad_request", reply
        client.tick()
    finally:
        client.close()


@pytest.mark.parametrize("size", [4097, 8192, 60000, 65537, 300000, 2_000_000])
def test_huge_text_frame(size):
    client = Raw()
    try:
        body = ('{"type": "subscribe", "rate_hz": 30, "pad": "' + "x" * size + '"}').encode()
        try:
            if size < 65536:
                client.send_text(body)
            else:
                # Only the frame's head and a start: the server refuses the
                # frame by its length, and had the whole been sent it would
                # close with data unread, a reset that may lose its close frame.
                head = bytes([0x81, 0xFF]) + struct.pack(">Q", len(body)) + b"\x00\x00\x00\x00"
                client.sock.sendall(head + body[:1000])
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert client.close_code() == 1009
    finally:
        client.close()


def test_huge_fragmented_message():
    client = Raw()
    try:
        try:
            client.send_frame(TEXT, b"[" + b"1," * 1000, fin=False)
            for _ in range(40):
                client.send_frame(CONT, b"1," * 1000, fin=False)
            client.send_frame(CONT, b"1]")
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert client.close_code() == 1009
    finally:
        client.close()


def test_fragmented_valid_message():
    client = Raw("?rate_hz=20&contacts=8")
    try:
        client.send_frame(TEXT, b'{"type": "subs', fin=False)
        client.send_frame(PING, b"in between")
        client.send_frame(CONT, b'cribe", "contacts": 5}')
        time.sleep(0.3)
        mine = my_client()
        assert (mine["rate_hz"], mine["contacts"]) == (20.0, 5), mine
        client.tick()
    finally:
        client.close()


@pytest.mark.parametrize(
    "payload",
    [b"\xff\xfe", b'{"type": "subscribe", "rate_hz": "\xc3\x28"}', b"\xed\xa0\x80", b"abc\xf0\x9f"],
)
def test_invalid_utf8_text(payload):
    client = Raw()
    try:
        client.send_text(payload)
        # Invalid UTF-8 in a text frame ends the connection (1007 by RFC 6455).
        assert client.close_code() == 1007
    finally:
        client.close()


@pytest.mark.parametrize(
    "name, frame",
    [
        ("unmasked", lambda c: c.send_frame(TEXT, b'{"type": "subscribe"}', mask=False)),
        ("reserved bits", lambda c: c.send_frame(TEXT, b"{}", rsv=0b111)),
        ("reserved opcode", lambda c: c.send_frame(0x3, b"x")),
        ("control opcode 0xB", lambda c: c.send_frame(0xB, b"x")),
        ("continuation first", lambda c: c.send_frame(CONT, b"x")),
        ("fragmented ping", lambda c: c.send_frame(PING, b"x", fin=False)),
        ("long ping", lambda c: c.send_frame(PING, b"x" * 200)),
        ("text inside a fragmented text", lambda c: (c.send_frame(TEXT, b"a", fin=False), c.send_frame(TEXT, b"b"))),
        ("2^63 length", lambda c: c.sock.sendall(bytes([0x81, 0xFF]) + b"\x7f" + b"\xff" * 7 + b"abcd")),
        ("bad close code", lambda c: c.send_frame(CLOSE, struct.pack(">H", 999))),
        ("close with invalid utf-8 reason", lambda c: c.send_frame(CLOSE, struct.pack(">H", 1000) + b"\xff")),
        ("one-byte close", lambda c: c.send_frame(CLOSE, b"\x03")),
        ("random bytes", lambda c: c.sock.sendall(random.Random(1).randbytes(4096))),
        ("http again", lambda c: c.sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")),
        ("zeros", lambda c: c.sock.sendall(bytes(1024))),
    ],
)
def test_garbage_below_websocket(name, frame):
    client = Raw()
    try:
        try:
            frame(client)
        except (BrokenPipeError, ConnectionResetError):
            pass
        # A protocol error or a close ends this connection: 1002 (protocol
        # error), an echo of the client's close (1000), or no close frame.
        assert client.close_code() in (1000, 1002, 1007, 1009, None)
    finally:
        client.close()


@pytest.mark.parametrize("cut", [1, 2, 5, 10, 500])
def test_disconnect_mid_frame(cut):
    client = Raw()
    head_and_part = bytes([0x81, 0xFE]) + struct.pack(">H", 1000) + b"\x00\x00\x00\x00" + b"{" * 500
    client.sock.sendall(head_and_part[:cut])
    client.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.close()  # a reset, mid-frame
    time.sleep(0.2)


def test_disconnect_mid_handshake():
    PACER.wait()
    sock = socket.create_connection((HOST, PORT), timeout=5)
    sock.sendall(b"GET /v1/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConn")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def test_clients_gone_are_forgotten():
    """Clients that ended abruptly are no longer listed (only the observer)."""
    end = time.monotonic() + 10
    while time.monotonic() < end:
        PACER.wait()
        clients = requests.get(f"{BASE}/v1/status", timeout=10).json()["data"]["server"]["clients"]
        if len(clients) == 1:
            return
        time.sleep(0.2)
    raise AssertionError(f"clients left listed: {clients}")


def test_beyond_max_clients():
    clients = []
    try:
        # The observer is one already.
        for _ in range(MAX_CLIENTS - 1):
            c = Raw("?rate_hz=1&contacts=0")
            assert c.status == 101, c.head
            clients.append(c)
        for _ in range(5):
            extra = Raw()
            try:
                assert extra.status == 503, extra.head
                body = json.loads(extra.body)
                assert body["ok"] is False and body["error"]["code"] == "busy", body
            finally:
                extra.close()
    finally:
        for c in clients:
            c.close()
    # The places are given back.
    end = time.monotonic() + 10
    while time.monotonic() < end:
        PACER.wait()
        if len(requests.get(f"{BASE}/v1/status", timeout=10).json()["data"]["server"]["clients"]) == 1:
            break
        time.sleep(0.2)
    c = Raw()
    assert c.status == 101
    c.close()


def test_random_frames():
    """Random frames, well-formed and not, until the time budget is spent."""
    rng = random.Random(int(os.environ.get("HAPTICD_FUZZ_SEED", "7")))
    sent = 0
    while time_left() > 0 and sent < 3000:
        client = Raw()
        try:
            for _ in range(rng.randint(1, 5)):
                kind = rng.random()
                try:
                    if kind < 0.4:
                        words = ['{"type":', '"subscribe"', '"rate_hz":', '"contacts":', "30", "-1", "1e9",
                                 "null", "[", "]", "{", "}", ",", '"x"', "true", ":"]
                        text = "".join(rng.choice(words) for _ in range(rng.randint(0, 12)))
                        client.send_text(text)
                    elif kind < 0.6:
                        client.send_frame(rng.choice([TEXT, BINARY, PING, PONG]), rng.randbytes(rng.randint(0, 300)))
                    elif kind < 0.8:
                        client.send_frame(rng.randint(0, 15), rng.randbytes(rng.randint(0, 300)),
                                          fin=rng.random() < 0.7, mask=rng.random() < 0.9, rsv=rng.randint(0, 7))
                    else:
                        client.sock.sendall(rng.randbytes(rng.randint(1, 64)))
                except (BrokenPipeError, ConnectionResetError):
                    break
                sent += 1
        finally:
            client.close()
    FIGURES["ws_random_frames"] = sent
