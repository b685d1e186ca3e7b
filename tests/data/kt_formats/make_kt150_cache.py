"""Writes kt150_written.json and kt150_open.json with Kernel Tuner 1.5.0's own cache code.

Run with kernel_tuner==1.5.0 installed (pip install kernel_tuner==1.5.0); no GPU is needed:
the header comes from util.process_cache, each entry from util.store_cache with the result
dicts Kernel Tuner's runners build (ErrorConfig instances under "__error__" for failures,
numpy floats for the times), and kt150_written.json is closed with util.close_cache.
"""
import os
import sys
from types import SimpleNamespace

import numpy as np
from kernel_tuner import util

here = os.path.dirname(os.path.abspath(__file__))
tune_params = {"block_size_x": [128, 256], "use_shmem": [True, False], "alg": ["a", "b"],
               "factor": [1.0, 2.45]}


def write(path, close):
    if os.path.exists(path):
        os.remove(path)
    kernel_options = SimpleNamespace(kernel_name="vector_add", problem_size=(4096, 2))
    tuning_options = SimpleNamespace(tune_params=tune_params, simulation_mode=False,
                                     objective=["time"])
    runner = SimpleNamespace(get_device_info=lambda: SimpleNamespace(name="NVIDIA H100 80GB HBM3"),
                             simulation_mode=False)
    cache = util.process_cache(path, kernel_options, tuning_options, runner)
    rows = [
        ((128, True, "a", 1.0), None, [0.5, 0.25, 0.125]),
        ((256, True, "b", 2.45), util.CompilationFailedConfig(), None),
        ((128, False, "a", 2.45), util.RuntimeFailedConfig(), None),
        ((256, False, "b", 1.0), util.InvalidConfig(), None),
        ((256, True, "a", 1.0), None, [1.5, 1.25, 1.0, 3.0]),
    ]
    for element, error, times in rows:
        params = dict(zip(tune_params.keys(), element))
        result = {}
        if error is not None:
            result["__error__"] = error
        else:
            times = np.array(times, dtype=np.float64)
            result.update({"time": np.average(times), "times": times.tolist()})
        result["compile_time"] = 12.5
        result["verification_time"] = 0
        result["benchmark_time"] = 3.25 if error is None else 0
        params.update(result)
        params["timestamp"] = "2026-11-22 10:00:00.123456+00:00"
        key = ",".join([str(i) for i in element])
        util.store_cache(key, params, path, cache)
    if close:
        util.close_cache(path)


write(os.path.join(here, "kt150_written.json"), close=True)
write(os.path.join(here, "kt150_open.json"), close=False)
print("kernel_tuner", __import__("importlib.metadata").metadata.version("kernel_tuner"), file=sys.stderr)
