#!/usr/bin/env python3
"""The Python package (python/cutune) on the CPU, through the fake GPU worker: tune_kernel run
by a script unchanged under `python -m cutune` and by `import cutune as kernel_tuner`, its
results in Kernel Tuner's shape (times, metrics computed by Python, a failed configuration's
marker, the user's cache file where the script named it); the exceptions Kernel Tuner 1.5
raises on bad input (the same types; checked against Kernel Tuner when it is importable); the
space of a script against Kernel Tuner's; no GPU -> a RuntimeError naming the GPU problem.

    test_package.py --cutune BIN --fake-worker BIN --worker BIN
Re-runs itself with a Python that has numpy when this one has none; exit 77 when none has.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

import numpy_python  # noqa: E402 -- beside this file

numpy_python.ensure()

SCRIPT = r'''
import json, sys
import numpy
from kernel_tuner import tune_kernel
from kernel_tuner.util import get_best_config
import kernel_tuner.observers.nvml  # noqa: F401 -- a submodule scripts import

kernel_string = """
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) { c[i] = a[i] + b[i] + TILE * 0; }
}
"""
def div_ceil(a, b):
    return (a + b - 1) // b

n = numpy.int32(10000)
a = numpy.random.randn(n).astype(numpy.float32)
b = numpy.random.randn(n).astype(numpy.float32)
c = numpy.zeros_like(b)
tune_params = {"block_size_x": [32, 64, 128, 256, 512, 1024, 2048], "tile": [1, 2, 4]}
def restrict(*args, **kwargs):
    bx, tile = args
    return bx * tile <= 2048
results, env = tune_kernel("vector_add", kernel_string, lambda p: (div_ceil(n, p["tile"]),), [c, a, b, n],
                           tune_params, restrictions=[restrict], answer=[a + b, None, None, None],
                           defines={"block_size_x": "block_size_x", "TILE": lambda p: p["tile"] * 2},
                           metrics={"GB/s": lambda p: 3 * 4 * n / 1e9 / (p["time"] / 1e3)},
                           cache="my_cache", quiet=True)
best = get_best_config(results, "time")
out = {"results": [{k: (str(v) if k == "time" and isinstance(v, str) else v) for k, v in r.items()} for r in results],
       "time_types": [type(r["time"]).__name__ for r in results], "device_name": env["device_name"],
       "best": {k: best[k] for k in tune_params}}
with open(sys.argv[1], "w") as f:
    json.dump(out, f)
'''

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def end_to_end(a, tmp):
    folder = os.path.join(tmp, "script")
    os.makedirs(folder)
    with open(os.path.join(folder, "small.py"), "w") as f:
        f.write(SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"), CUTUNE_BIN=a.cutune, CUTUNE_WORKER=a.fake_worker,
               CUTUNE_DB=os.path.join(tmp, "cutune.db"), CUTUNE_CACHE_DIR=os.path.join(tmp, "cubins"),
               CUTUNE_RUN_DIR=tmp, FAKE_GPU_WORKER_SCRIPT="64,2=die",
               CUTUNE_TUNE_OPTIONS="--compile-mode thread")  # compiles in the process: the fake worker runs none
    p = subprocess.run([sys.executable, "-m", "cutune", "small.py", "out.json"], cwd=folder, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    check(p.returncode == 0, f"python -m cutune small.py exits 0 ({p.returncode}: {p.stderr.strip()[-2000:]})")
    if p.returncode != 0:
        return
    with open(os.path.join(folder, "out.json")) as f:
        out = json.load(f)
    results = out["results"]
    keys = {(r["block_size_x"], r["tile"]) for r in results}
    expected = {(bx, t) for bx in (32, 64, 128, 256, 512, 1024) for t in (1, 2, 4) if bx * t <= 2048}
    check(keys == expected, f"the results are the 17 valid configurations ({len(keys)})")
    failed = [r for r in results if (r["block_size_x"], r["tile"]) == (64, 2)]
    check(bool(failed) and failed[0]["time"] == "RuntimeFailedConfig"
          and out["time_types"][results.index(failed[0])] == "RuntimeFailedConfig",
          "the configuration whose worker died is marked RuntimeFailedConfig")
    good = [r for r in results if (r["block_size_x"], r["tile"]) != (64, 2)]
    fields = {"time", "times", "compile_time", "verification_time", "benchmark_time", "strategy_time",
              "framework_time", "timestamp", "GB/s"}
    check(all(fields <= set(r) for r in good), "each result has Kernel Tuner's fields and the metric")
    check(all(isinstance(r["time"], float) and r["time"] > 0 for r in good), "times are positive floats")
    check(all(abs(r["GB/s"] - 3 * 4 * 10000 / 1e9 / (r["time"] / 1e3)) <= 1e-9 * r["GB/s"] for r in good),
          "GB/s computed by the script's own lambda from the measured time")
    check(out["device_name"] == "Fake GPU", f"env device_name from the engine ({out['device_name']})")
    check(os.path.isfile(os.path.join(folder, "my_cache.json")), "cache='my_cache' written beside the script")
    check(sorted(os.listdir(folder)) == ["my_cache.json", "out.json", "small.py"],
          f"nothing else written in the script's folder ({sorted(os.listdir(folder))})")


def dry_run(tmp):
    """--dry-run: the space of the script, and Kernel Tuner's for the same call when importable."""
    folder = os.path.join(tmp, "dry")
    os.makedirs(folder)
    with open(os.path.join(folder, "small.py"), "w") as f:
        f.write(SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    p = subprocess.run([sys.executable, "-m", "cutune", "--dry-run", "--out", "dr", "small.py", "out.json"],
                       cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    check(p.returncode == 0, f"python -m cutune --dry-run exits 0 ({p.stderr.strip()[-1000:]})")
    call = os.path.join(folder, "dr", "call_1_vector_add")
    with open(os.path.join(call, "space.json")) as f:
        ours = json.load(f)
    check(ours["size"] == 17, f"--dry-run: 17 valid configurations ({ours['size']})")
    check(os.path.isfile(os.path.join(call, "problem.json")), "--dry-run writes the call's T1 file")
    kt = os.path.join(call, "kt_space.json")
    if os.path.isfile(kt):
        with open(kt) as f:
            theirs = json.load(f)
        check(theirs.get("keys") == ours["keys"], "--dry-run: the keys equal Kernel Tuner 1.5's Searchspace")


BAD_CALLS = [
    ("a tuning parameter named time", dict(tune_params={"block_size_x": [32], "time": [1]}), ValueError),
    ("an argument that is a list", dict(arguments=[[1.0, 2.0]]), TypeError),
    ("block_size_names not a list", dict(block_size_names="block_size_x"), ValueError),
    ("an objective without objective_higher_is_better", dict(objective="speed"), ValueError),
    ("an unknown strategy", dict(strategy="no_such_strategy"), ValueError),
    ("a (function, names) restriction mixed with a lambda",
     dict(restrictions=[lambda p: True, (lambda x: x > 0, ["block_size_x"])]), ValueError),
]
# Kernel Tuner opens the GPU before it builds the space: restriction errors are compared on the
# spaces themselves (its Searchspace, cutune.searchspace.Space).
SPACE_ONLY = {"a (function, names) restriction mixed with a lambda"}


def space_errors():
    import cutune.searchspace
    try:
        from kernel_tuner.searchspace import Searchspace
    except ImportError:
        Searchspace = None
    tp = {"block_size_x": [32, 64], "t": [1, 2]}
    f = lambda p: p["t"] > 1  # noqa: E731 -- a restriction as scripts write them
    cases = [["t > 1", f], [f, "block_size_x > 32"], ["t>1", "t>1"], [(lambda x: x > 32, ["block_size_x"])]]
    bsn = ["block_size_x", "block_size_y", "block_size_z"]
    for r in cases:
        outcome = []
        for build in (lambda: sorted(cutune.searchspace.Space(tp, r, bsn).keys()),
                      (lambda: sorted(",".join(map(str, c)) for c in Searchspace(tp, r, 1024, block_size_names=bsn).list))
                      if Searchspace else None):
            if build is None:
                continue
            try:
                outcome.append(build())
            except Exception as e:  # noqa: BLE001 -- the type is what is compared
                outcome.append(type(e).__name__)
        check(len(outcome) == 1 or outcome[0] == outcome[1], f"restrictions {r!r}: {outcome}")


def bad_input(kt_tune):
    import numpy as np
    import cutune
    x = np.zeros(4, np.float32)
    base = dict(kernel_name="k", kernel_source="__global__ void k(float *x) {}", problem_size=4, arguments=[x],
                tune_params={"block_size_x": [32, 64]}, quiet=True)
    for what, change, expected in BAD_CALLS:
        kw = dict(base, **change)
        for name, fn in (("cutune", cutune.tune_kernel), ("Kernel Tuner", kt_tune)):
            if fn is None or (name == "Kernel Tuner" and what in SPACE_ONLY):
                continue
            try:
                fn(**kw)
                got = None
            except Exception as e:  # noqa: BLE001 -- the type is what is checked
                got = type(e)
            check(got is not None and issubclass(got, expected), f"{name}: {what} raises {expected.__name__} "
                  f"({got.__name__ if got else 'nothing'})")
    try:
        cutune.tune_kernel(**dict(base, texmem_args={"t": x}))
        got = None
    except NotImplementedError as e:
        got = str(e)
    check(got is not None and "texmem_args" in got, f"texmem_args: NotImplementedError naming it ({got})")


def no_gpu(a, tmp):
    import numpy as np
    import cutune
    os.environ.update(CUTUNE_BIN=a.cutune, CUTUNE_WORKER=a.worker, CUTUNE_DB=os.path.join(tmp, "nogpu.db"),
                      CUTUNE_RUN_DIR=tmp)
    try:
        cutune.tune_kernel("k", "__global__ void k(float *x) {}", 4, [np.zeros(4, np.float32)],
                           {"block_size_x": [32, 64]}, quiet=True)
        got = None
    except RuntimeError as e:
        got = str(e)
    check(got is not None and "GPU" in got, f"no GPU: RuntimeError naming the GPU ({(got or '')[:200]})")


def result_helpers():
    """kernel_tuner.util's helpers on results as Kernel Tuner 1.5 has them: an entry with
    "__error__" or a non-float objective never wins; NCUObserver is a PrologueObserver."""
    from cutune import util
    from cutune.observers.ncu import NCUObserver
    from cutune.observers.observer import PrologueObserver
    results = [{"x": 1, "time": 2.0}, {"x": 2, "time": 1.0, "__error__": "e"}, {"x": 3, "time": "InvalidConfig"}]
    check(util.get_best_config(results, "time")["x"] == 1, "get_best_config skips __error__ and failed entries")
    check(util.get_best_config(results, "time", True)["x"] == 1, "... when higher is better too")
    check(isinstance(NCUObserver(), PrologueObserver), "NCUObserver is a PrologueObserver, as in Kernel Tuner")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cutune", required=True)
    ap.add_argument("--fake-worker", required=True)
    ap.add_argument("--worker", required=True)
    a = ap.parse_args()
    try:
        from kernel_tuner.interface import tune_kernel as kt_tune
    except ImportError:
        kt_tune = None
        print("note: Kernel Tuner is not importable: its exception types are not compared")
    tmp = tempfile.mkdtemp(prefix="cutune-pkg-test-")
    try:
        end_to_end(a, tmp)
        dry_run(tmp)
        space_errors()
        result_helpers()
        bad_input(kt_tune)
        if shutil.which("nvidia-smi") is None:
            no_gpu(a, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
