#!/usr/bin/env python3
"""cutune's search strategies beside Kernel Tuner's, on the same recorded spaces and budgets,
scored by one scorer (cutune score), one table (issue 7).

Kernel Tuner (pinned, in a git-ignored venv that this script makes) runs its own strategies in
its simulation mode from each cache file (simulation_mode=True, cache=FILE) with the budget
cutune's strategies get: strategy_options time_limit = the end of the scoring window T(0.96) in
simulated seconds, max_fevals = the evaluation budget cutune's strategies are given. Its runs are
converted to traces (the configuration keys in the order Kernel Tuner evaluated them) and
`cutune score --traces` scores them beside cutune's simulated runs, with the same costs (the
recorded compile + benchmark + verification time) and the same statistics.

Usage:
  scripts/bench_strategies.py [--spaces F...] [--repeats 100] [--kt-repeats 20]
      [--kt-strategies a,b] [--strategies a,b] [--out results/strategies] [--cutune PATH]
Writes OUT.json (the scores), OUT.kt_traces.json (Kernel Tuner's runs) and prints the table.
"""
import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures import TimeoutError as FuturesTimeout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
PINS = ["kernel_tuner==1.5.0"]
SHARED = ROOT.parent / "shared"
# The recorded spaces: the shared ones (convolution_A100_T4 is convolution_A100 again, in T4
# form: left out) and Kernel Tuner's own test caches where they have enough to score.
DEFAULT_SPACES = [
    SHARED / "data/spaces/convolution_A100.json.gz",
    SHARED / "data/spaces/convolution_A4000.json.gz",
    SHARED / "data/spaces/dedispersion_A100.json.gz",
    SHARED / "data/spaces/dedispersion_A4000.json.gz",
]
KT_STRATEGIES = ["random_sample", "greedy_ils", "mls", "simulated_annealing", "dual_annealing",
                 "genetic_algorithm", "diff_evo", "pso", "firefly_algorithm", "basinhopping", "bayes_opt"]


def ensure_kernel_tuner():
    """Re-runs this script inside .venv with Kernel Tuner installed (pinned)."""
    try:
        import kernel_tuner  # noqa: F401
        return
    except ImportError:
        pass
    py = VENV / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "-q", *PINS], check=True)
    os.execv(str(py), [str(py), *sys.argv])


def load_cache(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def kt_run(job):
    """One Kernel Tuner run in simulation mode; returns the keys in evaluation order."""
    import numpy as np
    from kernel_tuner import tune_kernel

    cache_file, strategy, seed, time_limit, max_fevals = job
    cache = load_cache(cache_file)
    keys = cache["tune_params_keys"]
    recorded = set(cache["cache"].keys())

    def member(p):  # valid = recorded, as in cutune's recorded spaces
        return ",".join(str(p[k]) for k in keys) in recorded

    random.seed(seed)
    np.random.seed(seed)
    tune_params = {k: cache["tune_params"][k] for k in keys}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = tune_kernel(cache["kernel_name"], "__global__ void k() {}", cache.get("problem_size") or 1, [],
                                 tune_params, restrictions=member, strategy=strategy,
                                 strategy_options={"time_limit": time_limit, "max_fevals": max_fevals},
                                 cache=str(cache_file), simulation_mode=True, quiet=True,
                                 objective=cache.get("objective", "time") if isinstance(cache.get("objective"), str) else "time")
    return [",".join(str(r[k]) for k in keys) for r in results]


def write_markdown(scores, path):
    """results/strategies.md: the table (losers included), spaces, budgets, settings, command."""
    spaces = [sp["name"] for sp in scores["spaces"]]
    lines = ["# Search strategies: cutune's and Kernel Tuner's, scored alike", "",
             f"Date: {scores['date']}. Scorer: `cutune score` (methodology of Willemsen, van Nieuwpoort and "
             f"van Werkhoven, FGCS 2024: window T({scores['methodology']['window'][0]})..T({scores['methodology']['window'][1]}), "
             f"{scores['methodology']['points']} points, calculated random-search baseline, S(t) = "
             f"{scores['methodology']['curve']}). 0 = as good as random search, 1 = the optimum; the overall score is "
             "the mean over all spaces together.", "",
             "| strategy | source | runs per space | " + " | ".join(spaces) + " | overall |",
             "| --- | --- | --- | " + " | ".join("---:" for _ in spaces) + " | ---: |"]
    for r in scores["strategies"]:
        cells = ["-" if r["per_space"][sp] is None else f"{r['per_space'][sp]:.3f}" for sp in spaces]
        overall = "-" if r["overall"] is None else f"**{r['overall']:.3f}**"
        runs = sorted(set(r["runs"]))
        lines.append(f"| {r['strategy']} | {'cutune' if r['source'] == 'cutune' else 'Kernel Tuner'} | "
                     f"{'/'.join(map(str, runs))} | " + " | ".join(cells) + f" | {overall} |")
    lines += ["", "Spaces (recorded brute-force measurements; valid = recorded; cost = compile + benchmark + "
              "verification time):", "",
              "| space | configurations | valid | optimum (ms) | median (ms) | median cost (s) | window (s) | "
              "time budget (s) | evaluation budget |", "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |"]
    for sp in scores["spaces"]:
        lines.append(f"| {sp['name']} | {sp['configurations']} | {sp['valid']} | {sp['optimum']:.4f} | "
                     f"{sp['median']:.4f} | {sp['median_cost_s']:.3f} | {sp['window_s'][0]:.1f}..{sp['window_s'][1]:.1f} | "
                     f"{sp['time_budget_s']:.1f} | {sp['evaluation_budget']} |")
    kt = scores.get("kernel_tuner", {})
    lines += ["", f"Budgets: every run, cutune's and Kernel Tuner's, stops at the end of the window (time budget, "
              f"simulated seconds); cutune's strategies are told the evaluation budget for planning, Kernel Tuner's get "
              f"it as max_fevals. cutune: {scores['repeats']} runs per strategy and space (seed {scores['seed']} + run), "
              f"batches of {scores['batch']}. Kernel Tuner: {kt.get('version', '-')}, {kt.get('repeats', '-')} runs per "
              f"strategy and space (fewer: it is slow in simulation), simulation_mode=True, restrictions = "
              f"the recorded configurations.", "",
              "Command:", "", "```sh"]
    lines += ([scores["cutune_command"]] if "cutune_command" in scores else [])
    lines += [scores.get("bench_command", scores["command"]), "```", ""]
    Path(path).write_text("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spaces", nargs="+", default=[str(p) for p in DEFAULT_SPACES])
    ap.add_argument("--repeats", type=int, default=100, help="cutune runs per strategy and space")
    ap.add_argument("--kt-repeats", type=int, default=20, help="Kernel Tuner runs per strategy and space")
    ap.add_argument("--kt-strategies", default=",".join(KT_STRATEGIES))
    ap.add_argument("--strategies", default="", help="cutune's (default: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kt-traces", default=None, help="reuse Kernel Tuner's runs from an earlier OUT.kt_traces.json")
    ap.add_argument("--cutune-scores", default=None,
                    help="reuse cutune's rows from an earlier `cutune score --json` on the same spaces "
                         "(its repeats and seed are kept)")
    ap.add_argument("--kt-deadline", type=float, default=None,
                    help="seconds for Kernel Tuner's runs; those not done by then are left out")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--out", default=str(ROOT / "results" / "strategies"))
    ap.add_argument("--cutune", default=str(ROOT / "build" / "tuner" / "cli" / "cutune"))
    args = ap.parse_args()
    ensure_kernel_tuner()
    import kernel_tuner

    out = Path(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        # The budgets cutune's strategies get, per space, from cutune's own statistics.
        info = Path(tmp) / "info.json"
        subprocess.run([args.cutune, "score", "--spaces", *args.spaces, "--strategies", "random", "--repeats", "1",
                        "--points", "2", "--json", str(info)], check=True, stdout=subprocess.DEVNULL)
        spaces = json.loads(info.read_text())["spaces"]

        # Kernel Tuner reads plain .json caches.
        plain = {}
        for space in (spaces if not args.kt_traces else []):
            plain[space["name"]] = Path(tmp) / (space["name"] + ".json")
            plain[space["name"]].write_text(json.dumps(load_cache(space["file"])))
        # Repeat-major order, so that every strategy has runs on every space early: with
        # --kt-deadline the runs done by then are kept (the table says how many).
        jobs = [(space, strategy, r) for r in range(args.kt_repeats) for space in spaces
                for strategy in args.kt_strategies.split(",")] if not args.kt_traces else []
        t0 = time.time()
        runs = {}
        trace_file = out.with_suffix(".kt_traces.json")
        trace_file.parent.mkdir(parents=True, exist_ok=True)
        tool = f"kernel_tuner {getattr(kernel_tuner, '__version__', '1.5.0')}"
        pool = ProcessPoolExecutor(max_workers=args.jobs)
        futures = {pool.submit(kt_run, (str(plain[sp["name"]]), st, args.seed + r, sp["time_budget_s"],
                                        sp["evaluation_budget"])): (sp["name"], st) for sp, st, r in jobs}
        try:
            for f in as_completed(futures, timeout=args.kt_deadline):
                runs.setdefault(futures[f], []).append(f.result())
        except FuturesTimeout:
            print(f"Kernel Tuner: --kt-deadline {args.kt_deadline} s reached, {sum(map(len, runs.values()))} of "
                  f"{len(jobs)} runs done; scoring those", file=sys.stderr)
        for p in getattr(pool, "_processes", {}).values():  # the unfinished runs are not waited for
            p.kill()
        pool.shutdown(wait=False, cancel_futures=True)
        kt_s = time.time() - t0
        traces = {"tool": tool, "traces": [{"space": s, "strategy": "kt:" + st, "runs": v} for (s, st), v in runs.items()]}
        if args.kt_traces:
            traces = json.loads(Path(args.kt_traces).read_text())
        trace_file.write_text(json.dumps(traces))

    cmd = [args.cutune, "score", "--spaces", *args.spaces, "--repeats", str(args.repeats), "--seed", str(args.seed),
           "--traces", str(trace_file), "--json", str(out.with_suffix(".json"))]
    if args.strategies:
        cmd += ["--strategies", args.strategies]
    if args.cutune_scores:  # Kernel Tuner's runs only (beside one random run, dropped), then cutune's earlier rows
        cmd[cmd.index("--repeats") + 1] = "1"
        cmd += ["--strategies", "random"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL if args.cutune_scores else None)
    scores = json.loads(out.with_suffix(".json").read_text())
    if args.cutune_scores:
        earlier = json.loads(Path(args.cutune_scores).read_text())
        if [sp["name"] for sp in earlier["spaces"]] != [sp["name"] for sp in scores["spaces"]] or \
                earlier["methodology"] != scores["methodology"]:
            sys.exit("--cutune-scores: other spaces or another methodology than this run")
        rows = [r for r in scores["strategies"] if r["source"] != "cutune"] + earlier["strategies"]
        scores["strategies"] = sorted(rows, key=lambda r: -1e9 if r["overall"] is None else -r["overall"])
        scores.update(repeats=earlier["repeats"], seed=earlier["seed"], cutune_command=earlier["command"])
    rows = scores["strategies"]
    width = max(len(r["strategy"]) for r in rows)
    names = [sp["name"] for sp in scores["spaces"]]
    print(f"{'strategy':<{width}}  " + "  ".join(names) + "  overall")
    for r in rows:
        cells = ["-" if r["per_space"][n] is None else f"{r['per_space'][n]:.3f}" for n in names]
        print(f"{r['strategy']:<{width}}  " + "  ".join(f"{c:>{len(n)}}" for c, n in zip(cells, names)) +
              f"  {'-' if r['overall'] is None else format(r['overall'], '.3f'):>7}")
    scores["kernel_tuner"] = {"version": traces["tool"], "repeats": args.kt_repeats, "wall_s": round(kt_s, 1),
                              "deadline_s": args.kt_deadline,
                              "strategy_options": "time_limit = time_budget_s, max_fevals = evaluation_budget"}
    scores["bench_command"] = "scripts/bench_strategies.py " + " ".join(sys.argv[1:])
    out.with_suffix(".json").write_text(json.dumps(scores, indent=1) + "\n")
    write_markdown(scores, out.with_suffix(".md"))
    best = {src: max((r for r in scores["strategies"] if (r["source"] == "cutune") == (src == "cutune")
                      and r["overall"] is not None), key=lambda r: r["overall"], default=None)
            for src in ("cutune", "kt")}
    for src, r in best.items():
        if r:
            print(f"best {src}: {r['strategy']} {r['overall']:.3f}")


if __name__ == "__main__":
    main()
