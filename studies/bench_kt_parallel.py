#!/usr/bin/env python3
"""Brute force on several GPUs of one node: Kernel Tuner 1.5's parallel runner (Ray) against
cutune `--gpus`, on the same GPUs and the same space, in one run (for a device kind with
several GPUs). Writes OUT/kt_parallel.json.

Cases: Kernel Tuner's own example scripts (../shared/data/real_kernels/kernel_tuner_examples,
unchanged), each script's first tune_kernel call. Kernel Tuner runs the script with
tune_kernel wrapped only to take parallel=N (its Ray runner; without it, its sequential
runner), brute force, and the cuda-python backend (the lent machine has cuda-bindings, not
PyCUDA). cutune tunes the T1 file captured from the same script (python/cutune_capture)
with `--gpus 0..N-1 --strategy brute_force --finalists 0`. Both check the script's answer.
Per case and GPU count: the process's wall time, the tuning call's own wall time, results,
failures and the best time, and the ratio of wall times (Kernel Tuner / cutune).

Ray cannot be fetched there: scripts/fetch_ray_wheels.sh puts its wheel (without its Java
jars and libraries Kernel Tuner does not use) and Kernel Tuner's wheels into .raywhl/.
Usage (on the GPU machine): python3 -m studies.bench_kt_parallel --bin .gpu/bin --wheels .raywhl
    --material .material/kernel_tuner_examples --out $OUT/ktp [--cases matmul,reduction] [--gpus 1,4]
"""
import argparse
import datetime
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from studies.bench_real_kernels import KT_RUN_SCRIPT  # (how a script runs under a wrapped tune_kernel)

KT_CHILD = KT_RUN_SCRIPT + r'''
import json, os, sys, time
p = json.load(open(sys.argv[1]))
import kernel_tuner, kernel_tuner.interface
real = kernel_tuner.interface.tune_kernel
out = {"version": kernel_tuner.__version__}

def wrapped(kernel_name, kernel_source, problem_size, arguments, tune_params, *a, **kw):
    lang = kw.get("lang")
    if lang is None or str(lang).upper() == "CUDA":
        kw["lang"] = "NVCUDA"
    kw["strategy"] = "brute_force"
    kw["quiet"] = True
    kw["verbose"] = False
    if p["gpus"] > 1:
        kw["parallel"] = p["gpus"]
    t = time.perf_counter()
    try:
        results, env = real(kernel_name, kernel_source, problem_size, arguments, tune_params, *a, **kw)
    except BaseException as e:
        import traceback
        out.update(error=f"{type(e).__name__}: {e}"[:3000], trace=traceback.format_exc()[-4000:],
                   tune_wall_s=time.perf_counter() - t)
        raise SystemExit(1)
    out["tune_wall_s"] = time.perf_counter() - t
    err = lambda r: r.get("__error__") or (r["time"] if isinstance(r.get("time"), str) else None)
    ok = [r for r in results if not err(r) and isinstance(r.get("time"), (int, float))]
    out.update(kernel_name=kernel_name, results=len(results), failed=len(results) - len(ok))
    if ok:
        best = min(ok, key=lambda r: r["time"])
        out.update(best_ms=float(best["time"]), best_config={k: best[k] for k in tune_params})
    raise SystemExit(0)  # the script's first tune_kernel call only

error = run_script(p, wrapped)
if error is not None:
    out["script_error"] = f"{type(error).__name__}: {error}"[:3000]
json.dump(out, open(p["out"], "w"), indent=1, default=str)
'''


def run(cmd, timeout, env=None, cwd=None):
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
        return p.returncode, p.stdout + p.stderr, time.monotonic() - t
    except subprocess.TimeoutExpired as e:
        return "timeout", (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""), \
            time.monotonic() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--wheels", required=True)
    ap.add_argument("--material", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", default="matmul")
    ap.add_argument("--gpus", default="1,4")
    ap.add_argument("--kt-gpus", default=None, help="GPU counts Kernel Tuner runs (default: --gpus)")
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="cutune-ktp-")
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "cases": {},
           "gpus": run(["nvidia-smi", "-L"], 30)[1].strip().splitlines() if shutil.which("nvidia-smi") else []}
    path = os.path.join(a.out, "kt_parallel.json")
    save = lambda: json.dump(doc, open(path, "w"), indent=1, default=str)

    # Kernel Tuner and Ray into a private folder.
    site = os.path.join(tmp, "site")
    os.makedirs(site)
    rc, log, _ = run([a.python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                      "--target", site] + sorted(glob.glob(os.path.join(a.wheels, "*.whl"))), 300)
    for t in glob.glob(os.path.join(a.wheels, "*.tar.xz")):
        subprocess.run(["tar", "xJf", t, "-C", site], check=True)
    doc["install"] = {"exit": rc, "log": log[-2000:]}
    env = dict(os.environ, PYTHONPATH=site, RAY_USAGE_STATS_ENABLED="0", RAY_DEDUP_LOGS="0")
    rc, log, wall = run([a.python, "-c", "import ray, kernel_tuner; print(ray.__version__, kernel_tuner.__version__)"],
                        120, env=env)
    doc["imports"] = {"exit": rc, "output": log[-2000:], "wall_s": wall}
    save()

    counts = [int(n) for n in a.gpus.split(",")]
    kt_counts = [int(n) for n in (a.kt_gpus or a.gpus).split(",")]
    for case in a.cases.split(","):
        c = doc["cases"].setdefault(case, {"kernel_tuner": {}, "cutune": {}})
        work = os.path.join(tmp, case)
        shutil.copytree(a.material, work)
        script = os.path.join(work, f"{case}.py")
        cap = os.path.join(work, "captured")
        cenv = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
        rc, log, wall = run([a.python, "-m", "cutune_capture", "--out", cap, script], 300, env=cenv, cwd=work)
        # The script's first tune_kernel call, as the manifest lists them.
        manifest = os.path.join(cap, "capture.json")
        calls = json.load(open(manifest)).get("calls", []) if os.path.exists(manifest) else []
        t1s = [os.path.join(cap, x["t1"]) for x in calls if x.get("kind", "tune_kernel") == "tune_kernel" and x.get("t1")][:1]
        c["capture"] = {"exit": rc, "wall_s": wall, "t1": [os.path.basename(t) for t in t1s], "log": log[-1500:]}
        save()
        for n in counts:
            if not t1s:
                break
            db, rep = os.path.join(tmp, f"{case}_{n}.db"), os.path.join(tmp, f"{case}_{n}.json")
            cmd = [os.path.join(a.bin, "cutune"), "tune", t1s[0], "--strategy", "brute_force", "--finalists", "0",
                   "--gpus", ",".join(str(i) for i in range(n)), "--db", db, "--report", rep]
            rc, log, wall = run(cmd, a.timeout)
            r = json.load(open(rep)) if os.path.exists(rep) else {}
            c["cutune"][str(n)] = {"command": " ".join(cmd), "exit": rc, "process_wall_s": wall,
                                   "wall_s": r.get("wall_s"), "startup_s": r.get("time_breakdown", {}).get("startup_s"),
                                   "configs": r.get("configs_tried"), "failed": r.get("configs_failed"), "winner_ms": r.get("winner_ms"),
                                   "winner": r.get("winner"), "failures": r.get("failures_by_status"),
                                   "log_tail": log[-1200:]}
            save()
        for n in kt_counts:
            pfile, rfile = os.path.join(work, f"kt_{n}_params.json"), os.path.join(work, f"kt_{n}_result.json")
            json.dump({"script": script, "dir": work, "gpus": n, "out": rfile}, open(pfile, "w"))
            child = os.path.join(tmp, "kt_child.py")
            open(child, "w").write(KT_CHILD)
            rc, log, wall = run([a.python, child, pfile], a.timeout, env=env, cwd=work)
            r = json.load(open(rfile)) if os.path.exists(rfile) else {}
            c["kernel_tuner"][str(n)] = dict(r, exit=rc, process_wall_s=wall, runner="ray" if n > 1 else "sequential",
                                            log_tail=log[-2500:])
            save()
        for n in set(counts) & set(kt_counts):
            k, u = c["kernel_tuner"].get(str(n), {}), c["cutune"].get(str(n), {})
            if k.get("process_wall_s") and u.get("process_wall_s") and k.get("exit") == 0 and not k.get("error") and u.get("exit") == 0:
                c.setdefault("ratio_kt_over_cutune", {})[str(n)] = {
                    "process_wall": k["process_wall_s"] / u["process_wall_s"],
                    "tuning_wall": k["tune_wall_s"] / u["wall_s"] if k.get("tune_wall_s") and u.get("wall_s") else None}
        save()
    print(json.dumps(doc, indent=1, default=str)[-6000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
