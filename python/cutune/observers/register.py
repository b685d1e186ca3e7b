"""kernel_tuner.observers.register: constructible; cutune does not run it (tune_kernel warns)."""
from .observer import BenchmarkObserver


class RegisterObserver(BenchmarkObserver):
    pass
