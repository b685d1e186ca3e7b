#!/usr/bin/env python3
"""run_kernel(lang="C"): a CPU function compiled and run once, as Kernel Tuner 1.5's compiler
backend runs it (a script's reference answer): the #define prefix (parameters, block and grid
sizes, kernel_tuner), the caller's arrays written in place and copies returned, scalars as
given, extern "C" added for a C++ file, and Kernel Tuner's TypeError for an element type its
backend cannot pass. Compared with Kernel Tuner's own run_kernel where it is importable.
Needs g++ and numpy (exit 77 without numpy)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy_python  # noqa: E402

numpy_python.ensure()
import numpy as np  # noqa: E402

import cutune  # noqa: E402

SOURCE = """
#include <math.h>
float reference(float *out, const float *in, int n, double s) {
    for (int i = 0; i < n; i++) out[i] = s * sqrtf(in[i]) + block_size_x + grid_size_x + factor;
#ifdef kernel_tuner
    out[0] = -1.0f;
#endif
    return 0.0f;
}
"""

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def call(module, arrays):
    out, inp = arrays
    return module.run_kernel("reference", SOURCE, 10, [out, inp, np.int32(out.size), np.float64(2.0)],
                             {"block_size_x": 4, "factor": 3}, lang="C")


def main():
    n = 10
    inp = np.arange(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    res = call(cutune, (out, inp))
    # grid_size_x = ceil(10 / block_size_x) = 3, as Kernel Tuner's prefix defines it
    expected = (2.0 * np.sqrt(inp) + 4 + 3 + 3).astype(np.float32)
    expected[0] = -1.0
    check(len(res) == 4 and np.allclose(res[0], expected), "outputs as the C function wrote them")
    check(np.allclose(out, expected), "the caller's array written in place, as Kernel Tuner's C backend does")
    check(res[0] is not out and isinstance(res[2], np.int32) and res[2] == n, "copies returned, scalars as given")
    try:
        cutune.run_kernel("reference", SOURCE, 10, [np.zeros(n, np.float16), inp, np.int32(n), np.float64(2)],
                          {"block_size_x": 4, "factor": 3}, lang="C")
        check(False, "float16 refused")
    except TypeError as e:
        check("unknown dtype" in str(e), f"float16 refused with Kernel Tuner's TypeError ({e})")
    try:
        import kernel_tuner
    except ImportError:
        print("SKIPPED part: Kernel Tuner is not importable here: not compared with its run_kernel")
    else:
        theirs = call(kernel_tuner, (np.zeros(n, np.float32), inp.copy()))
        check(np.array_equal(theirs[0], res[0]), "the same outputs as Kernel Tuner's own run_kernel(lang='C')")
    if failures:
        print(f"{len(failures)} failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
