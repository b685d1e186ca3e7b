#!/bin/bash
# One device call: every gpu-labelled suite (tunable arguments, observers, tuning on first use
# merged), the package's three GPU tests (run_kernel, a TunablePrecision kernel, observers), the
# on-miss benchmark, and the corpus scripts the merges concern (kernel_float's TunablePrecision
# with AccuracyObservers, rte's RegisterObserver) against Kernel Tuner 1.5.0.
# Usage (repository root; .gpu staged by scripts/stage_gpu.sh plus studies/bench_on_miss.sh stage,
# .kt-wheels and .kt-bench by scripts/stage_kt_bench.sh):
#   bash studies/gpu_checks/observers_tunable_on_miss.sh OUT   (CHECK_TOTAL: seconds for all, default 570)
set -uo pipefail
OUT=$1
scripts/unstage_gpu.sh
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv | tee $OUT/gpu.txt
step() { local t=$SECONDS; "$@"; echo "[$1 ${*: -1}] rc $? in $((SECONDS - t)) s"; }
for t in kernel_outputs_gpu tunable_gpu observers_gpu; do
  s=$SECONDS
  timeout 60 python3 tests/python_package/test_$t.py --cutune .gpu/bin/cutune --worker .gpu/bin/cutune-worker \
    > $OUT/$t.log 2>&1
  echo "$t rc $? in $((SECONDS - s)) s: $(tail -1 $OUT/$t.log)"
done
s=$SECONDS; BUDGET=10 KERNELS="reduction:n=16777216" timeout 80 studies/bench_on_miss.sh run $OUT/on_miss > $OUT/on_miss.log 2>&1
echo "on_miss rc $? in $((SECONDS - s)) s"; tail -4 $OUT/on_miss.log
step timeout $(( (${CHECK_TOTAL:-570} - SECONDS) / 2 )) scripts/gpu_results.sh $OUT/r tests > $OUT/tests.txt 2>&1; tail -8 $OUT/tests.txt
left=$((${CHECK_TOTAL:-570} - SECONDS))
s=$SECONDS; timeout $left python3 -m studies.kt_corpus.gpu_benchmark --out $OUT/kt --bin .gpu/bin --budget 15 --max-calls 1 \
  --total $((left - 10)) --only kernel_float_vector_add rte_sw_source_adding > $OUT/kt.log 2>&1
echo "kt benchmark rc $? in $((SECONDS - s)) s"; tail -8 $OUT/kt.log
(cd $OUT && tar czf check.tar.gz r on_miss kt *.log *.txt 2>/dev/null && rm -rf r on_miss kt *.log)
