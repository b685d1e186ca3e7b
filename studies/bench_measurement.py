#!/usr/bin/env python3
"""The measurement benchmark, run on the lent GPU: writes measurement.json with

  fidelity:  cutune's cold median (`cutune measure`) beside an independent measurement of
             the same launches: Nsight Compute's gpu__time_duration (cache flushed by ncu,
             clocks left alone), and, warm, one event pair around a long back-to-back loop;
  stability: the reduction space tuned 5 times from scratch (fresh DBs), the 5 winners
             re-measured together (interleaved) and each compared with the best of them;
  cost:      measurement wall time per configuration (sampling only) of a ~20 us kernel,
             screening and thorough, from a tuning session's report.

Python only orchestrates the cutune binary and ncu (no timing happens here).
Usage: python3 -m studies.bench_measurement --bin .gpu/bin --out OUT_DIR [--steps fidelity,stability,cost]
"""
import argparse
import csv
import datetime
import io
import json
import os
import shutil
import statistics
import subprocess
import sys

# kernel, problem, config ("" = default): single-launch configurations from ~5 us to ~5 ms.
FIDELITY = [
    ("vector_add", "n=1", ""),  # the floor: what a near-empty launch measures
    ("vector_add", "n=2**20", ""),
    ("reduction", "n=2**22", ""),
    ("reduction", "n=2**24", ""),
    ("transpose", "rows=8192,cols=8192", ""),
    ("scan", "n=2**26", ""),
    ("matmul", "m=2048,n=2048,k=2048", ""),
    ("matmul", "m=4096,n=4096,k=4096", ""),
]
STABILITY_RUNS = 5
COST_PROBLEM = ("reduction", "n=2**24")


def run(cmd, log, check=True, timeout=None):
    log.write("$ " + " ".join(cmd) + "\n")
    log.flush()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    log.write(p.stdout)
    log.flush()
    if check and p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited {p.returncode}: {p.stdout.strip().splitlines()[-1:]}")
    return p


def config_text(config):
    return ",".join(f"{k}={v}" for k, v in config.items())


def ncu_durations_ns(ncu, cutune, kernel, problem, config, log):
    """gpu__time_duration of the kernel's launches under ncu, skipping the verification and
    warm-up launches; returns a list in ns (empty when ncu cannot profile here)."""
    cmd = [ncu, "--metrics", "gpu__time_duration.sum", "--cache-control", "all", "--clock-control", "none",
           "--print-units", "base", "--csv", "--kernel-name", "regex:^(?!cutune_)", "--launch-skip", "2",
           "--launch-count", "15", cutune, "measure", kernel, "--problem", problem, "--min-samples", "20",
           "--time-cap", "120", "--timer", "events"]  # CUPTI's activity API is ncu's to use here
    if config:
        cmd += ["--config", config]
    p = run(cmd, log, check=False, timeout=600)
    values = []
    lines = [l for l in p.stdout.splitlines() if l.startswith('"')]
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        if row.get("Metric Name") == "gpu__time_duration.sum":
            values.append(float(row["Metric Value"].replace(",", "")))
    return values


def fidelity(args, files, log):
    out = []
    only = [k for k in args.kernels.split(",") if k]
    ncu = shutil.which("ncu") or (os.path.exists("/usr/local/cuda/bin/ncu") and "/usr/local/cuda/bin/ncu")
    for kernel, problem, config in FIDELITY:
        if only and f"{kernel}:{problem}" not in only:
            continue
        entry = {"kernel": kernel, "problem": problem, "config": config or "default"}
        base = f"{files}/fidelity_{kernel}_{len(out)}"

        def measure(json_file, *extra):
            return [args.cutune, "measure", kernel, "--problem", problem, "--json", json_file, *extra] + (
                ["--config", config] if config else [])

        run(measure(base + "_cold.json"), log)
        cold = json.load(open(base + "_cold.json"))["configs"][0]
        entry["timer"] = cold["stats"].get("timer", "events")
        entry["cutune_cold_median_ms"] = cold["summary"]["median_ms"]
        entry["cutune_cold_ci_ms"] = [cold["summary"]["ci_low_ms"], cold["summary"]["ci_high_ms"]]
        entry["cutune_samples"] = cold["summary"]["samples"]
        entry["l2"] = cold["stats"]["l2"]
        # The event pair around no work, sampled the same way (reported, never subtracted
        # by cutune): how much of a small kernel's median is the timer's own interval.
        entry["timer_floor_ms"] = json.load(open(base + "_cold.json")).get("timer_floor_ms")
        run(measure(base + "_warm.json", "--l2", "warm", "--loop", "0.3"), log)
        warm = json.load(open(base + "_warm.json"))["configs"][0]
        entry["cutune_warm_median_ms"] = warm["summary"]["median_ms"]
        entry["loop_ms_per_launch"] = warm["loop"]["ms_per_launch"]
        entry["loop_launches"] = warm["loop"]["launches"]
        entry["warm_vs_loop_rel_diff"] = entry["cutune_warm_median_ms"] / entry["loop_ms_per_launch"] - 1
        if entry["timer"] == "events":  # the same cold measurement timed by CUPTI's activity records
            run(measure(base + "_activity.json", "--timer", "activity"), log)
            ac = json.load(open(base + "_activity.json"))["configs"][0]
            entry["cutune_activity_median_ms"] = ac["summary"]["median_ms"]
        if entry["l2"] != "flush":  # rotated: the same kernel with the flush as well
            run(measure(base + "_flush.json", "--l2", "flush"), log)
            fl = json.load(open(base + "_flush.json"))["configs"][0]
            entry["cutune_flush_median_ms"] = fl["summary"]["median_ms"]
        if ncu:
            ns = ncu_durations_ns(ncu, args.cutune, kernel, problem, config, log)
            if ns:
                entry["ncu_launches"] = len(ns)
                entry["ncu_median_ms"] = statistics.median(ns) * 1e-6
                entry["cold_vs_ncu_rel_diff"] = entry["cutune_cold_median_ms"] / entry["ncu_median_ms"] - 1
                if entry.get("timer_floor_ms"):
                    entry["cold_minus_floor_vs_ncu_rel_diff"] = (
                        (entry["cutune_cold_median_ms"] - entry["timer_floor_ms"]) / entry["ncu_median_ms"] - 1)
                if "cutune_activity_median_ms" in entry:
                    entry["activity_vs_ncu_rel_diff"] = entry["cutune_activity_median_ms"] / entry["ncu_median_ms"] - 1
                if "cutune_flush_median_ms" in entry:
                    entry["flush_vs_ncu_rel_diff"] = entry["cutune_flush_median_ms"] / entry["ncu_median_ms"] - 1
            else:
                entry["ncu_error"] = "ncu reported no gpu__time_duration (see measurement.log)"
        else:
            entry["ncu_error"] = "ncu not found"
        ind = "cold_vs_ncu_rel_diff" if "cold_vs_ncu_rel_diff" in entry else "warm_vs_loop_rel_diff"
        entry["within_2pct"] = abs(entry[ind]) <= 0.02
        print(f"fidelity {kernel} {problem}: cold ({entry['timer']}) {entry['cutune_cold_median_ms']:.5f} ms"
              + (f", ncu {entry['ncu_median_ms']:.5f} ms ({entry['cold_vs_ncu_rel_diff']:+.2%})" if "ncu_median_ms" in entry else "")
              + (f", floor {entry['timer_floor_ms']*1e3:.2f} us ({entry['cold_minus_floor_vs_ncu_rel_diff']:+.2%} without it)" if "cold_minus_floor_vs_ncu_rel_diff" in entry else "")
              + (f", activity {entry['cutune_activity_median_ms']:.5f} ms ({entry.get('activity_vs_ncu_rel_diff', 0):+.2%})" if "cutune_activity_median_ms" in entry else "")
              + (f", flush {entry['cutune_flush_median_ms']:.5f} ms ({entry.get('flush_vs_ncu_rel_diff', 0):+.2%})" if "cutune_flush_median_ms" in entry else "")
              + f"; warm {entry['cutune_warm_median_ms']:.5f} ms, loop {entry['loop_ms_per_launch']:.5f} ms"
              + f" ({entry['warm_vs_loop_rel_diff']:+.2%})", flush=True)
        out.append(entry)
    return {"method": "cutune measure (cold: L2 flush or rotation; thorough criterion; timed by the work's own "
                      "event pair; the same timed by CUPTI's activity records beside it) vs ncu "
                      "gpu__time_duration.sum (--cache-control all --clock-control none, 15 launches after "
                      "verification and warm-up, median); and cutune measure --l2 warm vs one event pair "
                      "around a back-to-back loop of ~0.3 s (includes launch gaps)",
            "target": "within 2% (cold vs ncu)", "kernels": out}


def stability(args, files, log):
    winners = []
    for i in range(STABILITY_RUNS):
        db = f"{args.out}/stability_{i}.db"
        if os.path.exists(db):
            os.remove(db)
        rep = f"{files}/stability_tune_{i}.json"
        run([args.cutune, "tune", "reduction", "--db", db, "--report", rep], log)
        r = json.load(open(rep))
        winners.append({"run": i, "winner_key": r["winner_key"], "winner": r["winner"], "winner_ms": r["winner_ms"],
                        "verdict": r["verdict"], "tied": [f["config_key"] for f in r["finalists"] if f["tied_with_winner"]]})
        print(f"stability run {i}: {r['winner_key']} {r['winner_ms']:.5f} ms ({r['verdict']})", flush=True)
    distinct = []
    for w in winners:
        if w["winner_key"] not in [d["winner_key"] for d in distinct]:
            distinct.append(w)
    cmd = [args.cutune, "measure", "reduction", "--json", f"{files}/stability_remeasure.json", "--time-cap", "2"]
    for d in distinct:
        cmd += ["--config", config_text(d["winner"])]
    run(cmd, log)
    re = {c["config_key"]: c["summary"]["median_ms"] for c in json.load(open(f"{files}/stability_remeasure.json"))["configs"]}
    best = min(re.values())
    for w in winners:
        w["remeasured_median_ms"] = re[w["winner_key"]]
        w["relative_to_best"] = re[w["winner_key"]] / best
    return {"kernel": "reduction", "problem": "n=268435456 (default)", "runs": winners,
            "remeasure": "the distinct winners measured together by `cutune measure --config ...` (thorough, "
                         "interleaved, back to back)",
            "max_relative_to_best": max(w["relative_to_best"] for w in winners),
            "target": "all within 1% of the best", "met": all(w["relative_to_best"] <= 1.01 for w in winners)}


def cost(args, files, log):
    kernel, problem = COST_PROBLEM
    db = f"{args.out}/cost.db"
    if os.path.exists(db):
        os.remove(db)
    rep = f"{files}/cost_tune.json"
    run([args.cutune, "tune", kernel, "--problem", problem, "--db", db, "--report", rep], log)
    r = json.load(open(rep))
    c = r["cost"]
    print(f"cost {kernel} {problem}: winner {r['winner_ms']:.5f} ms; screening {c['screening_ms_per_config']:.3f} ms/config, "
          f"thorough {c['thorough_ms_per_config']:.3f} ms/config", flush=True)
    return {"kernel": kernel, "problem": problem, "winner_ms": r["winner_ms"], "configs": r["configs_tried"],
            "screening_ms_per_config": c["screening_ms_per_config"],
            "thorough_ms_per_config": c["thorough_ms_per_config"],
            "what": "wall time of sampling per configuration (warm-up, flushes, blocking kernel, clock probe, "
                    "samples, NVML readings; not compile or verification)",
            "targets": {"screening_ms_per_config": 2.0, "thorough_ms_per_config": 25.0},
            "met": c["screening_ms_per_config"] <= 2.0 and c["thorough_ms_per_config"] <= 25.0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=".gpu/bin")
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", default="fidelity,stability,cost")
    ap.add_argument("--kernels", default="", help="fidelity only for these kernel:problem entries (comma-separated)")
    args = ap.parse_args()
    args.cutune = os.path.join(args.bin, "cutune")
    files = os.path.join(args.out, "files")
    os.makedirs(files, exist_ok=True)
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": " ".join(sys.argv)}
    dev = subprocess.run([args.cutune, "devices", "--json"], stdout=subprocess.PIPE, text=True)
    try:
        doc["device"] = json.loads(dev.stdout)["devices"][0]
    except (ValueError, IndexError, KeyError):
        doc["device"] = dev.stdout
    status = 0
    with open(os.path.join(files, "measurement.log"), "a") as log:
        for step in args.steps.split(","):
            try:
                doc[step] = {"fidelity": fidelity, "stability": stability, "cost": cost}[step](args, files, log)
            except Exception as e:  # a failed step is recorded, the others still run
                doc[step] = {"error": str(e)}
                print(f"{step}: FAILED: {e}", flush=True)
                status = 1
            # Written after every step, so that a run cut short keeps what it finished.
            with open(os.path.join(files, "measurement.json"), "w") as f:
                json.dump(doc, f, indent=2)
    return status


if __name__ == "__main__":
    sys.exit(main())
