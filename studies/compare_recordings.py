#!/usr/bin/env python3
"""Compares two recordings of the same search space (Kernel Tuner caches, .json or .json.gz, e.g.
one kernel recorded by studies/record_spaces.py on two GPUs of one model): whether the valid sets
and failures agree, each configuration's time on the second over the first (median, 5th and 95th
percentiles, extremes), the rank correlation (Spearman) and where the first's ten fastest rank in
the second. How far a recorded space reproduces, and so how much a score can owe to the recording.

Usage: python3 -m studies.compare_recordings FIRST SECOND --out OUT.json
"""
import argparse
import gzip
import json
import statistics
import sys


def load(path):
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            d = json.load(f)
        return d, d["cache"]
    except (OSError, ValueError, KeyError) as e:
        print(f"compare_recordings.py: {path}: not a Kernel Tuner cache ({e})", file=sys.stderr)
        sys.exit(2)


def valid_times(cache):
    return {k: v["time"] for k, v in cache.items() if isinstance(v.get("time"), (int, float))}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("first")
    ap.add_argument("second")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    (da, ca), (db, cb) = load(args.first), load(args.second)
    ta, tb = valid_times(ca), valid_times(cb)
    common = sorted(set(ta) & set(tb))
    if len(common) < 2:
        print("compare_recordings.py: the two files share fewer than two valid configurations", file=sys.stderr)
        sys.exit(2)
    ratios = sorted(tb[k] / ta[k] for k in common)
    n = len(common)
    ra, rb = sorted(common, key=ta.get), sorted(common, key=tb.get)
    pa, pb = {k: i for i, k in enumerate(ra)}, {k: i for i, k in enumerate(rb)}
    failed_a, failed_b = set(ca) - set(ta), set(cb) - set(tb)
    out = {
        "command": "python3 -m studies.compare_recordings " + " ".join(sys.argv[1:]),
        "first": {"file": args.first, "uuid": da.get("cutune_device", {}).get("uuid"), "valid": len(ta),
                  "failed": len(failed_a)},
        "second": {"file": args.second, "uuid": db.get("cutune_device", {}).get("uuid"), "valid": len(tb),
                   "failed": len(failed_b)},
        "same_valid_set": set(ta) == set(tb),
        "same_failures": failed_a == failed_b,
        "time_ratio_second_over_first": {"median": statistics.median(ratios), "p5": ratios[n // 20],
                                         "p95": ratios[-(n // 20) - 1] if n >= 20 else ratios[-1],
                                         "min": ratios[0], "max": ratios[-1]},
        "spearman_rank_correlation": 1 - 6 * sum((pa[k] - pb[k]) ** 2 for k in common) / (n * (n * n - 1)),
        "best10_first": [[k, ta[k]] for k in ra[:10]],
        "best10_second": [[k, tb[k]] for k in rb[:10]],
        "rank_in_second_of_first_best10": [pb[k] for k in ra[:10]],
    }
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps({k: out[k] for k in ("same_valid_set", "same_failures", "time_ratio_second_over_first",
                                          "spearman_rank_correlation")}))


if __name__ == "__main__":
    main()
