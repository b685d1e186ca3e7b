#!/usr/bin/env python3
"""Best-so-far of real tuning runs, read from `cutune tune` logs (each result's line ends with
"(best X ms)") and their --report files: per run, the best after given numbers of results and the
winner after the finalists' re-measurement; per group, the medians over its runs. For comparing
builds or options on the GPU with a few seeds each, from the runs' own output.

Usage: python3 -m studies.best_so_far_from_logs --group NAME LOG... [--group NAME LOG...] --after 1,10,20
           --out OUT.json   (each LOG's report is LOG with .log replaced by .report.json)
"""
import argparse
import json
import re
import statistics
import sys
from pathlib import Path

RESULT = re.compile(r"\[(\d+)\] ")
BEST = re.compile(r"\(best ([0-9.]+) ms\)")


def fail(message):
    print(f"best_so_far_from_logs.py: {message}", file=sys.stderr)
    sys.exit(2)


def run_of(log, after):
    try:
        lines = Path(log).read_text().splitlines()
        report = json.loads(Path(log).with_suffix(".report.json").read_text())
    except (OSError, ValueError) as e:
        fail(f"{log}: {e}")
    best = []  # None until a result is valid
    for line in lines:
        if RESULT.match(line):
            m = BEST.search(line)
            best.append(float(m.group(1)) if m else None)
    if len(best) < max(after):
        fail(f"{log}: {len(best)} results, fewer than --after's {max(after)}")
    return {"best_ms": [best[n - 1] for n in after], "winner_ms": report.get("winner_ms"),
            "failed": report.get("configs_failed"), "wall_s": report.get("wall_s")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--group", nargs="+", action="append", required=True, metavar="NAME LOG")
    ap.add_argument("--after", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    try:
        after = [int(x) for x in args.after.split(",")]
    except ValueError:
        fail(f"--after {args.after}: not a list of result counts")
    out = {"command": "python3 -m studies.best_so_far_from_logs " + " ".join(sys.argv[1:]), "after_results": after,
           "runs": {}}
    for name, *logs in args.group:
        if not logs:
            fail(f"--group {name}: no logs")
        runs = {Path(log).stem: run_of(log, after) for log in logs}
        med = [statistics.median([r["best_ms"][i] for r in runs.values() if r["best_ms"][i] is not None] or [float("nan")])
               for i in range(len(after))]
        out["runs"][name] = {"per_run": runs, "median_best_ms": med,
                             "median_winner_ms": statistics.median(r["winner_ms"] for r in runs.values())}
        print(name, " ".join(f"{x:.4f}" for x in med))
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
