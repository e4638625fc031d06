"""Prints a running daemon's state stream: the scene, each object's
geometry, then one line per tick frame and every event.

    python examples/print_stream.py --url http://127.0.0.1:7878 --rate 10
"""

from __future__ import annotations

import argparse

import numpy as np

from hapticd import (
    DEFAULT_URL,
    Client,
    Event,
    Geometry,
    Hello,
    SafetyState,
    SafetyTrip,
    StateChange,
    StreamError,
    Tick,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=DEFAULT_URL)
    parser.add_argument("--token", help="the daemon's bearer token, if it has one")
    parser.add_argument("--rate", type=float, default=10.0, help="tick frames per second")
    args = parser.parse_args()

    with Client(args.url, token=args.token) as client, client.stream(rate_hz=args.rate, contacts=0) as stream:
        for message in stream:
            if isinstance(message, Hello):
                names = ", ".join(f"{o.name} ({o.role})" for o in message.objects)
                print(f"scene {message.scene} at {message.servo_rate_hz:g} Hz: {names}")
            elif isinstance(message, Geometry):
                extent = np.ptp(message.vertices, axis=0) * 1e3
                print(
                    f"  object {message.index}: {len(message.triangles)} triangles, "
                    f"{extent[0]:.1f} × {extent[1]:.1f} × {extent[2]:.1f} mm"
                )
            elif isinstance(message, Tick):
                force = np.linalg.norm(message.vector("force_n"))
                print(
                    f"{message.time_s:9.3f} s  {message.state:<8} {message.contacts:4} contacts  "
                    f"|F| {force:6.3f} N  compute {message.compute_us:6.1f} µs"
                )
                if message.safety_state != SafetyState.NORMAL:
                    print(f"  safety: {message.safety_state}")
            elif isinstance(message, StateChange):
                print(f"  tick {message.tick}: {message.from_state} → {message.to_state}")
            elif isinstance(message, SafetyTrip):
                print(f"  tick {message.tick}: safety trip ({message.cause}), {message.trips} so far")
            elif isinstance(message, Event):
                details = {k: v for k, v in message.data.items() if k not in ("type", "tick", "event")}
                print(f"  event at tick {message.tick}: {message.event} {details}")
            elif isinstance(message, StreamError):
                print(f"  error {message.code}: {message.message}")


if __name__ == "__main__":
    main()
