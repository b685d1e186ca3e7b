"""Recorded spaces and simulated tunings of them, for the scripts that judge search runs
(best_rank_by_evaluation.py, escape_share.py, kt_listing_order.py): one reader of a recorded
space's cache and one runner of `cutune tune --simulate --trace` per seed."""
import gzip
import json
import lzma
import os
import subprocess
import tempfile


def load_json(path):
    """A JSON file, gzipped (.gz), xz-compressed (.xz) or plain."""
    path = str(path)
    opener = gzip.open if path.endswith(".gz") else lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def recorded_times(path):
    """{configuration key: recorded time} of a recorded space's valid configurations (a Kernel
    Tuner cache: failures hold an error string, or a time of 1e20 or more)."""
    return {k: v["time"] for k, v in load_json(path)["cache"].items()
            if isinstance(v.get("time"), (int, float)) and v["time"] < 1e20}


def ranks_of(path):
    """Each valid configuration's rank by recorded time (0 = the optimum)."""
    times = recorded_times(path)
    return {k: i for i, k in enumerate(sorted(times, key=times.get))}


def simulated_traces(cutune, space, seeds, budget, strategy=None, time_budget_s=None, compile_workers=None):
    """Per seed 1..seeds, the trace entries (key, valid, objective, ...) of `cutune tune --simulate`,
    each run into a fresh DB. Raises RuntimeError naming the command and its last message when a
    run fails."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(1, seeds + 1):
            trace = os.path.join(tmp, f"trace{seed}.json")
            cmd = [str(cutune), "tune", "--simulate", str(space), "--budget", str(budget), "--seed", str(seed),
                   "--db", os.path.join(tmp, f"run{seed}.db"), "--trace", trace]
            if strategy:
                cmd += ["--strategy", strategy]
            if time_budget_s:
                cmd += ["--time-budget", repr(float(time_budget_s))]
            if compile_workers:
                cmd += ["--compile-workers", str(compile_workers)]
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                why = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
                raise RuntimeError(f"{' '.join(cmd)}: {why}")
            out.append(load_json(trace)["trace"])
    return out
