"""kernel_tuner.observers.tegra under the capture: the cutune package's (constructible, never run)."""
from cutune.observers.tegra import TegraObserver  # noqa: F401
