"""`import kernel_tuner` (and kernel_tuner.X.Y) resolving to cutune's modules: a sys.meta_path
finder, so that a script runs unchanged under `python -m cutune`."""
import importlib
import importlib.abc
import importlib.util
import sys


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "kernel_tuner" or fullname.startswith("kernel_tuner."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        target = "cutune" + spec.name[len("kernel_tuner"):]
        try:
            return importlib.import_module(target)
        except ModuleNotFoundError as e:
            if e.name != target:
                raise
            raise ModuleNotFoundError(f"cutune: {spec.name} is not provided by cutune (it stands in for "
                                      "kernel_tuner with tune_kernel, run_kernel, util, file_utils, integration, "
                                      "observers, accuracy, nvml)", name=spec.name) from None

    def exec_module(self, module):
        pass


def install():
    for k in [k for k in sys.modules if k == "kernel_tuner" or k.startswith("kernel_tuner.")]:
        del sys.modules[k]
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
