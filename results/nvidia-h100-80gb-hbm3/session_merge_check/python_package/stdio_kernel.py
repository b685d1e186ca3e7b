#!/usr/bin/env python
"""A PyCUDA-era script: the kernel includes <cstdio> and <cmath> and passes -O3, which NVRTC
refuses; cutune's auto compiler picks nvcc."""
import json
import numpy
from kernel_tuner import tune_kernel

kernel_string = """
#include <cstdio>
#include <cmath>
__global__ void scale(float *y, const float *x, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) y[i] = sqrtf(fabsf(x[i])) * 2.0f;
}
"""
size = 1 << 22
x = numpy.random.randn(size).astype(numpy.float32)
y = numpy.zeros_like(x)
results, env = tune_kernel("scale", kernel_string, size, [y, x, numpy.int32(size)],
                           {"block_size_x": [128, 256, 512]}, compiler_options=["-O3"],
                           answer=[numpy.sqrt(numpy.abs(x)) * 2.0, None, None])
ok = [r for r in results if isinstance(r.get("time"), float)]
print(json.dumps({"results": len(results), "timed": len(ok), "times": [r.get("time") for r in results]}))
