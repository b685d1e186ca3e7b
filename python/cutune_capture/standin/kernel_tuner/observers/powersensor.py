"""kernel_tuner.observers.powersensor under the capture: the cutune package's (constructible, never run)."""
from cutune.observers.powersensor import PowerSensorObserver  # noqa: F401
