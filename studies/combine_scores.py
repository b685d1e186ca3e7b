#!/usr/bin/env python3
"""One table from several score files of studies/bench_strategies.py (OUT.json): a later file's
scores of a space replace an earlier file's, e.g. the small spaces scored again with more runs of
both tools over an earlier table of all spaces.

Why: with 40 runs per space the overall score of one strategy moves by about 0.05 between seed
sets (the spaces whose scoring window is a dozen evaluations are mostly luck), as much as the
margins being judged. The small spaces are cheap to run 200 times for both tools; the large ones
are not, and their scores are steadier.

Usage:
  python3 -m studies.combine_scores --scores A.json B.json ... [--rows R.json --row-names kt:skopt ...] --out results/X
A later file's scores of a space replace an earlier file's, for every row: a row (strategy) is
kept only where every file has it. --rows: rows scored again on some or all of the table's spaces
(e.g. one slow strategy run again with more runs, or cutune's rows scored again to carry standard
errors): for each row named by --row-names, that file's spaces replace the combined row's; the
other rows stay as they are. A row the --scores files lack is added, empty ("-") on the spaces its
--rows files do not score. The files must share the batch and the compile workers. The
families, the means, their standard errors and OUT.md (with OUT.notes.md) are bench_strategies.py's.
"""
import argparse
import json
import sys
from pathlib import Path

from studies import bench_strategies  # (its families and Markdown writer)


def fail(message):
    """Bad input: one line, exit 2, nothing written."""
    print(f"combine_scores.py: {message}", file=sys.stderr)
    sys.exit(2)


def read(path):
    try:
        d = json.loads(Path(path).read_text())
        names = [sp["name"] for sp in d["spaces"]]
        for r in d["strategies"]:
            if len(r["runs"]) != len(names) or any(n not in r["per_space"] for n in names):
                raise ValueError(f"row {r['strategy']} does not cover its spaces")
        d.setdefault("batch", 8)
        d.setdefault("compile_workers", 0)
        return d
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"--scores {path}: not a bench_strategies.py score file ({e})")


def editable(row, names):
    """A copy of a score file's row whose cells can be replaced: runs by space name."""
    return {**row, "per_space": dict(row["per_space"]),
            "per_space_failure_aware": dict(row.get("per_space_failure_aware") or {}),
            "sampling_error": dict(row.get("sampling_error") or {}), "runs": dict(zip(names, row["runs"]))}


def put_cells(row, later, names):
    """A later row's cells of the spaces `names` (score, failure-aware score, runs, standard error) into `row`."""
    row["per_space"].update({n: later["per_space"][n] for n in names})
    fa = later.get("per_space_failure_aware") or {}
    row["per_space_failure_aware"].update({n: fa.get(n) for n in names})
    row["runs"].update(zip(names, later["runs"]))
    errors = later.get("sampling_error") or {}
    for n in names:  # a later cell without an error estimate has none
        row["sampling_error"].pop(n, None)
        if n in errors:
            row["sampling_error"][n] = errors[n]


def summarised(row, names):
    """An editable row back as a score file's row over the spaces `names`: runs as a list, the means
    again (bench_strategies.add_families adds the families' and the standard errors)."""
    def mean(values):
        return None if any(v is None for v in values) else sum(values) / len(values)

    row["runs"] = [row["runs"][n] for n in names]
    row["overall"] = mean([row["per_space"][n] for n in names])
    row["score_failure_aware"] = mean([row["per_space_failure_aware"].get(n) for n in names])
    for key in ("sampling_error_overall", "sampling_error_per_family", "per_family"):
        row.pop(key, None)
    if not row["sampling_error"]:
        del row["sampling_error"]
    return row


def by_overall(rows):
    return sorted(rows, key=lambda r: (r["overall"] is None, -(r["overall"] or 0.0)))  # unscored rows last


def combine(files):
    """The first file with each later file's spaces put in (in place where the space is there)."""
    out = dict(files[0][1])
    spaces = list(out["spaces"])
    rows = {r["strategy"]: editable(r, [sp["name"] for sp in spaces]) for r in out["strategies"]}
    kt_runs = dict(out.get("kernel_tuner", {}).get("runs") or {})
    for path, d in files[1:]:
        for key in ("batch", "compile_workers"):
            if d[key] != out[key]:
                fail(f"--scores {path}: {key} {d[key]}, the first file's is {out[key]}")
        at = {sp["name"]: i for i, sp in enumerate(spaces)}
        for sp in d["spaces"]:
            if sp["name"] in at:
                spaces[at[sp["name"]]] = sp
            else:
                spaces.append(sp)
        names = [sp["name"] for sp in d["spaces"]]
        later = {r["strategy"]: r for r in d["strategies"]}
        rows = {st: row for st, row in rows.items() if st in later}
        for st, row in rows.items():
            put_cells(row, later[st], names)
        kt_runs.update(d.get("kernel_tuner", {}).get("runs") or {})
    if not rows:
        fail("no strategy is scored by every file")
    names = [sp["name"] for sp in spaces]
    out["spaces"] = spaces
    out["strategies"] = by_overall(summarised(row, names) for row in rows.values())
    out["repeats"] = "/".join(str(r) for r in dict.fromkeys(d["repeats"] for _, d in files))
    out["kernel_tuner"] = {**out.get("kernel_tuner", {}), "runs": kt_runs,
                           "repeats": "/".join(str(r) for r in dict.fromkeys(
                               d.get("kernel_tuner", {}).get("repeats", "-") for _, d in files))}
    out["date"] = max(d["date"] for _, d in files)
    out["cutune_command"] = "\n".join(d.get("bench_command") or d["command"] for _, d in files)
    out["bench_command"] = "python3 -m studies.combine_scores " + " ".join(sys.argv[1:])
    return out


def replace_rows(out, path, d, names):
    """The rows `names` of score file `d` put into the combined table: for each, d's spaces replace the
    combined row's (score, runs, standard error); other rows are left as they are. A row the table lacks
    is added, without a score on the spaces d does not score."""
    for key in ("batch", "compile_workers"):
        if d[key] != out[key]:
            fail(f"--rows {path}: {key} {d[key]}, the --scores files' is {out[key]}")
    if d["methodology"] != out["methodology"]:
        fail(f"--rows {path}: another methodology than the --scores files'")
    table = [sp["name"] for sp in out["spaces"]]
    names_d = [sp["name"] for sp in d["spaces"]]
    unknown = [n for n in names_d if n not in table]
    if unknown:
        fail(f"--rows {path}: space {unknown[0]} is not in the --scores files' table")
    later = {r["strategy"]: r for r in d["strategies"]}
    rows = {r["strategy"]: r for r in out["strategies"]}
    for name in names:
        if name not in later:
            fail(f"--row-names {name}: no such row in {path}")
        # A row the table lacks starts empty ("-", no runs) where d does not score a space: a
        # later --rows file of the other spaces fills it (a row scored in two files).
        row = editable(rows[name], table) if name in rows else \
            {"strategy": name, "source": later[name]["source"], "per_space": dict.fromkeys(table),
             "per_space_failure_aware": {}, "sampling_error": {}, "runs": dict.fromkeys(table, 0)}
        put_cells(row, later[name], names_d)
        rows[name] = summarised(row, table)
    out["strategies"] = by_overall(rows.values())
    kt = out.setdefault("kernel_tuner", {})
    kt_runs, kt_errors = kt.setdefault("runs", {}), kt.setdefault("errors", {})
    for n in names_d:  # the replaced rows' run statistics on these spaces go with them
        for name in names:
            kt_runs.get(n, {}).pop(name, None)
    for n, per in (d.get("kernel_tuner", {}).get("runs") or {}).items():
        if n in names_d:
            kt_runs.setdefault(n, {}).update({st: v for st, v in per.items() if st in names})
    for name in names:
        if name in (d.get("kernel_tuner", {}).get("errors") or {}):
            kt_errors[name] = d["kernel_tuner"]["errors"][name]
    out["cutune_command"] += "\n" + (d.get("bench_command") or d["command"])
    out["date"] = max(out["date"], d["date"])  # the table is as recent as its latest cells


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scores", nargs="+", required=True)
    ap.add_argument("--rows", action="append", default=[],
                    help="a score file of some of the same spaces whose rows --row-names replace the combined ones "
                         "there (repeatable, each with its --row-names)")
    ap.add_argument("--row-names", action="append", default=[], help="comma-separated strategies taken from --rows")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if len(args.rows) != len(args.row_names):
        fail("--rows and --row-names go together, one --row-names per --rows")
    scores = combine([(path, read(path)) for path in args.scores])
    for path, names in zip(args.rows, args.row_names):
        replace_rows(scores, path, read(path), [n for n in names.split(",") if n])
    # The header's "cutune's rows have N runs each" is what the table's cutune rows hold, not the
    # files' counts: with --rows, cutune rows scored again (the pipeline table's 20-run rows replaced
    # by 40-run ones) would otherwise keep the old count.
    counts = sorted({n for r in scores["strategies"] if r.get("source") == "cutune" for n in r["runs"] if n})
    if counts:
        scores["repeats"] = "/".join(str(n) for n in counts)
    bench_strategies.add_families(scores)
    out = Path(args.out)
    try:
        out.with_suffix(".json").write_text(json.dumps(scores, indent=1) + "\n")
        bench_strategies.write_markdown(scores, out.with_suffix(".md"))
    except OSError as e:
        fail(f"--out {args.out}: {e}")
    print(out.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
