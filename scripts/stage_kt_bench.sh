#!/usr/bin/env bash
# Stages, on this machine, what studies/kt_corpus/gpu_benchmark.py needs on the lent GPU machine
# (which has no internet) beside .gpu (scripts/stage_gpu.sh):
#   .kt-wheels/                  Kernel Tuner 1.5.0 and the wheels the machine lacks (scripts/fetch_kt_wheels.sh)
#   .kt-bench/kt_corpus.tar.gz   the restored corpus (scripts/fetch_kt_corpus.py), every hash checked
# Both are git-ignored; carry them with .gpu. Prints their sizes and the total the device call
# carries (64 MiB at most, counted in disk blocks).
# Usage: scripts/stage_kt_bench.sh [CORPUS_DIR]   (default: fetch_kt_corpus.py's, restored there if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${1:-${CUTUNE_TEST_MATERIAL:-$(cd .. && pwd)/shared}/kt_corpus}
PY=${PYTHON:-python3}

if ! "$PY" scripts/fetch_kt_corpus.py --dest "$corpus" --check >/dev/null 2>&1; then
  echo "stage_kt_bench: restoring the corpus into $corpus"
  "$PY" scripts/fetch_kt_corpus.py --dest "$corpus"
fi
mkdir -p .kt-bench
# The folder itself, named kt_corpus in the archive (gpu_benchmark.py looks for it there).
tar -C "$(dirname "$corpus")" -czf .kt-bench/kt_corpus.tar.gz --transform "s|^$(basename "$corpus")|kt_corpus|" \
  "$(basename "$corpus")"
if [ "$(ls .kt-wheels/kernel_tuner-1.5.0-*.whl 2>/dev/null | wc -l)" -eq 0 ]; then
  scripts/fetch_kt_wheels.sh .kt-wheels
fi

mib() { du -s --block-size=1M "$@" 2>/dev/null | awk '{s += $1} END {print s + 0}'; }
tree=$(git ls-files -z | du -c --block-size=1M --files0-from=- 2>/dev/null | tail -n 1 | cut -f1)
echo "staged: .kt-bench $(mib .kt-bench) MiB (corpus $(du -h .kt-bench/kt_corpus.tar.gz | cut -f1)), .kt-wheels $(mib .kt-wheels) MiB ($(ls .kt-wheels/*.whl | wc -l) wheels)"
if [ -d .gpu ]; then
  total=$((tree + $(mib .gpu) + $(mib .kt-bench) + $(mib .kt-wheels)))
  echo "with the tracked tree (${tree} MiB) and .gpu ($(mib .gpu) MiB): ${total} MiB of the device call's 64"
  if [ "$total" -gt 64 ]; then
    echo "over 64 MiB: for the call, rm results/strategies/*.kt_traces.json.xz (git checkout -- results/ after it)"
  fi
else
  echo "no .gpu yet: scripts/stage_gpu.sh (the tracked tree is ${tree} MiB)"
fi
