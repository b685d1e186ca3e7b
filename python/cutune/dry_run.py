"""`python -m cutune --dry-run`: each tune_kernel call builds its space and writes its T1 run
folder, nothing is compiled or timed; for checking a script without a GPU. Each call's folder
gets space.json (the valid configurations as Kernel Tuner's cache keys, and the seconds the
construction took) and, when the real Kernel Tuner 1.5 is importable, kt_space.json: the keys
of its Searchspace for the same tune_params, restrictions and block_size_names (not with
CUTUNE_DRY_RUN_KT_SPACE=0)."""
import importlib
import json
import math
import os
import sys
import time

OUT = None      # the dry-run folder, or None when tuning for real
_COUNT = [0]


def call_dir(kernel_name):
    _COUNT[0] += 1
    d = os.path.join(OUT, f"call_{_COUNT[0]}_{''.join(c if c.isalnum() else '_' for c in str(kernel_name))}")
    os.makedirs(d, exist_ok=True)
    return d


def real_kt_searchspace():
    """Kernel Tuner's own Searchspace class, imported past cutune's kernel_tuner alias."""
    from . import kt_alias
    saved_finders = [f for f in sys.meta_path if isinstance(f, kt_alias._Alias)]
    saved = {k: v for k, v in sys.modules.items() if k == "kernel_tuner" or k.startswith("kernel_tuner.")}
    for f in saved_finders:
        sys.meta_path.remove(f)
    for k in saved:
        del sys.modules[k]
    try:
        return importlib.import_module("kernel_tuner.searchspace").Searchspace
    finally:
        for k in [k for k in sys.modules if k == "kernel_tuner" or k.startswith("kernel_tuner.")]:
            del sys.modules[k]
        sys.modules.update(saved)
        sys.meta_path[:0] = saved_finders


def record(run_dir, space, seconds, tune_params, restrictions, block_size_names):
    keys = sorted(space.keys())
    with open(os.path.join(run_dir, "space.json"), "w") as f:
        json.dump({"size": len(keys), "seconds": seconds, "keys": keys}, f)
    if os.environ.get("CUTUNE_DRY_RUN_KT_SPACE") == "0":  # keys recorded elsewhere: spare the second build
        return
    try:
        Searchspace = real_kt_searchspace()
    except ImportError:
        return
    try:
        t = time.perf_counter()
        kt = Searchspace(tune_params, restrictions, 1024, block_size_names=block_size_names)
        doc = {"size": kt.size, "seconds": time.perf_counter() - t,
               "keys": sorted(",".join(str(v) for v in c) for c in kt.list)}
    except Exception as e:  # noqa: BLE001 -- Kernel Tuner's failure is the finding
        doc = {"error": f"{type(e).__name__}: {e}"}
    with open(os.path.join(run_dir, "kt_space.json"), "w") as f:
        json.dump(doc, f)


def placeholder_results(space, metrics, objective, kernel_name, run_dir):
    result = dict(next(space.configs()))
    result["time"] = math.nan
    result["times"] = []
    for name in (metrics or {}):
        result[name] = math.nan
    result.setdefault(objective, math.nan)
    return [result], {"device_name": "cutune --dry-run (nothing was run)", "kernel_name": kernel_name,
                      "best_config": result, "cutune": {"dry_run": run_dir}}
