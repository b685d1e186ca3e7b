#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks and builds cutune into build/.
# The CUDA toolkit (NVRTC, cuda.h) must already be there, as on the project's machine image;
# everything else comes from Debian packages. Idempotent: a second run only rebuilds.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ pkg-config libsqlite3-dev nlohmann-json3-dev catch2 libcli11-dev libfmt-dev zlib1g-dev libeigen3-dev
          python3 python3-venv   # python3-venv: scripts/kt_venv.sh and the scoring cross-check (tests only)
          python3-numpy          # scripts/cutune-capture: the Kernel Tuner scripts it runs build numpy arrays
          libopenmpi-dev openmpi-bin   # tuning across MPI ranks (mpirun/srun), and its CTest test
          chromium)              # tests only: renders `cutune report`'s page to a PNG (report_renders_in_chromium)
# CUTUNE_FUZZ=1: also clang with libFuzzer and the sanitizer runtimes (libclang-rt-14-dev)
# and llvm-symbolizer (llvm) for tests/fuzz/README.md. CI and the default build need none.
if [ "${CUTUNE_FUZZ:-0}" = 1 ]; then packages+=(clang libclang-rt-14-dev llvm); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Progress is shown, not hidden: on a fresh machine the install and the first build take
# minutes, and a silent script looked hung. apt's own lines are cut to one per package.
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  echo "setup: apt-get update"
  $sudo apt-get update -q | grep --line-buffered -E '^(Hit|Get|Err|W:|E:)' || true
  echo "setup: apt-get install (one line per package set up)"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" \
    | grep --line-buffered -E '^(Setting up|E:|W:)' || true
  for p in "${missing[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      { echo "setup: $p did not install (see apt-get's messages above)" >&2; exit 1; }
  done
fi

if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if [ ! -f /usr/local/cuda/include/nvrtc.h ] && ! command -v nvcc >/dev/null; then
  echo "setup: the CUDA toolkit (NVRTC) is missing: install CUDA 12 or 13 under /usr/local/cuda" >&2
  exit 1
fi

echo "setup: configuring build/ (cmake; warnings and errors only)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${CUTUNE_BUILD_TYPE:-RelWithDebInfo}" --log-level=NOTICE
echo "setup: building (ninja's [done/total] lines)"
cmake --build build -j "$(nproc)"
echo "setup: built build/tuner/cli/cutune"

# cutune-capture runs Kernel Tuner scripts, which need numpy. Where python3 on PATH has none
# (a pyenv interpreter, say), a venv with it that cutune-capture then uses; failing that,
# cutune-capture itself says in one line what to run.
if ! python3 -c 'import numpy' >/dev/null 2>&1; then
  echo "setup: $(command -v python3 || echo python3) has no numpy: a venv with it for cutune-capture"
  scripts/cutune-capture --setup-venv || echo "setup: no venv for cutune-capture (see above; it is not needed for tuning)" >&2
fi
