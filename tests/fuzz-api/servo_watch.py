"""Samples /v1/status twice a second until STOP_FILE exists, one JSON line
per sample in OUT; `report` then sums the servo's faults, safety trips and
deadline misses over a window, across scene loads (which restart the
counters)."""

import json
import os
import sys
import time

import requests

FIELDS = ("ticks", "deadline_misses", "safety_trips", "dropped_records")
FAULTS = ("read", "render", "write", "solver_failed", "quarantined")


def watch(base: str, out: str, stop: str) -> None:
    with open(out, "a") as f:
        while not os.path.exists(stop):
            try:
                reply = requests.get(f"{base}/v1/status", timeout=5)
                if reply.status_code == 200:
                    s = reply.json()["data"]
                    sample = {k: s[k] for k in FIELDS}
                    sample.update({f"faults.{k}": s["faults"][k] for k in FAULTS})
                    sample.update(t=time.time(), rate_hz=s["rate_hz"], servo_rate_hz=s["servo_rate_hz"])
                    f.write(json.dumps(sample) + "\n")
                    f.flush()
            except (requests.RequestException, ValueError, KeyError):
                pass
            time.sleep(0.5)


def totals(samples: list, start: float, end: float) -> dict:
    """Each counter's increase between start and end; a counter that goes
    down (a scene load) restarts from zero."""
    window = [s for s in samples if start <= s["t"] <= end]
    keys = [k for k in window[0] if k not in ("t", "rate_hz", "servo_rate_hz")] if window else []
    sums = dict.fromkeys(keys, 0)
    for a, b in zip(window, window[1:]):
        restarted = b["ticks"] < a["ticks"]
        for k in keys:
            sums[k] += b[k] if restarted else b[k] - a[k]
    sums["seconds"] = window[-1]["t"] - window[0]["t"] if window else 0.0
    sums["samples"] = len(window)
    sums["min_rate_hz"] = min((s["rate_hz"] for s in window if s["rate_hz"] > 0), default=0.0)
    return sums


def report(out: str, baseline_start: float, fuzz_start: float, fuzz_end: float) -> None:
    with open(out) as f:
        samples = [json.loads(line) for line in f if line.strip()]
    print(json.dumps({"baseline": totals(samples, baseline_start, fuzz_start),
                      "fuzz": totals(samples, fuzz_start, fuzz_end)}))


if __name__ == "__main__":
    if sys.argv[1] == "watch":
        watch(*sys.argv[2:5])
    else:
        report(sys.argv[2], *map(float, sys.argv[3:6]))
