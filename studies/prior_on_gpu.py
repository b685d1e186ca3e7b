#!/usr/bin/env python3
"""A real tuning on the GPU with and without a prior from the DB, same budget and seeds.

For each seed, two runs of `cutune tune KERNEL --problem P --budget B --seed S` on this machine's
GPU, each with a fresh DB that holds the recording of the same kernel on another GPU
(`cutune import PRIOR`): one with `--prior auto` (the default: the DB's recording of the kernel on
the other GPU is the prior), one with `--prior none`. Each run's measurements on this GPU are
exported (`cutune export --format cache --gpu THIS`) and ordered by their timestamps, which gives
the best-so-far after every evaluation. Writes OUT/prior_on_gpu.json and the logs.

Usage: python3 -m studies.prior_on_gpu --bin .gpu/bin --prior results/spaces/matmul_2048_nvidia_h200.json.gz
           --kernel matmul --problem m=2048,n=2048,k=2048 --budget 24 --seeds 1,2,3 --out DIR
       [--import-as-is --stored-name NAME]
--import-as-is: the prior is imported as a user imports a Kernel Tuner cache (`cutune import FILE`,
under the kernel and problem the file names) instead of under --kernel, so the tuning must find it
by the kernel's other name (a BAT file's kernel is stored under its BenchmarkName, NAME, and Kernel
Tuner's cache of it names the CUDA function).
"""
import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path


def run(cmd, log):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + f"\n{p.stdout}{p.stderr}(exit {p.returncode})\n")
    return p, time.monotonic() - t0


def best_so_far(cache_file):
    cache = json.load(open(cache_file))["cache"]
    # By timestamp only: a failure's time is its error's name, which does not compare with a number.
    done = sorted(((v["timestamp"], v["time"]) for v in cache.values()), key=lambda e: e[0])
    out, best = [], float("inf")
    for _, t in done:
        if isinstance(t, (int, float)):
            best = min(best, t)
        out.append(best)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--prior", required=True, help="recording of the kernel on another GPU (cache .json[.gz])")
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--problem", required=True)
    ap.add_argument("--budget", type=int, default=24)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--out", required=True)
    ap.add_argument("--import-as-is", action="store_true")
    ap.add_argument("--stored-name", default=None, help="the tuned kernel's name in the DB (default: --kernel)")
    a = ap.parse_args()
    cutune = str(Path(a.bin) / "cutune")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    log = out / "prior_on_gpu.log"
    devices, _ = run([cutune, "devices"], log)
    gpu = next((line.split(":", 1)[1].strip() for line in devices.stdout.splitlines() if line.startswith("GPU 0:")), None)
    if not gpu:
        sys.exit(f"no GPU 0 in `cutune devices`: {devices.stdout}{devices.stderr}")
    runs = []
    for seed in [int(s) for s in a.seeds.split(",")]:
        for mode in ("auto", "none"):
            db = out / f"seed{seed}_{mode}.db"
            for f in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
                f.unlink(missing_ok=True)
            how = [] if a.import_as_is else ["--kernel", a.kernel, "--problem", a.problem]
            p, _ = run([cutune, "import", a.prior, "--db", str(db)] + how, log)
            if p.returncode:
                sys.exit(f"import failed (exit {p.returncode}), see {log}")
            report = out / f"seed{seed}_{mode}.report.json"
            p, wall = run([cutune, "tune", a.kernel, "--problem", a.problem, "--db", str(db), "--budget", str(a.budget),
                           "--seed", str(seed), "--prior", mode, "--report", str(report)], log)
            prior_lines = [line for line in p.stdout.splitlines() + p.stderr.splitlines() if "prior" in line.lower()]
            cache = out / f"seed{seed}_{mode}.cache.json"
            e, _ = run([cutune, "export", "--db", str(db), "--kernel", a.stored_name or a.kernel, "--gpu", gpu, "--format", "cache",
                        "-o", str(cache)], log)
            curve = best_so_far(cache) if e.returncode == 0 else []
            runs.append({"seed": seed, "prior": mode, "tune_exit": p.returncode, "wall_s": round(wall, 1),
                         "prior_lines": prior_lines, "evaluations": len(curve), "best_so_far_ms": curve})
            print(f"seed {seed} prior {mode}: exit {p.returncode}, {len(curve)} evaluations, best "
                  f"{curve[-1] if curve else float('nan'):.4f} ms, {wall:.1f} s", flush=True)
            db.unlink(missing_ok=True)
    summary = {}
    for mode in ("auto", "none"):
        curves = [r["best_so_far_ms"] for r in runs if r["prior"] == mode and r["best_so_far_ms"]]
        if curves:
            n = min(len(c) for c in curves)
            summary[mode] = {f"after_{k}": statistics.median(c[k - 1] for c in curves) for k in (1, 4, 8, 12, 16, 24)
                             if k <= n}
    json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpu": gpu, "devices": devices.stdout,
               "command": " ".join(sys.argv), "kernel": a.kernel, "problem": a.problem, "prior_file": a.prior,
               "budget": a.budget, "median_best_so_far_ms": summary, "runs": runs},
              open(out / "prior_on_gpu.json", "w"), indent=1)


if __name__ == "__main__":
    main()
