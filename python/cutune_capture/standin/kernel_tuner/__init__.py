"""Stand-in for Kernel Tuner 1.5, first on sys.path under `python -m cutune_capture`.

tune_kernel and run_kernel record their call as a T1 file (cutune_capture.session) instead
of compiling and timing; they return what a script needs to go on. Anything else the real
package has and this one lacks fails with a message that says so.
"""
from kernel_tuner.interface import run_kernel, tune_kernel  # noqa: F401
from kernel_tuner import util, file_utils, integration  # noqa: F401
from kernel_tuner.integration import create_device_targets, store_results  # noqa: F401

__version__ = "1.5.0"


def __getattr__(name):
    raise AttributeError(f"cutune capture: kernel_tuner.{name} is not provided by the stand-in "
                         "(only tune_kernel, run_kernel, util, file_utils, integration)")
