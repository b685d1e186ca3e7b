#!/usr/bin/env python3
"""Writes a recorded space (Kernel Tuner cache, .json or .json.gz) with every parameter's value
list in reverse order: the same configurations and measurements, only listed the other way round.

Why: a strategy's score should not depend on the order in which a user lists a parameter's values.
Kernel Tuner's searchspace hands out its Latin hypercube samples and first-valid repairs in the order
of its enumeration (a Python set of indices, read back ascending), so an order that happens to put
the fast values first shows up as search skill. Scoring the same space reversed shows how much.

Usage: python3 -m studies.reverse_space_values IN.json.gz OUT.json.gz
"""
import gzip
import json
import sys


def main():
    if len(sys.argv) != 3:
        print("usage: python3 -m studies.reverse_space_values IN.json[.gz] OUT.json[.gz]", file=sys.stderr)
        sys.exit(2)
    src, dst = sys.argv[1:]
    opener = gzip.open if src.endswith(".gz") else open
    try:
        with opener(src, "rt") as f:
            cache = json.load(f)
        params = cache["tune_params"]
    except (OSError, ValueError, KeyError) as e:
        print(f"{src}: not a Kernel Tuner cache ({e})", file=sys.stderr)
        sys.exit(2)
    cache["tune_params"] = {k: list(reversed(v)) for k, v in params.items()}
    try:
        with (gzip.open if dst.endswith(".gz") else open)(dst, "wt") as f:
            json.dump(cache, f)
    except OSError as e:
        print(f"{dst}: cannot write ({e.strerror})", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
