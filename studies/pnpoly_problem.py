#!/usr/bin/env python3
"""Writes a T1 problem file for Kernel Tuner's point-in-polygon kernel (cn_pnpoly of Kernel
Tuner's examples/cuda/pnpoly.cu) and its polygon, so that the kernel can be tuned and recorded
as a search space (python3 -m studies.record_spaces --cases kt_pnpoly).

Kernel Tuner's own pnpoly.py tunes the host code around the kernel (pnpoly_host.cu, which its
examples folder does not ship), and BAT's pnpoly-CAFF.json passes the polygon as a fourth kernel
argument where the kernel reads it from __constant__ memory, so every configuration fails as
that file is written. This file tunes the kernel itself over pnpoly.py's parameters and values:
the polygon and its precomputed slopes go to the kernel's __constant__ symbols (MemType
Constant) and the launch passes the three arguments the kernel takes (cutune.Launches).
Kernel Tuner's script checks no answer, and the four between_methods treat a point level with a
vertex differently (random floats meet the vertices' values about once per vertex in 20M
points), so the output is not verified.

Usage: pnpoly_problem.py OUT_DIR [POINTS]   (writes pnpoly-cutune.json, vertices.bin, slopes.bin;
put them beside pnpoly.cu. POINTS other than pnpoly.py's 20,000,000 write
pnpoly-cutune-POINTS.json instead, the same kernel and polygon at another problem size)
"""
import json
import sys
from pathlib import Path

VERTICES = 600  # pnpoly.cu's #define
POINTS = 20_000_000  # pnpoly.py's size


def main():
    if len(sys.argv) not in (2, 3):
        print("usage: " + __doc__.split("Usage: ")[1].split("\n")[0].strip(), file=sys.stderr)
        sys.exit(2)
    out = Path(sys.argv[1])
    try:
        points = int(sys.argv[2]) if len(sys.argv) == 3 else POINTS
    except ValueError:
        points = 0
    if points <= 0 or points > 2**31 - 1:
        print(f"pnpoly_problem.py: POINTS '{sys.argv[2]}' is not a count of points (1 .. 2^31-1)", file=sys.stderr)
        sys.exit(2)
    try:
        import numpy as np
    except ImportError:
        print(f"pnpoly_problem.py: needs numpy, which {sys.executable} lacks (scripts/kt_venv.sh makes a venv with it)",
              file=sys.stderr)
        sys.exit(2)
    out.mkdir(parents=True, exist_ok=True)
    # A circle drawn as pnpoly.py draws it (random angles, sorted, descending), centred at (1, 1)
    # so that points uniform in [0, 2)^2 (cutune's Random fill) surround it: 79% fall inside,
    # where pnpoly.py's normal points around its circle at the origin fall inside 39% of the time.
    rng = np.random.default_rng(20261206)
    angles = np.sort(rng.random(VERTICES) * 2.0 * np.pi)[::-1]
    x = (1.0 + np.cos(angles)).astype(np.float32)
    y = (1.0 + np.sin(angles)).astype(np.float32)
    xy = np.empty(2 * VERTICES, np.float32)
    xy[0::2], xy[1::2] = x, y
    xy.tofile(out / "vertices.bin")
    # The kernel's slope of the edge from vertex j to k = j - 1 (the last for j = 0), in float32.
    k = np.roll(np.arange(VERTICES), 1)
    ((x[k] - x) / (y[k] - y)).astype(np.float32).tofile(out / "slopes.bin")
    t1 = {
        "General": {"FormatVersion": 1, "BenchmarkName": "pnpoly"},
        "ConfigurationSpace": {
            "TuningParameters": [
                {"Name": "block_size_x", "Type": "int", "Values": "[32*i for i in range(1,32)]"},
                {"Name": "tile_size", "Type": "int", "Values": "[1] + [2*i for i in range(1,11)]"},
                {"Name": "between_method", "Type": "int", "Values": "[0, 1, 2, 3]"},
                {"Name": "use_precomputed_slopes", "Type": "int", "Values": "[0, 1]"},
                {"Name": "use_method", "Type": "int", "Values": "[0, 1]"},
            ],
            "Conditions": [],
        },
        "KernelSpecification": {
            "Language": "CUDA",
            "BenchmarkName": "pnpoly",
            "KernelName": "cn_pnpoly",
            "KernelFile": "pnpoly.cu",
            "LocalSize": {"X": "block_size_x", "Y": "1", "Z": "1"},
            "ProblemSize": points,
            "GridDivX": ["block_size_x", "tile_size"],
            "Arguments": [
                {"Name": "bitmap", "Type": "int32", "Size": points, "MemoryType": "Vector",
                 "AccessType": "WriteOnly", "FillType": "Constant", "FillValue": 0, "Output": 1},
                {"Name": "points", "Type": "float", "Size": 2 * points, "MemoryType": "Vector",
                 "AccessType": "ReadOnly", "FillType": "Random", "FillValue": 2.0},
                {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "AccessType": "ReadOnly", "FillValue": points},
                {"Name": "d_vertices", "Type": "float", "Size": 2 * VERTICES, "MemoryType": "Vector",
                 "MemType": "Constant", "AccessType": "ReadOnly", "FillType": "BinaryRaw", "DataSource": "vertices.bin"},
                {"Name": "d_slopes", "Type": "float", "Size": VERTICES, "MemoryType": "Vector",
                 "MemType": "Constant", "AccessType": "ReadOnly", "FillType": "BinaryRaw", "DataSource": "slopes.bin"},
            ],
        },
        "cutune": {
            "Launches": [{"KernelName": "cn_pnpoly", "Arguments": ["bitmap", "points", "n"]}],
            "Verification": {"bitmap": "none"},
        },
    }
    name = "pnpoly-cutune.json" if points == POINTS else f"pnpoly-cutune-{points}.json"
    (out / name).write_text(json.dumps(t1, indent=1) + "\n")


if __name__ == "__main__":
    main()
