#!/usr/bin/env python
"""A Kernel Tuner script as users write it (Kernel Tuner's vector_add example shape), run by
`python -m cutune` unchanged: tune_kernel returns results with real times."""
import json
import numpy
from kernel_tuner import tune_kernel

kernel_string = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = (blockIdx.x * block_size_x + threadIdx.x) * tile;
    for (int k = 0; k < tile; k++)
        if (i + k < n) c[i + k] = a[i + k] + b[i + k];
}
"""
size = 10000000
a = numpy.random.randn(size).astype(numpy.float32)
b = numpy.random.randn(size).astype(numpy.float32)
c = numpy.zeros_like(b)
n = numpy.int32(size)
tune_params = {"block_size_x": [64, 128, 256, 512, 1024], "tile": [1, 2, 4, 8]}
results, env = tune_kernel("vector_add", kernel_string, size, [c, a, b, n], tune_params,
                           grid_div_x=[lambda p: p["block_size_x"] * p["tile"]],
                           answer=[a + b, None, None, None],
                           metrics={"GB/s": lambda p: 3 * 4 * size / 1e9 / (p["time"] / 1e3)})
ok = [r for r in results if isinstance(r.get("time"), float)]
best = min(ok, key=lambda r: r["time"])
print(json.dumps({"results": len(results), "timed": len(ok), "best": {k: best[k] for k in ("block_size_x", "tile", "time", "GB/s")},
                  "device_name": env.get("device_name")}))
