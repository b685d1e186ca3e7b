"""kernel_tuner.observers.tegra: constructible; cutune does not run it (tune_kernel warns)."""
from .observer import BenchmarkObserver


class TegraObserver(BenchmarkObserver):
    pass
