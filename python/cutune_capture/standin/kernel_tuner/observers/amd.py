"""kernel_tuner.observers.amd under the capture: the cutune package's (constructible, never run)."""
from cutune.observers.amd import AMDSMIObserver  # noqa: F401
