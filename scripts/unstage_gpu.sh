#!/usr/bin/env bash
# On the GPU machine: unpacks what scripts/stage_gpu.sh packed (.gpu/bin.gz, .gpu/lib.gz) into
# .gpu/bin and .gpu/lib, where scripts/gpu_results.sh and the bench scripts look.
# Usage: scripts/unstage_gpu.sh && scripts/gpu_results.sh $OUT tests
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d .gpu/bin.gz ]; then
  echo "unstage_gpu.sh: .gpu/bin.gz: not found (run scripts/stage_gpu.sh here, then carry .gpu)" >&2
  exit 2
fi
for d in bin lib; do
  mkdir -p ".gpu/$d"
  for f in ".gpu/$d.gz"/*.gz; do
    [ -e "$f" ] || continue
    gunzip -c "$f" > ".gpu/$d/$(basename "$f" .gz)"
  done
done
chmod +x .gpu/bin/*
echo "unstaged: $(ls .gpu/bin | wc -l) binaries in .gpu/bin, $(ls .gpu/lib | wc -l) libraries in .gpu/lib"
