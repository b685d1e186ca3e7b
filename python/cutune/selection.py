"""The configuration cutune::loader selects, for CuPy and PyTorch users who compile and launch
kernels themselves: the same code as the C++ loader, through `cutune select --json` (the
command underneath; no GPU needed when `gpu` is given)."""
import json
import subprocess

from .engine import find_binary


class Selection(dict):
    """The selection as `cutune select --json` prints it: "config" (name -> value, as Python
    values where they read as numbers), "rung_name" (exact, selector, nearest problem, same
    compute capability, template default), "describe" (the loader's line), and the rest."""

    def describe(self):
        return self["describe"]


def _value(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def best_config(kernel, problem=None, winners=None, gpu=None, objective=None, selectors=True):
    """The configuration to launch `kernel` (a built-in template name or a T1 .json file) with
    at `problem` ("n=2**24,m=7", or a dict {"n": 16777216}) on `gpu` (a model key such as
    "NVIDIA H100 80GB HBM3/sm_90"; default: GPU 0's, which needs a GPU), from `winners` (a
    cutune DB or wisdom file; default: the DB `cutune tune` writes to). Returns a Selection.
    Raises ValueError with cutune's one-line message for bad input (a configuration in the file
    that the kernel's space does not declare, an unknown kernel or variable)."""
    if isinstance(problem, dict):
        problem = ",".join(f"{k}={v}" for k, v in problem.items())
    cmd = [find_binary(), "select", str(kernel), "--json"]
    for flag, value in (("--problem", problem), ("--winners", winners), ("--gpu", gpu), ("--objective", objective)):
        if value:
            cmd += [flag, str(value)]
    if not selectors:
        cmd.append("--no-selectors")
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode == 2:
        raise ValueError(done.stderr.strip())
    if done.returncode == 3:
        raise RuntimeError(done.stderr.strip() + " (give gpu='NAME/sm_XY' to select without one)")
    if done.returncode != 0:
        raise RuntimeError(f"cutune select failed ({done.returncode}): {done.stderr.strip()}")
    out = Selection(json.loads(done.stdout))
    out["config"] = {k: _value(v) for k, v in out["config"].items()}
    return out
