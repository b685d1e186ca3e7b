#!/usr/bin/env python3
"""Kernel outputs back in Python, on the CPU, through the fake GPU worker (which runs no
kernel: every argument comes back as uploaded).

cutune.run_kernel by `cutune run`: the list Kernel Tuner 1.5's run_kernel returns (one new
numpy array per array argument, its dtype and shape; scalars as given), the files of `cutune
run --outputs` read back and refused when they do not fit, the exceptions Kernel Tuner raises
on bad input (compared with its own when importable), `cutune run`'s bad input (one line,
exit 2), --dry-run, and no GPU said as such.

tune_kernel(verify=...) by `cutune tune --verifier`: the function called as Kernel Tuner calls
it, once per configuration, its False (or its exception) making the configuration a failure.

    test_kernel_outputs.py --cutune BIN --fake-worker BIN --worker BIN
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
import numpy as np  # noqa: E402

KERNEL = """
#include <cuda_fp16.h>
__global__ void scale(float *out, const float *in, half *h, int *k, float2 *z, float s, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) { out[i] = s * in[i]; }
}
"""

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def raises(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 -- the type is what is checked
        return e
    return None


def arguments():
    rng = np.random.default_rng(1)
    n = 1000
    return [np.zeros((20, 50), np.float32), rng.random((20, 50), dtype=np.float32),
            rng.random(n).astype(np.float16), np.arange(n, dtype=np.int32),
            (rng.random(n) + 1j * rng.random(n)).astype(np.complex64), np.float32(2.5), np.int32(n)]


def through_the_engine(a, tmp):
    import cutune
    os.environ.update(CUTUNE_BIN=a.cutune, CUTUNE_WORKER=a.fake_worker, CUTUNE_RUN_DIR=tmp,
                      CUTUNE_CACHE_DIR=os.path.join(tmp, "cubins"))
    args = arguments()
    out = cutune.run_kernel("scale", KERNEL, 1000, args, {"block_size_x": 128}, quiet=True)
    check(isinstance(out, list) and len(out) == len(args), f"a list, one entry per argument ({len(out)})")
    arrays = [(o, g) for o, g in zip(out, args) if isinstance(g, np.ndarray)]
    check(all(isinstance(o, np.ndarray) and o.dtype == g.dtype and o.shape == g.shape for o, g in arrays),
          "each array argument comes back as a numpy array of its dtype and shape: "
          + ", ".join(f"{o.dtype}{o.shape}" for o, _ in arrays))
    check(all(o is not g for o, g in arrays), "new arrays, not the arguments themselves")
    check(all(np.array_equal(o, g) for o, g in arrays),
          "the bytes the worker sent back (the fake one: as uploaded) read in the argument's type")
    check(out[5] is args[5] and out[6] is args[6], "scalars come back as given")
    check(not [d for d in os.listdir(tmp) if d.startswith("cutune-run-kernel-")], "the run's folder is removed")
    e = raises(cutune.run_kernel, "scale", KERNEL, 1000, args, {"block_size_x": 2048}, quiet=True)
    check(isinstance(e, RuntimeError) and "too many threads" in str(e),
          f"a block of 2048 threads: RuntimeError as Kernel Tuner's ({e})")
    bad = KERNEL.replace("out[i] = s * in[i];", "out[i] = s * undeclared[i];")
    e = raises(cutune.run_kernel, "scale", bad, 1000, args, {"block_size_x": 128}, quiet=True)
    check(isinstance(e, RuntimeError) and "compile" in str(e) and "undeclared" in str(e),
          f"a kernel that does not compile: RuntimeError with the compiler's message ({str(e)[:300]})")
    os.environ["FAKE_GPU_WORKER_SCRIPT"] = "64=die"
    e = raises(cutune.run_kernel, "scale", KERNEL, 1000, args, {"block_size_x": 64}, quiet=True)
    del os.environ["FAKE_GPU_WORKER_SCRIPT"]
    check(isinstance(e, RuntimeError) and "died" in str(e), f"a worker that dies: RuntimeError saying so ({e})")


def outputs_files(a, tmp):
    """`cutune run --outputs` by hand on the T1 file the package writes, and the reader."""
    from cutune import interface, run_outputs
    from cutune.searchspace import Space
    args = arguments()
    run_dir = os.path.join(tmp, "files")
    os.makedirs(run_dir)
    tp = {"block_size_x": [128]}
    bsn = ["block_size_x", "block_size_y", "block_size_z"]
    o = dict(kernel_name="scale", kernel_source=KERNEL, problem_size=1000, arguments=args, params={"block_size_x": 128},
             tune_params=tp, grid_div_x=None, grid_div_y=None, grid_div_z=None, restrictions=None, metrics=None)
    t1, _ = interface._write_problem(run_dir, "run_kernel", o, Space(tp, None, bsn), bsn, "time", False)
    env = dict(os.environ, CUTUNE_WORKER=a.fake_worker)
    out_dir = os.path.join(run_dir, "out")
    p = subprocess.run([a.cutune, "run", t1, "--outputs", out_dir], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    check(p.returncode == 0, f"cutune run exits 0 ({p.returncode}: {p.stderr.strip()[-500:]})")
    if p.returncode != 0:
        return
    with open(os.path.join(out_dir, "outputs.json")) as f:
        doc = json.load(f)
    got = [(e["name"], e["dtype"], e["count"], e["vector"]) for e in doc["arguments"]]
    want = [("out", "float32", 1000, True), ("in", "float32", 1000, True), ("h", "float16", 1000, True),
            ("k", "int32", 1000, True), ("z", "complex64", 1000, True), ("s", "float32", 1, False),
            ("n", "int32", 1, False)]
    check(got == want, f"outputs.json: each argument's name, dtype, count ({got})")
    check(doc["config"] == "128" and doc["device"] == "Fake GPU", f"outputs.json: config and device ({doc['config']}, "
          f"{doc['device']})")
    raw = np.fromfile(os.path.join(out_dir, doc["arguments"][2]["file"]), dtype="<f2")
    check(np.array_equal(raw, args[2]), "<i>.bin: the argument's bytes, little-endian")
    scalar = np.fromfile(os.path.join(out_dir, doc["arguments"][5]["file"]), dtype="<f4")
    check(scalar.tolist() == [2.5], f"a scalar's file holds its value ({scalar.tolist()})")
    back = run_outputs.read(out_dir, args)
    check(all(np.array_equal(x, y) for x, y in zip(back[:5], args[:5])), "read back equal to what was uploaded")
    e = raises(run_outputs.read, out_dir, args[:3])
    check(isinstance(e, RuntimeError) and "3 given" in str(e), f"fewer arguments than the files: refused ({e})")
    e = raises(run_outputs.read, out_dir, [np.zeros(999, np.float32)] + args[1:])
    check(isinstance(e, RuntimeError) and "bytes" in str(e), f"an array of another size: refused ({e})")
    with open(os.path.join(out_dir, doc["arguments"][1]["file"]), "ab") as f:
        f.write(b"x")
    e = raises(run_outputs.read, out_dir, args)
    check(isinstance(e, RuntimeError) and "announced" in str(e), f"a file of another size: refused ({e})")

    def cli(*extra):
        return subprocess.run([a.cutune, "run", *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    for what, extra in (("no --outputs", [t1]),
                        ("--outputs under a folder that does not exist", [t1, "--outputs", "/nonexistent/x/y"]),
                        ("--outputs naming a file", [t1, "--outputs", t1]),
                        ("an unknown parameter in --config", [t1, "--outputs", out_dir, "--config", "nope=1"]),
                        ("a value outside the space", [t1, "--outputs", out_dir, "--config", "block_size_x=7"]),
                        ("a kernel file that does not exist", [os.path.join(tmp, "none.json"), "--outputs", out_dir]),
                        ("--compiler of another name", [t1, "--outputs", out_dir, "--compiler", "gcc"])):
        p = cli(*extra)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(lines) == 1, f"cutune run, {what}: exit 2, one line ({p.returncode}: "
              f"{p.stderr.strip()[:300]})")


def bad_input():
    import cutune
    try:
        from kernel_tuner.interface import run_kernel as kt_run
    except ImportError:
        kt_run = None
        print("note: Kernel Tuner is not importable: its exception types are not compared")
    x = np.zeros(4, np.float32)
    base = dict(kernel_name="k", kernel_source="__global__ void k(float *x) {}", problem_size=4, arguments=[x],
                params={"block_size_x": 32}, quiet=True)
    cases = [("an argument that is a list", dict(arguments=[[1.0, 2.0]]), TypeError),
             ("block_size_names not a list", dict(block_size_names="block_size_x"), ValueError),
             ("a kernel_source that is neither a string nor a function", dict(kernel_source=42), TypeError)]
    for what, change, expected in cases:
        for name, fn in (("cutune", cutune.run_kernel), ("Kernel Tuner", kt_run)):
            if fn is None:
                continue
            e = raises(fn, **dict(base, **change))
            check(isinstance(e, expected), f"{name} run_kernel: {what} raises {expected.__name__} "
                  f"({type(e).__name__ if e else 'nothing'})")
    e = raises(cutune.run_kernel, **dict(base, texmem_args={"t": x}))
    check(isinstance(e, NotImplementedError) and "run_kernel" in str(e) and "texmem_args" in str(e),
          f"texmem_args: NotImplementedError naming run_kernel and the option ({e})")


def dry_run_and_no_gpu(a, tmp):
    import cutune
    from cutune import dry_run
    x = np.arange(4, dtype=np.float32)
    dry_run.OUT = os.path.join(tmp, "dry")
    try:
        out = cutune.run_kernel("k", "__global__ void k(float *x) {}", 4, [x, np.int32(4)], {"block_size_x": 32})
    finally:
        dry_run.OUT = None
    check(np.array_equal(out[0], x) and out[0] is not x and out[1] == 4,
          "--dry-run: the arguments as they went in, nothing run")
    if shutil.which("nvidia-smi") is not None:
        return
    os.environ.update(CUTUNE_BIN=a.cutune, CUTUNE_WORKER=a.worker, CUTUNE_RUN_DIR=tmp)
    e = raises(cutune.run_kernel, "k", "__global__ void k(float *x) {}", 4, [x], {"block_size_x": 32}, quiet=True)
    check(isinstance(e, RuntimeError) and "GPU" in str(e), f"no GPU: RuntimeError naming the GPU ({e})")


VERIFY_KERNEL = """
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


def verify_functions(a, tmp):
    import warnings
    import cutune
    n = 1000
    x = np.arange(n, dtype=np.float32)
    args = [np.zeros(n, np.float32), x, 2 * x, np.int32(n)]
    answer = [3 * x, None, None, None]
    tp = {"block_size_x": [32, 64, 128]}
    os.environ.update(CUTUNE_BIN=a.cutune, CUTUNE_WORKER=a.fake_worker, CUTUNE_RUN_DIR=tmp,
                      CUTUNE_CACHE_DIR=os.path.join(tmp, "cubins"), CUTUNE_TUNE_OPTIONS="--compile-mode thread")

    def tune(verify, answer, db):
        os.environ["CUTUNE_DB"] = os.path.join(tmp, db)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            results, _ = cutune.tune_kernel("vector_add", VERIFY_KERNEL, n, args, tp, answer=answer, verify=verify,
                                            atol=1e-3, quiet=True)
        return results, [str(x.message) for x in w]

    calls = []

    def allclose(answer, result_host, atol):  # what scripts write; the fake worker's c is still zero
        calls.append((answer, result_host, atol))
        return np.allclose(answer[0], result_host[0], atol=atol)
    results, _ = tune(allclose, answer, "v1.db")
    check(len(calls) == 3, f"verify called once per configuration ({len(calls)})")
    if calls:
        ans, host, atol = calls[0]
        check(atol == 1e-3, f"atol passed as given ({atol})")
        check(isinstance(ans[0], np.ndarray) and ans[1:] == [None, None, None], "answer as Kernel Tuner passes it")
        check(isinstance(host[0], np.ndarray) and host[0].dtype == np.float32 and host[0].shape == (n,)
              and host[1:] == [None, None, None],
              "result_host: the output whose answer is given, None for the others (as Kernel Tuner syncs)")
        check(np.array_equal(host[0], args[0]), "result_host[0]: the contents the worker sent")
    check(len(results) == 3 and all(str(r["time"]) == "RuntimeFailedConfig" for r in results),
          f"verify False: every configuration failed ({[str(r['time']) for r in results]})")

    results, _ = tune(lambda answer, result_host, atol: True, answer, "v2.db")
    check(all(isinstance(r["time"], float) for r in results), "verify True: every configuration timed")

    seen = []
    results, _ = tune(lambda answer, result_host, atol: seen.append(result_host) or True, None, "v3.db")
    check(bool(seen) and [type(h).__name__ for h in seen[0]] == ["ndarray", "ndarray", "ndarray", "NoneType"],
          "no answer: result_host holds every numpy array argument, None for the scalar")
    check(bool(seen) and np.array_equal(seen[0][2], 2 * x), "... each with its own contents")

    def broken(answer, result_host, atol):
        raise KeyError("oops")
    results, warned = tune(broken, answer, "v4.db")
    check(all(str(r["time"]) == "RuntimeFailedConfig" for r in results), "a verify that raises: failures")
    check(any("raised" in m and "KeyError" in m for m in warned), f"... with a warning quoting it ({warned})")
    del os.environ["CUTUNE_TUNE_OPTIONS"]


def no_parameters_and_other_languages():
    # A CPU reference run as Kernel Tuner scripts write it (hub's dedispersion): params={} is one
    # configuration; lang="C" runs on the CPU (test_host_function.py), lang="OpenCL" is refused by name.
    import cutune
    from cutune.searchspace import Space
    check(len(Space({}, None, ["block_size_x", "block_size_y", "block_size_z"])) == 1,
          "a space without parameters holds one configuration")
    e = raises(cutune.run_kernel, "f", "__kernel void f(__global float* x) {}", 1, [np.zeros(4, np.float32)], {},
               lang="OpenCL")
    check(isinstance(e, NotImplementedError) and "lang" in str(e), f"run_kernel(lang='OpenCL') names lang: {e!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cutune", required=True)
    ap.add_argument("--fake-worker", required=True)
    ap.add_argument("--worker", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="cutune-run-kernel-test-")
    try:
        through_the_engine(a, tmp)
        outputs_files(a, tmp)
        verify_functions(a, tmp)
        bad_input()
        no_parameters_and_other_languages()
        dry_run_and_no_gpu(a, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
