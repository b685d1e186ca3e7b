#!/usr/bin/env bash
# The real tunings of this folder: Kernel Tuner's point-in-polygon tuned by the default strategy,
# one fresh DB per run (no prior, nothing resumed), at the budgets the scoring window gives on the
# recorded spaces (270 at 20M points, 780 at 2M), then every run's measurements in the order stored
# as escape_share.py --measured reads them.
# Usage (on the GPU machine): real_tunings.sh CUTUNE KERNEL_TUNER_EXAMPLES_DIR OUT_DIR "SEEDS"
#   e.g. real_tunings.sh build/tuner/cli/cutune ../shared/data/real_kernels/kernel_tuner_examples out "$(seq 1 20)"
# The examples folder must hold pnpoly-cutune.json and pnpoly-cutune-2000000.json
# (studies/pnpoly_problem.py writes them beside pnpoly.cu).
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: real_tunings.sh CUTUNE EXAMPLES_DIR OUT_DIR SEEDS" >&2; exit 2; }
B=$1 M=$2 OUT=$3 SEEDS=$4
mkdir -p "$OUT/logs"
for size in 2m 20m; do
  F=$M/pnpoly-cutune.json; N=270
  [ $size = 2m ] && F=$M/pnpoly-cutune-2000000.json && N=780
  for s in $SEEDS; do
    rc=0  # a failed run is reported and the others still run
    "$B" tune "$F" --budget $N --seed "$s" --prior none --db "$OUT/$size.$s.db" \
      --report "$OUT/logs/$size.$s.report.json" > "$OUT/logs/$size.$s.log" 2>&1 || rc=$?
    echo "$size seed $s rc $rc"
  done
done
python3 - "$OUT" > "$OUT/real_runs.txt" <<'PY'
import glob, sqlite3, sys
for path in sorted(glob.glob(sys.argv[1] + '/*.db')):
    rows = sqlite3.connect(path).execute("SELECT config_key, status, median_ms FROM measurements ORDER BY id").fetchall()
    print(f"run {path.split('/')[-1][:-3]}: {len(rows)} evaluations")
    for k, s, o in rows: print(f"  {k} {s} {o}")
PY
