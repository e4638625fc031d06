"""Random minimum-jerk pokes with torque for scripts/soak-coupling: a
simulated device's motion (TOML, every segment minimum-jerk) that reaches
in turn for one of the soak scene's bodies, presses into it by a random
depth from a random side, turns the handle about a random axis while
pressing, and backs off, for SECONDS. Seeded, so a soak can be repeated.

Usage: python3 lib-soak-pokes.py SECONDS SEED > motion.toml
"""

import math
import random
import sys

# Centres of what the pokes reach for (m), from config/bench/soak-coupling.toml:
# the block, the stack's top and bottom, the lid, and the table's bare top.
TARGETS = [
    ("block", (0.07, 0.0, 0.005), 0.025),
    ("stack-top", (-0.07, 0.0, 0.0502), 0.02),
    ("stack-bottom", (-0.07, 0.0, 0.005), 0.025),
    ("lid", (0.05, 0.09, 0.03), 0.02),
    ("table", (0.0, -0.02, -0.02), 0.0),
]
SPHERE_RADIUS = 0.02


def main() -> None:
    seconds, seed = float(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    home = (0.0, 0.0, 0.09)
    segments = []
    elapsed = 0.0
    while elapsed < seconds:
        name, centre, half = rng.choice(TARGETS)
        # Approach from above or from a side in the horizontal plane.
        if name == "table" or rng.random() < 0.4:
            direction = (0.0, 0.0, -1.0)
        else:
            angle = rng.uniform(0.0, 2.0 * math.pi)
            direction = (math.cos(angle), math.sin(angle), 0.0)
        standoff = half + SPHERE_RADIUS + 0.01
        depth = rng.uniform(0.002, 0.012)
        before = tuple(c - d * standoff for c, d in zip(centre, direction))
        pressed = tuple(c - d * (standoff - 0.01 - depth) for c, d in zip(centre, direction))
        axis = [rng.gauss(0.0, 1.0) for _ in range(3)]
        norm = math.sqrt(sum(a * a for a in axis)) or 1.0
        axis = [a / norm for a in axis]
        angle = rng.uniform(-0.4, 0.4)
        reach, press, turn, hold = (
            rng.uniform(0.3, 0.8),
            rng.uniform(0.2, 0.6),
            rng.uniform(0.2, 0.5),
            rng.uniform(0.0, 0.3),
        )
        segments += [
            f'{{ type = "line", to_m = {list(before)}, duration_s = {reach:.3f} }}',
            f'{{ type = "line", to_m = {list(pressed)}, duration_s = {press:.3f} }}',
            f'{{ type = "rotate", axis = {axis}, angle_rad = {angle:.4f}, duration_s = {turn:.3f} }}',
            f'{{ type = "hold", duration_s = {hold:.3f} }}',
            f'{{ type = "rotate", axis = {axis}, angle_rad = {-angle:.4f}, duration_s = {turn:.3f} }}',
            f'{{ type = "line", to_m = {list(home)}, duration_s = {reach:.3f} }}',
        ]
        elapsed += 2.0 * reach + press + 2.0 * turn + hold
    print(f"start_position_m = {list(home)}")
    print("segments = [")
    for segment in segments:
        print(f"    {segment},")
    print("]")


if __name__ == "__main__":
    main()
