"""python3 -m cutune_capture [--out DIR] [--kt-space] SCRIPT.py [script args...]

Runs a Kernel Tuner script unchanged, with a stand-in `kernel_tuner` first on sys.path, and
writes per tune_kernel/run_kernel call DIR/<script>_<n>_<kernel>.json (T1), the kernel
source when it was a string, the arguments and answers as .bin files, and DIR/capture.json
listing the calls. Then: cutune tune DIR/<script>_<n>_<kernel>.json.

Exit status: 0 every call captured and the script ended normally; 2 a call uses something
cutune cannot take (one line each on stderr; the other calls are still written); 1 the script
itself failed, or the capture of a call did (what was captured stays, capture.json says so).
"""
import argparse
import json
import os
import runpy
import sys
import traceback

try:
    import numpy  # noqa: F401 -- Kernel Tuner scripts pass numpy arrays; say so before anything runs
except ImportError:
    print(f"cutune-capture: numpy is not importable by {sys.executable}: install python3-numpy, or run with a "
          "Python that has it (scripts/cutune-capture: CUTUNE_CAPTURE_PYTHON=...)", file=sys.stderr)
    sys.exit(2)

from . import session as session_module  # noqa: E402
from .kt_space import STANDIN_DIR  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(prog="cutune-capture", description=__doc__.split("\n\n")[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="output folder (default ./cutune-capture/<script name>)")
    parser.add_argument("--kt-space", action="store_true",
                        help="also write Kernel Tuner 1.5's valid configurations of each tune_kernel call "
                             "(<t1>.kt_space.json; needs the real kernel_tuner importable)")
    parser.add_argument("script")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    a = parser.parse_args(argv)
    if not os.path.isfile(a.script):
        print(f"cutune-capture: {a.script}: no such script", file=sys.stderr)
        return 2
    if a.out is None:
        a.out = os.path.join("cutune-capture", os.path.splitext(os.path.basename(a.script))[0])

    index = os.path.join(a.out, "capture.json")
    if os.path.isfile(index):  # capture.json lists one script's calls: never mix two scripts in a folder
        try:
            with open(index) as f:
                previous = json.load(f).get("script")
        except (OSError, ValueError):
            previous = None
        if previous and previous != os.path.abspath(a.script):
            print(f"cutune-capture: {index}: holds the capture of {previous}; use another --out for "
                  f"{a.script}", file=sys.stderr)
            return 2
    s = session_module.Session(a.out, a.script, kt_space=a.kt_space)
    session_module.SESSION = s
    script = os.path.abspath(a.script)
    # As `python SCRIPT` would: argv, the script's folder first on sys.path; the stand-ins before it.
    sys.argv = [script] + a.script_args
    sys.path[:0] = [STANDIN_DIR, os.path.dirname(script)]
    for k in [k for k in sys.modules if k in ("kernel_tuner", "pycuda") or k.startswith(("kernel_tuner.", "pycuda."))]:
        del sys.modules[k]
    status, message, code = "ok", None, 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            status, message, code = "script-failed", f"the script exited with {e.code}", 1
    except BaseException as e:  # noqa: BLE001 -- the script's failure is reported, the capture kept
        traceback.print_exc()
        status, message, code = "script-failed", f"{type(e).__name__}: {e}", 1
    unsupported = [c for c in s.calls if c["status"] != "captured"]
    if code == 0 and any(c["status"] == "error" for c in s.calls):
        status, code = "capture-failed", 1
    elif code == 0 and unsupported:
        status, code = "unsupported", 2
    s.write_index(status, message)
    captured = len(s.calls) - len(unsupported)
    summary = f"cutune-capture: {script}: {captured} of {len(s.calls)} calls captured in {s.out_dir}"
    if message:
        summary += f"; the script failed after that ({message}): what was captured is kept"
    print(summary, file=sys.stderr)
    if not s.calls:
        print(f"cutune-capture: {script}: the script called neither tune_kernel nor run_kernel", file=sys.stderr)
        code = code or 1
    return code


if __name__ == "__main__":
    sys.exit(main())
