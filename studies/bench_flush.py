#!/usr/bin/env python3
"""How large must the L2 flush be?

The cold measurement reads a flush buffer before every sample (measure::L2Flush). Its size is a
trade: a buffer too small leaves some of the kernel's data in L2 (the sample reads warm), one
too large costs GPU time on every sample of every configuration (2 x the L2 on an H100 is
about 35 us per sample, 0.25 ms of a configuration's 7 samples). This script measures the
same configurations with flushes of several sizes, with rotated argument sets (the other cold
method) and warm, so that the smallest flush that reads as cold as the largest can be chosen.

Usage: python3 -m studies.bench_flush --bin .gpu/bin --out OUT_DIR [--sizes 0.5,1,1.5,2,3] [--rounds 2]
Writes OUT_DIR/flush.json and prints a table. Needs the GPU.
"""
import argparse
import json
import os
import subprocess
import sys
import time

# Data that fits in the L2 (where a flush matters most), and one far larger than it.
CASES = [
    ("vector_add", "n=2**20"),         # 12 MiB
    ("reduction", "n=2**22"),          # 16 MiB
    ("transpose", "rows=2048,cols=2048"),  # 32 MiB
    ("matmul", "m=1024,n=1024,k=1024"),    # 12 MiB
    ("reduction", "n=2**26"),          # 256 MiB: larger than the L2
]


def measure(cutune, kernel, problem, out_json, extra):
    cmd = [cutune, "measure", kernel, "--problem", problem, "--json", out_json, "--min-samples", "30",
           "--time-cap", "2", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()[-400:]}")
    c = json.load(open(out_json))["configs"][0]
    return {"median_ms": c["summary"]["median_ms"], "ci_ms": [c["summary"]["ci_low_ms"], c["summary"]["ci_high_ms"]],
            "samples": c["summary"]["samples"], "l2": c["stats"]["l2"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=".gpu/bin")
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="0.5,1,1.5,2,3")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cases", default="", help="only these kernel:problem entries (separated by ;)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cutune = os.path.join(args.bin, "cutune")
    sizes = [float(s) for s in args.sizes.split(",")]
    methods = [(f"flush {s:g}x", ["--l2", "flush", "--flush-size", f"{s:g}"]) for s in sizes]
    methods += [("rotate", ["--l2", "cold"]), ("warm", ["--l2", "warm"])]
    doc = {"benchmark": "l2_flush_size", "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
           "command": " ".join([sys.executable, *sys.argv]), "cases": []}
    only = [c for c in args.cases.split(";") if c]
    for kernel, problem in CASES:
        if only and f"{kernel}:{problem}" not in only:
            continue
        case = {"kernel": kernel, "problem": problem, "runs": {}}
        for r in range(args.rounds):
            order = methods if r % 2 == 0 else list(reversed(methods))  # drift hits all alike
            for name, extra in order:
                f = os.path.join(args.out, f"{kernel}_{len(doc['cases'])}_{name.replace(' ', '_')}_{r}.json")
                case["runs"].setdefault(name, []).append(measure(cutune, kernel, problem, f, extra))
        largest = f"flush {max(sizes):g}x"
        ref = sum(x["median_ms"] for x in case["runs"][largest]) / len(case["runs"][largest])
        case["mean_median_ms"] = {n: sum(x["median_ms"] for x in v) / len(v) for n, v in case["runs"].items()}
        case["rel_to_largest_flush"] = {n: m / ref - 1 for n, m in case["mean_median_ms"].items()}
        doc["cases"].append(case)
        print(f"{kernel} {problem}: " + ", ".join(f"{n} {m * 1e3:.2f} us ({case['rel_to_largest_flush'][n]:+.1%})"
                                                    for n, m in case["mean_median_ms"].items()), flush=True)
    with open(os.path.join(args.out, "flush.json"), "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
