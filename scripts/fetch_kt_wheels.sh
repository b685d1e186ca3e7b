#!/usr/bin/env bash
# Downloads, on this machine (which reaches PyPI), the wheels Kernel Tuner needs on the lent GPU
# machine (Ubuntu 24.04, python3.12, no internet; numpy, scipy, pandas, scikit-learn and
# cuda-bindings 13 are preinstalled there, see ../shared/GPU.md) into .kt-wheels/ (git-ignored).
# studies/bench_throughput.py installs them there with `pip install --no-index --target`.
#
# Pinned: kernel_tuner (newest 1.x) and what it imports at start-up that the device lacks:
# python-constraint2 (its search space), jsonschema (+ attrs, referencing, rpds-py,
# jsonschema-specifications, typing-extensions for referencing on Python < 3.13), xmltodict
# and packaging (kernel_tuner.file_utils). pymoo is only for the NSGA strategies: not fetched.
# For studies/bench_strategies.py's strategies: scikit-optimize (skopt; + pyaml, PyYAML; joblib
# comes with scikit-learn) and pyatf (pyatf_strategies; numpy only), as scripts/kt_venv.sh pins them.
# Usage: scripts/fetch_kt_wheels.sh [DEST]   (default .kt-wheels), then carry ".kt-wheels".
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${1:-.kt-wheels}
PY=${PYTHON:-python3}

PINS=(
  kernel_tuner==1.5.0
  python-constraint2==2.9.0
  jsonschema==4.26.0
  attrs==26.1.0
  referencing==0.37.0
  rpds-py==2026.9.1
  jsonschema-specifications==2025.9.1
  typing-extensions==4.16.0
  xmltodict==1.0.4
  packaging==26.3
  scikit-optimize==0.10.2
  pyaml==26.7.0
  PyYAML==6.0.4
  pyatf==0.0.13
)

mkdir -p "$DEST"
for pin in "${PINS[@]}"; do
  # Compiled packages (python-constraint2, rpds-py) need the manylinux wheel; pure-Python
  # ones are tagged py3-none-any, which pip accepts for either platform, but fall back to
  # --platform any in case an index only offers that tag.
  if ! "$PY" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
      --python-version 3.12 --implementation cp --abi cp312 --platform manylinux2014_x86_64 \
      --no-deps -d "$DEST" "$pin"; then
    "$PY" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
      --python-version 3.12 --platform any --no-deps -d "$DEST" "$pin"
  fi
done
ls -1 "$DEST"
echo "$(ls -1 "$DEST"/*.whl | wc -l) wheels, $(du -sh "$DEST" | cut -f1) in $DEST"
