#!/usr/bin/env bash
# Builds a Release tree and packs what the lent GPU machine needs into .gpu/ (git-ignored):
# cutune, its worker, the vendor benchmark and the test suites that have [gpu] tests, stripped
# and gzipped into .gpu/bin.gz, with the libraries the machine lacks in .gpu/lib.gz. On the GPU
# machine, scripts/unstage_gpu.sh unpacks them into .gpu/bin and .gpu/lib, where
# scripts/gpu_results.sh and the bench scripts look (--bin .gpu/bin).
#
# Why packed: a device call carries the working tree and the carried paths together within
# 64 MiB, counted in disk blocks (the tracked tree alone is about 47 MiB of them with the Kernel
# Tuner traces results/strategies/*.kt_traces.json.xz, 38 MiB without). The stripped binaries are
# about 62 MB as they are and 13 MB gzipped, so they fit only packed; should the tree grow, delete
# those traces for the call (git checkout -- results/ afterwards): this script says when.
#
# Usage: scripts/stage_gpu.sh   then carry ".gpu" in the device call and run
#        scripts/unstage_gpu.sh && scripts/gpu_results.sh $OUT tests   there.
# CUTUNE_STAGE_BUILD=build reuses an existing Release build folder instead of build-release;
# CUTUNE_STAGE_TARGETS narrows what is built (e.g. on a busy machine).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CUTUNE_STAGE_BUILD:-build-release}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
if [ "$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt")" != Release ]; then
  echo "stage_gpu.sh: $build is not a Release build (CMAKE_BUILD_TYPE)" >&2
  exit 2
fi
cmake --build "$build" ${CUTUNE_STAGE_TARGETS:+--target $CUTUNE_STAGE_TARGETS}

# The suites with [gpu] tests: those tests/CMakeLists.txt declares HAS_GPU_TESTS.
suites=$(sed -n 's/^cutune_add_test_suite(\([a-z_]*\) HAS_GPU_TESTS.*/\1/p' tests/CMakeLists.txt)
rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib .gpu/bin.gz .gpu/lib.gz
cp "$build/tuner/cli/cutune" "$build/tuner/worker/cutune-worker" .gpu/bin/
for t in $suites; do [ -x "$build/tests/$t" ] && cp "$build/tests/$t" .gpu/bin/; done
if [ -x "$build/bench/cutune-bench-vendor" ]; then cp "$build/bench/cutune-bench-vendor" .gpu/bin/; fi
strip .gpu/bin/*
# CUPTI (activity timing) is part of the toolkit, not the driver: carried in case the GPU
# machine's toolkit lacks it (cutune finds it through CUTUNE_CUPTI=.gpu/lib/libcupti.so.13).
cupti=$(ls /usr/local/cuda/lib64/libcupti.so.* /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.* 2>/dev/null | head -n 1 || true)
if [ -n "$cupti" ]; then cp -L "$cupti" .gpu/lib/; fi
# Every other library the binaries link (ldd) that the GPU machine cannot be assumed to have
# (../shared/GPU.md: glibc, libstdc++, libsqlite3, NVRTC and the driver only): Open MPI's and what
# it pulls in (hwloc, libevent, ...). The scripts that run .gpu/bin (gpu_results.sh,
# record_spaces.py) put the lib folder beside the bin folder on LD_LIBRARY_PATH.
for b in .gpu/bin/cutune .gpu/bin/cutune-worker; do ldd "$b"; done | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|libsqlite3|libnvrtc[^/]*|libcuda|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" .gpu/lib/; done
for d in bin lib; do
  for f in .gpu/$d/*; do gzip -9 -c "$f" > ".gpu/$d.gz/$(basename "$f").gz"; done
  rm -rf ".gpu/$d"
done

# What the call will carry, in disk blocks as the device tool counts them.
carry=$(du -s --block-size=1M .gpu | cut -f1)
tree=$(git ls-files -z | du -c --block-size=1M --files0-from=- 2>/dev/null | tail -n 1 | cut -f1)
traces=$(git ls-files -z 'results/strategies/*.kt_traces.json.xz' | du -c --block-size=1M --files0-from=- 2>/dev/null | tail -n 1 | cut -f1)
echo "staged: .gpu ${carry} MiB ($(ls .gpu/bin.gz | wc -l) binaries, $(ls .gpu/lib.gz | wc -l) libraries), from $build"
if [ $((carry + tree)) -gt 64 ]; then
  echo "the tracked tree is ${tree} MiB: with .gpu that passes the device's 64 MiB; delete the Kernel Tuner"
  echo "traces for the call (${traces} MiB: rm results/strategies/*.kt_traces.json.xz) and git checkout -- results/ after it"
fi
