#!/usr/bin/env bash
# Builds a Release tree and copies what the lent GPU machine needs into .gpu/ (git-ignored):
# the cutune binary and the test executables, stripped. The device machine has glibc,
# libstdc++, libsqlite3, NVRTC and the driver, so nothing else travels (../shared/GPU.md).
# Usage: scripts/stage_gpu.sh   then carry ".gpu" in the device call.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
# Only what runs there (CUTUNE_STAGE_TARGETS narrows it further, e.g. on a busy machine).
cmake --build build-release ${CUTUNE_STAGE_TARGETS:+--target $CUTUNE_STAGE_TARGETS}
rm -rf .gpu && mkdir -p .gpu/bin
cp build-release/tuner/cli/cutune build-release/tuner/worker/cutune-worker .gpu/bin/
for t in build-release/tests/test_*; do [ -x "$t" ] && cp "$t" .gpu/bin/; done
if [ -x build-release/bench/cutune-bench-vendor ]; then cp build-release/bench/cutune-bench-vendor .gpu/bin/; fi
strip .gpu/bin/*
# CUPTI (activity timing) is part of the toolkit, not the driver: carried in case the GPU
# machine's toolkit lacks it (cutune finds it through CUTUNE_CUPTI=.gpu/lib/libcupti.so.13).
cupti=$(ls /usr/local/cuda/lib64/libcupti.so.* /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.* 2>/dev/null | head -n 1 || true)
if [ -n "$cupti" ]; then mkdir -p .gpu/lib && cp -L "$cupti" .gpu/lib/; fi
# Every other library the binaries link (ldd) that the GPU machine cannot be assumed to have
# (../shared/GPU.md: glibc, libstdc++, libsqlite3, NVRTC and the driver only): Open MPI's and what
# it pulls in (hwloc, libevent, ...), into .gpu/lib too. The scripts that run .gpu/bin
# (gpu_results.sh, record_spaces.py) put the lib folder beside the bin folder on LD_LIBRARY_PATH.
mkdir -p .gpu/lib
for b in .gpu/bin/cutune .gpu/bin/cutune-worker; do ldd "$b"; done | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|libsqlite3|libnvrtc[^/]*|libcuda|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" .gpu/lib/; done
du -sh .gpu
