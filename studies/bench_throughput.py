#!/usr/bin/env python3
"""The throughput benchmark, run on the lent GPU: writes OUT/throughput.json with

  headline:        cutune against Kernel Tuner on the same GPU and the same space (the reduction
                   template restricted to one kernel launch, bench/throughput/reduction_single.json,
                   brute force, 7 timed launches per configuration, verification on in both):
                   {configs, cutune_wall_s, kernel_tuner_wall_s, speedup_vs_kernel_tuner,
                   overhead_ms_per_config}, cutune with a cold compile cache;
  warm_cache:      the same cutune session again on a fresh DB with the now warm compile cache
                   (and, unless --no-kt-warm, Kernel Tuner again with its warm driver JIT cache);
  compile_scaling: `cutune compile --all --no-cache` in configurations per second with
                   1, 2, 4, 8 and 16 workers, as processes and as threads.

Python only orchestrates the cutune binary and a Kernel Tuner child process; Kernel Tuner is
installed from wheels carried in --wheels (scripts/fetch_kt_wheels.sh) into a private folder.
Every step is guarded: an error is recorded in the JSON and the next step runs; the JSON is
rewritten after every step, so a timeout keeps what was done.

Usage: python3 -m studies.bench_throughput --bin .gpu/bin --out $OUT --wheels .kt-wheels
       [--n 2**26] [--workers 1,2,4,8,16] [--modes process,thread] [--skip-kt] [--skip-tune]
       [--skip-compile] [--no-kt-warm] [--l2 cold|flush|warm] [--kt-space-only]
"""
import argparse
import datetime
import glob
import itertools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SPEC = os.path.join(REPO, "bench", "throughput", "reduction_single.json")
TIMED_LAUNCHES = 7  # Kernel Tuner's default iterations; cutune gets --samples 7 --screening-min 7

# The Kernel Tuner child: imports are timed apart from tune_kernel itself. Every module that
# tune_kernel would import lazily is imported first, so that tune_s holds no import at all.
KT_CHILD = r'''
import json, sys, time
T0 = time.perf_counter()
import numpy as np
import kernel_tuner
from kernel_tuner import tune_kernel
import kernel_tuner.backends.nvcuda, kernel_tuner.runners.sequential, kernel_tuner.searchspace
import kernel_tuner.strategies.brute_force
import_s = time.perf_counter() - T0

p = json.load(open(sys.argv[1]))
out_path = sys.argv[2]
tune_params = {name: values for name, values in p["tune_params"]}
restrictions = p["restrictions"]
doc = {"version": kernel_tuner.__version__, "import_s": import_s, "kernel_tuner_file": kernel_tuner.__file__}

def dump():
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o))

if p["mode"] == "space":
    from kernel_tuner.searchspace import Searchspace
    t = time.perf_counter()
    ss = Searchspace(tune_params, restrictions, 1024)
    doc["space_s"] = time.perf_counter() - t
    doc["space_size"] = ss.size
    doc["space_first"] = [list(c) for c in ss.list[:3]]
    dump()
    sys.exit(0)

n = p["n"]
t = time.perf_counter()
rng = np.random.default_rng(p["seed"])
x = rng.random(n, dtype=np.float32)  # uniform [0, 1), as cutune's FillType Random
expected = float(np.sum(x, dtype=np.float64))
# Arguments in the JSON's order: out, in, workspace, counter, n.
args = [np.zeros(1, dtype=np.float32), x, np.zeros((n + 31) // 32, dtype=np.float32),
        np.zeros(1, dtype=np.uint32), np.int32(n)]
answer = [np.array([expected], dtype=np.float32), None, None, None, None]
atol = 1e-4 * abs(expected) + 1e-3
doc.update(setup_s=time.perf_counter() - t, expected_sum=expected, atol=atol)
dump()

call = dict(grid_div_x=p["grid_div_x"], restrictions=restrictions, answer=answer, atol=atol,
            lang=p["lang"], compiler_options=p["compiler_options"], iterations=p["iterations"],
            strategy="brute_force", verbose=False, quiet=True)
doc["call"] = {k: (v if k != "answer" else "[expected_sum (float32), None, None, None, None]")
               for k, v in call.items()}
t = time.perf_counter()
try:
    results, env = tune_kernel(p["kernel_name"], p["kernel_file"], n, args, tune_params, **call)
except BaseException as e:
    doc["tune_s"] = time.perf_counter() - t
    doc["error"] = f"{type(e).__name__}: {e}"
    dump()
    raise
doc["tune_s"] = time.perf_counter() - t

def numeric(v):
    return isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, (bool, str))

def error_of(r):  # Kernel Tuner 1.5 keeps an ErrorConfig under "__error__"; older ones in "time"
    if "__error__" in r:
        return type(r["__error__"]).__name__
    return None if numeric(r.get("time")) else type(r.get("time")).__name__

ok = [r for r in results if error_of(r) is None]
failed = [r for r in results if error_of(r) is not None]
kinds = {}
for r in failed:
    kinds[error_of(r)] = kinds.get(error_of(r), 0) + 1
doc["evaluated"] = len(results)
doc["failed"] = len(failed)
doc["failures_by_kind"] = kinds
if ok:
    best = min(ok, key=lambda r: r["time"])
    doc["best_ms"] = float(best["time"])
    doc["best_config"] = {k: best[k] for k in tune_params}
# Kernel Tuner's own per-configuration accounting (ms): compile, verification, benchmark,
# framework and strategy time; the timed launches are the sum of each result's "times".
parts = {}
for key in ("compile_time", "verification_time", "benchmark_time", "framework_time", "strategy_time"):
    vals = sorted(float(r[key]) for r in results if numeric(r.get(key)))
    if vals:
        parts[key] = {"sum_ms": sum(vals), "median_ms": vals[len(vals) // 2]}
doc["time_parts"] = parts
doc["timed_ms_total"] = sum(float(sum(r["times"])) for r in ok if isinstance(r.get("times"), (list, tuple)))
doc["env"] = {k: env.get(k) for k in ("device_name", "cuda_version", "compute_capability", "iterations",
                                       "compiler_options", "kernel_tuner_version") if isinstance(env, dict)}
doc["rows"] = [{**{k: r.get(k) for k in tune_params},
                "time": r.get("time") if error_of(r) is None else error_of(r),
                "compile_time": r.get("compile_time"), "verification_time": r.get("verification_time"),
                "benchmark_time": r.get("benchmark_time"), "framework_time": r.get("framework_time")}
               for r in results]
dump()
'''


class Bench:
    def __init__(self, args):
        self.args = args
        self.cutune = os.path.join(args.bin, "cutune")
        self.spec = os.path.abspath(args.spec)
        self.tmp = tempfile.mkdtemp(prefix="cutune-throughput-")
        os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
        self.log = open(os.path.join(args.out, "logs", "throughput.log"), "a")
        self.doc = {
            "benchmark": "throughput",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "script_command": shlex.join([sys.executable] + sys.argv),
            "spec": os.path.relpath(self.spec, REPO),
            "problem": {"n": args.n},
            "timed_launches_per_config": TIMED_LAUNCHES,
            "commands": [],
            "errors": {},
            "notes": [],
        }
        self.kt_rows = {}

    # ---- plumbing -------------------------------------------------------------------------

    def save(self):
        path = os.path.join(self.args.out, "throughput.json")
        with open(path + ".tmp", "w") as f:
            json.dump(self.doc, f, indent=2, default=str)
            f.write("\n")
        os.replace(path + ".tmp", path)
        if self.kt_rows:
            with open(os.path.join(self.args.out, "kernel_tuner_results.json"), "w") as f:
                json.dump(self.kt_rows, f, default=str)

    def run(self, cmd, timeout, env=None, record=True):
        """Runs cmd in its own process group (killed whole on timeout), logs its output, returns
        (returncode or None on timeout, output, wall seconds)."""
        text = shlex.join(cmd)
        if record:
            self.doc["commands"].append(text)
        self.log.write(f"\n$ {text}\n")
        self.log.flush()
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                             cwd=REPO, start_new_session=True)
        try:
            out, _ = p.communicate(timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # the child and the workers it forked
            except ProcessLookupError:
                pass
            out, _ = p.communicate()
            rc = None
        wall = time.perf_counter() - t
        self.log.write(out or "")
        self.log.write(f"[exit {rc if rc is not None else 'TIMEOUT after %ss' % timeout}, {wall:.3f} s]\n")
        self.log.flush()
        return rc, out or "", wall

    def step(self, name, fn):
        try:
            fn()
        except Exception as e:
            self.doc["errors"][name] = f"{type(e).__name__}: {e}"
            self.log.write(f"\n[step {name} failed]\n{traceback.format_exc()}\n")
            self.log.flush()
            print(f"step {name} failed: {e}", file=sys.stderr)
        self.save()

    @staticmethod
    def tail(out, lines=3):
        return " | ".join(l for l in out.strip().splitlines()[-lines:])

    # ---- the space ----------------------------------------------------------------------

    def load_spec(self):
        with open(self.spec) as f:
            spec = json.load(f)
        self.tune_params = []
        for prm in spec["ConfigurationSpace"]["TuningParameters"]:
            values = prm["Values"]
            if isinstance(values, str):
                values = eval(values, {"__builtins__": {}}, {})  # Python list expressions
            self.tune_params.append((prm["Name"], list(values)))
        self.restrictions = [c["Expression"] for c in spec["ConfigurationSpace"].get("Conditions", [])]
        ks = spec["KernelSpecification"]
        self.kernel_name = ks["KernelName"]
        self.kernel_file = os.path.normpath(os.path.join(os.path.dirname(self.spec), ks["KernelFile"]))
        self.grid_div_x = ks.get("GridDivX", [])
        self.compiler_options = ks.get("CompilerOptions", [])
        if not os.path.exists(self.kernel_file):
            raise FileNotFoundError(self.kernel_file)

    def space(self):
        self.load_spec()
        names = [n for n, _ in self.tune_params]
        codes = [compile(r, "<restriction>", "eval") for r in self.restrictions]
        valid = 0
        total = 0
        for combo in itertools.product(*[v for _, v in self.tune_params]):
            total += 1
            env = dict(zip(names, combo))
            if all(eval(c, {"__builtins__": {}}, env) for c in codes):
                valid += 1
        sp = {"tune_params": dict(self.tune_params), "restrictions": self.restrictions,
              "cartesian": total, "valid_python": valid, "kernel_file": os.path.relpath(self.kernel_file, REPO)}
        self.doc["space"] = sp
        rc, out, _ = self.run([self.cutune, "space", self.spec, "--problem", f"n={self.args.n}", "--show", "0"], 60)
        m = re.search(r"valid size:\s*(\d+)", out)
        sp["valid_cutune"] = int(m.group(1)) if m else None
        if rc != 0 or m is None:
            raise RuntimeError(f"cutune space exited {rc}: {self.tail(out)}")
        if sp["valid_cutune"] != valid:
            self.doc["notes"].append(f"space mismatch: cutune {sp['valid_cutune']}, Python {valid}")

    def device(self):
        rc, out, _ = self.run([self.cutune, "devices", "--json"], 60)
        try:
            d = json.loads(out[out.index("{"):])
            devs = d.get("devices") or []
            self.doc["device"] = devs[0] if devs else d
        except (ValueError, KeyError, TypeError):
            self.doc["device"] = out.strip()[-2000:]
        try:
            q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem,"
                                "temperature.gpu,power.draw", "--format=csv,noheader"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
            self.doc["nvidia_smi"] = q.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass

    # ---- cutune tune (cold, then warm) ---------------------------------------------------

    REPORT_KEYS = ("configs_tried", "configs_resumed", "configs_failed", "space_valid", "winner", "winner_ms",
                   "default_ms", "timed_ms_total", "compile_ms_total", "compiled", "cache_hits", "wall_s",
                   "time_breakdown", "compile_ms_median",
                   "verification", "l2", "screening_samples_max", "failures_by_status", "cost", "copy_gbps",
                   "aborted", "gbps", "compile_workers", "compile_mode", "shared_compiles", "gpu_worker_restarts")

    def cutune_tune(self, label, cache_dir, l2=None):
        db = os.path.join(self.tmp, f"{label}.db")
        report = os.path.join(self.tmp, f"cutune_{label}_report.json")
        for p in glob.glob(db + "*") + [report]:
            if os.path.exists(p):
                os.remove(p)
        cmd = [self.cutune, "tune", self.spec, "--problem", f"n={self.args.n}", "--strategy", "brute_force",
               "--samples", str(TIMED_LAUNCHES), "--screening-min", str(TIMED_LAUNCHES), "--finalists", "0",
               "--db", db, "--cache-dir", cache_dir, "--report", report]
        if l2 or self.args.l2:
            cmd += ["--l2", l2 or self.args.l2]
        rc, out, wall = self.run(cmd, self.args.tune_timeout)
        res = {"wall_s": wall, "exit": rc}
        self.doc["cutune"][label] = res
        if os.path.exists(report):
            with open(report) as f:
                r = json.load(f)
            shutil.copy(report, os.path.join(self.args.out, f"cutune_{label}_report.json"))
            res["report"] = {k: r[k] for k in self.REPORT_KEYS if k in r}
        if rc != 0:
            raise RuntimeError(f"cutune tune ({label}) exited {rc}: {self.tail(out)}")
        if "report" not in res:
            raise RuntimeError(f"cutune tune ({label}) wrote no report")
        return res

    @staticmethod
    def overhead(wall_s, report, configs):
        t = report.get("timed_ms_total")
        if not isinstance(t, (int, float)) or not configs:
            return None
        return (wall_s * 1000.0 - t) / configs

    @staticmethod
    def steady_overhead(report, configs):
        # The search loop only (start-up and shutdown excluded): what each further
        # configuration costs beyond its timed launches. search_ms is the loop's wall time
        # (its parts overlap: the previous result is stored while the next one is measured).
        tb, t = report.get("time_breakdown") or {}, report.get("timed_ms_total")
        if not configs or not isinstance(t, (int, float)):
            return None
        if "search_ms" in tb:
            return (tb["search_ms"] - t) / configs
        keys = ("compile_wait_ms", "evaluate_ms", "store_ms")  # reports before search_ms
        if not all(k in tb for k in keys):
            return None
        return (sum(tb[k] for k in keys) - t) / configs

    @staticmethod
    def process_phases(wall_s, report):
        # Where the process's wall time goes outside the tuning itself: before
        # tune() (loading, parsing), the tuning (report wall_s), and after the report (exit).
        tb = report.get("time_breakdown") or {}
        before, at_report = tb.get("process_before_tune_s"), tb.get("process_at_report_s")
        if not isinstance(before, (int, float)) or not isinstance(at_report, (int, float)) or before < 0:
            return None
        return {"before_tune_s": before, "tune_s": report.get("wall_s"), "at_report_s": at_report,
                "after_report_s": wall_s - at_report,
                "note": "from /proc/self/stat's start time (10 ms ticks) and the process wall time"}

    def tune_cold(self):
        self.doc.setdefault("cutune", {})
        self.cache_dir = os.path.join(self.tmp, "cutune-cache")
        shutil.rmtree(self.cache_dir, ignore_errors=True)
        os.makedirs(self.cache_dir)
        res = self.cutune_tune("cold", self.cache_dir)
        rep = res["report"]
        configs = rep.get("configs_tried") or rep.get("space_valid") or self.doc.get("space", {}).get("valid_python")
        self.doc["configs"] = configs
        self.doc["cutune_wall_s"] = res["wall_s"]
        self.doc["overhead_ms_per_config"] = self.overhead(res["wall_s"], rep, configs)
        self.doc["steady_overhead_ms_per_config"] = self.steady_overhead(rep, configs)
        self.doc["startup_s"] = (rep.get("time_breakdown") or {}).get("startup_s")
        self.doc["process_phases"] = self.process_phases(res["wall_s"], rep)
        if self.doc["overhead_ms_per_config"] is None:
            self.doc["notes"].append("overhead_ms_per_config: the report has no timed_ms_total")
        self.headline()

    def tune_warm(self):
        if not getattr(self, "cache_dir", None) or not os.path.isdir(self.cache_dir):
            raise RuntimeError("no cold cache directory (the cold run failed)")
        res = self.cutune_tune("warm", self.cache_dir)
        rep = res["report"]
        configs = rep.get("configs_tried") or self.doc.get("configs")
        w = self.doc.setdefault("warm_cache", {})
        w.update(configs=configs, cutune_wall_s=res["wall_s"],
                 overhead_ms_per_config=self.overhead(res["wall_s"], rep, configs),
                 steady_overhead_ms_per_config=self.steady_overhead(rep, configs),
                 process_phases=self.process_phases(res["wall_s"], rep),
                 compiled=rep.get("compiled"), cache_hits=rep.get("cache_hits"))
        self.headline()

    def tune_cold_l2_warm(self):
        # Kernel Tuner's way of timing (back to back on warm data: no L2 flush, no rotation),
        # cold compile cache: the overhead of cutune itself without the cold-L2 measurement.
        cache = os.path.join(self.tmp, "cutune-cache-l2warm")
        shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(cache)
        res = self.cutune_tune("cold_l2warm", cache, l2="warm")
        rep = res["report"]
        configs = rep.get("configs_tried") or self.doc.get("configs")
        self.doc["l2_warm"] = {
            "configs": configs, "cutune_wall_s": res["wall_s"],
            "overhead_ms_per_config": self.overhead(res["wall_s"], rep, configs),
            "steady_overhead_ms_per_config": self.steady_overhead(rep, configs),
            "speedup_vs_kernel_tuner": (self.doc["kernel_tuner_wall_s"] / res["wall_s"])
            if self.doc.get("kernel_tuner_wall_s") else None,
        }

    # ---- Kernel Tuner --------------------------------------------------------------------

    def kt_install(self):
        wheels = sorted(glob.glob(os.path.join(self.args.wheels, "*.whl")))
        if not wheels:
            raise FileNotFoundError(f"no wheels in {self.args.wheels} (run scripts/fetch_kt_wheels.sh)")
        self.kt_site = os.path.join(self.tmp, "kt-site")
        # Compiled to bytecode at install time, so no .py is compiled inside Kernel Tuner's timing.
        cmd = [self.args.python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-index",
               "--no-deps", "--no-cache-dir", "--upgrade", "--target", self.kt_site] + wheels
        rc, out, wall = self.run(cmd, 300)
        self.doc.setdefault("kernel_tuner", {})["install_s"] = wall
        if rc != 0:
            raise RuntimeError(f"pip install exited {rc}: {self.tail(out)}")

    def kt_child(self, label, mode, jit_cache):
        params = {"mode": mode, "n": self.args.n, "seed": self.args.seed, "kernel_name": self.kernel_name,
                  "kernel_file": self.kernel_file, "tune_params": self.tune_params,
                  "restrictions": self.restrictions, "grid_div_x": self.grid_div_x,
                  "compiler_options": self.compiler_options, "iterations": TIMED_LAUNCHES,
                  "lang": "NVCUDA"}
        script = os.path.join(self.tmp, "kt_child.py")
        with open(script, "w") as f:
            f.write(KT_CHILD)
        pfile = os.path.join(self.tmp, f"kt_{label}_params.json")
        rfile = os.path.join(self.tmp, f"kt_{label}_result.json")
        with open(pfile, "w") as f:
            json.dump(params, f)
        if os.path.exists(rfile):
            os.remove(rfile)
        env = dict(os.environ)
        env["PYTHONPATH"] = self.kt_site + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        # Kernel Tuner loads PTX: the driver JITs it and keeps the result in its compute cache.
        # A private cache folder, empty for the cold run, makes the cold figure cold.
        env["CUDA_CACHE_PATH"] = jit_cache
        env.pop("CUDA_CACHE_DISABLE", None)
        rc, out, wall = self.run([self.args.python, script, pfile, rfile], self.args.kt_timeout, env=env)
        res = {}
        if os.path.exists(rfile):
            with open(rfile) as f:
                res = json.load(f)
        res["process_wall_s"] = wall
        res["exit"] = rc
        if rc != 0:
            res.setdefault("error", f"exited {rc}: {self.tail(out)}")
        return res

    def kt_space(self):
        self.load_spec()
        self.kt_install()
        res = self.kt_child("space", "space", os.path.join(self.tmp, "kt-jit-cache"))
        self.doc.setdefault("space", {})["valid_kernel_tuner"] = res.get("space_size")
        self.doc.setdefault("kernel_tuner", {})["version"] = res.get("version")
        if res.get("exit") != 0:
            raise RuntimeError(res.get("error"))

    def kt_tune(self, label):
        if label == "cold":
            self.load_spec()
            self.kt_install()
            self.kt_jit = os.path.join(self.tmp, "kt-jit-cache")
            shutil.rmtree(self.kt_jit, ignore_errors=True)
            os.makedirs(self.kt_jit)
        res = self.kt_child(label, "tune", self.kt_jit)
        rows = res.pop("rows", None)
        if rows is not None:
            self.kt_rows[label] = rows
        kt = self.doc.setdefault("kernel_tuner", {})
        summary = {k: res.get(k) for k in ("best_ms", "best_config", "evaluated", "failed", "failures_by_kind",
                                           "tune_s", "import_s", "setup_s", "process_wall_s", "version",
                                           "timed_ms_total", "time_parts", "expected_sum", "atol", "env",
                                           "exit", "error") if k in res}
        if isinstance(res.get("tune_s"), (int, float)) and res.get("evaluated"):
            summary["overhead_ms_per_config"] = (res["tune_s"] * 1000.0 - res.get("timed_ms_total", 0.0)) / \
                res["evaluated"]
        if label == "cold":
            kt.update(summary)
            kt["call"] = res.get("call")
            if res.get("exit") == 0 and "tune_s" in res:
                self.doc["kernel_tuner_wall_s"] = res["tune_s"]
                self.doc["kernel_tuner_process_wall_s"] = res["process_wall_s"]
        else:
            kt["warm_jit_cache"] = summary
            if res.get("exit") == 0 and "tune_s" in res:
                self.doc.setdefault("warm_cache", {})["kernel_tuner_wall_s"] = res["tune_s"]
        self.headline()
        if res.get("exit") != 0:
            raise RuntimeError(res.get("error"))

    # ---- compile scaling -----------------------------------------------------------------

    def compile_scaling(self):
        rows = self.doc.setdefault("compile_scaling", [])
        workers = [int(w) for w in self.args.workers.split(",") if w.strip()]
        modes = [m.strip() for m in self.args.modes.split(",") if m.strip()]
        failures = 0
        for mode in modes:
            for w in workers:
                f = os.path.join(self.tmp, f"compile_{mode}_{w}.json")
                if os.path.exists(f):
                    os.remove(f)
                cmd = [self.cutune, "compile", self.spec, "--all", "--workers", str(w), "--mode", mode,
                       "--no-cache", "--quiet", "--json", f]
                if self.args.arch:
                    cmd += ["--arch", self.args.arch]
                rc, out, wall = self.run(cmd, self.args.compile_timeout)
                row = {"mode": mode, "workers": w, "exit": rc, "process_wall_s": wall}
                try:
                    with open(f) as fh:
                        j = json.load(fh)
                    row["configs"] = j.get("configs")
                    row["unique_compiles"] = j.get("unique_compiles")
                    row["wall_s"] = j.get("wall_s", wall)
                    cps = j.get("configs_per_s")
                    if cps is None and row["configs"] and row["wall_s"]:
                        cps = row["configs"] / row["wall_s"]
                    row["configs_per_s"] = cps
                    for k in ("failed", "cache_hits", "shared", "compile_ms_mean", "arch"):
                        if k in j:
                            row[k] = j[k]
                    if j.get("mode", mode) != mode or j.get("workers", w) != w:
                        row["reported"] = {"mode": j.get("mode"), "workers": j.get("workers")}
                except (OSError, ValueError, AttributeError) as e:
                    row["error"] = f"no JSON ({type(e).__name__}); {self.tail(out)}"
                if rc != 0:
                    row.setdefault("error", self.tail(out))
                    failures += 1
                rows.append(row)
                self.save()
        if failures:
            raise RuntimeError(f"{failures} of {len(rows)} compile runs failed (see compile_scaling rows)")

    # ---- summary -------------------------------------------------------------------------

    def headline(self):
        d = self.doc
        if d.get("cutune_wall_s") and d.get("kernel_tuner_wall_s"):
            d["speedup_vs_kernel_tuner"] = d["kernel_tuner_wall_s"] / d["cutune_wall_s"]
            d["speedup_vs_kernel_tuner_process"] = d.get("kernel_tuner_process_wall_s", 0) / d["cutune_wall_s"]
        w = d.get("warm_cache", {})
        if w.get("cutune_wall_s"):
            if d.get("kernel_tuner_wall_s"):
                w["speedup_vs_kernel_tuner"] = d["kernel_tuner_wall_s"] / w["cutune_wall_s"]
            if w.get("kernel_tuner_wall_s"):
                w["speedup_vs_kernel_tuner_warm"] = w["kernel_tuner_wall_s"] / w["cutune_wall_s"]

    def table(self):
        d = self.doc

        def f(v, fmt="{:.3f}"):
            return fmt.format(v) if isinstance(v, (int, float)) else "-"

        kt = d.get("kernel_tuner", {})
        cold = d.get("cutune", {}).get("cold", {}).get("report", {})
        warm = d.get("cutune", {}).get("warm", {}).get("report", {})
        w = d.get("warm_cache", {})
        sp = d.get("space", {})
        lines = [
            "",
            f"space: cutune {sp.get('valid_cutune')}, Python {sp.get('valid_python')}, "
            f"Kernel Tuner {sp.get('valid_kernel_tuner', '-')} valid of {sp.get('cartesian')}; n = {self.args.n}",
            f"{'':36}{'wall s':>9}{'configs':>9}{'failed':>8}{'best ms':>10}{'ovh ms/cfg':>12}{'speedup':>9}",
            f"{'cutune, cold compile cache':36}{f(d.get('cutune_wall_s')):>9}{f(cold.get('configs_tried'), '{}'):>9}"
            f"{f(cold.get('configs_failed'), '{}'):>8}{f(cold.get('winner_ms'), '{:.4f}'):>10}"
            f"{f(d.get('overhead_ms_per_config'), '{:.2f}'):>12}{f(d.get('speedup_vs_kernel_tuner'), '{:.1f}x'):>9}",
            f"{'cutune, warm compile cache':36}{f(w.get('cutune_wall_s')):>9}{f(warm.get('configs_tried'), '{}'):>9}"
            f"{f(warm.get('configs_failed'), '{}'):>8}{f(warm.get('winner_ms'), '{:.4f}'):>10}"
            f"{f(w.get('overhead_ms_per_config'), '{:.2f}'):>12}{f(w.get('speedup_vs_kernel_tuner'), '{:.1f}x'):>9}",
            f"{'Kernel Tuner ' + str(kt.get('version', '')) + ' tune_kernel':36}{f(d.get('kernel_tuner_wall_s')):>9}"
            f"{f(kt.get('evaluated'), '{}'):>9}{f(kt.get('failed'), '{}'):>8}{f(kt.get('best_ms'), '{:.4f}'):>10}"
            f"{f(kt.get('overhead_ms_per_config'), '{:.2f}'):>12}{'1.0x':>9}",
            f"{'Kernel Tuner, whole process':36}{f(kt.get('process_wall_s')):>9}",
        ]
        lw = d.get("l2_warm", {})
        lwr = d.get("cutune", {}).get("cold_l2warm", {}).get("report", {})
        if lw:
            lines.append(f"{'cutune, cold cache, --l2 warm':36}{f(lw.get('cutune_wall_s')):>9}"
                         f"{f(lwr.get('configs_tried'), '{}'):>9}{f(lwr.get('configs_failed'), '{}'):>8}"
                         f"{f(lwr.get('winner_ms'), '{:.4f}'):>10}{f(lw.get('overhead_ms_per_config'), '{:.2f}'):>12}"
                         f"{f(lw.get('speedup_vs_kernel_tuner'), '{:.1f}x'):>9}")
        steady = [d.get("steady_overhead_ms_per_config"), w.get("steady_overhead_ms_per_config"),
                  lw.get("steady_overhead_ms_per_config")]
        lines.append("steady-state overhead ms/config (search loop only): cold {}, warm cache {}, --l2 warm {}".format(
            *(f(v, '{:.2f}') for v in steady)))
        ktw = kt.get("warm_jit_cache", {})
        if ktw:
            lines.append(f"{'Kernel Tuner, warm driver JIT cache':36}{f(ktw.get('tune_s')):>9}"
                         f"{f(ktw.get('evaluated'), '{}'):>9}{f(ktw.get('failed'), '{}'):>8}"
                         f"{f(ktw.get('best_ms'), '{:.4f}'):>10}{f(ktw.get('overhead_ms_per_config'), '{:.2f}'):>12}")
        rows = d.get("compile_scaling", [])
        if rows:
            lines.append("")
            lines.append(f"compile scaling (--all --no-cache): {'mode':>8}{'workers':>9}{'configs':>9}"
                         f"{'wall s':>9}{'configs/s':>11}")
            for r in rows:
                lines.append(f"{'':36}{r['mode']:>8}{r['workers']:>9}{f(r.get('configs'), '{}'):>9}"
                             f"{f(r.get('wall_s')):>9}{f(r.get('configs_per_s'), '{:.1f}'):>11}"
                             + ("  ERROR" if r.get("error") else ""))
        if d.get("errors"):
            lines.append("")
            lines += [f"error in {k}: {v}" for k, v in d["errors"].items()]
        print("\n".join(lines))


def parse_n(text):
    if not re.fullmatch(r"[0-9*+\-() ]+", text):
        raise argparse.ArgumentTypeError(f"--n {text!r}: an integer expression such as 2**26")
    n = int(eval(text, {"__builtins__": {}}, {}))
    if not 1 <= n <= 2**31 - 1:
        raise argparse.ArgumentTypeError(f"--n {text!r}: out of range")
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=".gpu/bin", help="folder holding the cutune binary")
    ap.add_argument("--out", required=True, help="output folder (throughput.json, logs/)")
    ap.add_argument("--wheels", default=".kt-wheels", help="Kernel Tuner wheels (scripts/fetch_kt_wheels.sh)")
    ap.add_argument("--spec", default=DEFAULT_SPEC, help="T1 JSON of the space")
    ap.add_argument("--n", type=parse_n, default=parse_n("2**26"), help="problem size, e.g. 2**26")
    ap.add_argument("--seed", type=int, default=1234, help="Kernel Tuner's input data seed")
    ap.add_argument("--workers", default="1,2,4,8,16")
    ap.add_argument("--modes", default="process,thread")
    ap.add_argument("--arch", default="", help="pass --arch to cutune compile (default: the GPU's)")
    ap.add_argument("--l2", default="", choices=["", "cold", "flush", "warm"],
                    help="pass --l2 to cutune tune (default: cutune's own default)")
    ap.add_argument("--python", default=sys.executable, help="Python for pip and the Kernel Tuner child")
    ap.add_argument("--skip-kt", action="store_true")
    ap.add_argument("--no-kt-warm", action="store_true", help="skip Kernel Tuner's second (warm JIT cache) run")
    ap.add_argument("--kt-space-only", action="store_true",
                    help="no GPU needed: install Kernel Tuner and count its search space only")
    ap.add_argument("--skip-tune", action="store_true", help="skip the cutune tune runs")
    ap.add_argument("--skip-compile", action="store_true", help="skip compile scaling")
    ap.add_argument("--kt-timeout", type=float, default=300)
    ap.add_argument("--tune-timeout", type=float, default=120)
    ap.add_argument("--compile-timeout", type=float, default=120)
    ap.add_argument("--keep-tmp", action="store_true")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    args.out = os.path.abspath(args.out)
    args.wheels = os.path.abspath(args.wheels)
    os.makedirs(args.out, exist_ok=True)

    b = Bench(args)
    b.doc["notes"] += [
        "kernel_tuner_wall_s is Kernel Tuner's tune_kernel call alone (the conservative choice): its Python "
        "imports (kernel_tuner and every module tune_kernel would import lazily), the input data and the "
        "expected sum are excluded; kernel_tuner_process_wall_s is its whole child process.",
        "cutune_wall_s is the whole cutune tune process (start-up, context, input data, reference, compiles, "
        "7 timed launches per configuration, verification, SQLite), with a fresh DB and an empty compile cache.",
        "Both: the same kernel source and space, brute force, 7 timed launches per configuration, every "
        "configuration verified against a reference sum (Kernel Tuner: answer= with atol 1e-4*|sum|+1e-3 plus "
        "np.allclose's rtol 1e-5; cutune: the JSON's Tolerance).",
        "Kernel Tuner loads PTX, which the driver JITs; its compute cache (CUDA_CACHE_PATH) is a fresh empty "
        "folder for the cold run and the same folder for the warm run. cutune loads cubins.",
        "overhead_ms_per_config = (wall_s * 1000 - timed_ms_total) / configs, timed_ms_total being the sum of "
        "all timed launches (cutune's report; for Kernel Tuner the sum of every result's 'times'). It includes "
        "start-up (context, input data, reference), amortised over the space. steady_overhead_ms_per_config is "
        "the search loop alone (waiting for compiles, GPU evaluations with their verification, warm-up, L2 "
        "flushes and clock probes, and SQLite commits, minus the timed launches): what each further "
        "configuration costs.",
        "Order: an OS warm-up (cutune compiles the whole space once without its cache, and one device query, so "
        "that neither tool pays for the machine's first NVRTC and driver use), then cutune cold, cutune warm, Kernel Tuner cold (and warm), compile "
        "scaling. 'Cold' means an empty compile cache (cutune's cubin cache, Kernel Tuner's driver JIT cache), "
        "not an empty OS page cache.",
    ]
    b.save()
    b.step("device", b.device)
    # The whole space, not one configuration: on a fresh lent machine the first NVRTC run of
    # many processes costs ~7x the CPU of later ones (H100, 2026-11-23: `compile --all
    # --no-cache` 5.3 s, then 1.15 s; results/nvidia-h100-80gb-hbm3/first_compile_fresh_machine.txt),
    # which the first tool timed would otherwise pay alone.
    b.step("os_warmup", lambda: b.run([b.cutune, "compile", args.spec, "--all", "--no-cache", "--quiet"], 120))
    b.step("space", b.space)
    if args.kt_space_only:
        b.step("kernel_tuner_space", b.kt_space)
    else:
        if not args.skip_tune:
            b.step("cutune_cold", b.tune_cold)
            b.step("cutune_warm", b.tune_warm)
        if not args.skip_kt:
            b.step("kernel_tuner_cold", lambda: b.kt_tune("cold"))
            if not args.no_kt_warm and b.doc.get("kernel_tuner_wall_s"):
                b.step("kernel_tuner_warm", lambda: b.kt_tune("warm"))
        if not args.skip_tune:
            b.step("cutune_cold_l2_warm", b.tune_cold_l2_warm)
        if not args.skip_compile:
            b.step("compile_scaling", b.compile_scaling)
    b.doc["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    b.save()
    b.table()
    b.log.close()
    if not args.keep_tmp:
        shutil.rmtree(b.tmp, ignore_errors=True)
    return 1 if b.doc["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
