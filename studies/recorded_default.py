#!/usr/bin/env python3
"""Writes a recording's default configuration into its header ("cutune_default"), for the
recordings that `cutune export` made before it wrote that field itself.

A tuning evaluates the problem's default configuration before its strategy proposes anything
when the problem names it (a built-in template's, a BAT file's: the speedup's baseline and its
author's guess), and a replay of the recording (`cutune tune --simulate`, `cutune score`) does
the same when the recording names it. Without the field a replay starts with the strategy's
proposals, as a tuning of a Kernel Tuner script (which names no default) does. Transpose's
named default 2,32,32,8 is within 4% of the optimum on an H100; its first listed values break
its restrictions.

Usage: python3 -m studies.recorded_default --cutune BIN --material REAL_KERNELS CASE RECORDING...

CASE is a case of studies/record_spaces.py (the problem file and sizes each recording was made
from); the default is what `cutune space KERNEL --json` says. A RECORDING (.json.gz) is rewritten
in place (one line before "cache", every other byte as it was), after checking that it holds
the default and that the default is the configuration it measured first (brute force through the
tuning loop: the default goes first). A case whose tuning evaluates no default first (`cutune space
--json`'s default_first: the problem names none, and every output is verified against a reference
or not at all) is refused. A case recorded from a captured Kernel Tuner script (kt:...) is captured
again here, so run this script with a Python that has numpy: such a T1 names no default, but where
the capture cannot run the script's reference (an `answer` that run_kernel computed), the default
configuration's output defines a correct one, and the tuning evaluates it first
(convolution_correct.py's second call). Bad input: one line, exit 2, no file changed.
"""
import argparse
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile

from studies.record_spaces import CASES, CaptureError, captured_t1

FIELD = "cutune_default"


def bad_input(message):
    print(f"recorded_default.py: {message}", file=sys.stderr)
    sys.exit(2)


def space_default(cutune, material, case, workdir):
    kernel, problem = CASES[case]
    if kernel.startswith("kt:"):
        script = kernel.split(":")[1]
        if not os.path.isfile(os.path.join(material, "kernel_tuner_examples", script)):
            bad_input(f"{case}: --material {material} has no kernel_tuner_examples/{script}")
        log = os.path.join(workdir, "capture.log")
        try:
            kernel = captured_t1(kernel, material, workdir, log)  # as the recording's call captured it
        except CaptureError:
            lines = open(log).read().strip().splitlines() if os.path.exists(log) else []
            bad_input(f"{case}: capturing {script} gave no T1 file (this Python needs numpy): "
                      f"{lines[-1] if lines else 'no output'}")
    elif kernel.endswith(".json"):
        kernel = os.path.join(material, kernel)
    cmd = [cutune, "space", kernel, "--json", *(["--problem", ",".join(problem)] if problem else [])]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        bad_input(f"--cutune {cutune}: cannot run ({e.strerror})")
    if r.returncode != 0:
        bad_input(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ''}")
    space = json.loads(r.stdout)
    if not space.get("default_first"):
        bad_input(f"{case}: its tuning evaluates no default first (the problem names none and verifies every "
                  "output against a reference or not at all): nothing to write")
    return space["default"]


def annotate(path, default_key):
    with gzip.open(path, "rb") as f:
        text = f.read().decode()
    doc = json.loads(text)
    keys = doc.get("tune_params_keys")
    cache = doc.get("cache")
    if not isinstance(keys, list) or not isinstance(cache, dict):
        bad_input(f"{path}: not a Kernel Tuner cache (tune_params_keys, cache)")
    if FIELD in doc:
        bad_input(f"{path}: already has {FIELD}")
    if default_key not in cache:
        bad_input(f"{path}: the default {default_key} is not recorded")
    default = {k: cache[default_key][k] for k in keys}
    # The configuration measured first (the earliest timestamp): the loop evaluates the default first.
    first = min(cache, key=lambda k: cache[k].get("timestamp", ""))
    # One line before "cache", the rest of the file byte for byte (Kernel Tuner's layout: one
    # entry a line).
    at = text.find('\n"cache": {')
    if at < 0:
        bad_input(f'{path}: no top-level "cache" line')
    text = text[:at + 1] + f'"{FIELD}": {json.dumps(default)},' + text[at:]
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as g:
        g.write(text.encode())
    return buf.getvalue(), first


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cutune", required=True)
    ap.add_argument("--material", required=True, help="the real_kernels folder (BAT's problem files)")
    ap.add_argument("case")
    ap.add_argument("recordings", nargs="+")
    args = ap.parse_args()
    if args.case not in CASES:
        bad_input(f"case '{args.case}' is not one of studies/record_spaces.py's ({', '.join(CASES)})")
    for p in args.recordings:
        if not p.endswith(".json.gz") or not os.path.isfile(p):
            bad_input(f"{p}: not a .json.gz recording")
    with tempfile.TemporaryDirectory() as workdir:
        default_key = space_default(args.cutune, args.material, args.case, workdir)
    written = [(p, *annotate(p, default_key)) for p in args.recordings]  # every check before any write
    for p, data, first in written:
        with open(p, "wb") as f:
            f.write(data)
        print(f"{p}: {FIELD} {default_key}" + ("" if first == default_key else
                                              f" (measured first: {first}, not the default)"))


if __name__ == "__main__":
    main()
