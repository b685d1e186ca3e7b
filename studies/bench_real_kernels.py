#!/usr/bin/env python3
"""Real kernels written by others, tuned by cutune and by Kernel Tuner 1.5.0 side by side on the
lent GPU: writes OUT/real_kernels.json (and a table on stdout).

Cases (the material in ../shared/data/real_kernels, never edited):
  * Kernel Tuner's CUDA examples, each with its author's own Python script. cutune's side
    captures the unchanged script (python/cutune_capture) into T1 files and tunes each
    tune_kernel call; Kernel Tuner's side runs the same unchanged script with the real
    tune_kernel wrapped only to impose the common budget, a cache file and the cuda-python
    backend (the lent machine has cuda-bindings, not PyCUDA, which `lang="CUDA"` would need).
  * BAT's benchmarks with their CAFF (T1-style) problem files. cutune tunes the file as it is;
    Kernel Tuner is called the way BAT's own Kernel Tuner runner calls it (block_size_names
    from LocalSize, problem size from GlobalSize with no grid divisor when there is no
    ProblemSize, random inputs, the default configuration's outputs as the answer).

Per case: the valid-space size on both sides, configurations tried and failed by cause, each
tool's own best, then both winners re-measured in ONE cutune process, interleaved
(`cutune measure --config A --config B`), whether Kernel Tuner's winner runs at all, the ratio
(Kernel Tuner's winner time / cutune's winner time: >= 1 means cutune's is at least as fast)
and configurations per second. Every step is guarded: an error is recorded and the next step
runs; the JSON is rewritten after each case, so a time-out keeps what was done.

Usage (on the GPU machine): python3 -m studies.bench_real_kernels --bin .gpu/bin --out $OUT
       --wheels .kt-wheels --material .material [--budget 30] [--cases convolution,bat/GEMM,...]
       [--skip-kt | --kt-only | --kt-results real_kernels_kt.json]
"""
import argparse
import datetime
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# ../shared beside the checkout (CI's layout), else shared/ inside it; --material overrides (the
# GPU machine gets only the checkout, so the material is carried in a git-ignored folder).
SHARED = os.path.join(REPO, "shared") if os.path.isdir(os.path.join(REPO, "shared")) \
    else os.path.join(os.path.dirname(REPO), "shared")
MATERIAL = os.path.join(SHARED, "data", "real_kernels")

# The Kernel Tuner scripts that tune CUDA kernels (pnpoly tunes a host function with lang="C";
# texture needs texmem_args; both are attempted and their outcome recorded).
KT_SCRIPTS = ["convolution", "matmul", "pnpoly", "reduction", "spmv", "stencil", "expdist",
              "zeromeanfilter", "vector_add", "sepconv", "texture", "convolution_correct",
              "vector_add_metric"]
BAT_CASES = ["GEMM", "MD5Hash", "TRIAD", "convolution", "hotspot", "nbody", "pnpoly"]

# What both Kernel Tuner children share: a result's failure kind and the summary of one call.
KT_CHILD_COMMON = r'''
import numpy as np

def error_of(r):  # Kernel Tuner 1.5 keeps an ErrorConfig under "__error__"; older ones in "time"
    if "__error__" in r:
        return type(r["__error__"]).__name__
    t = r.get("time")
    return None if isinstance(t, (int, float, np.floating, np.integer)) and not isinstance(t, bool) else type(t).__name__

def summarize_call(call, results, tune_params, objective="time", higher=False):
    ok = [r for r in results if error_of(r) is None]
    kinds = {}
    for r in results:
        e = error_of(r)
        if e:
            kinds[e] = kinds.get(e, 0) + 1
    call.update(tried=len(results), failed=len(results) - len(ok), failures_by_kind=kinds)
    if ok:
        key = lambda r: float(r[objective]) if objective in r else float(r["time"])
        best = max(ok, key=key) if higher else min(ok, key=key)
        call["best_ms"] = float(best["time"])
        call["best_objective"] = key(best)
        call["best_config"] = {k: best[k] for k in tune_params}
'''

# How a Kernel Tuner child runs an author's script unchanged (here and in
# studies/bench_kt_parallel.py): Kernel Tuner's tune_kernel replaced by `wrapped`, the script
# run as __main__ in its own folder. Returns what the script raised, or None.
KT_RUN_SCRIPT = r'''
def run_script(p, wrapped):
    import os, runpy, sys
    import kernel_tuner, kernel_tuner.interface
    kernel_tuner.tune_kernel = wrapped
    kernel_tuner.interface.tune_kernel = wrapped
    os.chdir(p["dir"])
    sys.argv = [p["script"]]
    sys.path.insert(0, p["dir"])
    try:
        runpy.run_path(p["script"], run_name="__main__")
    except SystemExit:
        pass
    except BaseException as e:
        return e
    return None
'''

# Kernel Tuner's child for a script: the real tune_kernel, wrapped to impose the budget.
KT_SCRIPT_CHILD = KT_RUN_SCRIPT + r'''
import json, os, runpy, sys, time
p = json.load(open(sys.argv[1]))
import numpy as np
import kernel_tuner, kernel_tuner.interface
from kernel_tuner.searchspace import Searchspace
real = kernel_tuner.interface.tune_kernel
calls = []

def dump():
    with open(p["out"], "w") as f:
        json.dump({"version": kernel_tuner.__version__, "calls": calls}, f, indent=1,
                  default=lambda o: o.item() if hasattr(o, "item") else str(o))

def wrapped(kernel_name, kernel_source, problem_size, arguments, tune_params, *a, **kw):
    n = len(calls)
    call = {"index": n, "kernel_name": kernel_name}
    calls.append(call)
    lang = kw.get("lang")
    if lang is None or str(lang).upper() == "CUDA":
        kw["lang"] = "NVCUDA"
    call["lang"] = kw["lang"]
    try:
        from kernel_tuner.util import default_block_size_names
        space = Searchspace(tune_params, kw.get("restrictions") or [], p["max_threads"],
                            kw.get("block_size_names") or default_block_size_names)
        call["space_valid"] = space.size
    except Exception as e:
        call["space_error"] = f"{type(e).__name__}: {e}"
        space = None
    if n >= p["max_calls"]:  # a script that tunes many sizes: the first few are compared
        call["skipped"] = f"only the first {p['max_calls']} tune_kernel calls of a script are run"
        dump()
        raise SystemExit(0)
    small = space is not None and space.size <= p["brute_force_below"]
    kw["strategy"] = "brute_force" if small else p["strategy"]
    # Kernel Tuner's brute force takes no options; random_sample samples a tenth of the space
    # unless told otherwise: the whole budget is its to spend, as it is cutune's.
    kw["strategy_options"] = {} if small else {"time_limit": p["budget_s"], "fraction": 1.0}
    kw["cache"] = os.path.join(p["dir"], f"kt_cache_{n}.json")
    kw["quiet"] = True
    kw["verbose"] = False
    kw.pop("log", None)
    call["strategy"] = kw["strategy"]
    objective = kw.get("objective", "time")
    higher = kw.get("objective_higher_is_better", False)
    call["objective"] = objective
    dump()
    t = time.perf_counter()
    try:
        results, env = real(kernel_name, kernel_source, problem_size, arguments, tune_params, *a, **kw)
    except BaseException as e:
        call["wall_s"] = time.perf_counter() - t
        call["error"] = f"{type(e).__name__}: {e}"[:2000]
        dump()
        raise
    call["wall_s"] = time.perf_counter() - t
    summarize_call(call, results, tune_params, objective, higher)
    dump()
    return results, env

error = run_script(p, wrapped)
if error is not None:
    import traceback
    calls.append({"script_error": f"{type(error).__name__}: {error}"[:2000],
                  "trace": "".join(traceback.format_exception(type(error), error, error.__traceback__))[-3000:]})
dump()
'''

# Kernel Tuner's child for a BAT CAFF file, called the way BAT's Kernel Tuner runner calls it.
KT_T1_CHILD = r'''
import ast, json, os, re, sys, time
from collections import OrderedDict
p = json.load(open(sys.argv[1]))
import numpy as np
import kernel_tuner
from kernel_tuner import tune_kernel
from kernel_tuner.searchspace import Searchspace
spec = json.load(open(p["t1"]))
ks = spec["KernelSpecification"]
call = {"index": 0, "kernel_name": ks["KernelName"]}
def dump():
    with open(p["out"], "w") as f:
        json.dump({"version": kernel_tuner.__version__, "calls": [call]}, f, indent=1,
                  default=lambda o: o.item() if hasattr(o, "item") else str(o))
try:
    tune_params = OrderedDict()
    for tp in spec["ConfigurationSpace"]["TuningParameters"]:
        v = tp["Values"]
        tune_params[tp["Name"]] = eval(v) if isinstance(v, str) else v
    restrictions = [c["Expression"] for c in spec["ConfigurationSpace"].get("Conditions", [])]
    block_size_names = [n for n in ks["LocalSize"].values() if not str(n).isdigit()]
    if len(block_size_names) < 3:
        block_size_names.append("block_size_z")
    if ks.get("ProblemSize"):
        ps = ks["ProblemSize"]
        problem_size = ps if isinstance(ps, int) else tuple(ps)
        grid_div_x, grid_div_y = ks.get("GridDivX"), ks.get("GridDivY")
    else:
        sizes = []
        for d in ("X", "Y", "Z"):
            if d not in ks["GlobalSize"]:
                break
            g = ks["GlobalSize"][d]
            if isinstance(g, str):
                for name in {n.id for n in ast.walk(ast.parse(g)) if isinstance(n, ast.Name)}:
                    g = re.sub(r"\b" + re.escape(name) + r"\b", f"p['{name}']", g)
            sizes.append(g)
        problem_size = lambda cfg, sizes=sizes: tuple(eval(s, {"p": cfg}) if isinstance(s, str) else s for s in sizes)
        grid_div_x, grid_div_y = [], []
        if ks.get("GlobalSizeType") == "OpenCL":
            # Global size in threads, as the T1 format defines it and cutune reads it (BAT's
            # Kernel Tuner runner takes every GlobalSize as blocks): divided by the block.
            names = [n for n in ks["LocalSize"].values()]
            grid_div_x = [names[0]] if names[0] in tune_params else []
            grid_div_y = [names[1]] if len(names) > 1 and names[1] in tune_params else []
    types = {"float": np.float32, "float32": np.float32, "double": np.float64, "float64": np.float64,
             "int32": np.int32, "int": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
             "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16}
    rng = np.random.default_rng(1)
    args, cmem, outputs = [], {}, []
    for i, a in enumerate(ks.get("Arguments", [])):
        t = types[a["Type"]]
        if a["MemoryType"] == "Scalar":
            v = a.get("FillValue", 0)
            args.append(t(eval(v) if isinstance(v, str) else v))
            continue
        size = a["Size"]
        if isinstance(size, str):
            env = dict(tune_params)
            env["ProblemSize"] = ks.get("ProblemSize")
            size = int(eval(size, env))
        fill = a.get("FillType", "Constant")
        val = a.get("FillValue", 0)
        if fill == "Random":
            arr = (rng.random(size) * float(val if val else 1)).astype(t)
        elif fill == "Generator":  # BAT: DataSource is an expression of the element index i
            arr = np.array([eval(str(a["DataSource"]), {"i": i}) for i in range(size)]).astype(t)
        elif fill == "BinaryRaw":
            arr = np.fromfile(os.path.join(os.path.dirname(p["t1"]), a["DataSource"]), dtype=t, count=size)
        else:
            arr = np.full(size, val, dtype=t)
        args.append(arr)
        if a.get("MemType") == "Constant":
            cmem[a.get("Name", f"arg{i}")] = arr
        if a.get("AccessType") in ("WriteOnly", "ReadWrite") or a.get("Output"):
            outputs.append(i)
    with open(os.path.join(os.path.dirname(p["t1"]), ks["KernelFile"])) as f:
        source = f.read()
    space = Searchspace(tune_params, restrictions, p["max_threads"], block_size_names)
    call["space_valid"] = space.size
    strategy = "brute_force" if space.size <= p["brute_force_below"] else p["strategy"]
    call["strategy"] = strategy
    options = {} if strategy == "brute_force" else {"time_limit": p["budget_s"], "fraction": 1.0}
    kw = dict(block_size_names=block_size_names, restrictions=restrictions, grid_div_x=grid_div_x,
              grid_div_y=grid_div_y, cmem_args=cmem or None, compiler_options=ks.get("CompilerOptions"),
              lang="NVCUDA", iterations=7, strategy=strategy, strategy_options=options,
              cache=os.path.join(p["dir"], "kt_cache_0.json"), quiet=True, verbose=False)
    dump()
    t = time.perf_counter()
    results, env = tune_kernel(ks["KernelName"], source, problem_size, args, tune_params, **kw)
    call["wall_s"] = time.perf_counter() - t
    call.update(lang="NVCUDA", objective="time")
    summarize_call(call, results, tune_params)
except BaseException as e:
    import traceback
    call["error"] = f"{type(e).__name__}: {e}"[:2000]
    call["trace"] = traceback.format_exc()[-3000:]
dump()
'''


def derive(case):
    """The comparison figures of one tuned kernel from its raw records (also used by --summarize
    to recompute them from a stored JSON): the re-measured pair, whether Kernel Tuner's winner
    runs, the ratio and whether the two medians' 95% intervals overlap (a tie)."""
    ours, theirs = case.get("cutune", {}), case.get("kernel_tuner", {})
    if ours.get("configs_tried") and ours.get("wall_s"):
        case["cutune_configs_per_s"] = ours["configs_tried"] / ours["wall_s"]
    if theirs.get("tried") and theirs.get("wall_s"):
        case["kernel_tuner_configs_per_s"] = theirs["tried"] / theirs["wall_s"]
    if case.get("cutune_configs_per_s") and case.get("kernel_tuner_configs_per_s"):
        case["pace_ratio"] = case["cutune_configs_per_s"] / case["kernel_tuner_configs_per_s"]
    rm = case.get("remeasure") or {}
    res = rm.get("result")
    entries = res.get("configs") if isinstance(res, dict) else None
    if not isinstance(entries, list) or len(entries) != 2:
        return
    def ok(e):
        return e.get("status") == "ok" and (e.get("summary") or {}).get("median_ms")
    a, b = entries
    case["remeasured"] = {
        who: {"config": e.get("config"), "status": e.get("status"), "error": e.get("error") or None,
              "median_ms": (e.get("summary") or {}).get("median_ms"),
              "ci_ms": [(e.get("summary") or {}).get("ci_low_ms"), (e.get("summary") or {}).get("ci_high_ms")]}
        for who, e in (("cutune_winner", a), ("kernel_tuner_winner", b))}
    case["kernel_tuner_winner_runs"] = bool(ok(b))
    if not ok(b) and b.get("error"):
        case["kernel_tuner_winner_failure"] = f"{b.get('status')}: {b.get('error')}"[:300]
    if ok(a) and ok(b):
        sa, sb = a["summary"], b["summary"]
        case["ratio_kt_over_cutune"] = sb["median_ms"] / sa["median_ms"]
        case["tie"] = not (sa["ci_high_ms"] < sb["ci_low_ms"] or sb["ci_high_ms"] < sa["ci_low_ms"])
        case["cutune_at_least_as_fast"] = sa["median_ms"] <= sb["median_ms"] or case["tie"]
    elif ok(a):
        case["cutune_at_least_as_fast"] = True  # Kernel Tuner's winner does not run at all


class Bench:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="cutune-real-")
        self.cutune = os.path.join(args.bin, "cutune")
        self.doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    "command": " ".join(shlex.quote(a) for a in sys.argv),
                    "budget_s": args.budget, "strategy_cutune": args.strategy or "default (bandit_portfolio)",
                    "strategy_kernel_tuner": args.kt_strategy, "brute_force_below": args.brute_force_below,
                    "cases": []}
        self.kt_site = None
        self.kt_recorded = None
        if args.kt_results:
            with open(args.kt_results) as f:
                self.kt_recorded = json.load(f)
            self.doc["kernel_tuner_recorded"] = {"file": args.kt_results, "date": self.kt_recorded.get("date"),
                                                 "devices": self.kt_recorded.get("devices")}

    # ---- helpers ---------------------------------------------------------------------------

    def run(self, cmd, timeout, env=None, cwd=None):
        t = time.perf_counter()
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=timeout, env=env, cwd=cwd)
            return p.returncode, p.stdout, time.perf_counter() - t
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            return 124, out, time.perf_counter() - t

    @staticmethod
    def tail(text, n=1500):
        return text[-n:] if text else ""

    def dump(self):
        with open(os.path.join(self.args.out, "real_kernels.json"), "w") as f:
            json.dump(self.doc, f, indent=1)

    def kt_env(self):
        env = dict(os.environ)
        env["PYTHONPATH"] = self.kt_site + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        return env

    def kt_install(self):
        if self.args.kt_site:  # an existing installation (a developer's venv site-packages)
            self.kt_site = self.args.kt_site
            return
        wheels = sorted(glob.glob(os.path.join(self.args.wheels, "*.whl")))
        if not wheels:
            raise FileNotFoundError(f"no wheels in {self.args.wheels} (run scripts/fetch_kt_wheels.sh)")
        self.kt_site = os.path.join(self.tmp, "kt-site")
        rc, out, wall = self.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                                  "--no-index", "--no-deps", "--no-cache-dir", "--target", self.kt_site] + wheels, 300)
        if rc != 0:
            raise RuntimeError(f"pip install exited {rc}: {self.tail(out)}")

    # ---- cutune --------------------------------------------------------------------------

    def device(self):
        rc, out, _ = self.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"], 60)
        self.doc["gpu"] = out.strip()
        rc, out, _ = self.run([self.cutune, "devices"], 60)
        self.doc["devices"] = out.strip()

    def cutune_tune(self, t1, label, space_hint=None):
        report = os.path.join(self.tmp, f"{label}_report.json")
        cmd = [self.cutune, "tune", t1, "--db", os.path.join(self.tmp, f"{label}.db"),
               "--time-budget", str(self.args.budget), "--report", report]
        if space_hint is not None and space_hint <= self.args.brute_force_below:
            cmd += ["--strategy", "brute_force"]
        elif self.args.strategy:
            cmd += ["--strategy", self.args.strategy]
        rc, out, wall = self.run(cmd, self.args.budget * 4 + 120)
        res = {"command": " ".join(shlex.quote(c) for c in cmd), "exit": rc, "process_wall_s": wall,
               "output_tail": self.tail(out)}
        if os.path.exists(report):
            with open(report) as f:
                rep = json.load(f)
            res.update({k: rep.get(k) for k in ("space_valid", "configs_tried", "configs_failed", "failures_by_status",
                                                "winner", "winner_key", "winner_ms", "default", "default_ms",
                                                "objective", "winner_objective_value", "verdict", "wall_s",
                                                "verification")})
        return res

    def cutune_space(self, t1):
        rc, out, _ = self.run([self.cutune, "space", t1], 120)
        m = re.search(r"valid[^0-9]*([0-9]+)", out)
        return {"exit": rc, "valid": int(m.group(1)) if m else None, "output_tail": self.tail(out, 600)}

    @staticmethod
    def config_arg(cfg):
        return ",".join(f"{k}={v}" for k, v in cfg.items())

    def remeasure(self, t1, label, ours, theirs):
        """Both winners in one cutune process, interleaved; each one alone too when the pair fails
        (a Kernel Tuner winner that cannot run must not hide cutune's figure)."""
        out = {}
        pair = os.path.join(self.tmp, f"{label}_measure.json")
        cmd = [self.cutune, "measure", t1, "--config", self.config_arg(ours), "--config", self.config_arg(theirs),
               "--json", pair]
        rc, text, _ = self.run(cmd, 300)
        out["command"] = " ".join(shlex.quote(c) for c in cmd)
        out["exit"] = rc
        out["output_tail"] = self.tail(text)
        if os.path.exists(pair):
            with open(pair) as f:
                out["result"] = json.load(f)
        if rc != 0:
            for who, cfg in (("cutune_alone", ours), ("kernel_tuner_alone", theirs)):
                js = os.path.join(self.tmp, f"{label}_{who}.json")
                rc2, text2, _ = self.run([self.cutune, "measure", t1, "--config", self.config_arg(cfg), "--json", js], 300)
                out[who] = {"exit": rc2, "output_tail": self.tail(text2, 800)}
                if os.path.exists(js):
                    with open(js) as f:
                        out[who]["result"] = json.load(f)
        return out

    def kernel_tuner_side(self, case, run):
        """Kernel Tuner's run of a case, or the one recorded by an earlier --kt-only run on the same
        machine (--kt-results): Kernel Tuner's side needs no cutune code, so it can be run apart."""
        if self.kt_recorded is not None:
            for c in self.kt_recorded.get("cases", []):
                if c.get("case") != case:
                    continue
                if "kernel_tuner_calls" in c:
                    return dict(c.get("kernel_tuner_run", {}), recorded=True), c["kernel_tuner_calls"]
                for k in c.get("kernels", []):
                    if "kernel_tuner_calls" in k:
                        return dict(k.get("kernel_tuner_run", {}), recorded=True), k["kernel_tuner_calls"]
        return run()  # not recorded: Kernel Tuner runs now

    # ---- cases -----------------------------------------------------------------------------

    def capture(self, script, workdir):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.path.join(REPO, "python") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cap = os.path.join(workdir, "captured")
        rc, out, wall = self.run([sys.executable, "-m", "cutune_capture", "--out", cap, script], 600, env=env, cwd=workdir)
        manifest = os.path.join(cap, "capture.json")
        calls = []
        if os.path.exists(manifest):
            with open(manifest) as f:
                m = json.load(f)
            calls = m.get("calls", m) if isinstance(m, dict) else m
        return {"exit": rc, "wall_s": wall, "output_tail": self.tail(out), "dir": cap}, calls

    def kt_child(self, name, source, workdir, params):
        """Runs one of the Kernel Tuner children above with `params` (plus the common budget
        settings); returns its process record and the calls it recorded."""
        if self.args.skip_kt:
            return {"skipped": True}, []
        pfile = os.path.join(workdir, "kt_params.json")
        rfile = os.path.join(workdir, "kt_result.json")
        with open(pfile, "w") as f:
            json.dump(dict(params, dir=workdir, out=rfile, budget_s=self.args.budget, strategy=self.args.kt_strategy,
                           brute_force_below=self.args.brute_force_below, max_threads=1024), f)
        child = os.path.join(self.tmp, f"{name}.py")
        with open(child, "w") as f:
            f.write(KT_CHILD_COMMON + source)
        rc, out, wall = self.run([sys.executable, child, pfile], self.args.budget * 6 + 600, env=self.kt_env(), cwd=workdir)
        res = {"exit": rc, "process_wall_s": wall, "output_tail": self.tail(out)}
        calls = []
        if os.path.exists(rfile):
            with open(rfile) as f:
                d = json.load(f)
            res["version"] = d.get("version")
            calls = d.get("calls", [])
        return res, calls

    def kt_script(self, script, workdir):
        return self.kt_child("kt_script_child", KT_SCRIPT_CHILD, workdir,
                             {"script": script, "max_calls": self.args.max_calls})

    def kt_t1(self, t1, workdir):
        return self.kt_child("kt_t1_child", KT_T1_CHILD, workdir, {"t1": t1})

    def compare(self, case, t1, label, ours, theirs):
        """Fills the comparison fields of one tuned kernel."""
        case["cutune"] = ours
        case["kernel_tuner"] = theirs
        if ours.get("winner") and theirs.get("best_config"):
            case["remeasure"] = self.remeasure(t1, label, ours["winner"], theirs["best_config"])
        derive(case)

    def script_case(self, name):
        workdir = os.path.join(self.tmp, f"kt_{name}")
        # The script and the kernels beside it, copied: scripts write files next to themselves.
        shutil.copytree(os.path.join(MATERIAL, "kernel_tuner_examples"), workdir)
        script = os.path.join(workdir, f"{name}.py")
        entry = {"case": f"kernel_tuner_examples/{name}"}
        self.doc["cases"].append(entry)
        kt, kt_calls = self.kernel_tuner_side(entry["case"], lambda: self.kt_script(script, workdir))
        entry["kernel_tuner_run"] = kt
        entry["kernel_tuner_calls"] = kt_calls
        self.dump()
        if self.args.kt_only:
            return
        cap, calls = self.capture(script, workdir)
        entry["capture"] = cap
        self.dump()
        tunes = [c for c in calls if c.get("kind", "tune_kernel") == "tune_kernel"][:self.args.max_calls]
        entry["kernels"] = []
        for i, c in enumerate(tunes):
            t1 = c.get("t1")
            if t1 and not os.path.isabs(t1):
                t1 = os.path.join(cap["dir"], t1)
            k = {"kernel_name": c.get("kernel_name"), "t1": os.path.relpath(t1, workdir) if t1 else None}
            entry["kernels"].append(k)
            theirs = next((x for x in kt_calls if x.get("index") == i), {})
            if not t1 or not os.path.exists(t1):
                k["error"] = "capture wrote no T1 file"
                continue
            ours = self.cutune_tune(t1, f"{name}_{i}", theirs.get("space_valid"))
            self.compare(k, t1, f"{name}_{i}", ours, theirs)
            self.dump()
        if not tunes:
            entry["kernels"].append({"error": "no tune_kernel call captured", "kernel_tuner": kt_calls})

    def bat_case(self, name):
        src = os.path.join(MATERIAL, "bat", name)
        workdir = os.path.join(self.tmp, f"bat_{name}")
        shutil.copytree(src, workdir)
        files = sorted(glob.glob(os.path.join(workdir, "*-CAFF.json")))
        entry = {"case": f"bat/{name}", "kernels": []}
        self.doc["cases"].append(entry)
        for t1 in files:
            k = {"t1": os.path.basename(t1)}
            entry["kernels"].append(k)
            kt, kt_calls = self.kernel_tuner_side(entry["case"], lambda: self.kt_t1(t1, workdir))
            k["kernel_tuner_run"] = kt
            k["kernel_tuner_calls"] = kt_calls
            theirs = kt_calls[0] if kt_calls else {}
            if self.args.kt_only:
                self.dump()
                continue
            k["cutune_space"] = self.cutune_space(t1)
            ours = self.cutune_tune(t1, f"bat_{name}", theirs.get("space_valid"))
            self.compare(k, t1, f"bat_{name}", ours, theirs)
            self.dump()

    def main(self):
        os.makedirs(self.args.out, exist_ok=True)
        for step in (self.device, self.kt_install):
            if step == self.kt_install and self.args.skip_kt:
                continue
            try:
                step()
            except Exception as e:
                self.doc.setdefault("setup_errors", []).append(f"{type(e).__name__}: {e}")
        wanted = self.args.cases.split(",") if self.args.cases else \
            KT_SCRIPTS + [f"bat/{b}" for b in BAT_CASES]
        for c in wanted:
            t = time.perf_counter()
            try:
                if c.startswith("bat/"):
                    self.bat_case(c[4:])
                else:
                    self.script_case(c)
            except Exception as e:
                self.doc["cases"].append({"case": c, "error": f"{type(e).__name__}: {e}",
                                          "trace": traceback.format_exc()[-2000:]})
            self.doc["cases"][-1]["case_wall_s"] = time.perf_counter() - t
            self.dump()
        self.table()

    def table(self):
        print(f"{'case':44} {'valid c/kt':>12} {'tried c/kt':>12} {'best c/kt ms':>20} {'remeasured c/kt ms':>22} {'ratio':>6} {'pace':>6}")
        for c in self.doc["cases"]:
            for k in c.get("kernels", [{}]):
                ours, theirs = k.get("cutune", {}), k.get("kernel_tuner", {})
                rm = {w: (k.get("remeasured") or {}).get(w, {}).get("median_ms")
                      for w in ("cutune_winner", "kernel_tuner_winner")}
                fmt = lambda v: f"{v:.4f}" if isinstance(v, (int, float)) else "-"
                print(f"{(c['case'] + ':' + str(k.get('kernel_name') or k.get('t1') or '')):44} "
                      f"{str(ours.get('space_valid'))+'/'+str(theirs.get('space_valid')):>12} "
                      f"{str(ours.get('configs_tried'))+'/'+str(theirs.get('tried')):>12} "
                      f"{fmt(ours.get('winner_ms'))+'/'+fmt(theirs.get('best_ms')):>20} "
                      f"{fmt(rm.get('cutune_winner'))+'/'+fmt(rm.get('kernel_tuner_winner')):>22} "
                      f"{fmt(k.get('ratio_kt_over_cutune')):>6} {fmt(k.get('pace_ratio')):>6}")


def summarize(args):
    bench = Bench.__new__(Bench)
    bench.args = args
    merged, runs = {}, []
    for path in args.summarize:
        with open(path) as f:
            d = json.load(f)
        runs.append({k: d.get(k) for k in ("date", "command", "gpu", "devices", "budget_s", "kernel_tuner_recorded")})
        for c in d.get("cases", []):
            merged[c["case"]] = c
    bench.doc = {"runs": runs, "cases": list(merged.values())}
    for c in bench.doc["cases"]:
        for k in c.get("kernels", []):
            derive(k)
    totals = {"kernels": 0, "compared": 0, "cutune_at_least_as_fast": 0, "kernel_tuner_winner_fails": 0}
    paces = []
    for c in bench.doc["cases"]:
        for k in c.get("kernels", []):
            totals["kernels"] += 1
            if "cutune_at_least_as_fast" in k:
                totals["compared"] += 1
                totals["cutune_at_least_as_fast"] += bool(k["cutune_at_least_as_fast"])
            if k.get("kernel_tuner_winner_runs") is False:
                totals["kernel_tuner_winner_fails"] += 1
            if k.get("pace_ratio"):
                paces.append(k["pace_ratio"])
    if paces:
        paces.sort()
        totals["pace_ratio_median"] = paces[len(paces) // 2]
        totals["pace_ratio_min"] = paces[0]
    bench.doc["totals"] = totals
    os.makedirs(args.out, exist_ok=True)
    bench.dump()
    bench.table()
    print(json.dumps(totals))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(REPO, ".gpu", "bin"), help="folder with cutune and cutune-worker")
    ap.add_argument("--out", required=True)
    ap.add_argument("--wheels", default=os.path.join(REPO, ".kt-wheels"))
    ap.add_argument("--budget", type=float, default=30.0, help="wall-time budget per tool and kernel, seconds")
    ap.add_argument("--strategy", default=None, help="cutune's strategy (default: its default)")
    ap.add_argument("--kt-strategy", default="random_sample",
                    help="Kernel Tuner's strategy for spaces too large for brute force (BAT's choice for it)")
    ap.add_argument("--brute-force-below", type=int, default=200,
                    help="both tools use brute force when Kernel Tuner's valid space is at most this")
    ap.add_argument("--cases", default=None, help="comma-separated: script names and bat/NAME")
    ap.add_argument("--max-calls", type=int, default=2, help="tune_kernel calls of one script compared (reduction has 11)")
    ap.add_argument("--skip-kt", action="store_true")
    ap.add_argument("--kt-site", default=None, help="use this site-packages folder with Kernel Tuner instead of --wheels")
    ap.add_argument("--kt-only", action="store_true", help="run Kernel Tuner's side only")
    ap.add_argument("--kt-results", default=None,
                    help="real_kernels.json of an earlier --kt-only run on the same GPU: its Kernel Tuner side is used")
    ap.add_argument("--material", default=None, help="the real_kernels folder (default: ../shared/data/real_kernels)")
    ap.add_argument("--summarize", nargs="+", default=None, metavar="JSON",
                    help="no GPU work: merge these real_kernels.json files (a later one's case replaces an "
                         "earlier one's), recompute the comparison figures, write OUT/real_kernels.json")
    args = ap.parse_args()
    if args.summarize:
        summarize(args)
        return
    args.bin = os.path.abspath(args.bin)
    args.out = os.path.abspath(args.out)
    args.wheels = os.path.abspath(args.wheels)
    if args.material:
        globals()["MATERIAL"] = os.path.abspath(args.material)
    Bench(args).main()


if __name__ == "__main__":
    main()
