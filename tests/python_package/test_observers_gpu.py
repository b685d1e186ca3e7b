#!/usr/bin/env python3
"""[gpu] Kernel Tuner's observers on real kernels: a vector add whose block size 64 writes a
wrong element, tuned with an AccuracyObserver (a metric callable), a script's own
OutputObserver subclass and a RegisterObserver. No configuration fails (with output observers
and no verify= Kernel Tuner takes the output as correct); the rows carry each configuration's
error (0 except the wrong one's), the script's observer's value, and num_regs as the driver
gives it (a positive count), which a metric reads.

    test_observers_gpu.py --cutune BIN --worker BIN
Exit 77 without a GPU or without numpy.
"""
import argparse
import os
import shutil
import sys
import tempfile

import numpy_python  # beside this file

numpy_python.ensure()
import numpy as np  # noqa: E402

SOURCE = r"""
__global__ void wrong_at_64(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i] + (block_size_x == 64 && i == 5 ? 1.0f : 0.0f);
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
    tmp = tempfile.mkdtemp(prefix="cutune-observers-gpu-")
    os.environ.update(CUTUNE_BIN=a.cutune, CUTUNE_WORKER=a.worker, CUTUNE_RUN_DIR=tmp,
                      CUTUNE_CACHE_DIR=os.path.join(tmp, "cubins"), CUTUNE_DB=os.path.join(tmp, "gpu.db"))
    import cutune
    from cutune.accuracy import AccuracyObserver
    from cutune.observers.observer import OutputObserver
    from cutune.observers.register import RegisterObserver

    class Wrong(OutputObserver):
        """A script's own observer: how many elements differ from the answer."""

        def process_output(self, answer, output):
            self.count = int(np.count_nonzero(answer[0] != output[0]))

        def register_configuration(self, params):
            self.block = params["block_size_x"]

        def get_results(self):
            return {"wrong_elements": self.count, "seen_block": self.block}
    try:
        n = 10007
        rng = np.random.default_rng(3)
        x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        args = [np.zeros(n, np.float32), x, y, np.int32(n)]
        observers = [AccuracyObserver(lambda p, q: float(np.max(np.abs(p - q))), "error_max"), Wrong(),
                     RegisterObserver()]
        results, _ = cutune.tune_kernel("wrong_at_64", SOURCE, n, args, {"block_size_x": [32, 64, 128]},
                                        answer=[x + y, None, None, None], observers=observers, quiet=True,
                                        metrics={"regs_x2": lambda p: 2 * p["num_regs"]})
        by_block = {r["block_size_x"]: r for r in results}
        check(sorted(by_block) == [32, 64, 128] and all(isinstance(r["time"], float) for r in results),
              f"every configuration timed: output observers, no verify= ({[str(r['time']) for r in results]})")
        check(abs(by_block[64].get("error_max", 0) - 1.0) < 1e-6 and by_block[32].get("error_max") == 0.0,
              f"error_max: 1 for block 64, 0 for the others ({[r.get('error_max') for r in results]})")
        check(by_block[64].get("wrong_elements") == 1 and by_block[128].get("wrong_elements") == 0,
              "a script's OutputObserver: its count per configuration")
        check(all(r.get("seen_block") == b for b, r in by_block.items()),
              "register_configuration got each configuration's parameters")
        check(all(isinstance(r.get("num_regs"), int) and r["num_regs"] > 0 for r in results),
              f"num_regs from the driver ({[r.get('num_regs') for r in results]})")
        check(all(r.get("regs_x2") == 2 * r.get("num_regs", -1) for r in results), "a metric reads num_regs")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
