"""--kt-space: the valid configurations real Kernel Tuner 1.5 builds for a captured call.

The script imported the stand-in `kernel_tuner`, so the real package is imported under its own
name for a moment (stand-in modules out of sys.modules and its folder off sys.path), and
put back afterwards; the real Searchspace class keeps working, as its globals hold the real
modules. Computed here, in the capture, because the original restrictions may be lambdas
that exist only in the running script.
"""
import json
import os
import sys

from .translate import native

STANDIN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "standin")
_SEARCHSPACE = None


def _shadowed(name):
    return name in ("kernel_tuner", "pycuda") or name.startswith(("kernel_tuner.", "pycuda."))


def real_searchspace():
    global _SEARCHSPACE
    if _SEARCHSPACE is not None:
        return _SEARCHSPACE
    saved = {k: v for k, v in sys.modules.items() if _shadowed(k)}
    saved_path = list(sys.path)
    for k in saved:
        del sys.modules[k]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != STANDIN_DIR]
    try:
        import importlib
        module = importlib.import_module("kernel_tuner.searchspace")
        if os.path.abspath(module.__file__).startswith(STANDIN_DIR):
            raise ImportError("the stand-in shadowed kernel_tuner.searchspace")
        _SEARCHSPACE = module.Searchspace
    finally:
        for k in [k for k in sys.modules if _shadowed(k)]:
            del sys.modules[k]
        sys.modules.update(saved)
        sys.path[:] = saved_path
    return _SEARCHSPACE


def config_key(values):
    """Kernel Tuner's cache key of a configuration: values joined by commas."""
    return ",".join(str(native(v)) for v in values)


def valid_keys(tune_params, restrictions, block_size_names, max_threads=1024):
    Searchspace = real_searchspace()
    space = Searchspace(tune_params, restrictions, max_threads, block_size_names=block_size_names)
    return sorted(config_key(c) for c in space.list)


def write_kt_space(out_dir, base, opts, call):
    """Write <base>.kt_space.json: Kernel Tuner's valid set for the call's original options."""
    name = base + ".kt_space.json"
    try:
        keys = valid_keys(opts["tune_params"], opts.get("restrictions"), call.block_size_names)
        doc = {"tune_params_keys": list(call.tune_params), "block_size_names": call.block_size_names,
               "max_threads": 1024, "size": len(keys), "keys": keys}
    except Exception as e:  # noqa: BLE001 -- reported in the file and capture.json, the capture goes on
        doc = {"error": f"{type(e).__name__}: {e}"}
        call.warnings.append(f"--kt-space: Kernel Tuner's Searchspace failed: {doc['error']}")
    with open(os.path.join(out_dir, name), "w") as f:
        json.dump(doc, f)
    return name
