#!/usr/bin/env python3
"""Kernel Tuner's observers in the package, on the CPU.

The verifier's side of the conversation (python/cutune/verifier.py), driven from here as the GPU
worker drives it: Kernel Tuner 1.5's decision order (verify= decides; else output observers mean
correct; else a Tunable answer is compared by the default verify function), the observers'
calls in Kernel Tuner's order (process_output, register_configuration with the configuration's
own Python values, get_results), num_regs from the worker's resources, values that are no
number refused with a warning naming the observer and key, NaN carried as "NaN", an observer
that raises failing its configuration.

Then through `cutune tune` and the fake GPU worker (every output as uploaded; registers made
from the key): rows carry the observers' values and metrics read them, and a second run on the
same database gives them back from the store; an NVMLObserver's observables come back under
Kernel Tuner's names from the engine's own readings (`cutune tune --observe`).

    test_observers.py --cutune BIN --fake-worker BIN
Re-runs itself with a Python that has numpy when this one has none; exit 77 when none has.
"""
import argparse
import json
import os
import shutil
import socket
import struct
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))

import numpy_python  # noqa: E402 -- beside this file

numpy_python.ensure()
import numpy as np  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


_LENGTH = struct.Struct("=Q")


class Worker:
    """The GPU worker's end of the verifier socket (external_verifier.cpp's frames)."""

    def __init__(self, path, names):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.seq = 0
        self.send(json.dumps({"hello": 1, "arguments": names}).encode())
        self.wanted = json.loads(self.recv())["arguments"]

    def send(self, data):
        self.sock.sendall(_LENGTH.pack(len(data)) + data)

    def recv(self):
        (n,) = _LENGTH.unpack(self._exactly(_LENGTH.size))
        return self._exactly(n)

    def _exactly(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf

    def ask(self, indices, contents, registers=None):
        """One configuration: `contents` maps an argument index to its array."""
        self.seq += 1
        head = {"seq": self.seq, "config": ",".join(map(str, indices)), "indices": indices,
                "arguments": self.wanted}
        if registers is not None:
            head["resources"] = {"registers": registers}
        self.send(json.dumps(head).encode())
        for i in self.wanted:
            self.send(np.ascontiguousarray(contents[i]).astype(contents[i].dtype.newbyteorder("<")).tobytes())
        answer = json.loads(self.recv())
        assert answer["seq"] == self.seq
        return answer

    def close(self):
        self.sock.close()


def verifier(verify=None, answer=None, observers=None, tune_params=None, arguments=None):
    from cutune import observing
    from cutune.searchspace import Space
    from cutune.verifier import Verifier
    space = Space(tune_params or {"x": [1, 2]}, None, [])
    return Verifier(verify, answer, arguments, 1e-6, plan=observing.Plan(observers), space=space)


def recording_observer(calls, results=None):
    from cutune.observers.observer import OutputObserver

    class Recorder(OutputObserver):
        def process_output(self, answer, output):
            calls.append(("process_output", answer, output))

        def register_configuration(self, params):
            calls.append(("register_configuration", dict(params)))

        def get_results(self):
            calls.append(("get_results",))
            return dict(results or {"seen": len(calls)})
    return Recorder()


def observer_calls():
    from cutune.accuracy import AccuracyObserver
    from cutune.observers.register import RegisterObserver
    out, x = np.zeros(4, np.float32), np.arange(4, dtype=np.float32)
    args, answer = [out, x, np.int32(4)], [x + 1, None, None]
    calls = []
    acc = AccuracyObserver(lambda a, b: float(np.max(np.abs(a - b))), "error_max")
    v = verifier(answer=answer, observers=[recording_observer(calls), acc, RegisterObserver()],
                 tune_params={"x": ["a", "b"], "y": [1.5, 2.5]}, arguments=args)
    with v:
        w = Worker(v.path, ["out", "x", "n"])
        check(w.wanted == [0], f"the verifier asks for the outputs the answer names ({w.wanted})")
        r = w.ask([1, 0], {0: x + 0.5}, registers=37)
        w.close()
    check(r["ok"] is True, f"output observers and no verify=: the output is taken as correct ({r})")
    check(r["observed"].get("error_max") == 0.5, f"AccuracyObserver with a metric callable: its error ({r})")
    check(r["observed"].get("num_regs") == 37, f"RegisterObserver: the worker's registers ({r})")
    check("seen" in r["observed"], f"a script's OutputObserver subclass: its value ({r})")
    names = [c[0] for c in calls]
    check(names == ["process_output", "register_configuration", "get_results"],
          f"Kernel Tuner's order: process_output, register_configuration, get_results ({names})")
    if calls:
        check(calls[1][1] == {"x": "b", "y": 1.5}, f"register_configuration: the script's own values ({calls[1]})")
        ans, host = calls[0][1], calls[0][2]
        check(isinstance(ans[0], np.ndarray) and ans[1:] == [None, None], "process_output: the answer as a list")
        check(np.array_equal(host[0], x + 0.5) and host[1:] == [None, None],
              "process_output: result_host, the worker's bytes in the argument's type, None where not synced")


def decision_order():
    x = np.arange(4, dtype=np.float32)
    args = [np.zeros(4, np.float32), x]
    calls = []
    with verifier(verify=lambda a, r, atol: False, answer=[x, None], observers=[recording_observer(calls)],
                  arguments=args) as v:
        w = Worker(v.path, ["out", "x"])
        r = w.ask([0], {0: x})
        w.close()
    check(r["ok"] is False and calls and calls[0][0] == "process_output",
          f"verify= decides even with output observers, which still see the output ({r})")

    from cutune.accuracy import Tunable
    answer = Tunable("x", {1: [x, None], 2: [2 * x, None]})
    with verifier(answer=answer, arguments=args) as v:
        w = Worker(v.path, ["out", "x"])
        right, wrong = w.ask([1], {0: 2 * x}), w.ask([0], {0: 2 * x})
        w.close()
    check(right["ok"] is True, f"a Tunable answer: the one of the configuration (x=2) matches ({right})")
    check(wrong["ok"] is False and "allclose" in wrong["error"],
          f"... and the default verify function rejects the other's ({wrong})")

    from cutune.observers.register import RegisterObserver
    with verifier(answer=[x, None], observers=[RegisterObserver()], arguments=args) as v:
        w = Worker(v.path, ["out", "x"])
        r = w.ask([0], {}, registers=12)
        w.close()
    check(w.wanted == [] and r["ok"] is True and r["observed"] == {"num_regs": 12},
          f"only a RegisterObserver: no outputs sent, the engine's own check stands ({w.wanted}, {r})")


def scripts_own_register_observer():
    """A script's own BenchmarkObserver, as rte_sw_source_adding's tuning script writes one for
    Kernel Tuner's PyCUDA backend: get_results reads self.dev.func.num_regs."""
    from cutune import observing
    from cutune.observers import BenchmarkObserver

    class RegisterObserver(BenchmarkObserver):
        def get_results(self):
            return {"num_regs": self.dev.func.num_regs}

    class Hooked(BenchmarkObserver):
        def before_start(self):
            pass

        def get_results(self):
            return {}
    plan = observing.Plan([RegisterObserver(), Hooked()])
    check(len(plan.python) == 2, "a script's BenchmarkObservers are run per configuration")
    check(len(plan.warnings) == 1 and plan.warnings[0].startswith("Hooked: before_start not called"),
          f"... with a warning naming a per-launch hook it overrides ({plan.warnings})")
    x = np.arange(4, dtype=np.float32)
    with verifier(answer=[x, None], observers=[RegisterObserver()], arguments=[np.zeros(4, np.float32), x]) as v:
        w = Worker(v.path, ["out", "x"])
        r = w.ask([0], {}, registers=64)
        w.close()
    check(r["ok"] is True and r["observed"] == {"num_regs": 64}, f"self.dev.func.num_regs: the worker's count ({r})")


def refusals():
    from cutune.observers.observer import OutputObserver

    class Odd(OutputObserver):
        def process_output(self, answer, output):
            pass

        def get_results(self):
            return {"label": "fast", "x": 3.0, "time": 1.0, "nan": float("nan"), "count": np.int64(4)}

    class Broken(OutputObserver):
        def process_output(self, answer, output):
            raise ZeroDivisionError("no")

        def get_results(self):
            return {}
    x = np.arange(4, dtype=np.float32)
    args = [np.zeros(4, np.float32), x]
    v = verifier(answer=[x, None], observers=[Odd()], arguments=args)
    with v:
        w = Worker(v.path, ["out", "x"])
        r = w.ask([0], {0: x})
        w.close()
    check(r["ok"] is True and r["observed"] == {"nan": "NaN", "count": 4.0},
          f"numbers kept (NaN as \"NaN\"); a string, a parameter's name, a Kernel Tuner field left out ({r})")
    refused = sorted(v.refused)
    check(len(refused) == 3 and all(m.startswith("Odd: ") for m in refused)
          and any("label='fast' is not a number" in m for m in refused),
          f"each refusal said once, naming the observer and key ({refused})")
    v = verifier(answer=[x, None], observers=[Broken()], arguments=args)
    with v:
        w = Worker(v.path, ["out", "x"])
        r = w.ask([0], {0: x})
        w.close()
    check(r["ok"] is False and "Broken.process_output raised ZeroDivisionError" in r["error"],
          f"an observer that raises fails its configuration, named ({r})")


def accuracy_by_name():
    """AccuracyObserver("RMSE") needs accuracy.error_metric_from_name, which another branch makes
    real: until then this says so instead of failing."""
    from cutune.accuracy import AccuracyObserver
    try:
        obs = AccuracyObserver("RMSE", "error_rmse")
    except NotImplementedError as e:
        print(f"pending (error_metric_from_name not in this build): {e}")
        return
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 5.0])
    obs.process_output([a, None], [b, None])
    check(abs(obs.get_results()["error_rmse"] - np.sqrt(4 / 3)) < 1e-12, "AccuracyObserver('RMSE'): the RMSE")


KERNEL = """
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


def through_the_engine(a, tmp):
    import cutune
    from cutune.accuracy import AccuracyObserver
    from cutune.observers.nvml import NVMLObserver
    from cutune.observers.register import RegisterObserver
    os.environ.update(CUTUNE_BIN=a.cutune, CUTUNE_WORKER=a.fake_worker, CUTUNE_RUN_DIR=tmp,
                      CUTUNE_CACHE_DIR=os.path.join(tmp, "cubins"), CUTUNE_TUNE_OPTIONS="--compile-mode thread",
                      CUTUNE_DB=os.path.join(tmp, "observers.db"))
    n = 1000
    x = np.arange(n, dtype=np.float32)
    args = [np.zeros(n, np.float32), x, 2 * x, np.int32(n)]
    calls = []

    def tune():
        observers = [AccuracyObserver(lambda p, q: float(np.max(np.abs(p - q))), "error_max"),
                     recording_observer(calls, {"mine": 7}), RegisterObserver(), NVMLObserver(["mem_freq"])]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            results, _ = cutune.tune_kernel("vector_add", KERNEL, n, args, {"block_size_x": [32, 64]},
                                            answer=[3 * x, None, None, None], observers=observers, quiet=True,
                                            metrics={"regs2": lambda p: 2 * p["num_regs"]})
        return results, [str(m.message) for m in w]
    results, warned = tune()
    # The fake worker sends c as uploaded (zeros): the error is the answer's largest, 3 * 999.
    check(len(results) == 2 and all(isinstance(r["time"], float) for r in results),
          f"an AccuracyObserver: outputs not compared by the engine, every configuration timed ({results})")
    check(all(r.get("error_max") == 2997.0 for r in results), "rows carry the AccuracyObserver's error")
    check(all(r.get("mine") == 7 and isinstance(r.get("mine"), int) for r in results),
          "rows carry a script's observer's value (an int stays an int)")
    # fake_gpu_worker.cpp: registers = 16 + the key's length ("32", "64").
    check(all(r.get("num_regs") == 18 and r.get("regs2") == 36 for r in results),
          f"num_regs from the worker, and a metric reads it ({[(r.get('num_regs'), r.get('regs2')) for r in results]})")
    check(any("mem_freq" in m and "NVMLObserver" in m for m in warned),
          f"an NVML observable cutune does not measure: a warning naming it ({warned})")
    first = len(calls)
    # The same call again, as a second run of the script is (the problem is named after the
    # call's place in the script): every configuration comes from the database.
    import cutune.interface
    cutune.interface._CALLS[0] -= 1
    again, _ = tune()
    check(len(calls) == first, "a second run on the same database measures nothing again")
    check(sorted((r["block_size_x"], r.get("error_max"), r.get("num_regs")) for r in again)
          == sorted((r["block_size_x"], r.get("error_max"), r.get("num_regs")) for r in results),
          "... and its rows carry the observed values the store kept")
    del os.environ["CUTUNE_TUNE_OPTIONS"]


def nvml_observer(a, tmp):
    """NVMLObserver's observables cutune measures come back under Kernel Tuner's names and units
    (the fake worker's readings: 55 C, 250 W, 1980 MHz, 0.5 mJ per launch with energy on)."""
    import cutune
    from cutune.observers.nvml import NVMLObserver
    os.environ.update(CUTUNE_BIN=a.cutune, CUTUNE_WORKER=a.fake_worker, CUTUNE_RUN_DIR=tmp,
                      CUTUNE_CACHE_DIR=os.path.join(tmp, "cubins"), CUTUNE_TUNE_OPTIONS="--compile-mode thread",
                      CUTUNE_DB=os.path.join(tmp, "nvml.db"), FAKE_GPU_WORKER_NVML="1")
    n = 1000
    x = np.arange(n, dtype=np.float32)
    try:
        observers = [NVMLObserver(["nvml_energy", "nvml_power", "core_freq", "temperature"])]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            results, _ = cutune.tune_kernel("vector_add", KERNEL, n, [np.zeros(n, np.float32), x, x, np.int32(n)],
                                            {"block_size_x": [32, 64]}, observers=observers, quiet=True,
                                            metrics={"W": lambda p: p["nvml_power"]})
        check(not [m for m in w if "observers" in str(m.message)], "NVMLObserver of measured observables: no warning")
        got = [(r.get("nvml_energy"), r.get("nvml_power"), r.get("core_freq"), r.get("temperature"), r.get("W"))
               for r in results]
        check(len(got) == 2 and all(g == (0.0005, 250.0, 1980.0, 55.0, 250.0) for g in got),
              f"nvml_energy (J), nvml_power, core_freq, temperature in the rows, a metric reads one ({got})")
    finally:
        del os.environ["FAKE_GPU_WORKER_NVML"]
        del os.environ["CUTUNE_TUNE_OPTIONS"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cutune", required=True)
    ap.add_argument("--fake-worker", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="cutune-observers-test-")
    try:
        observer_calls()
        decision_order()
        scripts_own_register_observer()
        refusals()
        accuracy_by_name()
        through_the_engine(a, tmp)
        nvml_observer(a, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
