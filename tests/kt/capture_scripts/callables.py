#!/usr/bin/env python
"""A Kernel Tuner 1.5 script with every option the capture translates from Python callables:
restrictions as a lambda over p[...], a python-constraint style lambda, a (function, names)
tuple and a module-level function; grid divisors, problem size and shared memory as lambdas
using closure values; composed metrics; an answer with atol; constant memory; custom block
size names; a templated kernel name; defines; an objective that is a metric."""
from collections import OrderedDict

import numpy
from kernel_tuner import tune_kernel

kernel = """
__constant__ float coeff[4];
template <typename T, int TILE>
__global__ void scale(T *out, const T *in, int n) {
    int i = blockIdx.x * bx * TILE + threadIdx.x;
    extern __shared__ T buf[];
    for (int t = 0; t < TILE; t++)
        if (i + t * bx < n) out[i + t * bx] = in[i + t * bx] * coeff[0] * SCALE;
}
"""

LIMIT = 512


def within_limit(p):
    return p["bx"] * p["by"] <= LIMIT


def differ(a, b):
    return a != b


def tune_single_function_restriction():
    """Kernel Tuner 1.5 passes the params dict only to a restriction given alone."""
    x = numpy.zeros(1024, dtype=numpy.float32)
    return tune_kernel("plain", "__global__ void plain(float *x) { x[threadIdx.x] = bx; }", 1024, [x],
                       {"bx": [128, 256, 512, 1024], "by": [1, 2, 4]}, block_size_names=["bx", "by"],
                       restrictions=within_limit)


def tune_tuple_restriction():
    """(function, parameter names): translated by position (Kernel Tuner 1.5's own Searchspace
    rejects this form in its default solver path: no valid set to compare with)."""
    x = numpy.zeros(1024, dtype=numpy.float32)
    return tune_kernel("plain", "__global__ void plain(float *x) { x[threadIdx.x] = bx; }", 1024, [x],
                       {"bx": [128, 256], "by": [1, 2, 4], "tile": [1, 2]}, block_size_names=["bx", "by"],
                       restrictions=[(differ, ["by", "tile"])])


def tune():
    n = 4096
    unit = 1  # a closure value: Kernel Tuner 1.5 turns restriction lambdas into strings and loses these
    x = numpy.arange(n, dtype=numpy.float32)
    y = numpy.zeros_like(x)
    tune_params = OrderedDict(bx=[32, 64, 128, 256, 512, 1024], by=[1, 2, 4], tile=[1, 2, 4], unused=[0, 1])
    restrictions = [lambda p: p["tile"] <= 4 and p["bx"] % 64 == 0 or p["unused"] == 0,
                    lambda bx, tile: bx * tile >= 64,
                    "unused == 0 or bx >= 128"]
    metrics = OrderedDict()
    metrics["GB/s"] = lambda p: (2 * n * 4 / 1e9) / (p["time"] / 1e3)
    metrics["effective"] = lambda p: p["GB/s"] * p["tile"]
    metrics["eff2"] = "effective * 2"
    return tune_kernel("scale<float, tile>", kernel, lambda p: (n // p["tile"], 1), [y, x, numpy.int32(n)],
                       tune_params, grid_div_x=[lambda p: p["bx"] * unit], grid_div_y=["by"],
                       block_size_names=["bx", "by"], restrictions=restrictions,
                       smem_args={"size": lambda p: p["bx"] * p["tile"] * 4},
                       cmem_args={"coeff": numpy.ones(4, dtype=numpy.float32)}, defines={"SCALE": 2},
                       answer=[x * 2, None, None], atol=1e-3, metrics=metrics,
                       objective="GB/s", strategy="random_sample", strategy_options={"fraction": 0.5},
                       iterations=11)


if __name__ == "__main__":
    results, env = tune()
    tune_single_function_restriction()
    tune_tuple_restriction()
    print("best", env["best_config"])
