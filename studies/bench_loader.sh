#!/usr/bin/env bash
# The loader's benchmark -> results/<gpu-slug>/loader.json.
#   studies/bench_loader.sh stage      (here, after scripts/stage_gpu.sh) adds to .gpu/bin.gz
#       (scripts/unstage_gpu.sh unpacks them there):
#       cutune-bench-loader, and cutune-example built as a separate project against
#       `cmake --install build-release --prefix .gpu/prefix` (the installed package).
#   studies/bench_loader.sh run OUT    (on the lent GPU, repository root) writes OUT/loader.json:
#       - first_launch: time from exec to the first finished tuned launch (the data
#         allocation reported apart, data_ms), in separate
#         processes, 3 with a cold compile cache (a fresh --cache-dir each) and 3 warm
#         (the same dir again): cold compiles once with NVRTC, warm compiles nothing;
#       - launch_overhead: TunedKernel::launch against cuLaunchKernel of the same cubin;
#       - example: cutune-example, the tuned winners against the template defaults
#         (reduction n=2**28, matmul 4096^3), results checked against the CPU.
#     Winners: $WINNERS, default bench/loader/h200.wisdom.json (the H200 winners of
#     results/nvidia-h200/{reduction,matmul}.json): exact rung on an H200, rung 3 (same
#     compute capability) on an H100. For this GPU's own winners first run e.g.
#       .gpu/bin/cutune tune reduction --problem n=2**28 --db OUT/cutune.db  (and matmul)
#     then WINNERS=OUT/cutune.db studies/bench_loader.sh run OUT
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: studies/bench_loader.sh stage | run OUT}

if [ "$mode" = stage ]; then
  build=${CUTUNE_STAGE_BUILD:-build-release}  # the Release build stage_gpu.sh staged from
  cmake --build "$build" --target cutune-bench-loader
  rm -rf .gpu/prefix .gpu/example-build
  cmake --install "$build" --prefix "$PWD/.gpu/prefix" >/dev/null
  cmake -S examples -B .gpu/example-build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PWD/.gpu/prefix" >/dev/null
  cmake --build .gpu/example-build
  mkdir -p .gpu/bin.gz
  for b in "$build/bench/loader/cutune-bench-loader" .gpu/example-build/cutune-example; do
    strip -o ".gpu/$(basename "$b")" "$b"
    gzip -9 -c ".gpu/$(basename "$b")" > ".gpu/bin.gz/$(basename "$b").gz"
    rm ".gpu/$(basename "$b")"
  done
  rm -rf .gpu/prefix .gpu/example-build
  du -sh .gpu
  exit 0
fi

out=${2:?usage: studies/bench_loader.sh run OUT}
mkdir -p "$out"
bin=${CUTUNE_BIN:-.gpu/bin}
winners=${WINNERS:-bench/loader/h200.wisdom.json}
export CUTUNE_TEMPLATE_DIR=${CUTUNE_TEMPLATE_DIR:-$PWD/kernel_templates}
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
problem=${PROBLEM:-n=16777216}  # nearest-problem rung with the shipped wisdom on an H200
lines=$out/loader_lines.jsonl
: >"$lines"
cache_root=$(mktemp -d)
for i in 1 2 3; do
  dir=$cache_root/cold$i
  echo "{\"phase\": \"cold\", \"run\": $(
    "$bin/cutune-bench-loader" first-launch --winners "$winners" --problem "$problem" --cache-dir "$dir" --t0-ns "$(date +%s%N)")}" >>"$lines"
done
for i in 1 2 3; do
  echo "{\"phase\": \"warm\", \"run\": $(
    "$bin/cutune-bench-loader" first-launch --winners "$winners" --problem "$problem" --cache-dir "$cache_root/cold1" --t0-ns "$(date +%s%N)")}" >>"$lines"
done
echo "{\"phase\": \"overhead\", \"run\": $("$bin/cutune-bench-loader" overhead --cache-dir "$cache_root/cold1")}" >>"$lines"
"$bin/cutune-example" --winners "$winners" --n 268435456 --mnk 4096 --json "$out/example.json" | tee "$out/example.log"
rm -rf "$cache_root"
nvidia-smi --query-gpu=name --format=csv,noheader >"$out/gpu_name.txt" 2>/dev/null || true
python3 - "$out" "$winners" <<'PY'
import json, statistics, sys
out, winners = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(f"{out}/loader_lines.jsonl")]
def phase(p): return [r["run"] for r in rows if r["phase"] == p]
def summary(runs):
    return {"from_exec_ms_median": statistics.median(r["from_exec_ms"] for r in runs),
            "from_exec_without_data_ms_median": statistics.median(r["from_exec_without_data_ms"] for r in runs),
            "from_main_ms_median": statistics.median(r["from_main_ms"] for r in runs),
            "nvrtc_compiles": [r["nvrtc_compiles"] for r in runs], "cache_hits": [r["cache_hits"] for r in runs],
            "runs": runs}
doc = {"what": "cutune::loader costs (studies/bench_loader.sh)", "winners": winners,
       "first_launch": {"cold_cache": summary(phase("cold")), "warm_cache": summary(phase("warm"))},
       "launch_overhead": phase("overhead")[0],
       "example": json.load(open(f"{out}/example.json"))}
json.dump(doc, open(f"{out}/loader.json", "w"), indent=2)
print(json.dumps({k: doc["first_launch"][k]["from_exec_without_data_ms_median"] for k in doc["first_launch"]}),
      json.dumps(doc["launch_overhead"]))
PY
