"""Kernel Tuner 1.5's observers, run by cutune where it can (kernel_tuner/core.py):

- OutputObservers (AccuracyObserver, a script's own subclass) get each configuration's outputs,
  as the GPU worker sends them to the package's verifier (verifier.py): process_output(answer,
  result_host), then register_configuration(params), then get_results(), in Kernel Tuner's order
  (check_kernel_output runs before benchmark registers the configuration);
- a RegisterObserver reads num_regs from the device it was registered with: cutune's Device, whose
  num_regs the worker's driver read gives for each configuration;
- an NVMLObserver's observables that cutune's engine measures are asked of `cutune tune
  --observe` and come back under Kernel Tuner's names;
- anything else (NCU, PMT, PowerSensor, Tegra, AMD, a script's non-output observer, NVML
  observables cutune does not measure) is not run: one warning names it.
Observed values are numbers: anything else is refused with a warning naming the observer and key.
"""
import numbers

import numpy

from .observers.nvml import MEASURED as NVML_MEASURED
from .observers.observer import BenchmarkObserver, OutputObserver

# Fields of a Kernel Tuner result that an observer's key must not replace (the engine's own).
RESERVED = {"time", "times", "compile_time", "verification_time", "benchmark_time", "strategy_time",
            "framework_time", "timestamp", "__error__", "cutune_status"}


def _is(obj, cls, name):
    """An instance of cutune's class, or of Kernel Tuner's own of that name (a script that
    imports kernel_tuner's observers and cutune's tune_kernel)."""
    return isinstance(obj, cls) or any(c.__name__ == name for c in type(obj).__mro__)


def instantiate(observer, args):
    """Kernel Tuner's core.instantiate_observer: an instance, or a class or factory called with
    the device arguments."""
    if _is(observer, BenchmarkObserver, "BenchmarkObserver"):
        return observer
    if callable(observer):
        return instantiate(observer(args), args)
    raise TypeError(f"Invalid observer: {observer!r} does not extend BenchmarkObserver")


class Device:
    """What observers see as `self.dev` (Kernel Tuner registers its backend): the figures cutune
    has of the configuration being observed."""

    def __init__(self, name=""):
        self.name = name

    def set_resources(self, resources):
        if resources and "registers" in resources:
            self.num_regs = int(resources["registers"])
        elif hasattr(self, "num_regs"):
            del self.num_regs  # unknown for this configuration: RegisterObserver raises as Kernel Tuner's


class Plan:
    """Which of a call's observers cutune runs, and how."""

    def __init__(self, observers, device=0, platform=0, compiler=None, lang=None):
        args = dict(device=device, platform=platform, compiler=compiler, lang=lang)
        observers = [instantiate(o, args) for o in (observers or [])]
        self.output = [o for o in observers if _is(o, OutputObserver, "OutputObserver")]
        self.register = [o for o in observers if type(o).__name__ == "RegisterObserver"]
        self.nvml = []  # observables for `cutune tune --observe`
        self.warnings = []
        for o in observers:
            if o in self.output or o in self.register:
                continue
            if type(o).__name__ == "NVMLObserver":
                self._nvml(o)
            else:
                self.warnings.append(f"{type(o).__name__} is not run by cutune (it has no counterpart in cutune's "
                                     "measurement): its results are not in the rows")
        self.python = self.output + self.register  # observers called per configuration in Python
        self.int_keys = {"num_regs"}  # observed keys whose values were ints
        self.device = Device()
        for o in self.python:
            o.register_device(self.device)

    def _nvml(self, o):
        observables = list(getattr(o, "observables", []))
        self.nvml += [x for x in observables if x in NVML_MEASURED and x not in self.nvml]
        missing = [x for x in observables if x not in NVML_MEASURED]
        if missing:
            self.warnings.append(f"NVMLObserver: {', '.join(missing)} not measured by cutune (it measures "
                                 f"{', '.join(NVML_MEASURED)}): not in the rows")
        if getattr(o, "save_all", False):
            self.warnings.append("NVMLObserver(save_all=True): cutune keeps one reading per configuration, not "
                                 "per-iteration lists")

    def cli(self):
        return ["--observe", ",".join(self.nvml)] if self.nvml else []


def observe(plan, answer, result_host, params, resources, reserved, refused):
    """Runs the plan's Python observers on one configuration, in Kernel Tuner's order; returns
    {key: float}. A value that is no number, or whose key is a parameter's or one of Kernel
    Tuner's own fields, is left out and its message added to `refused` (a set: warned once)."""
    for o in plan.output:
        _call(o, "process_output", answer, result_host)
    plan.device.set_resources(resources)
    for o in plan.python:
        _call(o, "register_configuration", params)
    out = {}
    for o in plan.python:
        for key, value in _call(o, "get_results").items():
            why = _refusal(key, value, reserved)
            if why:
                refused.add(f"{type(o).__name__}: {key}={value!r} {why}: left out of the results")
                continue
            out[key] = float(value)
            if isinstance(value, (numbers.Integral, numpy.integer)):
                plan.int_keys.add(key)  # the engine keeps doubles: the rows give ints back as ints
    return out


class ObserverError(Exception):
    """An observer raised: the message names it and its method."""


def _call(o, method, *args):
    try:
        return getattr(o, method)(*args)
    except Exception as e:  # noqa: BLE001 -- the script's observer: its failure fails the configuration
        raise ObserverError(f"{type(o).__name__}.{method} raised {type(e).__name__}: {e}") from e


def _refusal(key, value, reserved):
    if not isinstance(key, str):
        return "has a key that is not a string"
    if key in RESERVED or key in reserved:
        return "has the name of a parameter or of one of Kernel Tuner's own fields"
    if isinstance(value, (bool, numpy.bool_)) or not isinstance(value, (numbers.Real, numpy.number)):
        return "is not a number"
    if isinstance(value, numpy.number) and not numpy.isrealobj(value):
        return "is not a real number"
    return ""
