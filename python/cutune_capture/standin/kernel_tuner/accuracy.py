"""kernel_tuner.accuracy for the capture: the cutune package's. A Tunable argument has no exact
T1 translation without its per-configuration selection, so the capture writes the call through
the package's evaluation (cutune.Configurations with a variant column per Tunable)."""
from cutune.accuracy import AccuracyObserver, Tunable, TunablePrecision, error_metric_from_name  # noqa: F401
