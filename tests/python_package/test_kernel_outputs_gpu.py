#!/usr/bin/env python3
"""[gpu] cutune.run_kernel runs kernels for real and returns what they wrote, compared with
numpy: a 1D vector add whose size is no multiple of the block, a 2D kernel (grid from both
block sizes), an argument the kernel reads and writes, half precision, a define. And
tune_kernel's verify= function sees what each configuration wrote: the one configuration
that writes zeros fails, the others are timed.

    test_kernel_outputs_gpu.py --cutune BIN --worker BIN
Exit 77 without a GPU or without numpy.
"""
import argparse
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

SOURCE = r"""
#include <cuda_fp16.h>
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
#ifndef SCALE  // given by defines= for scale_2d's run only; the other kernels compile this file too
#define SCALE 1.0
#endif
__global__ void scale_2d(double *out, const double *in, int w, int h) {
    int x = blockIdx.x * block_size_x + threadIdx.x;
    int y = blockIdx.y * block_size_y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = SCALE * in[y * w + x] + y;
}
__global__ void increment(int *x, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) x[i] += i;
}
__global__ void wrong_at_64(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) c[i] = block_size_x == 64 ? 0.0f : a[i] + b[i];
}
__global__ void half_add(__half *c, const __half *a, const __half *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) c[i] = __hadd(a[i], b[i]);
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
    tmp = tempfile.mkdtemp(prefix="cutune-run-kernel-gpu-")
    os.environ.update(CUTUNE_BIN=a.cutune, CUTUNE_WORKER=a.worker, CUTUNE_RUN_DIR=tmp,
                      CUTUNE_CACHE_DIR=os.path.join(tmp, "cubins"))
    import cutune
    rng = np.random.default_rng(7)
    try:
        n = 10007
        x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        out = cutune.run_kernel("vector_add", SOURCE, n, [np.zeros_like(x), x, y, np.int32(n)],
                                {"block_size_x": 256}, quiet=True)
        check(out[0].dtype == np.float32 and np.array_equal(out[0], x + y), "vector_add: c == a + b, every element")
        check(np.array_equal(out[1], x) and np.array_equal(out[2], y) and out[3] == n, "inputs come back unchanged")

        w, h = 300, 70
        m = rng.random((h, w))
        out = cutune.run_kernel("scale_2d", SOURCE, (w, h), [np.zeros_like(m), m, np.int32(w), np.int32(h)],
                                {"block_size_x": 32, "block_size_y": 8}, quiet=True,
                                # given defines are the only ones (Kernel Tuner 1.5): the block sizes by name
                                defines={"SCALE": 3, "block_size_x": "block_size_x", "block_size_y": "block_size_y"})
        want = 3 * m + np.arange(h)[:, None]
        check(out[0].shape == (h, w) and np.allclose(out[0], want, rtol=1e-15, atol=0),
              "scale_2d: 2D grid and a define, out == 3 * in + row")

        v = np.arange(5000, dtype=np.int32) * 7
        out = cutune.run_kernel("increment", SOURCE, 5000, [v, np.int32(5000)], {"block_size_x": 128}, quiet=True)
        check(np.array_equal(out[0], v + np.arange(5000, dtype=np.int32)), "increment: read-write x += i")
        check(np.array_equal(v, np.arange(5000, dtype=np.int32) * 7), "the caller's array is not changed")

        p, q = rng.random(999).astype(np.float16), rng.random(999).astype(np.float16)
        out = cutune.run_kernel("half_add", SOURCE, 999, [np.zeros_like(p), p, q, np.int32(999)],
                                {"block_size_x": 64}, quiet=True)
        check(out[0].dtype == np.float16 and np.array_equal(out[0], p + q), "half_add: __hadd == numpy float16 add")

        os.environ["CUTUNE_DB"] = os.path.join(tmp, "verify.db")
        seen = {}

        def verify(answer, result_host, atol):
            ok = np.allclose(answer[0], result_host[0], atol=atol)
            seen[len(seen)] = ok
            return ok
        results, _ = cutune.tune_kernel("wrong_at_64", SOURCE, n, [np.zeros_like(x), x, y, np.int32(n)],
                                        {"block_size_x": [32, 64, 128]}, answer=[x + y, None, None, None],
                                        verify=verify, quiet=True)
        by_block = {r["block_size_x"]: r["time"] for r in results}
        check(str(by_block.get(64)) == "RuntimeFailedConfig", f"verify rejects block 64 ({by_block.get(64)})")
        check(all(isinstance(by_block.get(b), float) for b in (32, 128)), f"the others are timed ({by_block})")
        verdicts = list(seen.values())
        check(False in verdicts and verdicts.count(True) >= 2, f"verify saw each configuration's output ({verdicts})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
