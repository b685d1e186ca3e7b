"""Stand-in: kernel_tuner.observers.powersensor (constructible, never run)."""
from kernel_tuner.observers.observer import BenchmarkObserver


class PowerSensorObserver(BenchmarkObserver):
    pass
