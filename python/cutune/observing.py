"""Kernel Tuner 1.5's observers, run by cutune where it can (kernel_tuner/core.py):

- OutputObservers (AccuracyObserver, a script's own subclass) get each configuration's outputs,
  as the GPU worker sends them to the package's verifier (verifier.py): process_output(answer,
  result_host), then register_configuration(params), then get_results(), in Kernel Tuner's order
  (check_kernel_output runs before benchmark registers the configuration);
- a RegisterObserver, or a script's own BenchmarkObserver, gets register_configuration(params) and
  get_results() per configuration, its `self.dev` being cutune's Device, whose num_regs the
  worker's driver read gives (the per-launch hooks are not called: cutune times launches itself);
- an NVMLObserver's observables that cutune's engine measures are asked of `cutune tune
  --observe` and come back under Kernel Tuner's names;
- anything else (NCU, PMT, PowerSensor, Tegra, AMD, continuous and prologue observers, NVML
  observables cutune does not measure) is not run: one warning names it.
Observed values are numbers: anything else is refused with a warning naming the observer and key.
"""
import numbers
import types

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
    has of the configuration being observed. num_regs as Kernel Tuner's cuda-python backend has
    it, and as func.num_regs, where scripts written for the PyCUDA backend read it."""

    def __init__(self):
        self.func = types.SimpleNamespace()

    def set_resources(self, resources):
        for holder in (self, self.func):
            if resources and "registers" in resources:
                holder.num_regs = int(resources["registers"])
            elif hasattr(holder, "num_regs"):
                del holder.num_regs  # unknown for this configuration: reading it raises, as in Kernel Tuner


# Kernel Tuner's (and cutune's stand-in) observer modules: their classes are known by name.
_LIBRARY = ("kernel_tuner.observers", "kernel_tuner.accuracy", "cutune.observers", "cutune.accuracy")
# Called around each launch of Kernel Tuner's benchmark loop: cutune times launches itself.
_HOOKS = ("before_start", "after_start", "during", "after_finish")


def _from_library(o):
    return type(o).__module__.startswith(_LIBRARY)


def _overridden_hooks(o):
    base = next((c for c in type(o).__mro__ if c.__name__ == "BenchmarkObserver"), None)
    return [h for h in _HOOKS if base is not None and getattr(type(o), h, None) is not getattr(base, h, None)]


class Plan:
    """Which of a call's observers cutune runs, and how."""

    def __init__(self, observers, device=0, platform=0, compiler=None, lang=None):
        args = dict(device=device, platform=platform, compiler=compiler, lang=lang)
        observers = [instantiate(o, args) for o in (observers or [])]
        self.output, self.other, self.nvml, self.warnings = [], [], [], []
        for o in observers:
            self._classify(o)
        self.python = self.output + self.other  # observers called per configuration in Python
        self.int_keys = {"num_regs"}  # observed keys whose values were ints
        self.device = Device()
        for o in self.python:
            o.register_device(self.device)

    def _classify(self, o):
        name = type(o).__name__
        if _is(o, OutputObserver, "OutputObserver"):
            self.output.append(o)
        elif name == "NVMLObserver" and _from_library(o):
            self._nvml(o)
        elif any(c.__name__ in ("ContinuousObserver", "PrologueObserver") for c in type(o).__mro__) or (
                _from_library(o) and name != "RegisterObserver"):
            self.warnings.append(f"{name} is not run by cutune (it has no counterpart in cutune's measurement): "
                                 "its results are not in the rows")
        else:
            # RegisterObserver, or a script's own BenchmarkObserver: its get_results per
            # configuration, with the device's figures (num_regs) as Kernel Tuner's backend has them.
            self.other.append(o)
            hooks = _overridden_hooks(o)
            if hooks:
                self.warnings.append(f"{name}: {', '.join(hooks)} not called by cutune (it times launches "
                                     "itself); register_configuration and get_results are, per configuration")

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
