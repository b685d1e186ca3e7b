"""kernel_tuner.observers.ncu under the capture: the cutune package's (constructible, never run)."""
from cutune.observers.ncu import NCUObserver  # noqa: F401
