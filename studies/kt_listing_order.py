#!/usr/bin/env python3
"""How much of a Kernel Tuner strategy's early search is decided by the order of the value lists.

Reads Kernel Tuner traces (`python3 -m studies.bench_strategies --kt-only` writes them: the configurations
of each run in evaluation order) of the same spaces recorded as declared and with every value
list reversed (`studies/reverse_space_values.py`, whose files end in `_reversed`), and reports
per space and strategy, in each order:

- top: the share of evaluations 2..N+1 of every run (the first is Kernel Tuner's random start, or
  the problem's named default in cutune's tuning) that are among the best fraction F of the
  space's valid configurations by recorded time (uniform picks: about F);
- distinct: how many distinct configurations those evaluations are, over all runs (a strategy
  whose early picks do not depend on its seed repeats a few);
- reached: the share of runs that evaluate such a configuration at all, and the median
  evaluation at which they first do.

With --cutune, cutune's strategy runs beside them (`cutune tune --simulate`, the tuning loop as it
runs, with the budgets Kernel Tuner's runs had: the first trace's time_limit_s and max_fevals of
that space), as many runs as the first Kernel Tuner strategy of the space has, seeds 1 to N.

Both orders hold the same configurations with the same recorded times; only the order in which
the values are listed differs. A strategy whose figures move with the order is choosing by
position in the listing (a tie broken by the first in the list, a snap to the nearest index).

Usage:
  python3 -m studies.kt_listing_order --traces T.kt_traces.json[.xz] --spaces DECLARED... REVERSED...
      [--first 10] [--top 0.05] [--cutune build/tuner/cli/cutune [--cutune-strategy bandit_portfolio]]
      [--out results/strategies/strategies_listing_order]
Writes OUT.json and OUT.md and prints the table.
"""
import argparse
import collections
import json
import lzma
import os
import statistics
import sys

from studies.simulated_tunings import load_json, ranks_of, simulated_traces


def space_name(path):
    base = os.path.basename(path)
    for ext in (".json.gz", ".json"):
        if base.endswith(ext):
            return base[: -len(ext)]
    return base


def figures(runs, ranks, first, fraction):
    top = max(1, round(fraction * len(ranks)))
    early = [k for run in runs for k in run[1:first + 1]]
    reached = []
    for run in runs:
        hit = next((i + 1 for i, k in enumerate(run) if ranks.get(k, top) < top), None)
        if hit is not None:
            reached.append(hit)
    return {
        "runs": len(runs),
        "top": round(sum(ranks.get(k, top) < top for k in early) / len(early), 3) if early else None,
        "distinct": len(set(early)),
        "early_evaluations": len(early),
        "reached": round(len(reached) / len(runs), 3) if runs else None,
        "median_first_top": statistics.median(reached) if reached else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", nargs="+", required=True)
    ap.add_argument("--spaces", nargs="+", required=True)
    ap.add_argument("--first", type=int, default=10, help="evaluations after the first that count as early")
    ap.add_argument("--top", type=float, default=0.05, help="the fraction of the valid configurations that counts as the best")
    ap.add_argument("--cutune", default=None, help="cutune's binary: its strategy's runs too")
    ap.add_argument("--cutune-strategy", default="bandit_portfolio")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    ranks = {}
    for path in args.spaces:
        if not os.path.exists(path):
            print(f"kt_listing_order.py: {path}: no such file", file=sys.stderr)
            return 2
        try:
            ranks[space_name(path)] = ranks_of(path)
        except (OSError, ValueError, EOFError, KeyError, TypeError, AttributeError) as e:
            print(f"kt_listing_order.py: {path}: not a recorded space ({type(e).__name__}: {e})", file=sys.stderr)
            return 2
    runs = collections.defaultdict(list)
    budgets = {}  # space -> (time_limit_s, max_fevals) of its first Kernel Tuner trace
    for path in args.traces:
        try:
            for trace in load_json(path)["traces"]:
                runs[(trace["space"], trace["strategy"])].extend(trace["runs"])
                if trace.get("stats") and trace["space"] not in budgets:
                    budgets[trace["space"]] = (trace["stats"][0]["time_limit_s"], trace["stats"][0]["max_fevals"],
                                               len(trace["runs"]))
        except (OSError, ValueError, EOFError, lzma.LZMAError, KeyError, TypeError) as e:
            print(f"kt_listing_order.py: {path}: not Kernel Tuner traces ({type(e).__name__}: {e})", file=sys.stderr)
            return 2

    if args.cutune:
        paths = {space_name(p): p for p in args.spaces}
        name = "cutune:" + args.cutune_strategy
        for space, (time_limit_s, max_fevals, seeds) in sorted(budgets.items()):
            if space in paths:
                try:
                    traces = simulated_traces(args.cutune, paths[space], seeds, max_fevals, args.cutune_strategy,
                                              time_limit_s)
                    runs[(space, name)] = [[e["key"] for e in trace] for trace in traces]
                except (RuntimeError, OSError, ValueError, KeyError) as e:
                    print(f"kt_listing_order.py: {e}", file=sys.stderr)
                    return 2

    rows = []
    for (space, strategy), its_runs in sorted(runs.items()):
        if space.endswith("_reversed") or space not in ranks:
            continue
        reversed_space = space + "_reversed"
        if (reversed_space, strategy) not in runs or reversed_space not in ranks:
            continue
        rows.append({"space": space, "strategy": strategy,
                     "declared": figures(its_runs, ranks[space], args.first, args.top),
                     "reversed": figures(runs[(reversed_space, strategy)], ranks[reversed_space], args.first, args.top)})
    if not rows:
        print("kt_listing_order.py: no space has runs in both orders in these traces", file=sys.stderr)
        return 2

    def cell(f):
        median = "-" if f["median_first_top"] is None else f"{f['median_first_top']:g}"
        top = "-" if f["top"] is None else f"{f['top']:.3f}"  # runs of a single evaluation have no early ones
        return f"{top} | {f['distinct']} of {f['early_evaluations']} | {f['reached']:.2f} at {median}"

    best = f"{100 * args.top:g}%"
    lines = [
        f"| space | strategy | declared: share of evaluations 2..{args.first + 1} in the best {best} | distinct | runs reaching the best {best}, at (median evaluation) "
        f"| reversed: share in the best {best} | distinct | reached, at |",
        "| --- | --- | ---: | ---: | --- | ---: | ---: | --- |",
    ]
    for r in rows:
        lines.append(f"| {r['space']} | {r['strategy']} | {cell(r['declared'])} | {cell(r['reversed'])} |")
    table = "\n".join(lines)
    print(table)
    if args.out:
        command = "python3 -m studies.kt_listing_order " + " ".join(sys.argv[1:])
        with open(args.out + ".json", "w") as f:
            json.dump({"command": command, "first": args.first, "top": args.top, "rows": rows}, f, indent=1)
        with open(args.out + ".md", "w") as f:
            f.write("# Kernel Tuner's early evaluations in both listing orders\n\n")
            f.write(__doc__.split("\n\n", 1)[1].split("\nUsage:")[0].strip() + "\n\n")
            f.write(table + "\n\nCommand:\n\n```sh\n" + command + "\n```\n")
            notes = args.out + ".notes.md"
            if os.path.exists(notes):
                f.write("\n" + open(notes).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
