#!/usr/bin/env python3
"""cutune's valid space of every T1/CAFF file of the real kernels equals Kernel Tuner's.

For each JSON file under shared/data/real_kernels that is a T1 problem (KernelSpecification
and ConfigurationSpace), Kernel Tuner 1.5's Searchspace is built the way BAT's Kernel Tuner
runner feeds tune_kernel (batbench/backends/kernelbackend/kerneltuner_runner.py):
tune_params = eval(Values) per parameter, restrictions = the Conditions' Expressions,
block_size_names = the LocalSize entries that are not digits, plus "block_size_z" when fewer
than three, then tune_kernel's own padding (util.append_default_block_size_names); without
LocalSize, tune_kernel's own choice (util.check_block_size_params_names_list). The whole set
of keys must equal what `cutune space FILE --keys` prints, at max_threads 1024 (no device)
and at a smaller device limit.

Exit codes: 0 pass, 1 fail, 77 skipped (no Kernel Tuner, no material).
"""
import argparse
import json
import subprocess
import sys
import time
from collections import OrderedDict
from pathlib import Path

SKIP = 77

try:
    from kernel_tuner import util as kt_util
    from kernel_tuner.searchspace import Searchspace
except ImportError as e:
    print(f"SKIPPED: Kernel Tuner is not importable ({e}); run scripts/kt_venv.sh")
    sys.exit(SKIP)


def t1_files(root):
    for path in sorted(root.rglob("*.json")):
        try:
            spec = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(spec, dict) and "KernelSpecification" in spec and "ConfigurationSpace" in spec:
            yield path, spec


def kt_block_size_names(spec, tune_params):
    local = spec["KernelSpecification"].get("LocalSize")
    if local:
        names = [str(n) for n in local.values() if not str(n).isdigit()]
        if len(names) < 3:
            names.append("block_size_z")
    else:
        names = kt_util.check_block_size_params_names_list(None, tune_params)
    if names is None:
        names = []
    kt_util.append_default_block_size_names(names)
    return names


def kt_keys(spec, max_threads):
    cs = spec["ConfigurationSpace"]
    tune_params = OrderedDict((p["Name"], eval(str(p["Values"]))) for p in cs["TuningParameters"])
    restrictions = [c["Expression"] if isinstance(c, dict) else c for c in cs.get("Conditions", [])]
    names = kt_block_size_names(spec, tune_params)
    space = Searchspace(tune_params, restrictions, max_threads, block_size_names=names)
    return {",".join(str(v) for v in config) for config in space.list}, names


def cutune_keys(cutune, path, max_threads):
    p = subprocess.run([cutune, "space", str(path), "--keys", "--max-threads", str(max_threads)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"cutune space {path} --keys: exit {p.returncode}\n{p.stderr}")
    keys = p.stdout.split()
    if len(keys) != len(set(keys)):
        raise AssertionError(f"{path}: cutune lists a configuration twice")
    return set(keys)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cutune", required=True)
    ap.add_argument("--material", required=True, help="the test material folder (tests/material/manifest.txt)")
    a = ap.parse_args()
    root = Path(a.material) / "data" / "real_kernels"
    files = list(t1_files(root))
    if not files:
        print(f"SKIPPED: no T1 files under {root}")
        return SKIP
    failures = 0
    for path, spec in files:
        # 1024: no device known. 256: a device limit below the blocks some files list.
        for max_threads in (1024, 256):
            t0 = time.time()
            expected, names = kt_keys(spec, max_threads)
            t1 = time.time()
            got = cutune_keys(a.cutune, path, max_threads)
            t2 = time.time()
            rel = path.relative_to(root)
            if got == expected:
                print(f"ok: {rel} max_threads={max_threads}: {len(got)} configurations, the same set "
                      f"(block_size_names {names}; Kernel Tuner {t1 - t0:.1f} s, cutune {t2 - t1:.1f} s)")
            else:
                failures += 1
                print(f"FAIL: {rel} max_threads={max_threads}: Kernel Tuner {len(expected)}, cutune {len(got)}; "
                      f"only Kernel Tuner: {sorted(expected - got)[:5]}, only cutune: {sorted(got - expected)[:5]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
