"""Stream load for scripts/bench-timing --stream-clients: attaches N reading
WebSocket clients and S stalled ones to a running daemon, samples the
daemon's resident memory once a second, and writes what it saw as JSON.

A reading client reads every frame as it arrives and counts tick frames,
events, geometry frames and the server's `dropped` count for it. A stalled
client opens the stream with a plain socket, completes the handshake and
never reads again, so the server's queue for it fills and its frames are
dropped (or it is disconnected); its drop count is read from /v1/status
once a second.

Usage: lib-stream-load.py PORT PID SECONDS OUT.json [--clients N]
           [--stalled S] [--rate-hz R]
Needs the `websockets` package (the Python client's test environment).
"""

import argparse
import asyncio
import base64
import json
import os
import socket
import time
import urllib.request

import websockets


def rss_kib(pid):
    """The process's resident set (KiB), or None once it has ended."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def status(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/status", timeout=5) as reply:
        return json.load(reply)["data"]


async def reading_client(port, rate_hz, deadline, seen):
    url = f"ws://127.0.0.1:{port}/v1/stream?rate_hz={rate_hz}"
    async with websockets.connect(url, max_size=None) as ws:
        seen["connected"] = True
        while time.monotonic() < deadline:
            try:
                frame = await asyncio.wait_for(ws.recv(), timeout=max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                break
            if isinstance(frame, bytes):
                # A deformable's surface (HDEF) or an object's geometry (HGEO).
                seen["surfaces" if frame[:4] == b"HDEF" else "geometry"] += 1
                continue
            message = json.loads(frame)
            kind = message.get("type")
            if kind == "tick":
                seen["ticks"] += 1
                seen["dropped"] = message.get("dropped", 0)
                now = time.monotonic()
                if seen["last"] is not None:
                    seen["max_gap_s"] = max(seen["max_gap_s"], now - seen["last"])
                seen["last"] = now
            elif kind == "event":
                seen["events"] += 1


def stalled_client(port, rate_hz):
    """A WebSocket handshake on a plain socket whose receive buffer is made
    small; the caller keeps it open and never reads it."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /v1/stream?rate_hz={rate_hz} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = sock.recv(1)
        if not chunk:
            raise RuntimeError("the server closed the stalled client's handshake")
        reply += chunk
    if b" 101 " not in reply.split(b"\r\n", 1)[0]:
        raise RuntimeError(f"stalled client refused: {reply.splitlines()[0]!r}")
    return sock


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("pid", type=int)
    parser.add_argument("seconds", type=float)
    parser.add_argument("out")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--stalled", type=int, default=1)
    parser.add_argument("--rate-hz", type=float, default=60.0)
    args = parser.parse_args()

    started = time.monotonic()
    deadline = started + args.seconds
    stalled = [stalled_client(args.port, args.rate_hz) for _ in range(args.stalled)]
    seen = [
        {"connected": False, "ticks": 0, "events": 0, "geometry": 0, "surfaces": 0, "dropped": 0,
         "last": None, "max_gap_s": 0.0}
        for _ in range(args.clients)
    ]
    tasks = [
        asyncio.create_task(reading_client(args.port, args.rate_hz, deadline, s)) for s in seen
    ]
    # Per stalled client (by its peer address as the server names it): the
    # frames the server dropped for it, and when it was disconnected.
    peers = {f"127.0.0.1:{sock.getsockname()[1]}": {"dropped": 0, "disconnected_s": None} for sock in stalled}
    memory = []
    while time.monotonic() < deadline:
        kib = rss_kib(args.pid)
        if kib is None:
            break
        now = round(time.monotonic() - started, 1)
        memory.append([now, kib])
        listed = {c["peer"]: c for c in status(args.port).get("server", {}).get("clients", [])}
        for peer, seen_stalled in peers.items():
            if peer in listed:
                seen_stalled["dropped"] = listed[peer]["dropped"]
            elif seen_stalled["disconnected_s"] is None:
                seen_stalled["disconnected_s"] = now
        await asyncio.sleep(1.0)
    errors = [repr(e) for e in await asyncio.gather(*tasks, return_exceptions=True) if e]
    for sock in stalled:
        sock.close()
    elapsed = time.monotonic() - started
    for s in seen:
        s.pop("last")
    json.dump(
        {
            "seconds": elapsed,
            "rate_hz": args.rate_hz,
            "reading": seen,
            "reading_errors": errors,
            "stalled_clients": list(peers.values()),
            "rss_kib": memory,
        },
        open(args.out, "w"),
        indent=1,
    )


if __name__ == "__main__":
    asyncio.run(main())
