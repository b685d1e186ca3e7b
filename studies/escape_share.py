#!/usr/bin/env python3
"""How often simulated tunings of a recorded space get near its optimum, and how soon: runs
`cutune tune --simulate` (the tuning loop as `cutune tune` runs it) for each seed, each into a
fresh DB, and reports the share of runs whose best is within --within of the recorded optimum
after each of --by evaluations. For telling whether a strategy leaves a local optimum (e.g. the
use_method 0 basin of point-in-polygon), which a mean score hides. Give two builds' --cutune and
compare their shares; the seeds are the same for both.

Usage: python3 -m studies.escape_share --cutune BIN --space FILE --budget N [--time-budget S]
           [--compile-workers N] [--seeds 100] [--within 0.05] [--by 60,100,134] --out OUT.json
       python3 -m studies.escape_share --measured RUNS.txt[.gz] [--runs PREFIX] --space FILE ... --out OUT.json
With --measured the runs are real tunings instead: a text file of blocks "run NAME: N evaluations"
followed by one "KEY STATUS MS" line per evaluation in the order measured (a GPU call's dump of each
run's measurements), each measured configuration judged by its recorded time in --space, so that
real and simulated runs are held to the same target.
"""
import argparse
import gzip
import json
import sys
from pathlib import Path

from studies.simulated_tunings import simulated_traces


def fail(message):
    print(f"escape_share.py: {message}", file=sys.stderr)
    sys.exit(2)


def optimum(space):
    try:
        opener = gzip.open if space.endswith(".gz") else open
        with opener(space, "rt") as f:
            cache = json.load(f)["cache"]
    except (OSError, ValueError, KeyError) as e:
        fail(f"--space {space}: not a Kernel Tuner cache ({e})")
    times = [v["time"] for v in cache.values() if isinstance(v.get("time"), (int, float))]
    if not times:
        fail(f"--space {space}: no valid configuration")
    return min(times)


def measured_runs(path, prefix):
    """{run name: [(key, status)]} of a dump of real tunings, the runs whose name starts with prefix."""
    runs, current = {}, None
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            for n, line in enumerate(f, 1):
                if line.startswith("run "):
                    name = line[4:].split(":", 1)[0]
                    current = runs.setdefault(name, []) if name.startswith(prefix) else None
                elif line.strip() and current is not None:
                    parts = line.split()
                    if len(parts) != 3:
                        fail(f"--measured {path}:{n}: expected KEY STATUS MS")
                    current.append((parts[0], parts[1]))
    except (OSError, UnicodeDecodeError, EOFError) as e:
        fail(f"--measured {path}: cannot read ({e})")
    if not runs:
        fail(f"--measured {path}: no run named {prefix}...")
    return runs


def counts(text, option):
    try:
        values = [int(x) for x in text.split(",") if x]
    except ValueError:
        fail(f"{option} {text}: not a list of whole numbers")
    if not values or min(values) < 1:
        fail(f"{option} {text}: give positive numbers")
    return values


def simulated_first_within(a, target):
    """Per seed, the evaluation (1-based) at which a simulated tuning first came within target."""
    try:
        traces = simulated_traces(a.cutune, a.space, a.seeds, a.budget, time_budget_s=a.time_budget,
                                  compile_workers=a.compile_workers)
    except RuntimeError as e:
        fail(str(e))
    return [next((i + 1 for i, e in enumerate(entries) if e["valid"] and e["objective"] <= target), None)
            for entries in traces]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cutune")
    p.add_argument("--measured")
    p.add_argument("--runs", default="")
    p.add_argument("--space", required=True)
    p.add_argument("--budget", type=int, default=1)
    p.add_argument("--time-budget", type=float)
    # The real loop compiles ahead with its compile workers (12 on the lent H100) and proposes ahead
    # of results; without this the simulated loop runs in series.
    p.add_argument("--compile-workers", type=int)
    p.add_argument("--seeds", type=int, default=100)
    p.add_argument("--within", type=float, default=0.05)
    p.add_argument("--by", default="60,100,134")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    by = counts(a.by, "--by")
    if a.seeds < 1 or a.budget < 1 or a.within < 0 or (a.compile_workers is not None and a.compile_workers < 1):
        fail("--seeds, --budget and --compile-workers must be positive, --within not negative")
    target = optimum(a.space) * (1 + a.within)
    first = []  # per run: the evaluation (1-based) that first came within the target, or None
    if a.measured:
        with (gzip.open if a.space.endswith(".gz") else open)(a.space, "rt") as f:
            recorded = {k: v.get("time") for k, v in json.load(f)["cache"].items()}
        runs = measured_runs(a.measured, a.runs)
        for name, evaluations in runs.items():
            first.append(next((i + 1 for i, (key, status) in enumerate(evaluations)
                               if status == "ok" and isinstance(recorded.get(key), (int, float))
                               and recorded[key] <= target), None))
        a.seeds = len(runs)
    elif not a.cutune:
        fail("give --cutune (simulated runs) or --measured (real ones)")
    else:
        first = simulated_first_within(a, target)
    share = {str(n): sum(1 for h in first if h is not None and h <= n) / len(first) for n in by}
    out = {"command": " ".join(sys.argv), "space": a.space, "measured": a.measured,
           "budget": None if a.measured else a.budget, "time_budget_s": a.time_budget,
           "compile_workers": a.compile_workers,
           "seeds": a.seeds, "within": a.within, "target_ms": target, "share_within_by": share,
           "first_within": first}
    try:
        Path(a.out).write_text(json.dumps(out, indent=1) + "\n")
    except OSError as e:
        fail(f"--out {a.out}: {e}")
    print(" ".join(f"by {n}: {s:.2f}" for n, s in share.items()))


if __name__ == "__main__":
    main()
