#!/usr/bin/env python3
"""studies/bench_strategies.py's runs per strategy and space: a slow strategy (KT_SLOW) keeps its
smaller count only on the spaces where its runs took at least --kt-slow-s of CPU each; elsewhere it
is brought up to --kt-repeats, with the seeds it has not run yet. And the Python stack each run
records."""
import types

# The repository root is on PYTHONPATH (tests/CMakeLists.txt): the studies package.
from studies import bench_strategies as bench


def stats(seeds, cpu_s):
    return [{"seed": s, "cpu_s": cpu_s, "wall_s": cpu_s * 2} for s in seeds]


def main():
    args = types.SimpleNamespace(kt_repeats=4, kt_slow_s=60.0, seed=1)
    fast, slow = {"name": "fast"}, {"name": "slow"}
    repeats = {"bayes_opt": 2, "skopt": 2, "brute_force": 1, "pso": 4}
    done = {("fast", "bayes_opt"): stats([1, 2], 1.1), ("slow", "bayes_opt"): stats([1, 2], 500.0),
            ("fast", "skopt"): stats([1, 3], 59.9), ("slow", "skopt"): stats([1, 2], 60.0),
            ("fast", "brute_force"): stats([1], 0.1), ("fast", "pso"): stats([1, 2, 3, 4], 0.1)}
    jobs = bench.kt_fast_slow_jobs(args, [fast, slow], repeats, done)
    got = sorted((sp["name"], st, seed) for sp, st, seed in jobs)
    # bayes_opt on the fast space gets seeds 3 and 4, skopt there the seeds it lacks (2 and 4);
    # the slow space (a mean of 60 s or more), brute_force (deterministic, not slow) and pso (already
    # at --kt-repeats) get none.
    want = [("fast", "bayes_opt", 3), ("fast", "bayes_opt", 4), ("fast", "skopt", 2), ("fast", "skopt", 4)]
    assert got == want, got

    # Runs recorded before cpu_s was kept are judged by their wall_s: 59 s is under 60, 61 s is not.
    old = {("fast", "bayes_opt"): [{"seed": 1, "wall_s": 59.0}], ("slow", "bayes_opt"): [{"seed": 1, "wall_s": 61.0}]}
    got = sorted((sp["name"], st, seed) for sp, st, seed in bench.kt_fast_slow_jobs(args, [fast, slow], {"bayes_opt": 1}, old))
    assert got == [("fast", "bayes_opt", 2), ("fast", "bayes_opt", 3), ("fast", "bayes_opt", 4)], got

    # --kt-slow-s 0 keeps the smaller count everywhere, as before the rule.
    args.kt_slow_s = 0.0
    assert bench.kt_fast_slow_jobs(args, [fast, slow], repeats, done) == []

    # A space where the strategy has not run yet gets nothing here (its first runs come first).
    args.kt_slow_s = 60.0
    assert bench.kt_fast_slow_jobs(args, [{"name": "new"}], repeats, done) == []

    # The report says where the smaller counts held.
    assert "only on the spaces where their runs took over 60 s" in bench.kt_slow_note(
        {"repeats_for": bench.KT_REPEATS_FOR, "slow_run_s": 60.0})
    assert "on every space" in bench.kt_slow_note({"repeats_for": bench.KT_REPEATS_FOR})
    assert bench.kt_slow_note({"repeats_for": "brute_force=1"}) == ""
    # Each run records the Python stack it ran on (a seed's trace depends on it); the report
    # counts the runs per stack, those from before it was recorded apart.
    assert bench.kt_stack().startswith("python ")
    traces = {"traces": [{"stats": [{"seed": 1, "stack": "python 3.12 numpy 2.5.2"}, {"seed": 2}]},
                         {"stats": [{"seed": 1, "stack": "python 3.12 numpy 2.5.2"}]}]}
    stacks = bench.kt_stacks(traces)
    assert stacks["python 3.12 numpy 2.5.2"] == 2 and sum(stacks.values()) == 3, stacks
    print("ok")


if __name__ == "__main__":
    main()
