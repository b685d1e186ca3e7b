"""kernel_tuner.observers.powersensor: constructible; cutune cannot run it (tune_kernel warns, naming it)."""
from .observer import _NotRun


class PowerSensorObserver(_NotRun):
    pass
