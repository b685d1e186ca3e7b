#!/usr/bin/env bash
# Sets up, builds and runs every CPU test (CTest, label gpu excluded). GPU tests are run on
# the lent GPU with: ctest --test-dir build -L gpu  (see results/ and README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/kt_venv.sh build/kt-venv  # Kernel Tuner for the kt-interop tests (they skip without it)
# The tests labelled material read files from outside the repository (tests/material/manifest.txt);
# without them they are reported as skipped.
material=${CUTUNE_TEST_MATERIAL:-$(sed -n 's/^CUTUNE_TEST_MATERIAL:PATH=//p' build/CMakeCache.txt)}
if [ ! -d "$material/data" ]; then
  echo "test: no test material at $material: the tests labelled material are skipped (scripts/fetch_test_material.sh fetches it)"
fi
ctest --test-dir build -LE gpu --output-on-failure -j "$(nproc)"
