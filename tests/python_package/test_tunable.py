#!/usr/bin/env python3
"""kernel_tuner.accuracy in the cutune package, without a GPU: Tunable and TunablePrecision select
what Kernel Tuner 1.5's select_for_configuration selects (a parameter, a callable, an expression,
nested Tunables; KeyError for a value that is not a key), TunablePrecision's precisions and
dtype names, error_metric_from_name's metrics and its ValueError, each compared with Kernel
Tuner's own; and the per-configuration variant table `python -m cutune --dry-run` writes, read
back against the selection, whose default configuration `cutune compile` compiles, and `cutune
run` of it through the fake GPU worker (which runs nothing) returning per argument the variant
the configuration selects.

    test_tunable.py [--cutune BIN [--fake-worker BIN]]
Exit 77 (skipped) when no Python with numpy is found, or when Kernel Tuner is not importable
(after the checks that do not need it have passed).
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
import numpy as np  # noqa: E402

from cutune import accuracy as ours  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def kernel_tuner_accuracy():
    try:
        from kernel_tuner import accuracy
    except ImportError as e:
        print(f"SKIPPED: Kernel Tuner is not importable ({e}): nothing is compared with it")
        return None
    return accuracy


CONFIGS = [{"float_type": f, "block_size_x": b, "layout": l} for f in ("half", "float", "double")
           for b in (32, 64) for l in ("c", "f")]


def tunables(acc):
    """The same Tunables built with a module (cutune's or Kernel Tuner's)."""
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    inner = acc.Tunable("float_type", {"half": a.astype(np.float16), "float": a.astype(np.float32),
                                       "double": a})
    return {
        "by parameter": acc.Tunable("layout", {"c": a, "f": a.T}),
        "from a list": acc.Tunable("block_size_x // 32 - 1", [a, a + 1]),
        "by callable": acc.Tunable(lambda p: p["block_size_x"] * 2, {64: a, 128: a * 2}),
        "by expression": acc.Tunable("'wide' if block_size_x > 32 else 'narrow'", {"wide": a, "narrow": -a}),
        "nested": acc.Tunable("layout", {"c": inner, "f": a.T}),
        "a missing value": acc.Tunable("float_type", {"half": a, "float": a}),
        "precision": acc.TunablePrecision("float_type", a),
        "precision by names": acc.TunablePrecision("float_type", a, ["half", "float", "double"]),
    }


def selections(t):
    out = []
    for c in CONFIGS:
        try:
            v = t.select_for_configuration(dict(c))
            out.append((str(np.asarray(v).dtype), np.asarray(v).tolist()))
        except KeyError as e:
            out.append(("KeyError", str(e)))
    return out


def selection_semantics(kt):
    mine = tunables(ours)
    check(selections(mine["a missing value"])[8][0] == "KeyError", "a value that is not a key raises KeyError")
    check(mine["nested"].select_for_configuration(CONFIGS[0]).dtype == np.float16, "a nested Tunable selects again")
    check(set(mine["precision"]) >= {"half", "float", "double"}, "TunablePrecision's default precisions")
    if kt is None:
        return
    theirs = tunables(kt)
    for name in mine:
        check(selections(mine[name]) == selections(theirs[name]), f"{name}: every configuration selects as Kernel "
                                                                   "Tuner 1.5's select_for_configuration")
        check(list(mine[name].keys()) == list(theirs[name].keys()), f"{name}: the same keys in the same order")


def precisions(kt):
    names = ["half", "F16", "float16", "__half", "khalf", 16, "float", "single", "f32", "KFloat", 32, "double", "f64",
             "kdouble", 64, "int32", "complex64"]
    for n in names:
        got = np.dtype(ours._to_float_dtype(n))
        if kt is not None:
            check(got == np.dtype(kt._to_float_dtype(n)), f"_to_float_dtype({n!r}) == Kernel Tuner's ({got})")
    check(np.dtype(ours._to_float_dtype("f16")) == np.float16, "f16 is half")
    raised = []
    for mod in ([ours] + ([kt] if kt else [])):
        try:
            mod._to_float_dtype("no_such_type")
            raised.append(None)
        except TypeError:
            raised.append(TypeError)
    check(all(r is TypeError for r in raised), "an unknown precision name raises TypeError, as in Kernel Tuner")
    s = ours.TunablePrecision("float_type", np.float64(2.5), ["half", "double"])
    check(isinstance(s["half"], np.float16) and not isinstance(s["half"], np.ndarray),
          "a numpy scalar stays a scalar in each precision")


METRIC_NAMES = ["MSE", "mean squared error", "RMSE", "root_mean_square-error", "NRMSE", "normalized root mean squared",
                "MAE", "absolute error", "avg abs", "MRE", "relative", "mean rel error", "RMSRE",
                "root mean sq relative", "MALE", "mean absolute log error", "RMSLE", "root mean squared logarithmic",
                "max", "max abs", "maximum absolute error", "max rel", "Maximum Relative Error"]


def metrics(kt):
    rng = np.random.default_rng(3)
    a = rng.random(1000) + 0.5
    b = (a + rng.normal(0, 1e-3, 1000)).astype(np.float32)
    for name in METRIC_NAMES:
        got = ours.error_metric_from_name(name)(a, b)
        check(np.isfinite(got) and got >= 0, f"error_metric_from_name({name!r}) gives an error ({got:.3g})")
        if kt is not None:
            want = kt.error_metric_from_name(name)(a, b)
            check(got == want, f"error_metric_from_name({name!r}) == Kernel Tuner's ({want:.6g})")
    check(ours.error_metric_from_name("mse")(a, a) == 0.0, "no error between equal arrays")
    for mod in ([ours] + ([kt] if kt else [])):
        try:
            mod.error_metric_from_name("median error")
            check(False, f"{mod.__name__}: an unknown metric name raises ValueError")
        except ValueError:
            check(True, f"{mod.__name__}: an unknown metric name raises ValueError")


SCRIPT = r'''
import sys
import numpy
from kernel_tuner import tune_kernel, run_kernel
from kernel_tuner.accuracy import Tunable, TunablePrecision

KERNEL = """
#include <cuda_fp16.h>
extern "C" __global__ void scale(float_type* out, const float_type* x, const float* w, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) out[i] = x[i] * (float_type)w[i % 4];
}
"""
n = 1000
x = numpy.arange(n, dtype=numpy.float64)
w = numpy.ones(4, dtype=numpy.float32)
args = [TunablePrecision("float_type", numpy.zeros(n), ["half", "float", "double"]),
        TunablePrecision("float_type", x, ["half", "float", "double"]),
        Tunable(lambda p: p["block_size_x"] > 64, {True: w, False: w * 2}),
        numpy.int32(n)]
tune_params = {"block_size_x": [32, 64, 128], "float_type": ["half", "float", "double"]}
tune_kernel("scale", KERNEL, n, args, tune_params, answer=[x, None, None, None], quiet=True)
out = run_kernel("scale", KERNEL, n, args, {"block_size_x": 128, "float_type": "half"})
assert out[1].dtype == numpy.float16 and out[2][0] == 1.0, (out[1].dtype, out[2])
'''


def dry_run_table(cutune_bin, tmp):
    folder = os.path.join(tmp, "dry")
    os.makedirs(folder)
    with open(os.path.join(folder, "tunable.py"), "w") as f:
        f.write(SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"), CUTUNE_DRY_RUN_KT_SPACE="0")
    p = subprocess.run([sys.executable, "-m", "cutune", "--dry-run", "--out", "dr", "tunable.py"], cwd=folder, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    check(p.returncode == 0, f"python -m cutune --dry-run of a TunablePrecision script exits 0 ({p.stderr[-800:]})")
    call = os.path.join(folder, "dr", "call_1_scale")
    with open(os.path.join(call, "problem.json")) as f:
        doc = json.load(f)
    spec_args = doc["KernelSpecification"]["Arguments"]
    check([len(a.get("Variants", [])) for a in spec_args] == [3, 3, 2, 0], "every array a Tunable holds is a variant")
    check([v["Type"] for v in spec_args[1]["Variants"]] == ["half", "float", "double"], "each variant in its type")
    for v in spec_args[1]["Variants"]:
        data = np.fromfile(os.path.join(call, v["DataSource"]), dtype={"half": np.float16, "float": np.float32,
                                                                        "double": np.float64}[v["Type"]])
        check(np.array_equal(data, np.arange(1000)), f"variant {v['Key']}'s file holds the array in {v['Type']}")
    table = doc["cutune"]["Configurations"]
    check(table.get("VariantArguments") == ["out", "x", "w"], f"a column per Tunable argument, named as the kernel's "
                                                              f"parameters ({table.get('VariantArguments')})")
    idx = np.fromfile(os.path.join(call, table["Indices"]), dtype="<u4").reshape(table["Count"], 2)
    var = np.fromfile(os.path.join(call, table["Variants"]), dtype="<u4").reshape(table["Count"], 3)
    bx, ft = [32, 64, 128], ["half", "float", "double"]
    want = [[r[1], r[1], 0 if bx[r[0]] > 64 else 1] for r in idx]  # w: the True key comes first
    check(var.tolist() == want, "per configuration: the precision's variant and the callable's choice")
    check(any(r.get("Key") == "True" for r in spec_args[2]["Variants"]), "a variant's Key is its Tunable key")
    if cutune_bin:
        c = subprocess.run([cutune_bin, "compile", "--arch", "sm_90", os.path.join(call, "problem.json")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        check(c.returncode == 0, f"cutune reads the T1 with Variants and compiles its default ({c.stdout[-600:]})")
    return os.path.join(call, "problem.json")


def run_selected(cutune_bin, fake_worker, t1, tmp):
    """`cutune run --config`: one file per kernel argument, the selected variant's bytes."""
    for config, types in (("block_size_x=32,float_type=double", ["double", "double", "float"]),
                          ("block_size_x=128,float_type=half", ["half", "half", "float"])):
        out = os.path.join(tmp, "run-" + config.replace(",", "-").replace("=", "-"))
        p = subprocess.run([cutune_bin, "run", t1, "--config", config, "--outputs", out],
                           env=dict(os.environ, CUTUNE_WORKER=fake_worker), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=300)
        check(p.returncode == 0, f"cutune run --config {config} through the fake worker ({p.stdout[-600:]})")
        if p.returncode != 0:
            continue
        with open(os.path.join(out, "outputs.json")) as f:
            args = json.load(f)["arguments"]
        check([x["type"] for x in args[:3]] == types, f"{config}: each argument in its selected variant's type "
                                                      f"({[x['type'] for x in args]})")
        x = np.fromfile(os.path.join(out, args[1]["file"]), dtype={"half": np.float16, "double": np.float64}[types[1]])
        check(np.array_equal(x, np.arange(1000)), f"{config}: x's bytes are the selected variant's")
        w = np.fromfile(os.path.join(out, args[2]["file"]), dtype=np.float32)
        check(w.tolist() == ([1.0] * 4 if "128" in config else [2.0] * 4), f"{config}: w as the callable selects")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cutune")
    ap.add_argument("--fake-worker")
    a = ap.parse_args()
    kt = kernel_tuner_accuracy()
    tmp = tempfile.mkdtemp(prefix="cutune-tunable-test-")
    try:
        selection_semantics(kt)
        precisions(kt)
        metrics(kt)
        t1 = dry_run_table(a.cutune, tmp)
        if a.cutune and a.fake_worker and t1:
            run_selected(a.cutune, a.fake_worker, t1, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed" if failures else "all passed")
    if failures:
        return 1
    return 77 if kt is None else 0


if __name__ == "__main__":
    sys.exit(main())
