"""kernel_tuner.observers.nvml: constructible; cutune does not run it (tune_kernel warns)."""
from .observer import BenchmarkObserver


class NVMLObserver(BenchmarkObserver):
    pass
