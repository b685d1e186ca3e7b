"""Stand-in: kernel_tuner.observers.tegra (constructible, never run)."""
from kernel_tuner.observers.observer import BenchmarkObserver


class TegraObserver(BenchmarkObserver):
    pass
