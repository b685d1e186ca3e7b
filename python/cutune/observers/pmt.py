"""kernel_tuner.observers.pmt: constructible; cutune does not run it (tune_kernel warns)."""
from .observer import BenchmarkObserver


class PMTObserver(BenchmarkObserver):
    pass
class PMTContinuousObserver(BenchmarkObserver):
    pass
