"""Runs `hapticd` as a subprocess for scripts and tests: the daemon on a
free loopback port, and one-shot commands such as `hapticd replay`."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from .client import ApiError, AsyncClient, Client


class DaemonError(RuntimeError):
    """The daemon or a command failed; the message carries its output."""


def find_hapticd() -> Path:
    """The `hapticd` binary: `$HAPTICD`, else `release/hapticd` under
    `$CARGO_TARGET_DIR` or `./target`, else the one on `PATH`."""
    if os.environ.get("HAPTICD"):
        return Path(os.environ["HAPTICD"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", "target"))
    if (target / "release" / "hapticd").is_file():
        return target / "release" / "hapticd"
    found = shutil.which("hapticd")
    if found is None:
        raise DaemonError(
            "no hapticd binary: set HAPTICD, or build it with `cargo build --release -p hapticd`"
        )
    return Path(found)


def run_hapticd(*args: str | os.PathLike, cwd: str | os.PathLike | None = None) -> str:
    """Runs `hapticd ARGS...` to completion and returns its standard output;
    raises [DaemonError] with its standard error when it fails."""
    command = [str(find_hapticd()), *map(str, args)]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise DaemonError(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    return done.stdout


class Daemon:
    """`hapticd run --listen 127.0.0.1:0 --port-file F` in a subprocess.

    Use as a context manager: on entry it reads the port file, sets `url`
    and waits until the scene runs; on exit it stops the daemon with SIGINT
    (a clean stop: the recording is finished and the summary written).
    `args` are further `hapticd run` options.
    """

    def __init__(
        self,
        config: str | os.PathLike | None = None,
        *args: str | os.PathLike,
        cwd: str | os.PathLike | None = None,
        startup_timeout: float = 60.0,
    ):
        self.config = config
        self.args = [str(a) for a in args]
        self.cwd = cwd
        self.startup_timeout = startup_timeout
        self.url: str | None = None
        self.process: subprocess.Popen | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="hapticd-")
        self.stderr_path = Path(self._dir.name) / "stderr.log"

    def start(self) -> Daemon:
        """Starts the daemon and waits until its scene's servo runs (until
        then the API answers `busy`)."""
        port_file = Path(self._dir.name) / "port"
        command = [str(find_hapticd()), "run"]
        if self.config is not None:
            command += ["--config", str(self.config)]
        command += ["--listen", "127.0.0.1:0", "--port-file", str(port_file), *self.args]
        with self.stderr_path.open("wb") as stderr:
            self.process = subprocess.Popen(
                command, cwd=self.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr
            )
        deadline = time.monotonic() + self.startup_timeout
        while self.url is None:
            port = _read_port(port_file)
            if port is not None:
                self.url = f"http://127.0.0.1:{port}"
            else:
                self._wait_a_little(deadline, "wrote no port file")
        with self.client() as client:
            while True:
                try:
                    client.parameters()
                    return self
                except ApiError as e:
                    if e.code != "busy":
                        raise
                self._wait_a_little(deadline, "ran no scene")

    def _wait_a_little(self, deadline: float, failure: str) -> None:
        """Sleeps a moment; raises [DaemonError] when the daemon exited or
        `deadline` passed."""
        if self.process.poll() is not None:
            raise DaemonError(f"hapticd exited {self.process.returncode}: {failure}:\n{self.stderr()}")
        if time.monotonic() > deadline:
            self.stop()
            raise DaemonError(f"hapticd {failure} in {self.startup_timeout} s:\n{self.stderr()}")
        time.sleep(0.02)

    def stderr(self) -> str:
        """What the daemon wrote on standard error so far."""
        return self.stderr_path.read_text(errors="replace")

    def client(self, **options) -> Client:
        """A [Client] of this daemon."""
        return Client(self.url, **options)

    def async_client(self, **options) -> AsyncClient:
        """An [AsyncClient] of this daemon."""
        return AsyncClient(self.url, **options)

    def wait(self, timeout: float | None = None) -> int:
        """Waits for the daemon to exit by itself (`--until-end`, `--duration`)."""
        return self.process.wait(timeout)

    def stop(self, timeout: float = 30.0) -> int:
        """Stops the daemon with SIGINT, then SIGKILL after `timeout`; its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def __enter__(self) -> Daemon:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        self._dir.cleanup()


def _read_port(path: Path) -> int | None:
    """The port in a port file (`PORT` or `HOST:PORT`), or None while it is
    missing or incomplete."""
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    try:
        return int(text.rsplit(":", 1)[-1])
    except ValueError:
        return None
