#!/usr/bin/env python3
"""The Kernel Tuner side of studies/bench_strategies.py (the strategy table) is fair.

Run by CTest ("kt-interop:harness") with the Python of build/kt-venv (scripts/kt_venv.sh).
Exit codes: 0 pass, 1 fail, 77 skipped (no Kernel Tuner, or no recorded space).

Checks what the harness fixes in Kernel Tuner 1.5.0's simulation mode:
  - the budget is the recorded cost only: real Python time does not count (Kernel Tuner's own
    TuningBudget counts it, which cut slow strategies short on a busy machine);
  - bayes_opt's clock, which decides when it refits its model, advances with the recorded cost;
  - a run spends the whole time budget, revisits are free, every key is in the recorded space,
    a seed gives the same run (diff_evo's and bayes_opt's Latin hypercubes included), and
    `cutune score --traces` scores it.
Usage: test_kt_harness.py --cutune CUTUNE --material DIR
"""
import argparse
import gzip
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKIP = 77
ROOT = Path(__file__).resolve().parents[2]
SPACE = "convolution_A4000"
TIME_LIMIT_S, MAX_FEVALS = 782.0, 550  # its window end T(0.96) and evaluation budget (results/strategies/strategies.json)


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIP)


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print(f"ok: {what}")


try:
    import kernel_tuner.strategies.bayes_opt as bayes_opt
    from kernel_tuner import util
except ImportError as e:  # never pass silently
    skip(f"Kernel Tuner is not importable ({e}); run scripts/kt_venv.sh")


def load_harness():
    spec = importlib.util.spec_from_file_location("bench_strategies", ROOT / "studies" / "bench_strategies.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cutune", required=True)
    ap.add_argument("--material", required=True, help="the test material folder (tests/material/manifest.txt)")
    args = ap.parse_args()
    gz = Path(args.material) / "data" / "spaces" / f"{SPACE}.json.gz"
    if not gz.is_file():
        skip(f"{gz} is not there")
    harness = load_harness()
    with tempfile.TemporaryDirectory(prefix="cutune_kt_harness_") as tmp:
        plain = Path(tmp) / f"{SPACE}.json"
        with gzip.open(gz, "rt") as f:
            plain.write_text(f.read())

        kt_budget = util.TuningBudget
        harness.kt_init([str(plain)], kt_clock=False)
        b = kt_budget(time_limit=0.2)
        time.sleep(0.3)
        check(b.is_done(), "Kernel Tuner's own budget counts real time (0.3 s real exhausts a 0.2 s limit)")

        harness._KT["time_limit"] = 10.0
        b = util.TuningBudget(time_limit=1.0)  # tune_kernel passes the limit less its start-up time
        check(b.time_limit.total_seconds() == 10.0, "the simulated budget keeps the run's full time limit")
        time.sleep(0.3)
        check(b.get_time_spent().total_seconds() == 0.0 and not b.is_done(),
              "the simulated budget ignores real time")
        t0 = bayes_opt.time.perf_counter()
        b.add_time(milliseconds=10_500)
        check(b.is_done(), "the simulated budget is spent by recorded cost (10.5 s of 10 s)")
        check(bayes_opt.time.perf_counter() - t0 >= 10.5, "bayes_opt's clock advances by the recorded cost")

        job = (str(plain), "greedy_ils", 1, TIME_LIMIT_S, MAX_FEVALS)
        trace, stats = harness.kt_run(job)
        recorded = json.loads(plain.read_text())["cache"]
        check(all(k in recorded for k in trace), "every key of the trace is in the recorded space")
        check(stats["unique"] == len(set(trace)) < stats["evaluations"],
              f"revisits are counted once, and not stored ({stats['unique']} unique of {stats['evaluations']})")
        check(stats["simulated_s"] >= TIME_LIMIT_S and stats["unique"] <= MAX_FEVALS,
              f"the run spends the whole time budget ({stats['simulated_s']} s recorded cost, {TIME_LIMIT_S} s limit)")
        check(harness.kt_run(job)[0] == trace, "the same seed gives the same run")
        check(harness.kt_run((str(plain), "greedy_ils", 2, TIME_LIMIT_S, MAX_FEVALS))[0] != trace,
              "another seed gives another run")

        # diff_evo's population and bayes_opt's initial sample are Latin hypercubes, which Kernel
        # Tuner draws without a seed: the harness seeds them from the run's seed.
        for name in ("diff_evo", "bayes_opt"):
            run = harness.kt_run((str(plain), name, 1, TIME_LIMIT_S, MAX_FEVALS))[0]
            check(harness.kt_run((str(plain), name, 1, TIME_LIMIT_S, MAX_FEVALS))[0] == run,
                  f"{name}: the same seed gives the same run")
            check(harness.kt_run((str(plain), name, 2, TIME_LIMIT_S, MAX_FEVALS))[0] != run,
                  f"{name}: another seed gives another run")

        traces = Path(tmp) / "traces.json"
        traces.write_text(json.dumps({"traces": [{"space": SPACE, "strategy": "kt:greedy_ils", "runs": [trace]}]}))
        p = subprocess.run([args.cutune, "score", "--spaces", str(gz), "--strategies", "random", "--repeats", "1",
                            "--points", "10", "--traces", str(traces)], capture_output=True, text=True)
        check(p.returncode == 0 and "kt:greedy_ils" in p.stdout, "cutune score --traces scores the run")

        # Bad input: one line naming the option and value, exit code 2, nothing written.
        out = Path(tmp) / "bad"
        for bad, named in ((["--cutune", str(Path(tmp) / "no-cutune")], "--cutune"),
                           (["--cutune", args.cutune, "--kt-strategies", "no_such_strategy"], "no_such_strategy")):
            p = subprocess.run([sys.executable, "-m", "studies.bench_strategies", "--spaces", str(gz),
                                "--out", str(out), *bad], capture_output=True, text=True, cwd=ROOT)
            lines = p.stderr.strip().splitlines()
            check(p.returncode == 2 and len(lines) == 1 and named in lines[0] and not list(Path(tmp).glob("bad*")),
                  f"bench_strategies.py {' '.join(bad[-2:])}: exit 2, one line naming it ({lines})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
