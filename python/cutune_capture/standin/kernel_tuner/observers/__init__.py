"""Observers under the capture: constructible (scripts build them before tune_kernel), never
run. tune_kernel records that observers were given; cutune measures time only."""
from kernel_tuner.observers.observer import (BenchmarkObserver, ContinuousObserver, IterationObserver,  # noqa: F401
                                             OutputObserver, PrologueObserver)
