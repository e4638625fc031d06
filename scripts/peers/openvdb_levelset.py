#!/usr/bin/python3
"""Peer figures: OpenVDB's narrow-band level set of a triangle mesh.

Builds FloatGrid.createLevelSetFromPolygons for an OBJ mesh with a voxel size
of (longest bounding-box side) / RESOLUTION and prints, last, one figure a line:

    openvdb_build_time: X s
    openvdb_active_voxels: N count
    openvdb_grid_memory: X MiB
    openvdb_peak_rss: X MiB

Needs Debian's python3-openvdb and python3-numpy (scripts/install-peers), which
are built for the system interpreter: run it with /usr/bin/python3, e.g.

    /usr/bin/python3 scripts/peers/openvdb_levelset.py \
        --mesh ~/.cache/hapticd/test-data/meshes/glmark2-bunny.obj \
        --resolution 256 --half-width 3
"""

import argparse
import resource
import sys
import time

import numpy as np

try:
    import pyopenvdb as vdb  # Debian 12's python3-openvdb (OpenVDB 10)
except ImportError:
    try:
        import openvdb as vdb  # the module's name from OpenVDB 11 on
    except ImportError:
        sys.exit("openvdb_levelset: no OpenVDB Python module: run scripts/install-peers "
                 "and use /usr/bin/python3")


def read_obj(path):
    """Vertices (n, 3) float64 and fan-triangulated faces (m, 3) int32 of an OBJ.

    Only `v` and `f` records count; face corners may be `i`, `i/t`, `i//n` or
    `i/t/n`, 1-based or negative (relative to the vertices read so far).
    """
    vertices = []
    triangles = []
    with open(path, encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            fields = line.split()
            if not fields:
                continue
            if fields[0] == "v":
                vertices.append([float(x) for x in fields[1:4]])
            elif fields[0] == "f":
                corners = []
                for corner in fields[1:]:
                    index = int(corner.split("/", 1)[0])
                    corners.append(index - 1 if index > 0 else len(vertices) + index)
                if len(corners) < 3 or not all(0 <= c < len(vertices) for c in corners):
                    sys.exit(f"openvdb_levelset: {path}:{number}: bad face {line.strip()!r}")
                triangles.extend([corners[0], corners[k], corners[k + 1]]
                                 for k in range(1, len(corners) - 1))
    if not triangles:
        sys.exit(f"openvdb_levelset: {path}: no faces")
    return np.array(vertices, dtype=np.float64), np.array(triangles, dtype=np.int32)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mesh", required=True, help="OBJ file")
    parser.add_argument("--resolution", type=int, default=256,
                        help="voxels along the longest bounding-box side (default 256)")
    parser.add_argument("--voxel-size", type=float,
                        help="voxel edge length; overrides --resolution so that both "
                             "sides of a comparison use the same voxels")
    parser.add_argument("--half-width", type=float, default=3.0,
                        help="narrow-band half width in voxels (default 3)")
    args = parser.parse_args()
    if args.resolution < 1 or args.half_width <= 0:
        parser.error("--resolution and --half-width must be positive")

    points, triangles = read_obj(args.mesh)
    extent = points.max(axis=0) - points.min(axis=0)
    voxel_size = args.voxel_size or float(extent.max()) / args.resolution
    print(f"mesh: {args.mesh}: {len(points)} vertices, {len(triangles)} triangles")
    print(f"voxel size: {voxel_size:.6g} (longest side {extent.max():.6g} / {args.resolution}),"
          f" half width {args.half_width:g} voxels, OpenVDB {vdb.LIBRARY_VERSION}")

    transform = vdb.createLinearTransform(voxelSize=voxel_size)
    start = time.perf_counter()
    grid = vdb.FloatGrid.createLevelSetFromPolygons(
        points, triangles=triangles, transform=transform, halfWidth=args.half_width)
    build_time = time.perf_counter() - start

    # ru_maxrss is in KiB on Linux.
    peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"openvdb_build_time: {build_time:.3f} s")
    print(f"openvdb_active_voxels: {grid.activeVoxelCount()} count")
    print(f"openvdb_grid_memory: {grid.memUsage() / 2**20:.2f} MiB")
    print(f"openvdb_peak_rss: {peak_rss_mib:.1f} MiB")


if __name__ == "__main__":
    main()
