"""kernel_tuner.observers.observer under the capture: the cutune package's base classes."""
from cutune.observers.observer import (BenchmarkObserver, ContinuousObserver, IterationObserver,  # noqa: F401
                                       OutputObserver, PrologueObserver)
