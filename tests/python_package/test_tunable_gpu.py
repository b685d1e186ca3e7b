#!/usr/bin/env python3
"""[gpu] A TunablePrecision kernel tuned for real: a vector add whose arrays are half, float or
double as the configuration's float_type says. Every configuration passes verification against
the answer (inputs exactly representable in half, so the sum is exact in every precision), each
precision is timed, and run_kernel returns the selected variant's sum in its own dtype.

    test_tunable_gpu.py --cutune BIN --worker BIN
`cutune run` of the T1 file tune_kernel wrote, with a float_type, returns that variant's sum.
Exit 77 without a GPU or without numpy.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

import numpy_python  # noqa: E402 -- beside this file

numpy_python.ensure()
import numpy as np  # noqa: E402

SOURCE = r"""
#include <cuda_fp16.h>
extern "C" __global__ void vector_add(float_type *c, const float_type *a, const float_type *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cutune", required=True)
    ap.add_argument("--worker", required=True)
    a = ap.parse_args()
    if shutil.which("nvidia-smi") is None:
        print("SKIPPED: no GPU")
        return 77
    tmp = tempfile.mkdtemp(prefix="cutune-tunable-gpu-")
    os.environ.update(CUTUNE_BIN=a.cutune, CUTUNE_WORKER=a.worker, CUTUNE_RUN_DIR=tmp, CUTUNE_DB=os.path.join(tmp, "t.db"),
                      CUTUNE_CACHE_DIR=os.path.join(tmp, "cubins"))
    import cutune
    from cutune.accuracy import TunablePrecision
    try:
        n = 100003
        rng = np.random.default_rng(11)
        x = rng.integers(-512, 512, n).astype(np.float64)  # exact in half, and so is x + y
        y = rng.integers(-512, 512, n).astype(np.float64)
        precisions = ["half", "float", "double"]
        args = [TunablePrecision("float_type", np.zeros(n), precisions), TunablePrecision("float_type", x, precisions),
                TunablePrecision("float_type", y, precisions), np.int32(n)]
        tune_params = {"block_size_x": [64, 256], "float_type": precisions}
        results, env = cutune.tune_kernel("vector_add", SOURCE, n, args, tune_params, answer=[x + y, None, None, None],
                                        quiet=True)
        times = {(r["block_size_x"], r["float_type"]): r["time"] for r in results}
        check(len(times) == 6 and all(isinstance(t, float) for t in times.values()),
              f"every configuration verified and timed, each precision its own arrays ({times})")
        # The engine alone on the T1 file the call wrote: `cutune run` passes the variant the
        # configuration selects and returns its bytes.
        out_dir = os.path.join(tmp, "run-float")
        p = subprocess.run([a.cutune, "run", env["cutune"]["t1"], "--config", "block_size_x=64,float_type=float",
                            "--outputs", out_dir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=300)
        check(p.returncode == 0, f"cutune run of the T1 with Variants ({p.stdout[-500:]})")
        if p.returncode == 0:
            c = np.fromfile(os.path.join(out_dir, "0.bin"), dtype=np.float32)
            check(np.array_equal(c, (x + y).astype(np.float32)), "cutune run --config float_type=float: c in float32")
        for ft, dtype in zip(precisions, (np.float16, np.float32, np.float64)):
            out = cutune.run_kernel("vector_add", SOURCE, n, args, {"block_size_x": 128, "float_type": ft}, quiet=True)
            check(out[0].dtype == dtype and np.array_equal(out[0], (x + y).astype(dtype)),
                  f"run_kernel float_type={ft}: c == a + b in {np.dtype(dtype).name}")
            check(np.array_equal(out[1], x.astype(dtype)), f"run_kernel float_type={ft}: the input comes back unchanged")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
