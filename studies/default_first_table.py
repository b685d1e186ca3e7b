#!/usr/bin/env python3
"""The default strategy scored as a tuning runs it (the space's default configuration evaluated
first) beside the same strategy alone, per space and per family, with Kernel Tuner's best row of
the all-spaces table per family: OUT.md and OUT.json.

A tuning evaluates the problem's default configuration before its strategy proposes anything
when the problem names it (the speedup's baseline and its author's guess) or its output defines a
correct one; Kernel Tuner has no such evaluation. `cutune score` simulates it where the recording
names the default (cutune_default); `--strategy-alone` leaves it out.

Usage:
  python3 -m studies.default_first_table --first F.json [F2.json ...] --alone A.json [A2.json ...] --all-spaces ALL.json
      --strategy bandit_portfolio --out results/X
Writes OUT.json and OUT.md (OUT.notes.md appended when it exists).
F: `cutune score --json` with the default evaluated first (the first file's spaces are the table's; a
later file's space replaces an earlier one's, e.g. a space scored again after its recording gained
its cutune_default); A: the same strategy, same seeds,
repeats and batch, alone (a later file's space replaces an earlier one's); ALL: a combined table
of bench_strategies.py (its families and Kernel Tuner's rows). Each space of F must be scored in
the A files and in ALL. Bad input: one line, exit 2, nothing written.
"""
import argparse
import gzip
import json
import sys
from pathlib import Path


def fail(message):
    print(f"default_first_table.py: {message}", file=sys.stderr)
    sys.exit(2)


def load(path, what):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        fail(f"{what} {path}: cannot read ({e})")


def row_of(doc, strategy, path, what):
    for r in doc.get("strategies", []):
        if r.get("strategy") == strategy and r.get("source") == "cutune":
            return r
    fail(f"{what} {path}: no cutune row '{strategy}'")


def settings(doc):
    return (doc.get("repeats"), doc.get("seed"), doc.get("batch", 8), doc.get("compile_workers", 0),
            json.dumps(doc.get("methodology"), sort_keys=True))


def default_of(space_file):
    """The default configuration a replay evaluates first (the recording's cutune_default, which
    names it where a tuning evaluated it first), its rank among the valid ones and its time over
    the optimum; without the field, none: the strategy's proposals go first."""
    opener = gzip.open if space_file.endswith(".gz") else open
    with opener(space_file, "rt") as f:
        d = json.load(f)
    keys, cache = d["tune_params_keys"], d["cache"]
    if "cutune_default" not in d:
        return {"key": None, "source": "none named: the strategy's proposals first"}
    key = ",".join(str(d["cutune_default"][k]) for k in keys)
    ok = sorted(v["time"] for v in cache.values() if isinstance(v.get("time"), (int, float)))
    entry = cache.get(key)
    if entry is None:  # the replay then takes the first recorded configuration in listing order
        return {"key": key, "source": "cutune_default, not recorded: the first recorded one instead"}
    t = entry.get("time")
    if not isinstance(t, (int, float)):
        return {"key": key, "source": "cutune_default", "rank": None, "of": len(ok), "over_optimum": None}
    return {"key": key, "source": "cutune_default", "rank": ok.index(t) + 1, "of": len(ok), "over_optimum": t / ok[0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--first", required=True, nargs="+")
    ap.add_argument("--alone", required=True, nargs="+")
    ap.add_argument("--all-spaces", required=True)
    ap.add_argument("--strategy", default="bandit_portfolio")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    first_doc = load(args.first[0], "--first")
    first = {"per_space": {}, "sampling_error": {}}
    first_commands = []
    for p in args.first:
        doc = first_doc if p == args.first[0] else load(p, "--first")
        if not doc.get("default_first"):
            fail(f"--first {p}: scored without the default first (default_first is not true)")
        if settings(doc) != settings(first_doc):
            fail(f"--first {p}: other repeats, seed, batch, compile workers or methodology than {args.first[0]}")
        r = row_of(doc, args.strategy, p, "--first")
        first["per_space"].update(r["per_space"])
        first["sampling_error"].update(r.get("sampling_error") or {})
        first_commands.append(doc.get("command"))
    alone_cells, alone_errors = {}, {}
    for p in args.alone:
        doc = load(p, "--alone")
        if doc.get("default_first"):
            fail(f"--alone {p}: scored with the default first")
        if settings(doc) != settings(first_doc):
            fail(f"--alone {p}: other repeats, seed, batch, compile workers or methodology than --first")
        r = row_of(doc, args.strategy, p, "--alone")
        alone_cells.update(r["per_space"])
        alone_errors.update(r.get("sampling_error") or {})
    all_doc = load(args.all_spaces, "--all-spaces")
    families = all_doc.get("families") or {}
    family_of = {sp: f for f, sps in families.items() for sp in sps}
    spaces = [(sp["name"], sp["file"]) for sp in first_doc["spaces"]]
    for name, _ in spaces:
        if name not in alone_cells:
            fail(f"--alone: no file scores the space {name}")
        if name not in family_of:
            fail(f"--all-spaces {args.all_spaces}: no family holds the space {name}")

    rows = []
    for name, file in spaces:
        rows.append({"space": name, "family": family_of[name], "default": default_of(file),
                     "alone": alone_cells[name], "first": first["per_space"][name],
                     "first_error": (first.get("sampling_error") or {}).get(name),
                     "alone_error": alone_errors.get(name)})
    fams = []
    for f in families:
        mine = [r for r in rows if r["family"] == f]
        if not mine:
            continue
        kt_best = None
        for r in all_doc["strategies"]:
            if r["source"] == "cutune" or r["strategy"] == "kt:brute_force":
                continue
            cells = [r["per_space"].get(x["space"]) for x in mine]
            if any(c is None for c in cells):
                continue
            mean = sum(cells) / len(cells)
            if kt_best is None or mean > kt_best[1]:
                kt_best = (r["strategy"], mean)
        fams.append({"family": f, "spaces": len(mine),
                     "alone": sum(x["alone"] for x in mine) / len(mine),
                     "first": sum(x["first"] for x in mine) / len(mine),
                     "kernel_tuner_best": kt_best})
    overall_alone = sum(r["alone"] for r in rows) / len(rows)
    overall_first = sum(r["first"] for r in rows) / len(rows)

    out = Path(args.out)
    command = "python3 -m studies.default_first_table " + " ".join(sys.argv[1:])
    result = {"command": command, "strategy": args.strategy, "first_command": "\n".join(c for c in first_commands if c),
              "repeats": first_doc.get("repeats"), "seed": first_doc.get("seed"), "batch": first_doc.get("batch"),
              "overall": {"alone": overall_alone, "first": overall_first}, "families": fams, "spaces": rows}
    lines = [f"# The default strategy as a tuning runs it: the default configuration first", "",
             f"`{args.strategy}` on {len(rows)} recorded spaces, {first_doc.get('repeats')} runs each (seeds "
             f"{first_doc.get('seed')}.., batch {first_doc.get('batch')}), scored alone (its proposals only, as every "
             "strategy table scores it) and as a tuning runs it (the space's default configuration evaluated first, "
             "its recorded cost spent before the strategy's first proposal) where the recording names it "
             "(`cutune_default`: its problem names a default); elsewhere the two are the same runs. Kernel "
             "Tuner's best per family is its best row of the all-spaces table (`kt:brute_force`, which walks the "
             "listing, left out); its runs have no default evaluation.", "",
             f"Overall: alone **{overall_alone:.3f}**, as a tuning runs **{overall_first:.3f}** "
             f"({overall_first - overall_alone:+.3f}).", "",
             "| family | spaces | alone | as a tuning runs | change | Kernel Tuner's best (declared order) |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    for f in fams:
        kt = f"`{f['kernel_tuner_best'][0]}` {f['kernel_tuner_best'][1]:.3f}" if f["kernel_tuner_best"] else "-"
        lines.append(f"| {f['family']} | {f['spaces']} | {f['alone']:.3f} | {f['first']:.3f} | "
                     f"{f['first'] - f['alone']:+.3f} | {kt} |")
    lines += ["", "| space | the default configuration (rank of valid, time over the optimum) | alone | as a tuning runs | change |",
              "| --- | --- | ---: | ---: | ---: |"]
    for r in rows:
        d = r["default"]
        where = (f"{d['key']}: rank {d['rank']} of {d['of']}, {d['over_optimum']:.2f}x" if d.get("rank")
                 else d["source"] if d["key"] is None else f"{d['key']} ({d['source']})")
        lines.append(f"| {r['space']} | {where} | {r['alone']:.3f} | {r['first']:.3f} | {r['first'] - r['alone']:+.3f} |")
    lines += ["", "Command:", "", "```sh", command, "```", ""]
    notes = out.with_suffix(".notes.md")
    if notes.exists():
        lines += [notes.read_text().rstrip(), ""]
    out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    out.with_suffix(".md").write_text("\n".join(lines))
    print(f"{out.with_suffix('.md')}: alone {overall_alone:.4f}, as a tuning runs {overall_first:.4f}")


if __name__ == "__main__":
    main()
