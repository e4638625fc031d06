"""Shared by the fuzz tests: the daemon's address, a request pacer that
keeps under the daemon's per-peer rate limit, and the figures written for
scripts/fuzz-api."""

import json
import os
import threading
import time

import pytest

BASE = os.environ.get("HAPTICD_URL", "http://127.0.0.1:7878")
DEADLINE = time.monotonic() + float(os.environ.get("HAPTICD_FUZZ_SECONDS", "60"))

# Figures for scripts/fuzz-api, added up by both test files.
FIGURES = {
    "calls": 0,
    "refusals": 0,
    "state_changes_on_refusal": 0,
    "check_failures": 0,
    "ws_cases": 0,
    "ws_failures": 0,
}


class Pacer:
    """Spaces requests so that one peer stays under `rate` per second (the
    daemon's default limit is 100 a second, in bursts of 100)."""

    def __init__(self, rate: float) -> None:
        self.period = 1.0 / rate
        self.next = time.monotonic()
        self.lock = threading.Lock()

    def wait(self) -> None:
        with self.lock:
            now = time.monotonic()
            if self.next > now:
                time.sleep(self.next - now)
                now = self.next
            self.next = max(now, self.next) + self.period


PACER = Pacer(float(os.environ.get("HAPTICD_FUZZ_RATE", "60")))


def time_left() -> float:
    return DEADLINE - time.monotonic()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get("HAPTICD_FUZZ_FIGURES")
    if not path:
        return
    figures = dict(FIGURES)
    figures["tests_failed"] = session.testsfailed
    figures["tests_run"] = session.testscollected
    with open(path, "w") as f:
        json.dump(figures, f)
