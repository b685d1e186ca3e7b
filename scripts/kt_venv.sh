#!/usr/bin/env bash
# Makes the virtual environment the Kernel Tuner interop tests run in ("proof against
# the real tool"): build/kt-venv (git-ignored) with Kernel Tuner from PyPI, pinned, and
# jsonschema. Python only for tests, never inside cutune.
#
# Never fails its caller: when the venv cannot be made (no python3-venv, PyPI unreachable) it
# says why and leaves none, and the kt-interop CTest tests report themselves SKIPPED.
# Usage: scripts/kt_venv.sh [VENV_DIR]   (default build/kt-venv)
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-build/kt-venv}
# kernel_tuner 1.5.0 is the newest release (pip index versions kernel-tuner) and installs
# without a GPU; jsonschema as scripts/fetch_kt_wheels.sh pins it.
PINS=(kernel_tuner==1.5.0 jsonschema==4.26.0)
PY=${PYTHON:-python3}

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" - "${PINS[@]}" <<'PYEOF' 2>/dev/null; then
import sys
from importlib.metadata import version
sys.exit(any(version(p.split("==")[0]) != p.split("==")[1] for p in sys.argv[1:]))
PYEOF
  echo "kt_venv: $VENV has ${PINS[*]}"
  exit 0
fi
rm -rf "$VENV"
if ! "$PY" -m venv "$VENV" >/dev/null 2>&1; then
  echo "kt_venv: '$PY -m venv' failed (python3-venv missing?): the kt-interop tests will be SKIPPED"
  rm -rf "$VENV"
  exit 0
fi
echo "kt_venv: installing ${PINS[*]} from PyPI into $VENV (pip's lines below; a minute or so)"
if ! "$VENV/bin/python" -m pip install --progress-bar off --disable-pip-version-check --timeout 30 "${PINS[@]}" \
    | { grep --line-buffered -E '^(Collecting|Installing|Successfully|Requirement|ERROR)' || true; }; then
  echo "kt_venv: pip could not install ${PINS[*]} (PyPI unreachable?): the kt-interop tests will be SKIPPED"
  rm -rf "$VENV"
  exit 0
fi
echo "kt_venv: made $VENV with ${PINS[*]}"
