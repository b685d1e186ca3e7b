"""The corpus GPU benchmark's logic without a GPU (studies/kt_corpus/gpu_benchmark.py, budget_child.py).

1. budget_child.py against a stand-in `kernel_tuner` (a tune_kernel with Kernel Tuner 1.5's
   keywords that records what it was given): the time limit reaches every call; brute force or no
   strategy becomes random_sample over the whole space, a named strategy is kept; a keyword the
   tool lacks is the tool's TypeError, recorded as the script's failure; the space the tool built,
   configurations tried and failed by kind and the best configuration are recorded; the script is
   ended after --max-calls calls.
2. gpu_benchmark's verdicts from such records and a `cutune measure` JSON: outcome and its first
   line, ratio, tie, pace, whether the budget bound, the totals and the table.

    python3 test_gpu_benchmark.py REPO
"""
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.abspath(sys.argv[1])
sys.path.insert(0, REPO)
from studies.kt_corpus import gpu_benchmark  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


FAKE_INTERFACE = r'''
import json, os

class ErrorConfig(str):
    pass

class CompilationFailedConfig(ErrorConfig):
    pass

class Searchspace:
    def __init__(self, tune_params, restrictions, max_threads):
        self.size = len(tune_params["x"])

GIVEN = os.environ["FAKE_KT_GIVEN"]

def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, restrictions=None,
                lang=None, strategy=None, strategy_options=None, quiet=False, verbose=False, objective=None,
                objective_higher_is_better=None):
    with open(GIVEN, "a") as f:
        f.write(json.dumps({"kernel_name": kernel_name, "strategy": strategy, "strategy_options": strategy_options,
                            "quiet": quiet}) + "\n")
    space = Searchspace(tune_params, restrictions, 1024)
    results = [dict(x=x, time=float(x)) for x in tune_params["x"][1:]]
    results.append(dict(x=tune_params["x"][0], time=CompilationFailedConfig("CompilationFailedConfig")))
    return results, {"device_name": "fake"}
'''

SCRIPT = r'''
import kernel_tuner
kernel_tuner.tune_kernel("first", "src", 10, [], {"x": [1, 2, 3, 4]})
kernel_tuner.tune_kernel("second", "src", 10, [], {"x": [5, 6]}, strategy="genetic_algorithm",
                         strategy_options={"max_fevals": 9})
kernel_tuner.tune_kernel("third", "src", 10, [], {"x": [7]}, method="old")
'''


def run_child(tmp, max_calls, script=SCRIPT):
    fake = os.path.join(tmp, "site", "kernel_tuner")
    os.makedirs(fake, exist_ok=True)
    with open(os.path.join(fake, "__init__.py"), "w") as f:
        f.write("from kernel_tuner.interface import tune_kernel\n__version__ = '1.5.0'\n")
    with open(os.path.join(fake, "interface.py"), "w") as f:
        f.write(FAKE_INTERFACE)
    with open(os.path.join(tmp, "script.py"), "w") as f:
        f.write(script)
    given, out = os.path.join(tmp, f"given{max_calls}.jsonl"), os.path.join(tmp, f"record{max_calls}.json")
    params = {"tool": "kernel_tuner", "script": os.path.join(tmp, "script.py"), "args": [], "out": out,
              "budget_s": 7.0, "max_calls": max_calls, "cutune_python": os.path.join(REPO, "python"),
              "cutune_strategy": "default", "cutune_default_strategy": "bandit_portfolio", "kt_cuda_lang": None}
    with open(os.path.join(tmp, "params.json"), "w") as f:
        json.dump(params, f)
    env = dict(os.environ, PYTHONPATH=os.path.join(tmp, "site"), FAKE_KT_GIVEN=given)
    p = subprocess.run([sys.executable, os.path.join(REPO, "studies", "kt_corpus", "budget_child.py"),
                        os.path.join(tmp, "params.json")], cwd=tmp, env=env, capture_output=True, text=True)
    check(p.returncode == 0, f"budget_child.py exits 0 ({p.stderr.strip()[-500:]})")
    with open(out) as f:
        record = json.load(f)
    calls = []
    if os.path.exists(given):
        with open(given) as f:
            calls = [json.loads(line) for line in f]
    return record, calls


def child_checks(tmp):
    record, given = run_child(tmp, max_calls=5)
    check(len(given) == 2, f"two calls reach tune_kernel, the third has a keyword it lacks ({len(given)})")
    check(given[0]["strategy"] == "random_sample" and given[0]["strategy_options"] == {"time_limit": 7.0,
                                                                                       "fraction": 1.0},
          f"no strategy: random_sample over the whole space with the time limit ({given[0]})")
    check(given[1]["strategy"] == "genetic_algorithm"
          and given[1]["strategy_options"] == {"max_fevals": 9, "time_limit": 7.0},
          f"a named strategy is kept, the time limit added to its options ({given[1]})")
    check(all(g["quiet"] for g in given), "calls are made quiet")
    c0 = record["calls"][0]
    check(c0.get("space_valid") == 4 and c0.get("tried") == 4 and c0.get("failed") == 1
          and c0.get("failures_by_kind") == {"CompilationFailedConfig": 1},
          f"space, tried, failed by kind recorded ({c0})")
    check(c0.get("best_config") == {"x": 2} and c0.get("best_ms") == 2.0, "the best configuration recorded")
    check(record.get("script_error", "").startswith("TypeError") and "method" in record["script_error"],
          f"an unknown keyword is the tool's TypeError ({record.get('script_error')})")
    check(record.get("version") == "1.5.0", "the tool's version recorded")
    outcome = gpu_benchmark.outcome(dict(record, exit=0), "")
    check(outcome[0] == "failed" and outcome[1].startswith("TypeError"), f"the run counts as failed: {outcome}")
    record, given = run_child(tmp, max_calls=1)
    check(len(given) == 1 and record["calls"][1].get("skipped") and "script_error" not in record,
          "after --max-calls calls the script is ended, not failed")
    check(gpu_benchmark.outcome(dict(record, exit=0), "") == ("ran", ""), "a run ended there counts as ran")


def measured(config, median, low, high, status="ok"):
    return {"config": config, "status": status, "summary": {"median_ms": median, "ci_low_ms": low, "ci_high_ms": high}}


def verdict_checks():
    kt = {"index": 0, "kernel_name": "k", "space_valid": 100, "tried": 20, "failed": 2, "wall_s": 10.0,
          "best_config": {"x": 1}, "best_ms": 1.2}
    cu = {"index": 0, "kernel_name": "k", "space_valid": 100, "tried": 100, "failed": 0, "wall_s": 5.0,
          "best_config": {"x": 2}, "best_ms": 1.0, "t1": "p.json"}
    row = {"index": 0, "kernel_name": "k", "kernel_tuner": kt, "cutune": cu,
           "remeasure": {"result": {"configs": [measured({"x": 2}, 1.0, 0.99, 1.01), measured({"x": 1}, 1.2, 1.19, 1.21)]}}}
    gpu_benchmark.judge(row)
    check(abs(row.get("ratio_kt_over_cutune", 0) - 1.2) < 1e-9 and row.get("tie") is False
          and row.get("cutune_at_least_as_fast") is True, f"ratio 1.2, no tie ({row.get('ratio_kt_over_cutune')})")
    check(abs(row.get("pace_ratio", 0) - 10.0) < 1e-9, f"pace 20/s against 2/s ({row.get('pace_ratio')})")
    check(row.get("kernel_tuner_budget_binds") is True and row.get("cutune_budget_binds") is False,
          "the budget bound Kernel Tuner (20 of 100), not cutune (100 of 100)")
    tie = dict(row, remeasure={"result": {"configs": [measured({"x": 2}, 1.0, 0.9, 1.1), measured({"x": 1}, 0.98, 0.9, 1.1)]}})
    gpu_benchmark.judge(tie)
    check(tie.get("tie") is True and tie.get("cutune_at_least_as_fast") is True, "overlapping intervals: a tie")
    broken = dict(row, remeasure={"result": {"configs": [measured({"x": 2}, 1.0, 0.99, 1.01),
                                                         dict(measured({"x": 1}, None, None, None, "runtime"),
                                                              error="too many resources requested")]}})
    gpu_benchmark.judge(broken)
    check(broken.get("kernel_tuner_winner_runs") is False and broken.get("cutune_at_least_as_fast") is True,
          "a Kernel Tuner winner that cannot run is said so")
    ran = {"outcome": "ran", "why": ""}
    doc = {"gpu": "Fake GPU", "budget_s_per_call": 7.0, "max_calls": 2, "command": "x", "scripts": [
        {"id": "a", "kernel_tuner": ran, "cutune": ran, "calls": [row], "verdict": "both ran"},
        {"id": "b", "kernel_tuner": ran, "cutune": {"outcome": "failed", "why": "NotImplementedError: run_kernel"},
         "calls": [], "verdict": "only Kernel Tuner ran"},
        {"id": "c", "not_run": "the total time cap (--total 10 s) was reached"}]}
    doc["totals"] = gpu_benchmark.totals(doc["scripts"])
    t = doc["totals"]
    check(t["both_ran"] == 1 and t["cutune_fails_where_kernel_tuner_runs"] == ["b"] and t["not_run"] == 1
          and t["cutune_at_least_as_fast"] == 1 and t["pace_at_least_3x_where_the_budget_binds"] == 1,
          f"totals ({t})")
    text = gpu_benchmark.table(doc)
    check("| a | k | ran | ran | 100 / 100 | 20 (2) | 100 (0) |" in text and "1.2 / 1 | 1.2 |" in text
          and "failed: NotImplementedError: run_kernel" in text and "not run: the total time cap" in text,
          "the table has the figures, the failure's first line and the scripts not run")


def main():
    with tempfile.TemporaryDirectory(prefix="cutune-kt-bench-test-") as tmp:
        child_checks(tmp)
    verdict_checks()
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
