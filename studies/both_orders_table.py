#!/usr/bin/env python3
"""Per kernel family, each strategy's score in the declared order of the parameters' values, in
the reversed order, and the mean of the two: which strategy leads a family with the listing
order's luck taken out.

A recorded space lists each parameter's values in some order, and every strategy that steps
along those lists (Kernel Tuner's and cutune's neighbourhoods, Kernel Tuner's brute force, its
repairs that take the first valid neighbour) is scored on that order as well as on the space.
`studies/reverse_space_values.py` writes a space with every list reversed (same measurements);
its score files name each space NAME_reversed and keep the families. This script reads the
score files of both orders (`cutune score --json` / `bench_strategies.py` / `combine_scores.py`
output), keeps the families scored in both, and for every strategy scored in both orders on
such a family prints the two family means and their mean, with the standard error of that mean
(sqrt(se_declared^2 + se_reversed^2) / 2, from the files' sampling_error_per_family).

Usage:
  python3 -m studies.both_orders_table --declared results/strategies/strategies_200.json \\
      --reversed results/strategies/strategies_reversed.json results/strategies/strategies_reversed_kt_examples.json \\
      --out results/strategies/strategies_both_orders
Writes OUT.json and OUT.md (OUT.notes.md appended when it exists) and prints the table.
"""
import argparse
import json
import math
import sys
from pathlib import Path

DEFAULT = "bandit_portfolio"


def fail(message):
    """Bad input: one line naming the file or flag, exit code 2, nothing written."""
    print(f"both_orders_table.py: {message}", file=sys.stderr)
    sys.exit(2)


def family_rows(files, flag):
    """{family: {strategy: (mean, se or None, runs)}} over the files, later files winning."""
    out = {}
    for f in files:
        try:
            d = json.loads(Path(f).read_text())
        except (OSError, json.JSONDecodeError) as e:
            fail(f"{flag} {f}: {e}")
        if "strategies" not in d or "families" not in d:
            fail(f"{flag} {f}: not a score file with families (no 'strategies' or 'families')")
        for r in d["strategies"]:
            per = r.get("per_family") or {}
            se = r.get("sampling_error_per_family") or {}
            runs = min(r.get("runs") or [0])
            for fam, v in per.items():
                if v is not None:
                    out.setdefault(fam, {})[r["strategy"]] = (v, se.get(fam), runs)
    return out


def fmt(v, se=None):
    return f"{v:.3f}" + (f" ±{se:.3f}" if se is not None else "")


def best_of(both, names, key):
    """The strategy of `names` with the highest `key` score in `both`, and that score."""
    name = max(names, key=lambda n: both[n][key])
    return name, both[name][key]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--declared", nargs="+", required=True, help="score files of the spaces as recorded")
    ap.add_argument("--reversed", nargs="+", required=True, help="score files of the same spaces, lists reversed")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    declared = family_rows(args.declared, "--declared")
    reversed_ = family_rows(args.reversed, "--reversed")
    families = [f for f in declared if f in reversed_]
    if not families:
        fail("--reversed: no family is scored in both orders")

    result = {"declared": args.declared, "reversed": args.reversed, "families": {}}
    lines = ["# Per family, both listing orders", "",
             "Each cell: the family's mean score with the values as recorded / reversed / the mean of the two "
             "(± its standard error where both orders have one). Strategies scored in both orders only; "
             "`kt:` rows are Kernel Tuner 1.5.0's, the others cutune's (the default is bandit_portfolio). "
             f"Made by `python3 -m studies.both_orders_table {' '.join(sys.argv[1:])}`.", ""]
    summary = ["| family | the default: declared / reversed / both | Kernel Tuner's best, declared "
               "| Kernel Tuner's best, reversed | Kernel Tuner's best over both orders | the default ahead over both |",
               "| --- | --- | --- | --- | --- | --- |"]
    for fam in families:
        both = {}
        for st in declared[fam]:
            if st not in reversed_[fam]:
                continue
            (a, sa, ra), (b, sb, rb) = declared[fam][st], reversed_[fam][st]
            se = math.sqrt(sa * sa + sb * sb) / 2 if sa is not None and sb is not None else None
            both[st] = {"declared": a, "reversed": b, "both": (a + b) / 2, "se": se, "runs": [ra, rb]}
        if DEFAULT not in both:
            continue
        result["families"][fam] = both
        ranked = sorted(both, key=lambda s: -both[s]["both"])
        lines += [f"## {fam}", "", "| strategy | runs (declared / reversed) | declared | reversed | both orders |",
                  "| --- | --- | ---: | ---: | ---: |"]
        for st in ranked:
            c = both[st]
            lines.append(f"| {st} | {c['runs'][0]} / {c['runs'][1]} | {fmt(c['declared'])} | {fmt(c['reversed'])} "
                         f"| **{fmt(c['both'], c['se'])}** |")
        lines.append("")
        others = [s for s in both if s.startswith("kt:")]  # Kernel Tuner's rows: the target's reference
        if not others:
            continue
        d = both[DEFAULT]
        (bd, bdv), (br, brv), (bb, bbv) = (best_of(both, others, key) for key in ("declared", "reversed", "both"))
        summary.append(f"| {fam} | {d['declared']:.3f} / {d['reversed']:.3f} / **{fmt(d['both'], d['se'])}** "
                       f"| {bd} {bdv:.3f} | {br} {brv:.3f} | {bb} {fmt(bbv, both[bb]['se'])} "
                       f"| {'yes' if d['both'] >= bbv else 'no'} |")
    lines[4:4] = summary + [""]
    out = Path(args.out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    except OSError as e:
        fail(f"--out {args.out}: {e}")
    notes = out.parent / (out.name + ".notes.md")
    text = "\n".join(lines) + "\n" + ("\n" + notes.read_text() if notes.exists() else "")
    out.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
