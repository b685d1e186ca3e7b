#!/bin/sh
# test_tool_install.sh BUILD_DIR SOURCE_DIR: `cmake --install` into a temporary prefix gives a
# working tool. From the prefix alone (a clean environment, PATH = its bin/ and the system's;
# the source and build trees hidden behind empty folders in a private mount namespace where
# `unshare` allows it): cutune --version, kernels, space and compile (in-process NVRTC), a
# compile of every configuration through the installed cutune-worker, and cutune-capture on a
# Kernel Tuner script with the capture's T1 file read back by cutune.
set -eu
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cutune_install_XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" --strip >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
for f in bin/cutune bin/cutune-worker bin/cutune-capture share/cutune/python/cutune_capture/__main__.py \
         share/cutune/kernel_templates/reduction/reduction.json lib/cmake/cutune/cutuneConfig.cmake \
         include/cutune/loader/loader.hpp; do
  [ -e "$prefix/$f" ] || { echo "FAILED: not installed: $f"; exit 1; }
done
echo "ok: installed into $prefix"

# A Kernel Tuner script as a user brings it (three block sizes of a vector add).
mkdir -p "$work/user" "$work/home"
cat >"$work/user/vector_add.py" <<'EOF'
import numpy
from kernel_tuner import tune_kernel
kernel_string = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""
size = 10000
a = numpy.random.randn(size).astype(numpy.float32)
b = numpy.random.randn(size).astype(numpy.float32)
c = numpy.zeros_like(b)
n = numpy.int32(size)
tune_kernel("vector_add", kernel_string, size, [c, a, b, n], {"block_size_x": [32, 64, 128]})
EOF

# The checks, run from the prefix with nothing of the source or build tree reachable.
cat >"$work/checks.sh" <<'EOF'
set -eu
prefix=$1
cd "$prefix/../user"
expect() {  # expect WHAT PATTERN COMMAND...: the command succeeds and its output has PATTERN
  what=$1 pattern=$2; shift 2
  if ! out=$("$@" 2>&1); then echo "FAILED: $what: $* exited non-zero:"; echo "$out"; exit 1; fi
  case $out in *"$pattern"*) echo "ok: $what" ;; *) echo "FAILED: $what: no '$pattern' in:"; echo "$out"; exit 1 ;; esac
}
[ "$(command -v cutune)" = "$prefix/bin/cutune" ] || { echo "FAILED: cutune on PATH is $(command -v cutune)"; exit 1; }
expect "cutune --version" "cutune " cutune --version
expect "cutune kernels lists the installed templates" "reduction  (" cutune kernels
expect "cutune space reduction" "valid" cutune space reduction
expect "cutune compile reduction --config ... --arch sm_90" "bytes of cubin for sm_90" \
  cutune compile reduction --config block_size_x=128,elements_per_thread=4 --arch sm_90
expect "cutune compile --all through the installed cutune-worker" " ok, 0 failed; " \
  cutune compile vector_add --all --quiet --mode process --workers 2 --no-cache --arch sm_90
case $out in *": 0 configurations"*) echo "FAILED: compile --all compiled nothing: $out"; exit 1 ;; esac
out=$(cutune-capture --out captured vector_add.py 2>&1) && rc=0 || rc=$?
case $out in
  *"cannot import numpy"*)
    case $out in *"--setup-venv"*) echo "ok: cutune-capture: no Python with numpy here, and it names the command to run" ;;
                 *) echo "FAILED: cutune-capture without numpy gives no hint: $out"; exit 1 ;; esac ;;
  *) [ "$rc" = 0 ] || { echo "FAILED: cutune-capture exited $rc:"; echo "$out"; exit 1; }
     expect "cutune space reads cutune-capture's T1 file" "valid size:     3" cutune space captured/vector_add_1_vector_add.json ;;
esac
EOF

env_run() {
  env -i PATH="$prefix/bin:/usr/local/bin:/usr/bin:/bin" HOME="$work/home" LANG=C.UTF-8 "$@"
}
# Hidden trees: an empty tmpfs over the build tree, then over the source tree (which may hold it).
hide='mount -t tmpfs cutune-hidden "$1" && mount -t tmpfs cutune-hidden "$2" && shift 2 && exec sh "$@"'
if unshare -rm sh -c "$hide" hide "$build" "$src" -c true 2>/dev/null; then
  env_run unshare -rm sh -c "$hide" hide "$build" "$src" "$work/checks.sh" "$prefix"
  echo "ok: the source ($src) and build ($build) trees were hidden"
else
  echo "note: unshare cannot make a mount namespace here: the trees stay readable, the environment is clean"
  env_run sh "$work/checks.sh" "$prefix"
fi
echo "PASSED: the installed tool works from $prefix"
