"""The C++ `cutune` command underneath the package: where it is, and one tuning run."""
import importlib.util
import json
import os
import shlex
import shutil
import subprocess

REPO_BUILD = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                          "build", "tuner", "cli", "cutune")


def find_binary():
    """$CUTUNE_BIN, then the install prefix this package sits in (<prefix>/share/cutune/python),
    then PATH, then the checkout's build tree."""
    env = os.environ.get("CUTUNE_BIN")
    if env:
        if not os.access(env, os.X_OK):
            raise FileNotFoundError(f"CUTUNE_BIN={env}: not an executable")
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    prefix = os.path.normpath(os.path.join(here, "..", "..", "..", ".."))
    candidate = os.path.join(prefix, "bin", "cutune")
    if os.path.basename(os.path.dirname(os.path.dirname(here))) == "cutune" and os.access(candidate, os.X_OK):
        return candidate
    on_path = shutil.which("cutune")
    if on_path:
        return on_path
    if os.access(REPO_BUILD, os.X_OK):
        return REPO_BUILD
    raise FileNotFoundError("cutune: the `cutune` command was not found: set CUTUNE_BIN, put it on PATH, or build "
                            "the checkout (cmake --build build --target cutune)")


def engine_env():
    """The environment of the `cutune` command: this one, plus $CUTUNE_CUPY_INCLUDE naming the
    header folder of the CuPy this interpreter has (lang="cupy" kernels include <cupy/...>), found
    without importing CuPy; the engine would otherwise ask the python3 on PATH, which may be
    another interpreter without it."""
    env = dict(os.environ)
    if "CUTUNE_CUPY_INCLUDE" not in env:
        try:
            spec = importlib.util.find_spec("cupy")
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin:
            folder = os.path.join(os.path.dirname(spec.origin), "_core", "include")
            if os.path.isdir(folder):
                env["CUTUNE_CUPY_INCLUDE"] = folder
    return env


class NoGpuError(RuntimeError):
    """What tuning without a usable GPU raises (Kernel Tuner raises a RuntimeError from its
    CUDA backend there too)."""


def tune(t1_file, cache_file, report_file, options, quiet=False):
    """Runs `cutune tune`; returns the report (a dict). Raises NoGpuError when the engine says
    there is no GPU, RuntimeError naming the command otherwise."""
    # $CUTUNE_TUNE_OPTIONS: more `cutune tune` options (e.g. "--compile-mode thread --samples 20").
    # One the package also sets (--strategy, --time-budget, ...) replaces the package's: the CLI
    # refuses an option given twice.
    extra = shlex.split(os.environ.get("CUTUNE_TUNE_OPTIONS", ""))
    cmd = [find_binary(), "tune", t1_file, "--cache", cache_file, "--report", report_file]
    cmd += _without(list(options), {x for x in extra if x.startswith("--")}) + extra
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=engine_env())
    if not quiet and proc.stdout:
        print(proc.stdout, end="")
    if proc.returncode == 3:
        raise NoGpuError(f"cutune: no GPU to tune on: {proc.stderr.strip()}")
    if proc.returncode != 0:
        raise RuntimeError(f"cutune: `{' '.join(cmd)}` failed (exit {proc.returncode}): {proc.stderr.strip()}")
    if proc.stderr and not quiet:
        print(proc.stderr, end="")
    try:
        with open(report_file) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _without(options, names):
    """options (["--flag", "value", "--switch", ...]) less the options named, with their values."""
    out, skip = [], False
    for x in options:
        if x.startswith("--"):
            skip = x in names
        if not skip:
            out.append(x)
    return out


def run(t1_file, out_dir, options, quiet=False):
    """Runs `cutune run` (one configuration once, its arguments written to out_dir). Raises
    NoGpuError without a GPU, RuntimeError naming the command and saying why otherwise (a
    configuration that does not compile or run: Kernel Tuner's run_kernel raises there too)."""
    cmd = [find_binary(), "run", t1_file, "--outputs", out_dir] + list(options)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=engine_env())
    if proc.returncode == 3:
        raise NoGpuError(f"cutune: no GPU to run on: {proc.stderr.strip()}")
    if proc.returncode != 0:
        raise RuntimeError(f"cutune: `{' '.join(cmd)}` failed (exit {proc.returncode}): {proc.stderr.strip()}")
    if not quiet and proc.stderr:
        print(proc.stderr, end="")


def read_cache(cache_file):
    """Kernel Tuner's cache file as cutune writes it (closed or still open)."""
    with open(cache_file) as f:
        text = f.read().rstrip()
    try:
        return json.loads(text)
    except ValueError:  # left open by an interrupted run, as Kernel Tuner reads it: close it
        return json.loads(text.rstrip(",") + "}}")
