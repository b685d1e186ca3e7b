"""Stand-in: kernel_tuner.observers.pmt (constructible, never run)."""
from kernel_tuner.observers.observer import BenchmarkObserver


class PMTObserver(BenchmarkObserver):
    pass


class PMTContinuousObserver(BenchmarkObserver):
    pass
