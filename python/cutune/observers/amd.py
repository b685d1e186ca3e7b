"""kernel_tuner.observers.amd: constructible; cutune does not run it (tune_kernel warns)."""
from .observer import BenchmarkObserver


class AMDSMIObserver(BenchmarkObserver):
    pass
