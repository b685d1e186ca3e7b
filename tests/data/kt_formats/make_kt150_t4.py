"""Writes kt150_t4.json: Kernel Tuner 1.5.0's T4 output (file_utils.get_t4_results, dumped
as store_output_file does) for the results in kt150_written.json. Needs kernel_tuner==1.5.0."""
import json
import os

from kernel_tuner import util
from kernel_tuner.file_utils import get_t4_results

here = os.path.dirname(os.path.abspath(__file__))
cache = util.read_cache(os.path.join(here, "kt150_written.json"), open_cache=False)
results = []
for r in cache["cache"].values():
    r = dict(r)
    r.setdefault("strategy_time", 0)
    r.setdefault("framework_time", 0)
    results.append(r)
out = get_t4_results(results, cache["tune_params"], objective="time")
with open(os.path.join(here, "kt150_t4.json"), "w+") as fh:
    json.dump(out, fh, cls=util.NpEncoder)
