#!/usr/bin/env python3
"""The best rank a tuning has reached after each number of evaluations, on a recorded space.

Runs `cutune tune --simulate SPACE --budget N --seed S --trace` for seeds 1..R (the tuning loop as
it runs, the problem's named default first where the recording names one) and prints, at a few
evaluation counts, the median over the seeds of the best rank reached so far among the space's
valid configurations (0 = the optimum), beside random search's (uniform picks without
repetition, R runs). Counts evaluations, not their cost: a view of how fast a strategy closes
in, next to the methodology's time-weighted score.

Usage:
  python3 -m studies.best_rank_by_evaluation SPACE.json.gz --budget 62 [--seeds 30] [--strategy bandit_portfolio]
      [--at 16,24,32,48] [--cutune build/tuner/cli/cutune]
"""
import argparse
import os
import random
import statistics
import sys

from studies.simulated_tunings import ranks_of, simulated_traces


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

    try:
        rank = ranks_of(args.space)
    except (OSError, ValueError, EOFError, KeyError, TypeError, AttributeError) as e:
        print(f"best_rank_by_evaluation.py: {args.space}: not a recorded space ({e})", file=sys.stderr)
        return 2
    at = [int(x) for x in args.at.split(",")] + [args.budget]

    try:
        traces = simulated_traces(args.cutune, args.space, args.seeds, args.budget, args.strategy)
    except RuntimeError as e:
        print(f"best_rank_by_evaluation.py: {e}", file=sys.stderr)
        return 2
    curves = {args.strategy: [], "random search": []}
    for seed, trace in enumerate(traces, 1):
        # A failed configuration ranks after every valid one.
        curves[args.strategy].append(best_so_far([rank.get(e["key"], len(rank)) for e in trace], args.budget))
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
