#!/usr/bin/env python
"""An energy objective from an observer: the observer constructs under the capture, the metric
over its measurement cannot be carried (cutune measures time): one line, exit 2."""
import numpy
from kernel_tuner import tune_kernel
from kernel_tuner.observers.nvml import NVMLObserver
x = numpy.zeros(1024, dtype=numpy.float32)
obs = NVMLObserver(["nvml_energy", "temperature"])
tune_kernel("k", "__global__ void k(float *x) { x[threadIdx.x] = 1.0f; }", 1024, [x], {"block_size_x": [32, 64]},
            observers=[obs], metrics={"GFLOPS/W": lambda p: 1.0 / p["nvml_energy"]}, objective="GFLOPS/W")
