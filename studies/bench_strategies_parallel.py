#!/usr/bin/env python3
"""cutune's strategies with N evaluators at once (a node's GPUs), in simulation: `cutune score
--workers N` for each N on the recorded spaces of studies/bench_strategies.py, one table.

With N evaluators the simulation is event-driven: up to N configurations run at once, each
finishing its recorded cost after it started; a result is told at its finish time and the
freed evaluator takes the strategy's next proposal. The time axis is simulated wall time, and
the baseline is random search with N evaluators, so the window is T(p) / N (see
search/include/cutune/search/scoring.hpp): random search scores about 0 at every N, and a
strategy's score at N beside its score at 1 says what proposing with N - 1 results pending
costs it.

Usage:
  python3 -m studies.bench_strategies_parallel [--workers 1,4,8] [--repeats 20] [--threads 2]
      [--spaces F...] [--cutune PATH] [--out results/strategies/strategies_parallel] [--reuse]
Writes OUT.json and OUT.md; the per-N scores of `cutune score --json` go to OUT.wN.json
(with --reuse, existing ones are read instead of re-run).
"""
import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from studies.bench_strategies import DEFAULT_SPACES  # (the same spaces as results/strategies/strategies.json)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", default="1,4,8")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--spaces", nargs="+", default=[str(p) for p in DEFAULT_SPACES])
    ap.add_argument("--cutune", default=str(ROOT / "build/tuner/cli/cutune"))
    ap.add_argument("--out", default=str(ROOT / "results/strategies/strategies_parallel"))
    ap.add_argument("--reuse", action="store_true", help="read OUT.wN.json where it exists")
    args = ap.parse_args()
    out = Path(args.out)
    workers = [int(w) for w in args.workers.split(",")]

    per_n = {}
    for n in workers:
        part = out.parent / f"{out.name}.w{n}.json"
        if not (args.reuse and part.exists()):
            cmd = [args.cutune, "score", "--spaces", *args.spaces, "--repeats", str(args.repeats), "--seed",
                   str(args.seed), "--workers", str(n), "--json", str(part)]
            if args.threads:
                cmd += ["--threads", str(args.threads)]
            print("+", shlex.join(cmd), flush=True)
            subprocess.run(cmd, check=True)
        per_n[n] = json.loads(part.read_text())

    first = per_n[workers[0]]
    spaces = [s["name"] for s in first["spaces"]]
    strategies = [r["strategy"] for r in first["strategies"]]  # best overall at the first N first
    table = {
        "description": "cutune score --workers N: every strategy with N simulated evaluators at once",
        # (--reuse only reads what an earlier run wrote: the command that reproduces is without it)
        "command": shlex.join(["python3", "-m", "studies.bench_strategies_parallel", *[a for a in sys.argv[1:] if a != "--reuse"]]),
        "repeats": first["repeats"],
        "seed": first["seed"],
        "batch": first["batch"],
        "workers": workers,
        "spaces": {n: per_n[n]["spaces"] for n in workers},
        "scores": {},
    }
    for s in strategies:
        table["scores"][s] = {}
        for n in workers:
            row = next(r for r in per_n[n]["strategies"] if r["strategy"] == s)
            table["scores"][s][str(n)] = {"overall": row["overall"], "per_space": row["per_space"]}
    out.with_suffix(".json").write_text(json.dumps(table, indent=1) + "\n")

    def cell(v):
        return "-" if v is None else f"{v:.3f}"

    lines = [
        "# Search strategies with N evaluators at once (simulated)",
        "",
        f"Dates: {', '.join(per_n[n]['date'] for n in workers)}. Reproduce: `{table['command']}` "
        f"(runs `cutune score --workers N` for N = {args.workers}; build `cutune` first).",
        "",
        "## Overall score (mean over the spaces) by number of evaluators N",
        "",
        "| strategy | " + " | ".join(f"N = {n}" for n in workers) + " |",
        "| --- | " + " | ".join("---:" for _ in workers) + " |",
    ]
    for s in strategies:
        lines.append(f"| {s} | " + " | ".join(cell(table["scores"][s][str(n)]["overall"]) for n in workers) + " |")
    lines += ["", "## Per space", "",
              "| strategy | N | " + " | ".join(spaces) + " |",
              "| --- | ---: | " + " | ".join("---:" for _ in spaces) + " |"]
    for s in strategies:
        for n in workers:
            ps = table["scores"][s][str(n)]["per_space"]
            lines.append(f"| {s} | {n} | " + " | ".join(cell(ps[sp]) for sp in spaces) + " |")
    lines += ["", "## Budgets", "",
              "| space | N | window (s of simulated wall time) | time budget (s) | evaluation budget |",
              "| --- | ---: | --- | ---: | ---: |"]
    for i, sp in enumerate(spaces):
        for n in workers:
            s = per_n[n]["spaces"][i]
            lines.append(f"| {sp} | {n} | {s['window_s'][0]:.1f}..{s['window_s'][1]:.1f} | "
                         f"{s['time_budget_s']:.1f} | {s['evaluation_budget']} |")
    notes = out.parent / f"{out.name}.notes.md"
    if notes.exists():
        lines += ["", notes.read_text().rstrip()]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(out.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
