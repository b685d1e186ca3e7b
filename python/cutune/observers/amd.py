"""kernel_tuner.observers.amd: constructible; cutune cannot run it (tune_kernel warns, naming it)."""
from .observer import _NotRun


class AMDSMIObserver(_NotRun):
    pass
