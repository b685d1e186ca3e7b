#!/usr/bin/env python3
"""Measured regret of selecting a configuration for a shape nobody tuned (on the GPU).

For each template, and Kernel Tuner's own reduction example (kt_reduction, a real kernel by
others, read from --real-kernels): a sweep of shapes is tuned (`cutune tune K --sweep ...`), distilled
(`cutune distill`) and exported as wisdom; shapes *between* the swept ones (held out of the
sweep) are then tuned directly into another DB, which gives each held-out shape its own best.
At each held-out shape the loader's choice from the sweep's wisdom (`cutune select`, the
loader's code) is measured against that best, interleaved in one `cutune measure` session:
  (a) ladder:   the wisdom without its selector (nearest problem size on this GPU model)
  (b) selector: the distilled selector
  (c) default:  the template default
Slowdown = median(choice) / median(best) - 1 (negative: the choice beat what the direct tuning
found within its budget). Writes OUT/shape_regret.json (per shape and per kernel: median and
worst slowdown of each) and OUT/logs/.

Usage: python3 -m studies.shape_regret --bin build/tuner/cli --out DIR
           [--kernels reduction,scan,matmul,transpose,kt_reduction] [--real-kernels DIR] [--budget 16] [--time-cap 0.1] [--samples 5]
           [--bound 0.05] [--top-k 3]
Device time is mostly (sweep shapes + held-out shapes) x budget evaluations per kernel: with the
defaults, 15 swept and 11 held-out shapes over the 4 templates at 16 evaluations each (32 for the
held-out shapes' direct tunings); estimated at 4 to 7 minutes on an H100 (not measured where this
was written: no GPU there). Each configuration compiles once: the cubin cache is shared by shapes.
"""
import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

# Per template: the swept variable, its sweep (a factor of 4 or 16), the held-out values (midway
# between swept ones in ratio), and the other variables held fixed (small enough that a
# tuning at 16 evaluations takes seconds).
PLANS = {
    "reduction": {"var": "n", "sweep": "n=2**16..2**28:*16", "held": [2**18, 2**22, 2**26], "fixed": ""},
    "scan": {"var": "n", "sweep": "n=2**16..2**28:*16", "held": [2**18, 2**22, 2**26], "fixed": ""},
    "matmul": {"var": "m", "sweep": "m=256..4096:*4", "held": [512, 2048], "fixed": "n=512,k=512"},
    "transpose": {"var": "rows", "sweep": "rows=2**8..2**14:*4", "held": [2**9, 2**11, 2**13], "fixed": "cols=4096"},
    # A real kernel by others: Kernel Tuner's own reduction example (its sum_floats, the script's
    # tune_params), n made a problem variable of a T1 written at run time (real_kernel_t1).
    "kt_reduction": {"var": "n", "sweep": "n=2**20..2**28:*16", "held": [2**22, 2**26], "fixed": "",
                     "real_kernel": "kernel_tuner_examples/reduction.cu"},
}
DEFAULT_REAL_KERNELS = Path(__file__).resolve().parents[2] / "shared" / "data" / "real_kernels"


def real_kernel_t1(plan, real_kernels, work):
    """The T1 file of Kernel Tuner's reduction example (reduction.py): its kernel file where it
    lies (never copied), its parameters and value lists, problem_size "num_blocks" with
    grid_div_x=[] (one block per num_blocks), arguments (partial sums of the largest num_blocks,
    the array, n) with n the swept variable. Unverified: the script's check is a custom verify."""
    kernel_file = Path(real_kernels) / plan["real_kernel"]
    if not kernel_file.is_file():
        raise FileNotFoundError(f"{kernel_file}: not found (--real-kernels)")
    params = [("block_size_x", [32, 64, 128, 256, 512, 1024], 256), ("vector", [1, 2, 4], 1),
              ("num_blocks", [2**i for i in range(5, 16)], 1024), ("loop_unroll_factor_0", [0, 1, 8, 16, 32, 64], 0),
              ("use_shuffle", [0, 1], 1)]
    vec = {"MemoryType": "Vector"}
    doc = {"General": {"BenchmarkName": "kt_example_sum_floats", "OutputFormat": "JSON"},
           "ConfigurationSpace": {"TuningParameters": [{"Name": n, "Type": "int", "Values": str(v), "Default": d}
                                                       for n, v, d in params], "Conditions": []},
           "KernelSpecification": {
               "Language": "CUDA", "CompilerOptions": [], "KernelName": "sum_floats", "KernelFile": str(kernel_file),
               "GlobalSizeType": "CUDA", "LocalSize": {"X": "block_size_x", "Y": "1", "Z": "1"},
               "GlobalSize": {"X": "num_blocks", "Y": "1", "Z": "1"}, "GridDivX": [], "GridDivY": [],
               "ProblemSize": ["num_blocks"], "SharedMemory": 0,
               "Arguments": [
                   dict(vec, Name="sum_global", Type="float", AccessType="WriteOnly", FillType="Constant",
                        FillValue=0.0, Size="32768"),
                   dict(vec, Name="array", Type="float", AccessType="ReadOnly", FillType="Random", FillValue=1.0,
                        Size="n"),
                   {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "AccessType": "ReadOnly", "FillValue": "n"}]},
           "cutune": {"ProblemVariables": [{"Name": "n", "Default": 2**24, "Min": 1024, "Max": 2**30}]}}
    path = work / "kt_reduction.json"
    path.write_text(json.dumps(doc, indent=1))
    return str(path), doc["General"]["BenchmarkName"]
EMPTY_WISDOM = {"format": "cutune-wisdom", "version": 1, "generated_at": "", "winners": []}


def run(cmd, log, check=True):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + f"\n{p.stdout}{p.stderr}(exit {p.returncode}, {time.monotonic() - t0:.1f} s)\n")
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    return p


def problem_text(plan, value):
    own = f"{plan['var']}={value}"
    return f"{plan['fixed']},{own}" if plan["fixed"] else own


def config_text(config):
    return ",".join(f"{k}={v}" for k, v in config.items())


def select(cutune, kernel, problem, wisdom, log, *extra):
    p = run([cutune, "select", kernel, "--problem", problem, "--winners", str(wisdom), "--json", *extra], log)
    return json.loads(p.stdout)


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return {"median": None, "worst": None, "count": 0}
    return {"median": statistics.median(values), "worst": max(values), "count": len(values)}


def held_out_shape(cutune, kernel, plan, value, wisdom, empty, work, a, log):
    """Tunes one held-out shape directly, then measures the three choices against its best."""
    problem = problem_text(plan, value)
    held_db = work / "held.db"
    run([cutune, "tune", kernel, "--problem", problem, "--budget", str(a.held_budget or 2 * a.budget), "--db", str(held_db),
         "--samples", str(a.samples), "--time-cap", str(a.time_cap), "--finalists", "2"], log)
    best = select(cutune, kernel, problem, held_db, log)  # its own winner: rung exact
    if best["rung_name"] != "exact":
        raise RuntimeError(f"{kernel} {problem}: the direct tuning stored no winner")
    choices = {"best": best,
               "ladder": select(cutune, kernel, problem, wisdom, log, "--no-selectors"),
               "selector": select(cutune, kernel, problem, wisdom, log),
               "default": select(cutune, kernel, problem, empty, log)}
    texts = []  # each distinct configuration measured once, all interleaved
    for c in choices.values():
        t = config_text(c["config"])
        if t not in texts:
            texts.append(t)
    mjson = work / f"measure_{Path(kernel).stem}_{value}.json"
    cmd = [cutune, "measure", kernel, "--problem", problem, "--json", str(mjson), "--time-cap", str(a.time_cap)]
    for t in texts:
        cmd += ["--config", t]
    run(cmd, log, check=False)  # a configuration that fails here is reported as such
    measured = json.load(open(mjson)) if mjson.exists() else {"configs": []}
    ms_of = {}
    for entry, t in zip(measured.get("configs", []), texts):
        median = (entry.get("summary") or {}).get("median_ms") if entry.get("status") == "ok" else None
        ms_of[t] = median
    best_ms = ms_of.get(config_text(best["config"]))
    row = {"problem": problem, "best_ms": best_ms}
    for name, c in choices.items():
        ms = ms_of.get(config_text(c["config"]))
        row[name] = {"config": c["config"], "rung": c["rung_name"], "ms": ms,
                     "slowdown": (ms / best_ms - 1.0) if ms and best_ms else None, "describe": c["describe"]}
    return row


def study_kernel(cutune, name, a, out):
    plan = PLANS[name]
    work = out / name
    work.mkdir(parents=True, exist_ok=True)
    kernel, stored_name = name, name  # a template: its name; a real kernel: its T1 file
    if "real_kernel" in plan:
        kernel, stored_name = real_kernel_t1(plan, a.real_kernels, work)
    log = out / "logs" / f"{name}.log"
    sweep_db, wisdom, empty = work / "sweep.db", work / "wisdom.json", work / "empty.wisdom.json"
    empty.write_text(json.dumps(EMPTY_WISDOM))
    t0 = time.monotonic()
    tune = [cutune, "tune", kernel, "--sweep", plan["sweep"], "--budget", str(a.budget), "--db", str(sweep_db),
            "--samples", str(a.samples), "--time-cap", str(a.time_cap), "--finalists", "2"]
    if plan["fixed"]:
        tune += ["--problem", plan["fixed"]]
    run(tune, log)
    t_sweep = time.monotonic() - t0
    run([cutune, "distill", kernel, "--db", str(sweep_db), "--bound", str(a.bound), "--top-k", str(a.top_k),
         "--time-cap", str(a.time_cap), "--samples", str(a.samples), "--json", str(work / "distill.json")], log)
    run([cutune, "export", "--format", "wisdom", "--kernel", stored_name, "--db", str(sweep_db), "-o", str(wisdom)], log)
    t_distill = time.monotonic() - t0 - t_sweep
    rows = [held_out_shape(cutune, kernel, plan, v, wisdom, empty, work, a, log) for v in plan["held"]]
    distilled = json.load(open(work / "distill.json"))
    return {"sweep": plan["sweep"], "fixed": plan["fixed"], "held_out": plan["held"],
            "kept_configs": len(distilled["selector"]["configs"]),
            "distill_worst_on_sweep": distilled["selector"]["worst_slowdown"],
            "shapes": rows,
            "summary": {m: summary([r[m]["slowdown"] for r in rows]) for m in ("ladder", "selector", "default")},
            "wall_s": {"sweep": t_sweep, "distill": t_distill, "total": time.monotonic() - t0}}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/tuner/cli", help="folder of cutune and cutune-worker")
    ap.add_argument("--out", required=True)
    ap.add_argument("--kernels", default="reduction,scan,matmul,transpose,kt_reduction")
    ap.add_argument("--real-kernels", default=str(DEFAULT_REAL_KERNELS),
                    help="the real kernels by others (kt_reduction's kernel file)")
    ap.add_argument("--budget", type=int, default=16, help="evaluations per shape (sweep and held-out)")
    ap.add_argument("--held-budget", type=int, default=0,
                    help="evaluations of each held-out shape's direct tuning (default: twice --budget)")
    ap.add_argument("--samples", type=int, default=5, help="screening samples per configuration")
    ap.add_argument("--time-cap", type=float, default=0.1, help="seconds per configuration, thorough measurements")
    ap.add_argument("--bound", type=float, default=0.05)
    ap.add_argument("--top-k", type=int, default=3)
    a = ap.parse_args()
    cutune = str(Path(a.bin) / "cutune")
    out = Path(a.out)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    result = {"settings": vars(a), "kernels": {}}
    for kernel in a.kernels.split(","):
        if kernel not in PLANS:
            sys.exit(f"shape_regret: --kernels: no plan for {kernel} (known: {', '.join(PLANS)})")
        try:
            result["kernels"][kernel] = study_kernel(cutune, kernel, a, out)
        except (RuntimeError, FileNotFoundError) as e:  # one kernel's failure leaves the others' results
            result["kernels"][kernel] = {"error": str(e)}
        (out / "shape_regret.json").write_text(json.dumps(result, indent=2) + "\n")
        s = result["kernels"][kernel].get("summary")
        print(f"{kernel}: " + (json.dumps(s) if s else result["kernels"][kernel]["error"]), flush=True)
    every = {m: [r[m]["slowdown"] for k in result["kernels"].values() for r in k.get("shapes", [])]
             for m in ("ladder", "selector", "default")}
    result["overall"] = {m: summary(v) for m, v in every.items()}
    sel = result["overall"]["selector"]
    result["target"] = {"selector_median_within_5pct": sel["median"] is not None and sel["median"] <= 0.05,
                        "selector_worst_within_15pct": sel["worst"] is not None and sel["worst"] <= 0.15,
                        "selector_median_below_ladder": None if sel["median"] is None or
                        result["overall"]["ladder"]["median"] is None else
                        sel["median"] <= result["overall"]["ladder"]["median"]}
    (out / "shape_regret.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({"overall": result["overall"], "target": result["target"]}, indent=2))


if __name__ == "__main__":
    main()
