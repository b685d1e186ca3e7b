#!/bin/bash
# One device call: every gpu-labelled suite of main with the per-configuration resources, the
# shape sweep and run_kernel; the run_kernel GPU test; a shape sweep end to end
# (studies/sweep_on_gpu.sh); the held-out shape regret (studies.shape_regret), shortened to fit
# the call. Usage (repository root, .gpu staged): bash .../gpu_check.sh OUT
set -uo pipefail
OUT=$1
scripts/unstage_gpu.sh
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv | tee $OUT/gpu.txt
timeout 200 scripts/gpu_results.sh $OUT/r tests > $OUT/tests.txt 2>&1; tail -7 $OUT/tests.txt
timeout 60 python3 tests/python_package/test_kernel_outputs_gpu.py --cutune .gpu/bin/cutune \
  --worker .gpu/bin/cutune-worker > $OUT/kernel_outputs_gpu.log 2>&1
echo "kernel_outputs_gpu rc $?: $(tail -1 $OUT/kernel_outputs_gpu.log)"
timeout 120 studies/sweep_on_gpu.sh .gpu/bin $OUT/sweep 12; echo "sweep_on_gpu rc $?"
cat $OUT/sweep/checks.txt 2>/dev/null | tail -8
timeout ${REGRET_S:-240} python3 -m studies.shape_regret --bin .gpu/bin --out $OUT/regret --budget 10 \
  --time-cap 0.05 > $OUT/regret.log 2>&1; echo "shape_regret rc $?"; tail -25 $OUT/regret.log
(cd $OUT && tar czf check.tar.gz r sweep regret *.log *.txt 2>/dev/null && rm -rf r sweep)
