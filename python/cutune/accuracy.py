"""kernel_tuner.accuracy: tunable arguments and error metrics, as Kernel Tuner 1.5 has them.

A Tunable argument holds several arrays; the configuration's value of a tunable parameter (or
of a callable or expression over the parameters) selects the one passed to the kernel. cutune
evaluates that selection in Python for every configuration of the space (select_for_configuration,
exactly as Kernel Tuner calls it) and hands the engine every array once, with the index of the
selected one per configuration (cutune.Configurations in the T1 file)."""
import logging
import re
from collections import UserDict

import numpy as np

from .observers.observer import OutputObserver


class Tunable(UserDict):
    """Several arrays for one kernel argument, keyed by the values of `param_key`: a parameter
    name, a callable of the configuration, or a Python expression over the parameters."""

    def __init__(self, param_key, arrays):
        if isinstance(arrays, (tuple, list)):
            arrays = dict(enumerate(arrays))
        super().__init__(arrays)
        self.param_key = param_key

    def selection_key(self, params):
        """The key `params` selects (not yet looked up)."""
        if callable(self.param_key):
            return self.param_key(params)
        if self.param_key in params:
            return params[self.param_key]
        # Kernel Tuner evaluates with the parameters as globals and locals (it adds __builtins__
        # to the dict it is given: a copy keeps the caller's configuration clean).
        scope = dict(params)
        return eval(self.param_key, scope, scope)

    def select_for_configuration(self, params):
        """The array `params` selects; nested Tunables select again. KeyError for a key that is
        not one of the arrays', with Kernel Tuner's words."""
        option = self.selection_key(params)
        if option not in self.data:
            raise KeyError(f"'{option}' is not a valid parameter value, should be one of: "
                           f"{', '.join(map(str, self.data.keys()))}")
        chosen = self.data[option]
        return chosen.select_for_configuration(params) if isinstance(chosen, Tunable) else chosen

    def __call__(self, params):
        return self.select_for_configuration(params)


def _find_bfloat16_if_available():
    """numpy's own bfloat16, else ml_dtypes', jax's or tensorflow's; None (with Kernel Tuner's
    warning) when none of them is installed."""
    try:
        return np.dtype("bfloat16")
    except TypeError:
        pass
    for module, attribute in (("ml_dtypes", "bfloat16"), ("jax.numpy", "bfloat16")):
        try:
            return getattr(__import__(module, fromlist=[attribute]), attribute)
        except (ImportError, AttributeError):
            pass
    try:
        from tensorflow import bfloat16
        return bfloat16.as_numpy_dtype
    except (ImportError, AttributeError):
        pass
    logging.warning("could not find `bfloat16` data type for numpy, please install either the package "
                    "`ml_dtypes`, `jax`, or `tensorflow`")
    return None


_HALF = ("half", "f16", "float16", "__half", "khalf", 16)
_SINGLE = ("float", "single", "f32", "float32", "kfloat", 32)
_DOUBLE = ("double", "f64", "float64", "kdouble", 64)
_BFLOAT16 = ("bfloat16", "bf16", "kbfloat16", "__nv_bfloat16")


def _to_float_dtype(x):
    """A precision's name (C, CUDA or numpy spelling, any case, or a bit count) as a numpy dtype;
    other names go to np.dtype, which raises TypeError for an unknown one."""
    if isinstance(x, str):
        x = x.lower()
    if x in _BFLOAT16:
        found = _find_bfloat16_if_available()
        if found is not None:
            return found
    if x in _HALF:
        return np.half
    if x in _SINGLE:
        return np.float32
    if x in _DOUBLE:
        return np.float64
    return np.dtype(x)


class TunablePrecision(Tunable):
    """One array in several precisions (default half, float, double and, where available,
    bfloat16), selected by the value of `param_key`."""

    def __init__(self, param_key, array, dtypes=None):
        if not dtypes:
            dtypes = dict(half=np.half, float=np.single, double=np.double)
            bfloat16 = _find_bfloat16_if_available()
            if bfloat16 is not None:
                dtypes["bfloat16"] = bfloat16
        if isinstance(dtypes, (list, tuple)):
            dtypes = {name: _to_float_dtype(name) for name in dtypes}
        # A numpy scalar stays a scalar (a by-value argument in each precision).
        source = array if isinstance(array, np.generic) else np.array(array)
        super().__init__(param_key, {name: source.astype(dtype) for name, dtype in dtypes.items()})


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


# Each metric over the reference a and the output b (both float64), eps guarding divisions
# and logarithms. The relative root mean square clamps a itself, not |a|, as Kernel Tuner does.
def _mse(a, b, eps):
    return np.average(np.square(a - b))


def _rmse(a, b, eps):
    return np.sqrt(_mse(a, b, eps))


def _nrmse(a, b, eps):
    return np.sqrt(_mse(a, b, eps) / np.average(np.square(a)))


def _mae(a, b, eps):
    return np.average(np.abs(a - b))


def _mre(a, b, eps):
    return np.average(np.abs(a - b) / np.maximum(np.abs(a), eps))


def _rmsre(a, b, eps):
    return np.sqrt(np.average(np.square(a - b) / np.square(np.maximum(a, eps))))


def _male(a, b, eps):
    return np.average(np.abs(np.log10(a + eps) - np.log10(b + eps)))


def _rmsle(a, b, eps):
    return np.sqrt(np.average(np.square(np.log10(a + eps) - np.log10(b + eps))))


def _max_abs(a, b, eps):
    return np.amax(np.abs(a - b))


def _max_rel(a, b, eps):
    return np.amax(np.abs(a - b) / np.maximum(np.abs(a), eps))


# Normalised names (see _normalise_metric_name) -> metric.
_METRICS = {"mse": _mse, "mean squared": _mse,
            "rmse": _rmse, "root mean squared": _rmse,
            "nrmse": _nrmse, "normalized root mean squared": _nrmse,
            "mae": _mae, "absolute": _mae, "mean absolute": _mae,
            "mre": _mre, "relative": _mre, "mean relative": _mre,
            "rmsre": _rmsre, "root mean squared relative": _rmsre,
            "male": _male, "mean absolute logarithmic": _male,
            "rmsle": _rmsle, "root mean squared logarithmic": _rmsle,
            "maximum absolute": _max_abs, "maximum": _max_abs,
            "maximum relative": _max_rel}

# Whole words spelled more than one way, in the order they are replaced.
_SYNONYMS = (("average", "mean"), ("avg", "mean"), ("square", "squared"), ("sq", "squared"), ("max", "maximum"),
             ("rel", "relative"), ("abs", "absolute"), ("log", "logarithmic"))


def _normalise_metric_name(name):
    """'Root-Mean_Square error' -> 'root mean squared': lower case, the word 'error' dropped,
    runs of spaces, '_' and '-' as one space, abbreviations spelled out."""
    key = re.sub(r"\berror\b", " ", name.lower())
    key = re.sub(r"[\s_-]+", " ", key).strip()
    for short, full in _SYNONYMS:
        key = re.sub(rf"\b{short}\b", full, key)
    return key


def error_metric_from_name(user_key, EPS=1e-8):
    """The error metric a name means (MSE, RMSE, NRMSE, MAE, MRE, RMSRE, MALE, RMSLE, maximum
    absolute, maximum relative; spelled out or abbreviated, any case) as a function of the
    reference and the output, computed in float64. ValueError for an unknown name."""
    metric = _METRICS.get(_normalise_metric_name(user_key))
    if metric is None:
        raise ValueError(f"invalid error metric provided: {user_key}")
    return lambda a, b: metric(a.astype(np.float64, copy=False), b.astype(np.float64, copy=False), EPS)


def __getattr__(name):
    raise AttributeError(f"cutune: kernel_tuner.accuracy.{name} is not provided by cutune")
