"""Fixtures: the hapticd binary and the push scene."""

from __future__ import annotations

from pathlib import Path

import pytest
from push_scene import MOTION, PushScene

from hapticd import find_hapticd, run_hapticd


@pytest.fixture(scope="session")
def hapticd_binary() -> Path:
    """The hapticd binary; the tests need it (scripts/test-python builds it)."""
    return find_hapticd()


@pytest.fixture(scope="session")
def push_scene(tmp_path_factory, hapticd_binary) -> PushScene:
    """The push's trajectory, recorded once with `hapticd record`."""
    directory = tmp_path_factory.mktemp("push")
    motion = directory / "push.toml"
    motion.write_text(MOTION)
    trajectory = directory / "push.traj"
    run_hapticd("record", "--motion", motion, "--out", trajectory)
    return PushScene(directory, trajectory)
