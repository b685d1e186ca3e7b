"""kernel_tuner.observers.powersensor: constructible; cutune does not run it (tune_kernel warns)."""
from .observer import BenchmarkObserver


class PowerSensorObserver(BenchmarkObserver):
    pass
