"""Stand-in: kernel_tuner.observers.amd (constructible, never run)."""
from kernel_tuner.observers.observer import BenchmarkObserver


class AMDSMIObserver(BenchmarkObserver):
    pass
