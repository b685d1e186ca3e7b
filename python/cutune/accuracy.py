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
    """Kernel Tuner 1.5's AccuracyObserver: the error of each configuration's outputs against the
    answer (the largest over the answer's non-None entries), under `key` in the results. Run by
    cutune on the outputs the GPU worker sends back for verification (observing.py)."""

    def __init__(self, metric=None, key="error", *, atol=1e-8):
        if not metric:
            metric = "rmse"
        if isinstance(metric, str):
            # At construction, as Kernel Tuner does: an unknown name raises here.
            metric = error_metric_from_name(metric, atol)
        self.key = key
        self.metric = metric
        self.result = None

    def process_output(self, answers, outputs):
        errors = []
        for answer, output in zip(answers, outputs):
            if answer is not None:
                errors.append(self.metric(answer, output))
        self.result = max(errors)

    def get_results(self):
        return dict([(self.key, self.result)])


def error_metric_from_name(user_key, EPS=1e-8):
    raise NotImplementedError("cutune: kernel_tuner.accuracy.error_metric_from_name is not provided by cutune "
                              "(accuracy metrics)")


def __getattr__(name):
    raise AttributeError(f"cutune: kernel_tuner.accuracy.{name} is not provided by cutune")
