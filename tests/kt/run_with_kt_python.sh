#!/bin/sh
# Runs a test with Kernel Tuner's venv Python (scripts/kt_venv.sh), or reports it skipped (exit 77,
# CTest's SKIP_RETURN_CODE) where there is none. A script file, not an `sh -c` string: CMake splits
# a list at every ';', which broke the inline form.
py=$1
shift
if [ ! -x "$py" ]; then
  echo "SKIPPED: no Kernel Tuner venv at $py (run scripts/kt_venv.sh)"
  exit 77
fi
exec "$py" "$@"
