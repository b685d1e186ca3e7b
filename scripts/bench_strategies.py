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
from concurrent.futures import ProcessPoolExecutor
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spaces", nargs="+", default=[str(p) for p in DEFAULT_SPACES])
    ap.add_argument("--repeats", type=int, default=100, help="cutune runs per strategy and space")
    ap.add_argument("--kt-repeats", type=int, default=20, help="Kernel Tuner runs per strategy and space")
    ap.add_argument("--kt-strategies", default=",".join(KT_STRATEGIES))
    ap.add_argument("--strategies", default="", help="cutune's (default: all)")
    ap.add_argument("--seed", type=int, default=1)
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
        jobs, where = [], []
        for space in spaces:
            plain = Path(tmp) / (space["name"] + ".json")
            plain.write_text(json.dumps(load_cache(space["file"])))
            for strategy in args.kt_strategies.split(","):
                for r in range(args.kt_repeats):
                    jobs.append((str(plain), strategy, args.seed + r, space["time_budget_s"], space["evaluation_budget"]))
                    where.append((space["name"], strategy))
        t0 = time.time()
        runs = {}
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for (space, strategy), keys in zip(where, pool.map(kt_run, jobs)):
                runs.setdefault((space, strategy), []).append(keys)
        kt_s = time.time() - t0
        traces = {"tool": f"kernel_tuner {kernel_tuner.__version__}" if hasattr(kernel_tuner, "__version__") else "kernel_tuner",
                  "traces": [{"space": s, "strategy": "kt:" + st, "runs": v} for (s, st), v in runs.items()]}
        trace_file = out.with_suffix(".kt_traces.json")
        trace_file.parent.mkdir(parents=True, exist_ok=True)
        trace_file.write_text(json.dumps(traces))

    cmd = [args.cutune, "score", "--spaces", *args.spaces, "--repeats", str(args.repeats), "--seed", str(args.seed),
           "--traces", str(trace_file), "--json", str(out.with_suffix(".json"))]
    if args.strategies:
        cmd += ["--strategies", args.strategies]
    subprocess.run(cmd, check=True)
    scores = json.loads(out.with_suffix(".json").read_text())
    scores["kernel_tuner"] = {"version": traces["tool"], "repeats": args.kt_repeats, "wall_s": round(kt_s, 1),
                              "strategy_options": "time_limit = time_budget_s, max_fevals = evaluation_budget"}
    scores["bench_command"] = " ".join(sys.argv)
    out.with_suffix(".json").write_text(json.dumps(scores, indent=1) + "\n")
    best = {src: max((r for r in scores["strategies"] if (r["source"] == "cutune") == (src == "cutune")
                      and r["overall"] is not None), key=lambda r: r["overall"], default=None)
            for src in ("cutune", "kt")}
    for src, r in best.items():
        if r:
            print(f"best {src}: {r['strategy']} {r['overall']:.3f}")


if __name__ == "__main__":
    main()
