"""kernel_tuner.observers.pmt under the capture: the cutune package's (constructible, never run)."""
from cutune.observers.pmt import PMTObserver, PMTContinuousObserver  # noqa: F401
