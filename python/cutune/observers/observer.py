"""Kernel Tuner 1.5's observer base classes (kernel_tuner/observers/observer.py): abstract as
there, so that a script's subclass that lacks get_results (or process_output) fails the same way.
cutune runs OutputObservers on each configuration's outputs (observing.py); the per-launch hooks
(before_start, during, ...) have no place in cutune's timing and are not called."""
from abc import ABC, abstractmethod


class BenchmarkObserver(ABC):
    def register_device(self, dev):
        self.dev = dev

    def register_configuration(self, params):
        pass

    def before_start(self):
        pass

    def after_start(self):
        pass

    def during(self):
        pass

    def after_finish(self):
        pass

    @abstractmethod
    def get_results(self):
        pass


class IterationObserver(BenchmarkObserver):
    pass


class ContinuousObserver(BenchmarkObserver):
    def __init__(self, name, observables, parent, continuous_duration=1):
        self.parent, self.name = parent, name
        supported = [name + "_power", name + "_energy", "power_readings"]
        for obs in observables:
            if obs not in supported:
                raise ValueError(f"Observable {obs} not in supported: {supported}")
        self.observables = observables
        self.continuous_duration = continuous_duration
        self.results = None

    def get_results(self):
        return {}


class OutputObserver(BenchmarkObserver):
    @abstractmethod
    def process_output(self, answer, output):
        pass


class PrologueObserver(BenchmarkObserver):
    @abstractmethod
    def before_start(self):
        pass

    @abstractmethod
    def after_finish(self):
        pass


class _NotRun(BenchmarkObserver):
    """An observer of Kernel Tuner's that cutune cannot run: constructible with its arguments
    (tune_kernel warns, naming it); it observes nothing."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def get_results(self):
        return {}
