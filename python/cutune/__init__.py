"""cutune for Kernel Tuner users: tune_kernel and run_kernel with Kernel Tuner 1.5's
signatures, tuned by cutune's engine (the `cutune` command underneath).

    import cutune as kernel_tuner          # one import changed
    python -m cutune SCRIPT.py args...     # or the script unchanged
"""
from . import file_utils, integration, observers, util  # noqa: F401
from .interface import UnsupportedOption, run_kernel, tune_kernel  # noqa: F401
from .integration import create_device_targets, store_results  # noqa: F401
from .selection import best_config  # noqa: F401

__version__ = "1.5.0"  # the Kernel Tuner version whose interface this package takes


def tune_kernel_T1(*args, **kwargs):
    raise NotImplementedError("cutune: kernel_tuner.tune_kernel_T1 is not provided by the package: run "
                              "`cutune tune FILE.json` on the T1 file")


def __getattr__(name):
    raise AttributeError(f"cutune: kernel_tuner.{name} is not provided by cutune (tune_kernel, run_kernel, util, "
                         "file_utils, integration, observers, accuracy, best_config are)")
