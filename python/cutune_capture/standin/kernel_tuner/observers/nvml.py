"""kernel_tuner.observers.nvml under the capture: the cutune package's (constructible, never run)."""
from cutune.observers.nvml import NVMLObserver  # noqa: F401
