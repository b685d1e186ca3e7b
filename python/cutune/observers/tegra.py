"""kernel_tuner.observers.tegra: constructible; cutune cannot run it (tune_kernel warns, naming it)."""
from .observer import _NotRun


class TegraObserver(_NotRun):
    pass
