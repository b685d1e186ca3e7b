"""kernel_tuner.nvml: not provided by cutune (it reads NVML itself with `cutune tune --energy`)."""


def __getattr__(name):
    raise AttributeError(f"cutune: kernel_tuner.nvml.{name} is not provided by cutune")
