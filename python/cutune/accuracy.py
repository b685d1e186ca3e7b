"""kernel_tuner.accuracy: the names exist so that scripts import and build them; tune_kernel
refuses a Tunable argument (tunable precision) and warns for an AccuracyObserver, naming them:
cutune does not tune element types."""
from collections import UserDict

from .observers.observer import OutputObserver


class Tunable(UserDict):
    def __init__(self, param_key, arrays):
        super().__init__(arrays if isinstance(arrays, dict) else {})
        self.param_key = param_key
        self.arrays = arrays


class TunablePrecision(Tunable):
    def __init__(self, param_key, array, dtypes=None):
        super().__init__(param_key, {})
        self.array = array
        self.dtypes = dtypes


class AccuracyObserver(OutputObserver):
    pass


def error_metric_from_name(user_key, EPS=1e-8):
    raise NotImplementedError("cutune: kernel_tuner.accuracy.error_metric_from_name is not provided by cutune "
                              "(accuracy metrics)")


def __getattr__(name):
    raise AttributeError(f"cutune: kernel_tuner.accuracy.{name} is not provided by cutune")
