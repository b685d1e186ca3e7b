"""kernel_tuner.observers.pmt: constructible; cutune cannot run it (tune_kernel warns, naming it)."""
from .observer import _NotRun


class PMTObserver(_NotRun):
    pass


class PMTContinuousObserver(_NotRun):
    pass
