#!/usr/bin/env bash
# Tuning on first use on the lent GPU -> OUT/on_miss_<kernel>.json (bench/loader/on_miss.cpp says
# what is measured: first launch with on_miss off and on, time until the winner is used, launches
# before the switch, launch overhead before and after it, GPU time of the default and the winner).
#   studies/bench_on_miss.sh stage     (here, after scripts/stage_gpu.sh) adds cutune-bench-on-miss
#                                      to .gpu/bin.gz (scripts/unstage_gpu.sh unpacks it)
#   studies/bench_on_miss.sh run OUT   (on the lent GPU, repository root, .gpu unstaged)
# BUDGET (default 10) is the tuning's --time-budget; KERNELS the "kernel:problem" pairs measured.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: studies/bench_on_miss.sh stage | run OUT}

if [ "$mode" = stage ]; then
  build=${CUTUNE_STAGE_BUILD:-build-release}
  cmake --build "$build" --target cutune-bench-on-miss
  mkdir -p .gpu/bin.gz
  strip -o .gpu/cutune-bench-on-miss "$build/bench/loader/cutune-bench-on-miss"
  gzip -9 -c .gpu/cutune-bench-on-miss > .gpu/bin.gz/cutune-bench-on-miss.gz
  rm .gpu/cutune-bench-on-miss
  exit 0
fi

out=${2:?usage: studies/bench_on_miss.sh run OUT}
mkdir -p "$out"
bin=.gpu/bin
export CUTUNE_TEMPLATE_DIR=${CUTUNE_TEMPLATE_DIR:-$PWD/kernel_templates}
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader >"$out/gpu.txt" 2>/dev/null || true
status=0
for pair in ${KERNELS:-reduction:n=16777216 matmul:m=1024,n=1024,k=1024}; do
  kernel=${pair%%:*} problem=${pair#*:}
  "$bin/cutune-bench-on-miss" --tuner "$PWD/$bin/cutune" --kernel "$kernel" --problem "$problem" \
    --budget "${BUDGET:-10}" --out "$out/on_miss_$kernel.json" >"$out/on_miss_$kernel.log" 2>&1 || status=1
  python3 - "$out/on_miss_$kernel.json" <<'PY' || status=1
import json, sys
d = json.load(open(sys.argv[1]))
off = sorted(r["total_ms"] for r in d["first_launch_off"])[1]
print(f'{d["kernel"]} {d["problem"]}: first launch off {off:.1f} ms, on {d["first_launch_on"]["total_ms"]:.1f} ms; '
      f'winner used after {d["until_switch"]["time_to_winner_s"]:.1f} s, {d["until_switch"]["launches_before_switch"]} '
      f'launches before; overhead {d["overhead_after_switch"]["overhead_us"]:.3f} us after the switch, '
      f'{d["overhead_default_on_miss_off"]["overhead_us"]:.3f} us without on_miss; GPU ms/launch default '
      f'{d["gpu_ms_per_launch"]["template_default"]:.4f}, winner {d["gpu_ms_per_launch"]["winner"]:.4f}')
PY
done
exit $status
