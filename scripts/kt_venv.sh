#!/usr/bin/env bash
# Makes the virtual environment the Kernel Tuner interop tests and studies/bench_strategies.py run
# in ("proof against the real tool"): build/kt-venv (git-ignored) with Kernel Tuner from PyPI,
# pinned, and jsonschema; and the optional packages of Kernel Tuner's strategies that
# bench_strategies.py runs: scikit-optimize (skopt) and pyatf (pyatf_strategies). Python only for
# tests and benchmarks, never inside cutune.
#
# Never fails its caller: when the venv cannot be made (no python3-venv, PyPI unreachable) it
# says why and leaves none, and the kt-interop CTest tests report themselves SKIPPED; when only
# the optional packages cannot be installed it says so and keeps the venv (bench_strategies.py
# then names the strategies that lack them). An existing venv with Kernel Tuner gets the missing
# optional packages added, not remade.
# Usage: scripts/kt_venv.sh [VENV_DIR]   (default build/kt-venv)
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-build/kt-venv}
# kernel_tuner 1.5.0 is the newest release (pip index versions kernel-tuner) and installs
# without a GPU; jsonschema as scripts/fetch_kt_wheels.sh pins it.
PINS=(kernel_tuner==1.5.0 jsonschema==4.26.0)
# The newest releases; pyatf 0.0.13 needs a shim for Kernel Tuner 1.5.0 (bench_strategies.py's
# kt_pyatf_space says why). scripts/fetch_kt_wheels.sh pins the same for the GPU machine.
# ml_dtypes: numpy's bfloat16, as Kernel Tuner's scripts get it (tests/test_element_check_numpy.py,
# test_capture_dtypes.py check cutune's bfloat16 against it).
OPTIONAL=(scikit-optimize==0.10.2 pyatf==0.0.13 ml_dtypes==0.7.0)
PY=${PYTHON:-python3}

has() {  # has PIN...: the venv's Python has exactly these versions
  "$VENV/bin/python" - "$@" <<'PYEOF' 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(any(version(p.split("==")[0]) != p.split("==")[1] for p in sys.argv[1:]))
PYEOF
}

install() {  # install WHAT PIN...: pip's lines, its status
  echo "kt_venv: installing ${*:2} from PyPI into $VENV ($1; pip's lines below)"
  "$VENV/bin/python" -m pip install --progress-bar off --disable-pip-version-check --timeout 30 "${@:2}" \
    | { grep --line-buffered -E '^(Collecting|Installing|Successfully|Requirement|ERROR)' || true; }
}

optional() {
  if has "${OPTIONAL[@]}"; then
    return
  fi
  if ! install "optional: Kernel Tuner's skopt and pyatf_strategies, ml_dtypes' bfloat16" "${OPTIONAL[@]}"; then
    echo "kt_venv: pip could not install ${OPTIONAL[*]}: the venv is kept without them" \
         "(bench_strategies.py cannot run skopt, pyatf_strategies; the bfloat16 checks are skipped)"
  fi
}

if [ -x "$VENV/bin/python" ] && has "${PINS[@]}"; then
  optional
  echo "kt_venv: $VENV has ${PINS[*]}"
  exit 0
fi
rm -rf "$VENV"
if ! "$PY" -m venv "$VENV" >/dev/null 2>&1; then
  echo "kt_venv: '$PY -m venv' failed (python3-venv missing?): the kt-interop tests will be SKIPPED"
  rm -rf "$VENV"
  exit 0
fi
if ! install "a minute or so" "${PINS[@]}"; then
  echo "kt_venv: pip could not install ${PINS[*]} (PyPI unreachable?): the kt-interop tests will be SKIPPED"
  rm -rf "$VENV"
  exit 0
fi
optional
echo "kt_venv: made $VENV with ${PINS[*]}"
