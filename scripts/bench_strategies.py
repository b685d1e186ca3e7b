#!/usr/bin/env python3
"""cutune's search strategies beside Kernel Tuner's, on the same recorded spaces and budgets,
scored by one scorer (cutune score), one table.

Kernel Tuner (pinned, in a git-ignored venv that this script makes) runs its own strategies in
its simulation mode from each cache file (simulation_mode=True, cache=FILE) with the budget
cutune's strategies get: strategy_options time_limit = the end of the scoring window T(0.96) in
simulated seconds, max_fevals = the evaluation budget cutune's strategies are given. The time
budget is spent by the recorded cost only, as in cutune's simulation (Kernel Tuner's own budget
also counts the real Python time; see kt_init). Its runs are converted to traces (the
configuration keys in the order Kernel Tuner evaluated them) and `cutune score --traces` scores
them beside cutune's simulated runs, with the same costs (the recorded compile + benchmark +
verification time) and the same statistics.

Usage:
  scripts/bench_strategies.py [--spaces F...] [--repeats 100] [--kt-repeats 20] [--kt-repeats-for bayes_opt=8]
      [--kt-strategies a,b] [--strategies a,b] [--jobs 2] [--kt-deadline S] [--kt-resume OUT.kt_traces.json]
      [--kt-traces F...] [--cutune-scores F...] [--out results/strategies] [--cutune PATH]
Writes OUT.json (the scores), OUT.kt_traces.json (Kernel Tuner's runs, with per-run stats),
OUT.md (the table, with OUT.notes.md appended when it exists) and prints the table. A long job:
  nohup nice -n 10 scripts/bench_strategies.py --kt-repeats 40 ... > build/ktjob/LOG 2>&1 &
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
import types
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


# --- Kernel Tuner in a worker process ---------------------------------------------------------
# Kernel Tuner 1.5.0's simulation mode is not a pure simulation, which made its rows unfair:
#  - its budget (util.TuningBudget) is the recorded cost of the evaluations PLUS the real wall
#    time of this Python process since tune_kernel began (and tune_kernel first subtracts the real
#    start-up time, cache parsing and search-space construction, from time_limit), so a strategy
#    that is slow in Python, or a busy machine, cuts the run short. cutune's simulation counts
#    the recorded cost only, so Kernel Tuner gets the same: SimulatedBudget below.
#  - bayes_opt's default method (multi-ultrafast) refits its Gaussian process only when the real
#    time of the last evaluations exceeds 5x the real time of the last prediction. A simulated
#    evaluation takes microseconds, so it refit once every 6 rounds (18 evaluations) instead of
#    every round as on a GPU. Its clock is made the simulated one (real time + recorded cost).
# Every worker parses each cache once (Kernel Tuner's own read_cache, so the error markers are
# converted as Kernel Tuner does) instead of once per run.
_KT = {}


def kt_init(plain_files, kt_clock):
    """Pool initializer: loads the caches once and installs the simulated budget and clock."""
    import kernel_tuner.strategies.bayes_opt as bayes_opt
    from kernel_tuner import util

    read_cache = util.read_cache
    _KT["caches"] = {str(f): read_cache(str(f), open_cache=False) for f in plain_files}
    _KT["kt_clock"] = kt_clock
    util.read_cache = lambda f, open_cache=True: dict(_KT["caches"][str(f)]) if str(f) in _KT["caches"] \
        else read_cache(f, open_cache)
    closing = util.close_cache
    util.close_cache = lambda f: None if str(f) in _KT["caches"] else closing(f)  # read-only in simulation
    _KT["budgets"] = []
    if kt_clock:  # --kt-clock: Kernel Tuner's own budget (real + simulated time), as the old harness had it
        return

    class SimulatedBudget(util.TuningBudget):
        """The recorded cost of the evaluations only, against the full time limit of the run."""

        def __init__(self, time_limit=None, max_fevals=None):
            super().__init__(_KT["time_limit"], max_fevals)
            _KT["budgets"].append(self)

        def get_time_spent(self):
            return self.time_spent_extra

    util.TuningBudget = SimulatedBudget

    def simulated_s():
        return _KT["budgets"][-1].time_spent_extra.total_seconds() if _KT["budgets"] else 0.0

    bayes_opt.time = types.SimpleNamespace(perf_counter=lambda: time.perf_counter() + simulated_s(),
                                           perf_counter_ns=lambda: time.perf_counter_ns() + int(simulated_s() * 1e9))


def kt_run(job):
    """One Kernel Tuner run in simulation mode: the keys in evaluation order, and what it spent."""
    import numpy as np
    from kernel_tuner import tune_kernel

    cache_file, strategy, seed, time_limit, max_fevals = job
    cache = _KT["caches"][cache_file]
    keys = cache["tune_params_keys"]
    recorded = cache["cache"]

    def member(p):  # valid = recorded, as in cutune's recorded spaces
        return ",".join(str(p[k]) for k in keys) in recorded

    random.seed(seed)
    np.random.seed(seed)
    _KT["time_limit"] = time_limit
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = tune_kernel(cache["kernel_name"], "__global__ void k() {}", cache.get("problem_size") or 1, [],
                                 {k: cache["tune_params"][k] for k in keys}, restrictions=member, strategy=strategy,
                                 strategy_options={"max_fevals": max_fevals} if time_limit is None else
                                 {"time_limit": time_limit, "max_fevals": max_fevals},
                                 cache=cache_file, simulation_mode=True, quiet=True,
                                 objective=cache.get("objective", "time") if isinstance(cache.get("objective"), str) else "time")
    trace = [",".join(str(r[k]) for k in keys) for r in results]
    unique = list(dict.fromkeys(trace))
    cost_s = sum(sum(recorded[k].get(f) or 0 for f in ("compile_time", "verification_time", "benchmark_time")) / 1000
                 for k in unique)  # a cache without costs (scored in evaluations) has none of them
    # What the run spent, to check the budgets: unique evaluations (revisits are free in Kernel
    # Tuner and dropped by cutune score), their recorded cost, the real time the run took.
    return trace, {"seed": seed, "evaluations": len(trace), "unique": len(unique), "simulated_s": round(cost_s, 1),
                   "wall_s": round(time.perf_counter() - t0, 2)}


def run_kernel_tuner(args, spaces, tmp, trace_file, tool):
    """Kernel Tuner's runs, repeat-major (every strategy has runs on every space early: with
    --kt-deadline the runs done by then are kept, the table says how many); the traces file is
    rewritten every 20 runs or minute so that a long job that is cut off leaves its runs (--kt-resume)."""
    plain = {}  # Kernel Tuner reads plain .json caches
    for space in spaces:
        plain[space["name"]] = tmp / (space["name"] + ".json")
        plain[space["name"]].write_text(json.dumps(load_cache(space["file"])))
    repeats = {st: args.kt_repeats for st in args.kt_strategies.split(",")}
    for item in filter(None, args.kt_repeats_for.split(",")):
        name, _, n = item.partition("=")
        if name not in repeats or not n.isdigit():
            sys.exit(f"--kt-repeats-for: '{item}' is not STRATEGY=RUNS with a strategy of --kt-strategies")
        repeats[name] = int(n)
    runs, stats = {}, {}
    if args.kt_resume:
        earlier = json.loads(Path(args.kt_resume).read_text())
        for t in earlier["traces"]:
            if len(t.get("stats", [])) != len(t["runs"]):
                sys.exit(f"--kt-resume {args.kt_resume}: {t['space']} {t['strategy']} has no per-run stats (seeds)")
            runs[(t["space"], t["strategy"][3:])] = t["runs"]
            stats[(t["space"], t["strategy"][3:])] = t["stats"]
        for sp in spaces:
            for st in repeats:
                for s in stats.get((sp["name"], st), []):
                    if s.get("time_limit_s") != sp["time_budget_s"] or s.get("max_fevals") != sp["evaluation_budget"]:
                        sys.exit(f"--kt-resume {args.kt_resume}: {sp['name']} {st} ran under other budgets")
    done = {(k, s["seed"]) for k, v in stats.items() for s in v}
    # Slow strategies last within a repeat, so that they never hold up the others' early runs.
    order = sorted(repeats, key=lambda st: st == "bayes_opt")
    jobs = [(sp, st, args.seed + r) for r in range(max(repeats.values())) for sp in spaces for st in order
            if r < repeats[st] and ((sp["name"], st), args.seed + r) not in done]

    def snapshot():
        return {"tool": tool, "budget": "Kernel Tuner's own (real + simulated time)" if args.kt_clock else
                "simulated time only (recorded compile + verification + benchmark time)",
                "traces": [{"space": s, "strategy": "kt:" + st, "runs": v, "stats": stats[(s, st)]}
                           for (s, st), v in runs.items()]}

    pool = ProcessPoolExecutor(max_workers=args.jobs, initializer=kt_init,
                               initargs=([str(f) for f in plain.values()], args.kt_clock))
    def budgets(sp):
        """(time_limit, max_fevals) for Kernel Tuner. A space without recorded costs is scored in
        evaluations ("cost_unit"): its time budget is an evaluation count, cutune's runs stop after
        that many, so Kernel Tuner gets it as max_fevals and no time limit."""
        if sp.get("cost_unit") == "evaluations":
            return None, int(round(sp["time_budget_s"]))
        return sp["time_budget_s"], sp["evaluation_budget"]

    futures = {pool.submit(kt_run, (str(plain[sp["name"]]), st, seed, *budgets(sp))): (sp, st) for sp, st, seed in jobs}
    finished, saved = 0, time.time()
    try:
        for f in as_completed(futures, timeout=args.kt_deadline):
            sp, st = futures[f]
            trace, s = f.result()
            s.update(time_limit_s=sp["time_budget_s"], max_fevals=sp["evaluation_budget"])
            runs.setdefault((sp["name"], st), []).append(trace)
            stats.setdefault((sp["name"], st), []).append(s)
            finished += 1
            print(f"kt {finished}/{len(jobs)} {sp['name']} {st} seed {s['seed']}: {s['unique']} unique of "
                  f"{s['evaluations']}, {s['simulated_s']} s simulated, {s['wall_s']} s real", flush=True)
            if finished % 20 == 0 or time.time() - saved > 60:
                trace_file.write_text(json.dumps(snapshot()))
                saved = time.time()
    except FuturesTimeout:
        print(f"Kernel Tuner: --kt-deadline {args.kt_deadline} s reached, {finished} of {len(jobs)} runs done; "
              "scoring those", file=sys.stderr)
    for proc in getattr(pool, "_processes", {}).values():  # the unfinished runs are not waited for
        proc.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    return snapshot()


def merge_traces(files):
    """Several jobs' traces as one: the runs of one space and strategy put together."""
    if len({(t["tool"], t.get("budget")) for t in files}) != 1:
        sys.exit("--kt-traces: the files come from other Kernel Tuner versions or budgets")
    merged = {}
    for f in files:
        for t in f["traces"]:
            m = merged.setdefault((t["space"], t["strategy"]), {"space": t["space"], "strategy": t["strategy"],
                                                                "runs": [], "stats": []})
            m["runs"] += t["runs"]
            m["stats"] += t.get("stats", [])
    return {**files[0], "traces": list(merged.values())}


def kt_run_summary(traces):
    """Per space and strategy: runs, and the mean of what each run spent (from the traces' stats)."""
    out = {}
    for t in traces["traces"]:
        st = t.get("stats") or []
        if st:
            out.setdefault(t["space"], {})[t["strategy"]] = {
                "runs": len(st), **{k: round(sum(s[k] for s in st) / len(st), 1)
                                    for k in ("unique", "evaluations", "simulated_s", "wall_s")}}
    return out


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
              f"simulated seconds = the recorded compile + verification + benchmark time of the unique configurations "
              f"evaluated; a revisit is free); cutune's strategies are told the evaluation budget for planning, Kernel "
              f"Tuner's get it as max_fevals. cutune: {scores['repeats']} runs per strategy and space (seed "
              f"{scores['seed']} + run), batches of {scores['batch']}. Kernel Tuner: {kt.get('version', '-')}, "
              f"{kt.get('repeats', '-')} runs per strategy and space planned"
              f"{' (' + kt['repeats_for'] + ')' if kt.get('repeats_for') else ''}, the column \"runs per space\" "
              f"says how many were done, default strategy options, "
              f"simulation_mode=True, restrictions = the recorded configurations, budget: {kt.get('budget', '-')}."]
    runs = kt.get("runs") or {}
    if runs:
        strategies = sorted({st for per in runs.values() for st in per})
        lines += ["", "Kernel Tuner's runs: mean unique evaluations per run / share of the time budget spent "
                  "(below 100%: the strategy ended on its own, e.g. its generation or iteration limit):", "",
                  "| strategy | " + " | ".join(spaces) + " |", "| --- | " + " | ".join("---:" for _ in spaces) + " |"]
        budget = {sp["name"]: sp["time_budget_s"] for sp in scores["spaces"]}
        for st in strategies:
            cells = [f"{runs[sp][st]['unique']:.0f} / {100 * runs[sp][st]['simulated_s'] / budget[sp]:.0f}%"
                     if st in runs.get(sp, {}) else "-" for sp in spaces]
            lines.append(f"| {st} | " + " | ".join(cells) + " |")
    notes = Path(path).with_suffix(".notes.md")
    if notes.is_file():  # the verdict, written by hand from these numbers
        lines += ["", notes.read_text().rstrip()]
    lines += ["", "Command:", "", "```sh"]
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
    ap.add_argument("--kt-traces", nargs="+", default=None,
                    help="reuse Kernel Tuner's runs from earlier OUT.kt_traces.json files (merged, e.g. two jobs)")
    ap.add_argument("--cutune-scores", nargs="+", default=None,
                    help="reuse cutune's rows from earlier `cutune score --json` runs on the same spaces (its repeats "
                         "and seed are kept); a later file's row replaces an earlier one of the same strategy (e.g. "
                         "the rows of one changed strategy re-scored)")
    ap.add_argument("--kt-deadline", type=float, default=None,
                    help="seconds for Kernel Tuner's runs; those not done by then are left out")
    ap.add_argument("--kt-repeats-for", default="",
                    help="fewer (or more) runs for some strategies, e.g. bayes_opt=8 (slow in Python)")
    ap.add_argument("--kt-resume", default=None,
                    help="keep the runs of a partial OUT.kt_traces.json (same spaces, budgets, seeds) and do the rest")
    ap.add_argument("--kt-clock", action="store_true",
                    help="Kernel Tuner's own budget and bayes_opt clock (real Python time counted), as before the fix")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
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

        trace_file = out.with_suffix(".kt_traces.json")
        trace_file.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.time()
        if args.kt_traces:
            traces = merge_traces([json.loads(Path(f).read_text()) for f in args.kt_traces])
        else:
            traces = run_kernel_tuner(args, spaces, Path(tmp), trace_file,
                                      f"kernel_tuner {getattr(kernel_tuner, '__version__', '1.5.0')}")
        kt_s = time.time() - t0
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
        files = [json.loads(Path(f).read_text()) for f in args.cutune_scores]
        cutune_rows = {}
        for f, earlier in zip(args.cutune_scores, files):
            if [sp["name"] for sp in earlier["spaces"]] != [sp["name"] for sp in scores["spaces"]] or \
                    earlier["methodology"] != scores["methodology"] or \
                    (earlier["repeats"], earlier["seed"]) != (files[0]["repeats"], files[0]["seed"]):
                sys.exit(f"--cutune-scores {f}: other spaces, methodology, repeats or seed than this run")
            cutune_rows.update({r["strategy"]: r for r in earlier["strategies"] if r["source"] == "cutune"})
        rows = [r for r in scores["strategies"] if r["source"] != "cutune"] + list(cutune_rows.values())
        scores["strategies"] = sorted(rows, key=lambda r: -1e9 if r["overall"] is None else -r["overall"])
        scores.update(repeats=files[0]["repeats"], seed=files[0]["seed"],
                      cutune_command="\n".join(f.get("cutune_command", f["command"]) for f in files))
    rows = scores["strategies"]
    width = max(len(r["strategy"]) for r in rows)
    names = [sp["name"] for sp in scores["spaces"]]
    print(f"{'strategy':<{width}}  " + "  ".join(names) + "  overall")
    for r in rows:
        cells = ["-" if r["per_space"][n] is None else f"{r['per_space'][n]:.3f}" for n in names]
        print(f"{r['strategy']:<{width}}  " + "  ".join(f"{c:>{len(n)}}" for c, n in zip(cells, names)) +
              f"  {'-' if r['overall'] is None else format(r['overall'], '.3f'):>7}")
    scores["kernel_tuner"] = {"version": traces["tool"], "repeats": args.kt_repeats,
                              "repeats_for": args.kt_repeats_for or None, "wall_s": round(kt_s, 1),
                              "deadline_s": args.kt_deadline, "budget": traces.get("budget", "Kernel Tuner's own"),
                              "strategy_options": "time_limit = time_budget_s, max_fevals = evaluation_budget",
                              "runs": kt_run_summary(traces)}
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
