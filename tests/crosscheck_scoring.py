#!/usr/bin/env python3
"""Cross-check of cutune's scorer against the reference implementation.

The reference, autotuning-methodology (pinned, PyPI), is installed into a venv under the build
folder. One strategy's recorded runs (`cutune tune --simulate ... --trace`, with the seeds and
budgets `cutune score` gives them) are scored by `cutune score` and by the reference's own
classes (SearchspaceStatistics cut-off points, RandomSearchCalculatedBaseline with the issue's
settings: valid values only, tau = mean cost; StochasticOptimizationAlgorithm's bagged isotonic
regression over the pooled runs). The reference's curve is a bootstrap estimate: its score moves
with numpy's seed. Tolerance: cutune's isotonic score must lie within the range the reference gives over
REF_SEEDS seeds, widened by 3 standard deviations of those scores, plus TOLERANCE for
bagging (the reference averages isotonic fits of bootstrap subsamples; cutune's isotonic
curve is the plain fit of all points). The window must be the same. cutune's median curve
is printed beside it, not checked: a different estimator (the issue allows it).

Exit 0: agree; 1: disagree; 77: skipped (PyPI unreachable or no space data), which CTest
reports as Skipped (SKIP_RETURN_CODE).
Usage: crosscheck_scoring.py CUTUNE SPACE VENV_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PIN = "autotuning-methodology==1.1.0"
STRATEGY, REPEATS, REF_SEEDS = "greedy_ils", 20, 5
TOLERANCE = 0.02  # the bagged fit against the plain fit: bootstrap bias, beyond the seed-to-seed noise


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(77)


def ensure_reference(venv):
    py = Path(venv) / "bin" / "python"
    probe = [str(py), "-c", "import autotuning_methodology"]
    if py.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return py
    if subprocess.run([sys.executable, "-m", "venv", str(venv)]).returncode != 0:
        skip("python3 -m venv failed (python3-venv missing?)")
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--timeout", "30", PIN],
                       capture_output=True, text=True)
    if r.returncode != 0:
        skip(f"pip install {PIN} failed (PyPI unreachable?): {r.stderr.strip().splitlines()[-1:]}")
    return py


REFERENCE = r'''
import json, sys
import numpy as np
from autotuning_methodology.searchspace_statistics import SearchspaceStatistics
from autotuning_methodology.baseline import RandomSearchCalculatedBaseline
from autotuning_methodology.curves import StochasticOptimizationAlgorithm

data = json.load(open(sys.argv[1]))
perf = np.array([np.nan if v is None else v for v in data["objective"]], dtype=float)
cost = np.array(data["cost_s"], dtype=float)
s = object.__new__(SearchspaceStatistics)
s.minimization = True
s.size = perf.size
s.objective_time_keys = ["total"]
s.objective_times = {"total": cost}
s.objective_times_total = cost
s.objective_times_total_sorted = np.sort(cost)
s.objective_performances_total = perf
s.objective_performances_total_sorted = np.sort(perf[~np.isnan(perf)])
s.objective_performances_total_sorted_nan = np.concatenate(
    (s.objective_performances_total_sorted, [np.nan] * int(np.isnan(perf).sum())))

_, f_end, t_start, t_end = s.cutoff_point_fevals_time_start_end(0.5, 0.96)
time_range = np.linspace(t_start, t_end, 1000)
baseline = RandomSearchCalculatedBaseline(s, include_nan=False, time_per_feval_operator="mean")

runs = data["runs"]
length = max(len(r) for r in runs)
shape = (length, len(runs))
times, best, fevals = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
for j, run in enumerate(runs):
    b = np.nan
    for i, (elapsed, value) in enumerate(run):
        if value is not None and not (b <= value):
            b = value
        times[i, j], best[i, j], fevals[i, j] = elapsed, b, i + 1

class Results:
    fevals_results = fevals
    objective_time_results = times
    objective_time_results_per_key = times[np.newaxis]
    objective_performance_best_results = best
    objective_performance_results_per_key = best[np.newaxis]

class Description:
    group_name = group_display_name = "runs"
    device_name = application_name = "space"
    stochastic = minimization = True
    def get_results(self):
        return Results()

scores = []
for seed in range(int(sys.argv[2])):
    np.random.seed(seed)
    curve = StochasticOptimizationAlgorithm(Description())
    _, _, c, _, _ = curve.get_curve_over_time(time_range, dist=s.objective_performances_total_sorted,
                                              confidence_level=0.95, return_split=False)
    p = baseline.get_standardised_curves(time_range, [c], x_type="time")[0]
    scores.append(float(np.mean(p)))
print(json.dumps({"scores": scores, "window": [float(t_start), float(t_end)]}))
'''


def main():
    cutune, space, venv = sys.argv[1:4]
    if not Path(space).exists():
        skip(f"{space} is not here")
    py = ensure_reference(venv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        score_json = tmp / "score.json"
        ours = {}
        for curve in ("isotonic", "median"):
            subprocess.run([cutune, "score", "--spaces", space, "--strategies", STRATEGY, "--repeats", str(REPEATS),
                            "--curve", curve, "--json", str(score_json)], check=True, stdout=subprocess.DEVNULL)
            scored = json.loads(score_json.read_text())
            ours[curve] = scored["strategies"][0]["overall"]
        info = scored["spaces"][0]
        # The same runs as traces: seed 1 + r, the budgets cutune score gave them.
        runs = []
        for r in range(REPEATS):
            trace = tmp / f"run{r}.json"
            subprocess.run([cutune, "tune", "--simulate", space, "--strategy", STRATEGY, "--seed", str(1 + r),
                            "--budget", str(info["evaluation_budget"]), "--time-budget", repr(info["time_budget_s"]),
                            "--trace", str(trace)], check=True, stdout=subprocess.DEVNULL)
            runs.append([[e["elapsed_s"], e["objective"]] for e in json.loads(trace.read_text())["trace"]])
        # The recording itself: every configuration's objective (None: failed) and cost.
        everything = tmp / "all.json"
        subprocess.run([cutune, "tune", "--simulate", space, "--strategy", "brute_force", "--trace", str(everything)],
                       check=True, stdout=subprocess.DEVNULL)
        rec = json.loads(everything.read_text())["trace"]
        data = tmp / "data.json"
        data.write_text(json.dumps({"objective": [e["objective"] for e in rec], "cost_s": [e["cost_s"] for e in rec],
                                    "runs": runs}))
        ref_py = tmp / "ref.py"
        ref_py.write_text(REFERENCE)
        out = subprocess.run([str(py), str(ref_py), str(data), str(REF_SEEDS)], check=True, capture_output=True,
                             text=True).stdout
        ref = json.loads(out.strip().splitlines()[-1])
    scores = ref["scores"]
    mean = sum(scores) / len(scores)
    std = (sum((s - mean) ** 2 for s in scores) / max(1, len(scores) - 1)) ** 0.5
    low, high = min(scores) - 3 * std - TOLERANCE, max(scores) + 3 * std + TOLERANCE
    print(f"cutune isotonic {ours['isotonic']:.4f}, median {ours['median']:.4f} (not checked); reference {mean:.4f} "
          f"(seeds: {', '.join(f'{s:.4f}' for s in scores)}; sd {std:.4f}); window cutune {info['window_s']}, "
          f"reference {ref['window']}; accepted [{low:.4f}, {high:.4f}]")
    same_window = all(abs(a - b) <= 1e-9 * max(1.0, abs(b)) for a, b in zip(info["window_s"], ref["window"]))
    sys.exit(0 if same_window and low <= ours["isotonic"] <= high else 1)


if __name__ == "__main__":
    main()
