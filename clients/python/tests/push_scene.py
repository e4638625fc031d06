"""A scene where a hand presses a box onto a floor and pushes it sideways
with rising force, played by the emulator."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: The press (N) and the series stiffnesses it goes through (N/m): the
#: floor's penalty (40 contacts of 200 N/m), the coupling, the hand.
NORMAL_FORCE = 2.5
PRESS_DEPTH = 3e-4 + NORMAL_FORCE / 8000 + NORMAL_FORCE / 1000 + NORMAL_FORCE / 3000
#: Phases of the trajectory (s): still, press, settle, then the push,
#: 8 mm along x.
STILL, PRESS, SETTLE, PUSH = 0.2, 0.4, 0.6, 2.0
PUSH_START_S = STILL + PRESS + SETTLE

MOTION = f"""segments = [
    {{ type = "hold", duration_s = {STILL} }},
    {{ type = "line", to_m = [0.0, 0.0, {-PRESS_DEPTH}], duration_s = {PRESS} }},
    {{ type = "hold", duration_s = {SETTLE} }},
    {{ type = "line", to_m = [0.008, 0.0, {-PRESS_DEPTH}], duration_s = {PUSH} }},
]
"""


def scene_config(trajectory: Path, mu: float) -> str:
    """A 40 × 40 × 29 mm box's point shell 0.3 mm above a slab's field,
    friction coefficient `mu`, the emulator's hand holding it."""
    z = 0.0145 + 3e-4
    return f"""[[objects]]
name = "tool"
shape = {{ kind = "box", half_extents_m = [0.02, 0.02, 0.0145] }}
mass_kg = 0.0464
inertia_kg_m2 = [9.439e-6, 9.439e-6, 1.2373e-5]
role = "point_shell"
shell_points = 2000
tool = true
position_m = [0.0, 0.0, {z}]

[[objects]]
name = "floor"
shape = {{ kind = "box", half_extents_m = [0.15, 0.15, 0.02] }}
position_m = [0.0, 0.0, -0.02]
role = "field"
material = "floor"
field_resolution = 64

[materials.floor]
friction_coefficient = {mu}

[device]
kind = "emulator"
trajectory_file = "{trajectory}"
workspace_offset_m = [0.0, 0.0, {z}]

[device.emulator]
mode = "hand"
hand_stiffness_n_per_m = 3000.0
hand_damping_n_s_per_m = 49.0
rotation = "hand"
"""


@dataclass
class PushScene:
    """The trajectory and a config writer for the push."""

    directory: Path
    trajectory: Path

    def config(self, mu: float) -> Path:
        """The scene's config at friction coefficient `mu`."""
        path = self.directory / f"push-{mu}.toml"
        path.write_text(scene_config(self.trajectory, mu))
        return path
