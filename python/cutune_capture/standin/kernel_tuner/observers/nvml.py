"""Stand-in: kernel_tuner.observers.nvml (constructible, never run)."""
from kernel_tuner.observers.observer import BenchmarkObserver


class NVMLObserver(BenchmarkObserver):
    pass
