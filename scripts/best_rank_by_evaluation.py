#!/usr/bin/env python3
"""The best rank a tuning has reached after each number of evaluations, on a recorded space.

Runs `cutune tune --simulate SPACE --budget N --seed S --trace` for seeds 1..R (the tuning loop as
it runs, the problem's named default first where the recording names one) and prints, at a few
evaluation counts, the median over the seeds of the best rank reached so far among the space's
valid configurations (0 = the optimum), beside random search's (uniform picks without
repetition, R runs). Counts evaluations, not their cost: a view of how fast a strategy closes
in, next to the methodology's time-weighted score.

Usage:
  scripts/best_rank_by_evaluation.py SPACE.json.gz --budget 62 [--seeds 30] [--strategy bandit_portfolio]
      [--at 16,24,32,48] [--cutune build/tuner/cli/cutune]
"""
import argparse
import gzip
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile


def best_so_far(ranks_in_order, budget):
    out, best = [], None
    for r in ranks_in_order[:budget]:
        best = r if best is None else min(best, r)
        out.append(best)
    return out + [best] * (budget - len(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("space")
    ap.add_argument("--budget", type=int, required=True)
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--strategy", default="bandit_portfolio")
    ap.add_argument("--at", default="16,24,32,48")
    ap.add_argument("--cutune", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "tuner", "cli", "cutune"))
    args = ap.parse_args()

    opener = gzip.open if args.space.endswith(".gz") else open
    try:
        with opener(args.space, "rt") as f:
            cache = json.load(f)["cache"]
    except (OSError, ValueError, KeyError) as e:
        print(f"best_rank_by_evaluation.py: {args.space}: not a recorded space ({e})", file=sys.stderr)
        return 2
    times = {k: v["time"] for k, v in cache.items() if isinstance(v.get("time"), (int, float)) and v["time"] < 1e20}
    rank = {k: i for i, k in enumerate(sorted(times, key=times.get))}
    at = [int(x) for x in args.at.split(",")] + [args.budget]

    curves = {args.strategy: [], "random search": []}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(1, args.seeds + 1):
            trace = os.path.join(tmp, f"trace{seed}.json")
            cmd = [args.cutune, "tune", "--simulate", args.space, "--strategy", args.strategy, "--budget", str(args.budget),
                   "--seed", str(seed), "--trace", trace, "--db", os.path.join(tmp, f"run{seed}.db")]
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                why = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
                print(f"best_rank_by_evaluation.py: {' '.join(cmd)}: {why}", file=sys.stderr)
                return 2
            with open(trace) as f:
                keys = [e["key"] for e in json.load(f)["trace"]]
            # A failed configuration ranks after every valid one.
            curves[args.strategy].append(best_so_far([rank.get(k, len(rank)) for k in keys], args.budget))
            picks = random.Random(seed).sample(list(rank), min(args.budget, len(rank)))
            curves["random search"].append(best_so_far([rank[k] for k in picks], args.budget))

    print(f"{os.path.basename(args.space)}: {len(rank)} valid; median best rank after N evaluations, {args.seeds} seeds")
    print("| after evaluations | " + " | ".join(str(n) for n in at) + " |")
    print("| --- |" + " ---: |" * len(at))
    for name, runs in curves.items():
        print(f"| {name} | " + " | ".join(f"{statistics.median(r[n - 1] for r in runs):g}" for n in at) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
