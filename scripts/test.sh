#!/usr/bin/env bash
# Sets up, builds and runs every CPU test (CTest, label gpu excluded). GPU tests are run on
# the lent GPU with: ctest --test-dir build -L gpu  (see results/ and README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/kt_venv.sh build/kt-venv  # Kernel Tuner for the kt-interop tests (they skip without it)
ctest --test-dir build -LE gpu --output-on-failure -j "$(nproc)"
