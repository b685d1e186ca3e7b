"""kernel_tuner.observers.register under the capture: the cutune package's (constructible, never run)."""
from cutune.observers.register import RegisterObserver  # noqa: F401
