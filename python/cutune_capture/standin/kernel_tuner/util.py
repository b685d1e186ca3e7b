"""kernel_tuner.util under the capture: the cutune package's (Kernel Tuner 1.5's helpers and checks)."""
import cutune.util
from cutune.util import *  # noqa: F401,F403


def __getattr__(name):
    return getattr(cutune.util, name)
