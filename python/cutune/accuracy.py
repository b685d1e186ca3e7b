"""kernel_tuner.accuracy: not provided by cutune (tunable precision and error metrics)."""


def __getattr__(name):
    raise AttributeError(f"cutune: kernel_tuner.accuracy.{name} is not provided by cutune (tunable "
                         "precision, accuracy observers)")
