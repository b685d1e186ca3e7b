"""kernel_tuner.observers: the classes exist so that scripts construct them; cutune does not run
them (tune_kernel warns naming each one); it measures time, and energy with `cutune tune --energy`."""
from .observer import BenchmarkObserver, ContinuousObserver, IterationObserver, OutputObserver, PrologueObserver  # noqa: F401
