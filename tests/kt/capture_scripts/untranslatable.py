#!/usr/bin/env python
"""A restriction the capture cannot translate (a loop): one line naming it, exit 2; the
script goes on and its second call is still captured."""
import numpy
import kernel_tuner


def odd_rule(p):
    total = 0
    for v in p.values():
        total += v
    return total % 2 == 0


x = numpy.zeros(1024, dtype=numpy.float32)
code = "__global__ void k(float *x) { x[threadIdx.x] = 1.0f; }"
kernel_tuner.tune_kernel("k", code, 1024, [x], {"block_size_x": [32, 64]}, restrictions=[odd_rule])
kernel_tuner.tune_kernel("k", code, 1024, [x], {"block_size_x": [32, 64]}, verify=lambda a, b, atol=None: True,
                         answer=[numpy.ones(1024, dtype=numpy.float32)])
