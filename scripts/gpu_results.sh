#!/usr/bin/env bash
# The issue-2 GPU run: the gpu-labelled tests, then `cutune tune reduction` (n = 2^28 float32)
# and `cutune tune vector_add` into a fresh DB, then `cutune query`. Run on the lent GPU from
# the repository root, with the binaries staged by scripts/stage_gpu.sh in .gpu/bin:
#   scripts/gpu_results.sh OUT_DIR
# OUT_DIR gets devices.json, gpu_tests.log, {reduction,vector_add}.{json,log} and query.txt;
# copy them into results/<gpu-slug>/. The DB is a fresh one in a temporary folder.
set -uo pipefail
out=${1:?usage: scripts/gpu_results.sh OUT_DIR}
bin=${CUTUNE_BIN:-.gpu/bin}
mkdir -p "$out"
export CUTUNE_TEMPLATE_DIR=$PWD/kernel_templates CUTUNE_TEST_DATA_DIR=$PWD/tests/data
db=$(mktemp -d)/cutune.db
status=0
"$bin/cutune" devices --json > "$out/devices.json" || status=1
"$bin/test_runner" "[gpu]" --durations yes > "$out/gpu_tests.log" 2>&1 || status=1
tail -3 "$out/gpu_tests.log"
"$bin/cutune" tune reduction --problem 'n=2**28' --db "$db" --report "$out/reduction.json" \
  > "$out/reduction.log" 2>&1 || status=1
tail -9 "$out/reduction.log"
"$bin/cutune" tune vector_add --db "$db" --report "$out/vector_add.json" > "$out/vector_add.log" 2>&1 || status=1
tail -9 "$out/vector_add.log"
"$bin/cutune" query --db "$db" | tee "$out/query.txt" || status=1
exit $status
