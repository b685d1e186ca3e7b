#!/usr/bin/env python3
"""Real tunings on the GPU with different lookaheads (proposals ahead of results), same time budget.

For each case (KERNEL:PROBLEM:SECONDS) and seed, one `cutune tune KERNEL --problem P --time-budget SECONDS
--seed S --no-cache --prior none` per arm on this machine's GPU, each with a fresh DB, the arms
interleaved and their order reversed from one seed to the next; a first run of each case is
discarded (the machine's first compiles ran at a third of the later rate: 52 against 113 to 177
evaluations per second on matmul, H100, 2026-11-25). An arm is `rule` (no --lookahead: the loop's own rule, search::proposals_ahead) or a
number N (--lookahead N). Without the cubin cache every configuration really compiles, so the
compile workers' parallelism and the strategy's information trade as they do in a user's first
tuning. Each run's measurements are exported (`cutune export --format cache`) and their timestamps
give the best-so-far against wall-clock seconds since the command started. With --recorded FILE
(the brute-force recording of the same kernel and problem on this GPU model), bests are also given
as gaps to its optimum. Writes OUT/lookahead_on_gpu.json and the log.

Usage: python3 -m studies.lookahead_on_gpu --bin .gpu/bin --arms rule,48 --seeds 1,2,3,4,5 --out DIR
           --case matmul:m=2048,n=2048,k=2048:20:results/spaces/matmul_2048_nvidia_h100_80gb_hbm3.json.gz ...
       (a case is KERNEL:PROBLEM:SECONDS[:RECORDED])
"""
import argparse
import datetime
import gzip
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path


def run(cmd, log):
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + f"\n{p.stdout}{p.stderr}(exit {p.returncode})\n")
    return p


def load_json(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def recorded_optimum(path):
    times = [v["time"] for v in load_json(path)["cache"].values() if isinstance(v.get("time"), (int, float))]
    return min(times) if times else None


def stamp_s(text):
    return datetime.datetime.fromisoformat(text).timestamp()


def curve_of(cache_file, started):
    """[(seconds since the command started, best so far ms)], one point per evaluation."""
    cache = load_json(cache_file)["cache"]
    done = sorted(((stamp_s(v["timestamp"]) - started, v["time"]) for v in cache.values()), key=lambda e: e[0])
    out, best = [], float("inf")
    for t, ms in done:
        if isinstance(ms, (int, float)):
            best = min(best, ms)
        out.append((round(t, 3), best))
    return out


def best_at(curve, t):
    best = float("inf")
    for s, b in curve:
        if s <= t:
            best = b
    return best


def parse_case(text):
    parts = text.split(":")
    if len(parts) not in (3, 4):
        sys.exit(f"--case {text}: expected KERNEL:PROBLEM:SECONDS[:RECORDED]")
    try:
        seconds = float(parts[2])
    except ValueError:
        sys.exit(f"--case {text}: SECONDS '{parts[2]}' is not a number")
    return {"kernel": parts[0], "problem": parts[1], "seconds": seconds, "recorded": parts[3] if len(parts) == 4 else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--case", action="append", required=True, help="KERNEL:PROBLEM:SECONDS[:RECORDED]")
    ap.add_argument("--arms", default="rule,48", help="comma-separated: rule or a number of proposals ahead")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    cases = [parse_case(c) for c in a.case]
    arms = a.arms.split(",")
    for arm in arms:
        if arm != "rule" and not arm.isdigit():
            sys.exit(f"--arms: '{arm}' is neither rule nor a number")
    cutune = str(Path(a.bin) / "cutune")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    log = out / "lookahead_on_gpu.log"
    devices = run([cutune, "devices"], log)
    gpu = next((line.split(":", 1)[1].strip() for line in devices.stdout.splitlines() if line.startswith("GPU 0:")), None)
    if not gpu:
        sys.exit(f"no GPU 0 in `cutune devices`: {devices.stdout}{devices.stderr}")
    results = []
    for case in cases:
        optimum = recorded_optimum(case["recorded"]) if case["recorded"] else None
        runs = []
        seeds = [int(s) for s in a.seeds.split(",")]
        order = [(seeds[0], "warm-up")] + [(seed, arm) for k, seed in enumerate(seeds)
                                            for arm in (arms if k % 2 == 0 else arms[::-1])]
        for seed, arm in order:
            db = out / "run.db"
            for f in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
                f.unlink(missing_ok=True)
            cmd = [cutune, "tune", case["kernel"], "--problem", case["problem"], "--db", str(db),
                   "--time-budget", str(case["seconds"]), "--seed", str(seed), "--no-cache", "--prior", "none"]
            if arm not in ("rule", "warm-up"):
                cmd += ["--lookahead", arm]
            started = time.time()
            p = run(cmd, log)
            cache = out / "run.cache.json"
            e = run([cutune, "export", "--db", str(db), "--kernel", case["kernel"], "--gpu", gpu, "--format",
                     "cache", "-o", str(cache)], log)
            curve = curve_of(cache, started) if e.returncode == 0 else []
            final = curve[-1][1] if curve else float("nan")
            if arm == "warm-up":
                print(f"{case['kernel']} warm-up: exit {p.returncode}, {len(curve)} evaluations", flush=True)
                continue
            runs.append({"seed": seed, "arm": arm, "tune_exit": p.returncode, "evaluations": len(curve),
                         "best_ms": final, "curve": curve})
            print(f"{case['kernel']} seed {seed} lookahead {arm}: exit {p.returncode}, {len(curve)} evaluations, "
                  f"best {final:.4f} ms", flush=True)
        summary = {}
        for arm in arms:
            mine = [r for r in runs if r["arm"] == arm and r["curve"]]
            if not mine:
                continue
            s = {"runs": len(mine), "median_evaluations": statistics.median(r["evaluations"] for r in mine)}
            for frac in (0.25, 0.5, 0.75, 1.0):
                t = frac * case["seconds"]
                # At the budget's end: the run's final best, the evaluations held then included.
                bests = [r["best_ms"] if frac == 1.0 else best_at(r["curve"], t) for r in mine]
                s[f"median_best_ms_at_{int(frac * 100)}pct"] = statistics.median(bests)
                if optimum:
                    s[f"median_gap_at_{int(frac * 100)}pct"] = statistics.median(b / optimum - 1.0 for b in bests)
            if optimum:
                for tol in (0.05, 0.01, 0.005):
                    reached = [next((t for t, b in r["curve"] if b <= optimum * (1.0 + tol)), None) for r in mine]
                    s[f"seconds_to_within_{tol * 100:g}pct"] = reached
                    if all(x is not None for x in reached):
                        s[f"median_seconds_to_within_{tol * 100:g}pct"] = statistics.median(reached)
            s["evaluations_per_second"] = [round(r["evaluations"] / max(1e-9, r["curve"][-1][0] - r["curve"][0][0]), 1)
                                           for r in mine]
            summary[arm] = s
        results.append({**case, "recorded_optimum_ms": optimum, "summary": summary, "runs": runs})
    json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpu": gpu, "devices": devices.stdout,
               "command": " ".join(sys.argv), "arms": arms, "cases": results},
              open(out / "lookahead_on_gpu.json", "w"), indent=1)
    for c in results:
        print(c["kernel"], json.dumps(c["summary"], indent=1))


if __name__ == "__main__":
    main()
