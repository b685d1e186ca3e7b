#!/usr/bin/env bash
# On the lent GPU: the same brute-force tuning with one GPU worker, with two workers on the
# one GPU (--gpus 0,0) and as two MPI ranks sharing it (mpirun -np 2), each into its own DB;
# then every DB's integrity, one row per configuration, and the winners side by side.
# Correctness and the DB, not speed: two workers on one GPU share it.
# Usage: studies/gpu_multi_worker_check.sh BIN_DIR OUT_DIR [KERNEL] [BUDGET]
set -uo pipefail
BIN=$1; OUT=$2; KERNEL=${3:-matmul}; BUDGET=${4:-200}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
common=(tune "$KERNEL" --strategy brute_force --budget "$BUDGET" --seed 1)
run() {  # name, then the command
  local name=$1; shift
  echo "== $name: $*" | tee -a "$OUT/commands.txt"
  /usr/bin/time -f "$name wall %e s" "$@" --db "$OUT/$name.db" --report "$OUT/$name.json" > "$OUT/$name.log" 2>&1
  echo "$name exit $?" | tee -a "$OUT/commands.txt"
  tail -n 12 "$OUT/$name.log"
}
run one "$BIN/cutune" "${common[@]}"
run gpus_0_0 "$BIN/cutune" "${common[@]}" --gpus 0,0
run mpi_2_ranks mpirun --bind-to none --oversubscribe -np 2 "$BIN/cutune" "${common[@]}"
# The default strategy (it learns) on two ranks, its own budget.
run mpi_2_ranks_default mpirun --bind-to none --oversubscribe -np 2 "$BIN/cutune" tune "$KERNEL" --budget 100 --seed 1
python3 - "$OUT" <<'PY'
import json, sqlite3, sys, os
out = sys.argv[1]
summary = {}
for name in ["one", "gpus_0_0", "mpi_2_ranks", "mpi_2_ranks_default"]:
    db = os.path.join(out, name + ".db")
    if not os.path.exists(db):
        summary[name] = {"error": "no DB"}
        continue
    c = sqlite3.connect(db)
    keys = [r[0] for r in c.execute("SELECT config_key FROM measurements")]
    statuses = dict(c.execute("SELECT status, count(*) FROM measurements GROUP BY status").fetchall())
    rep = json.load(open(os.path.join(out, name + ".json")))
    summary[name] = {"integrity_check": c.execute("PRAGMA integrity_check").fetchone()[0],
                     "rows": len(keys), "distinct_keys": len(set(keys)), "statuses": statuses,
                     "winner": rep.get("winner_key"), "winner_ms": rep.get("winner_ms"), "verdict": rep.get("verdict"),
                     "wall_s": rep.get("wall_s"), "device": rep["device"]["name"],
                     "workers": [{k: w[k] for k in ("name", "evaluations", "evaluate_ms", "sampling_ms", "idle_ms", "restarts", "lost")}
                                 for w in rep.get("workers", [])]}
json.dump(summary, open(os.path.join(out, "multi_worker_check.json"), "w"), indent=1)
print(json.dumps(summary, indent=1))
PY
