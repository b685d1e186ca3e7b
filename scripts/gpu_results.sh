#!/usr/bin/env bash
# The GPU runs whose figures are committed under results/<gpu-slug>/. Run on the lent GPU
# from the repository root, with the binaries staged by scripts/stage_gpu.sh and unpacked there
# into .gpu/bin by scripts/unstage_gpu.sh:
#   scripts/gpu_results.sh OUT_DIR STEP...
# Steps:
#   tests   the gpu-labelled tests of every suite that has them (HAS_GPU_TESTS in tests/CMakeLists.txt:
#           test_runner, test_interop, test_workers, test_loader, test_verification "[gpu]")
#                                                                 -> gpu_tests.log, gpu_tests_<suite>.log
#   tune    one session per built-in template, at the sizes below, into
#           OUT_DIR/cutune.db (tune=k1,k2 for some of them)       -> <kernel>.{json,log}
#   query   cutune query on that DB                               -> query.txt
#   vendor  the tuned winners against CUB, cuBLAS and cudaMemcpy  -> vendor_comparison.json
#   measurement  the measurement's fidelity, stability and cost figures     -> measurement.json
#   wisdom  the DB's winners as a deployment file (cutune::loader)  -> winners.wisdom.json
# Everything lands in OUT_DIR/files and is packed into OUT_DIR/results.tar.gz (the device
# tool returns at most 8 files).
set -uo pipefail
out=${1:?usage: scripts/gpu_results.sh OUT_DIR STEP...}
shift
bin=${CUTUNE_BIN:-.gpu/bin}
if [ ! -x "$bin/cutune" ]; then
  echo "gpu_results.sh: $bin/cutune: not found (scripts/stage_gpu.sh here, scripts/unstage_gpu.sh there)" >&2
  exit 2
fi
files=$out/files
mkdir -p "$files"
export CUTUNE_TEMPLATE_DIR=${CUTUNE_TEMPLATE_DIR:-$PWD/kernel_templates} CUTUNE_TEST_DATA_DIR=$PWD/tests/data
# The libraries scripts/stage_gpu.sh staged beside the binaries (Open MPI's), then the toolkit's.
export LD_LIBRARY_PATH=$bin/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}:/usr/local/cuda/lib64
db=${CUTUNE_RESULTS_DB:-$out/cutune.db}
status=0

# kernel and problem of each tuning session (the sizes the vendor comparison uses), one
# per line: KERNEL PROBLEM [tune options]; $CUTUNE_SESSIONS names a file of such lines instead.
sessions=(
  "reduction n=2**28"
  "reduction_int32 n=2**28"
  "scan n=2**28"
  "scan_int32 n=2**28 --strategy random --budget 60 --seed 1"
  "vector_add n=2**26"
  "transpose rows=16384,cols=16384"
  "strided_access n=2**25"
  "matmul m=4096,n=4096,k=4096"
)

if [ -n "${CUTUNE_SESSIONS:-}" ]; then
  mapfile -t sessions < <(grep -v '^\s*\(#\|$\)' "$CUTUNE_SESSIONS")
fi

for step in "$@"; do
  case $step in
    tests)
      "$bin/cutune" devices --json > "$files/devices.json" || status=1
      "$bin/test_runner" "[gpu]" --durations yes > "$files/gpu_tests.log" 2>&1 || status=1
      grep -E "^(All tests passed|test cases:|assertions:)" "$files/gpu_tests.log"
      # Every other suite tests/CMakeLists.txt declares HAS_GPU_TESTS (the ones stage_gpu.sh stages):
      # running test_runner's alone had left a banner change that test_interop checks on the GPU unchecked.
      for suite in $(sed -n 's/^cutune_add_test_suite(\([a-z_]*\) HAS_GPU_TESTS.*/\1/p' tests/CMakeLists.txt); do
        [ "$suite" = test_runner ] && continue
        "$bin/$suite" "[gpu]" --durations yes > "$files/gpu_tests_$suite.log" 2>&1 || status=1
        echo "$suite: $(grep -E "^(All tests passed|test cases:)" "$files/gpu_tests_$suite.log" | head -n 1)"
      done
      ;;
    tune|tune=*)
      only=",${step#tune=},"
      for s in "${sessions[@]}"; do
        read -r kernel problem extra <<< "$s"
        [ "$step" = tune ] || [[ $only == *",$kernel,"* ]] || continue
        # shellcheck disable=SC2086  # $extra holds several options on purpose
        if ! "$bin/cutune" tune "$kernel" --problem "$problem" $extra --db "$db" \
            --report "$files/$kernel.json" > "$files/$kernel.log" 2>&1; then
          status=1
        fi
        tail -n 8 "$files/$kernel.log" | grep -E "^(configurations|  failed|winner|  median|default|device|STOPPED|cutune)"
      done
      ;;
    query)
      "$bin/cutune" query --db "$db" | tee "$files/query.txt" || status=1
      ;;
    vendor)
      "$bin/cutune-bench-vendor" --db "$db" --templates "$CUTUNE_TEMPLATE_DIR" \
        --out "$files/vendor_comparison.json" 2>&1 | tee "$files/vendor_comparison.log" || status=1
      ;;
    wisdom)
      "$bin/cutune" export --format wisdom --db "$db" -o "$files/winners.wisdom.json" || status=1
      ;;
    measurement|measurement=*)
      steps=${step#measurement}
      python3 -m studies.bench_measurement --bin "$bin" --out "$out" ${steps:+--steps "${steps#=}"} || status=1
      ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
tar -C "$files" -czf "$out/results.tar.gz" .
exit $status
