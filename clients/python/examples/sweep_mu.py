"""The breakaway force over the friction coefficient μ.

For each μ, runs `hapticd run --until-end` on a scene whose emulator plays
a push (a trajectory from `hapticd record`), sets μ of one material through
`PATCH /v1/parameters` while the trajectory still holds still, and takes
the breakaway force from the recording: the largest tangential rendered
force while the tool is static, before it first slides. Prints a table,
and plots it when matplotlib is installed.

    python examples/sweep_mu.py --config push.toml --trajectory push.traj \\
        --material floor --mu 0.2 0.5 1.0
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from hapticd import Daemon, breakaway_force, read_recording


def breakaway_at(config: Path, trajectory: Path, material: str, mu: float, out: Path) -> float:
    """One run at `mu`: its breakaway force (N)."""
    with Daemon(config, "--trajectory", trajectory, "--until-end", "--record", out) as daemon:
        with daemon.client() as client:
            client.set_friction_coefficient(material, mu)
        daemon.wait()
    return breakaway_force(read_recording(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, required=True, help="scene (TOML) with an emulator device")
    parser.add_argument("--trajectory", type=Path, required=True, help="the push, from hapticd record")
    parser.add_argument("--material", required=True, help="the material whose μ is swept")
    parser.add_argument("--mu", type=float, nargs="+", default=[0.2, 0.4, 0.6, 0.8, 1.0])
    parser.add_argument("--plot", type=Path, help="save the plot here instead of showing it")
    args = parser.parse_args()

    forces = []
    with tempfile.TemporaryDirectory() as directory:
        for mu in args.mu:
            force = breakaway_at(
                args.config, args.trajectory, args.material, mu, Path(directory) / f"mu-{mu}.mcap"
            )
            forces.append(force)
            print(f"μ = {mu:<5}  breakaway {force:.3f} N")

    try:
        import matplotlib.pyplot as plt
    except ImportError:
        print("(install matplotlib to plot: pip install 'hapticd[plot]')")
        return
    plt.plot(args.mu, forces, "o-")
    plt.xlabel("friction coefficient μ")
    plt.ylabel("breakaway force (N)")
    plt.grid(True)
    if args.plot:
        plt.savefig(args.plot)
    else:
        plt.show()


if __name__ == "__main__":
    main()
