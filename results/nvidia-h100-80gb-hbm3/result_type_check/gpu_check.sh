#!/bin/bash
# One device call: the gpu-labelled tests of the merged build, then a throughput A/B of the
# binaries before the typed result and the one tuning loop (old, 668a507) and of main with them (new), alternated.
set -uo pipefail
OUT=$1
scripts/unstage_gpu.sh
mkdir -p .gpu-old/bin && for f in .gpu-old/bin.gz/*.gz; do gunzip -c "$f" > ".gpu-old/bin/$(basename "$f" .gz)"; done
chmod +x .gpu-old/bin/*; ln -sfn ../.gpu/lib .gpu-old/lib
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm --format=csv | tee $OUT/gpu.txt
export PYTHONUNBUFFERED=1
[ "${SKIP_TESTS:-0}" = 1 ] || timeout 300 scripts/gpu_results.sh $OUT/r tests 2>&1 | tee $OUT/tests.txt
cp $OUT/r/results.tar.gz $OUT/gpu_tests.tar.gz 2>/dev/null
mkdir -p $OUT/ab
for round in $(seq 1 ${AB_ROUNDS:-2}); do
  for side in old new; do
    bin=.gpu/bin; [ $side = old ] && bin=.gpu-old/bin
    timeout 100 python3 -m studies.bench_throughput --bin $bin --out $OUT/ab/$side$round --skip-kt --skip-compile > $OUT/ab/$side$round.log 2>&1
    python3 - "$OUT/ab/$side$round/throughput.json" "$side$round" <<'PY'
import json,sys
try:
    d=json.load(open(sys.argv[1]))
    print(sys.argv[2], "configs", d["configs"], "cold_wall_s", round(d["cutune_wall_s"], 3), "warm_cache_wall_s", round(d["warm_cache"]["cutune_wall_s"], 3), "steady_overhead_ms_per_config", round(d["steady_overhead_ms_per_config"], 3))
except Exception as e: print(sys.argv[2], "no result:", e)
PY
  done
done | tee $OUT/ab/summary.txt
(cd $OUT && tar czf ab.tar.gz ab && rm -rf ab/old* ab/new*)
