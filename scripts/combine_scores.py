#!/usr/bin/env python3
"""One table from several `cutune score --json` files: a later file's scores of a space replace an
earlier file's, e.g. the small spaces scored again with more runs over an earlier table.

Why: with 40 runs per space the overall score of one strategy moves by about 0.05 between seed
sets (the spaces whose scoring window is a dozen evaluations are mostly luck), as much as the
margins being judged. The small spaces are cheap to run 200 times for both tools; the large ones
are not, and their scores are steadier.

Usage:
  scripts/combine_scores.py --scores A.json B.json ... --out results/X [--title T]
A later file's scores of a space replace an earlier file's (all of its rows: a row the later file
lacks is dropped); the files must share the batch. A row (strategy) is kept only where every file
has it. Writes OUT.json (per-space scores and runs, the source files' commands) and
OUT.md (overall = mean over all spaces, families' means, fewest runs per space), and appends
OUT.notes.md to OUT.md when it exists.
"""
import argparse
import json
import re
import statistics
import sys
from pathlib import Path


def fail(message):
    """Bad input: one line, exit 2, nothing written."""
    print(f"combine_scores.py: {message}", file=sys.stderr)
    sys.exit(2)


def family(space):
    """The kernel family: the cache's kernel name as the space's file name starts with it."""
    return re.sub(r"^bat_", "", space).split("_")[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scores", nargs="+", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="Search strategies, more runs on the small spaces")
    args = ap.parse_args()

    spaces, rows, commands = [], {}, []
    for path in args.scores:
        try:
            d = json.loads(Path(path).read_text())
            names = [s["name"] for s in d["spaces"]]
            batch = d.get("batch", 8)
            for r in d["strategies"]:
                if len(r["runs"]) != len(names) or any(n not in r["per_space"] for n in names):
                    raise ValueError(f"row {r['strategy']} does not cover its spaces")
        except (OSError, ValueError, KeyError, TypeError) as e:
            fail(f"--scores {path}: not a cutune score --json file ({e})")
        if spaces and batch != spaces[0]["batch"]:
            fail(f"--scores {path}: batch {batch}, the first file's is {spaces[0]['batch']}")
        spaces = [s for s in spaces if s["name"] not in names] + [{"name": n, "batch": batch, "file": path}
                                                                  for n in names]
        commands.append(d.get("bench_command") or d.get("command"))
        for r in d["strategies"]:
            row = rows.setdefault(r["strategy"], {"strategy": r["strategy"], "source": r["source"],
                                                  "per_space": {}, "runs": {}, "files": 0})
            row["files"] += 1
            for n, v, k in zip(names, [r["per_space"][n] for n in names], r["runs"]):
                row["per_space"][n] = v
                row["runs"][n] = k
    kept = []
    order = [s["name"] for s in spaces]
    for row in rows.values():
        row["per_space"] = {n: row["per_space"].get(n) for n in order}
        row["runs"] = {n: row["runs"].get(n, 0) for n in order}
        vals = list(row["per_space"].values())
        if row["files"] != len(args.scores) or any(v is None for v in vals):
            continue
        fams = {}
        for n, v in row["per_space"].items():
            fams.setdefault(family(n), []).append(v)
        row["overall"] = statistics.mean(vals)
        row["per_family"] = {f: statistics.mean(v) for f, v in sorted(fams.items())}
        kept.append(row)
    kept.sort(key=lambda r: -r["overall"])
    out = Path(args.out)
    if not kept:
        fail("no strategy is scored on every space by every file")
    fam_names = list(kept[0]["per_family"])
    counts = {f: sum(family(s["name"]) == f for s in spaces) for f in fam_names}
    lines = [f"# {args.title}", "",
             f"Batch {spaces[0]['batch']}; {len(spaces)} spaces; overall = mean over spaces, a family's = mean over "
             "its spaces. Runs: the fewest and the most per space. Made by `scripts/combine_scores.py --scores "
             + " ".join(args.scores) + "` from:", ""]
    lines += [f"- `{c}`" for c in commands]
    lines += ["", "| strategy | source | runs | overall | " + " | ".join(f"{f} ({counts[f]})" for f in fam_names) + " |",
              "| --- | --- | --- | ---: | " + " | ".join("---:" for _ in fam_names) + " |"]
    for r in kept:
        runs = sorted(set(r["runs"].values()))
        lines.append(f"| {r['strategy']} | {'cutune' if r['source'] == 'cutune' else 'Kernel Tuner'} | "
                     f"{runs[0]}-{runs[-1]} | **{r['overall']:.3f}** | "
                     + " | ".join(f"{r['per_family'][f]:.3f}" for f in fam_names) + " |")
    notes = out.with_suffix(".notes.md")
    text = "\n".join(lines) + "\n" + ("\n" + notes.read_text() if notes.exists() else "")
    try:
        out.with_suffix(".json").write_text(json.dumps({"spaces": spaces, "commands": commands, "strategies": kept},
                                                       indent=1) + "\n")
        out.with_suffix(".md").write_text(text)
    except OSError as e:
        fail(f"--out {args.out}: {e}")
    print(text)


if __name__ == "__main__":
    main()
