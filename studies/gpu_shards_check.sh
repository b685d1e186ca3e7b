#!/usr/bin/env bash
# Shards, merge and second runs on a real GPU (correctness and the DB, not speed):
#  - brute force over KERNEL's space in 2 shards (separate DBs), merged, against one
#    unsharded run: same configurations, each stored once, integrity ok, merging twice
#    changes nothing;
#  - the same 2 shards at once into one DB (two processes sharing the GPU);
#  - a second run on a DB (new seed: new evaluations; --resume: none).
# Usage: studies/gpu_shards_check.sh BIN OUT [KERNEL] [PROBLEM]   (exit 1 when a check fails)
set -uo pipefail
bin=$1 out=$2 kernel=${3:-reduction} problem=${4:-n=2**24}
mkdir -p "$out/dbs"; d=$out/dbs; status=0
tune() { "$bin/cutune" tune "$kernel" --problem "$problem" "$@"; }
for s in 0 1; do tune --strategy brute_force --shard $s/2 --db "$d/shard$s.db" > "$out/shard$s.log" 2>&1 || status=1; done
tune --strategy brute_force --db "$d/one.db" > "$out/unsharded.log" 2>&1 || status=1
"$bin/cutune" merge "$d/shard0.db" "$d/shard1.db" -o "$d/all.db" > "$out/merge.log" 2>&1 || status=1
cp "$d/all.db" "$d/all_once.db"
"$bin/cutune" merge "$d/shard0.db" "$d/shard1.db" -o "$d/all.db" >> "$out/merge.log" 2>&1 || status=1
tune --strategy brute_force --shard 0/2 --db "$d/same.db" > "$out/same0.log" 2>&1 & p0=$!
tune --strategy brute_force --shard 1/2 --db "$d/same.db" > "$out/same1.log" 2>&1 & p1=$!
wait $p0 || status=1; wait $p1 || status=1
{ tune --budget 40 --db "$d/second.db"; tune --budget 40 --seed 2 --db "$d/second.db"
  tune --budget 40 --seed 3 --resume --db "$d/second.db"; } > "$out/second_run.log" 2>&1 || status=1
"$bin/cutune" query --db "$d/all.db" > "$out/query_merged.txt" 2>&1
"$bin/cutune" query --db "$d/one.db" > "$out/query_unsharded.txt" 2>&1
python3 - "$d" > "$out/checks.txt" <<'PY' || status=1
import sqlite3, sys
d = sys.argv[1]
def rows(name):
    c = sqlite3.connect(f"{d}/{name}.db")
    assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok", name
    r = c.execute("SELECT config_key, status, median_ms FROM measurements ORDER BY config_key").fetchall()
    keys = [k for k, _, _ in r]
    assert len(keys) == len(set(keys)), f"{name}: a configuration stored twice"
    return r
one, merged, once, same = rows("one"), rows("all"), rows("all_once"), rows("second") and rows("same")
assert sorted(k for k, _, _ in merged) == sorted(k for k, _, _ in one), "merged keys differ from the unsharded run's"
assert merged == once, "merging again changed the measurements"
assert sorted(k for k, _, _ in same) == sorted(k for k, _, _ in one), "two writers on one DB lost or added rows"
print(f"ok: {len(one)} configurations unsharded, {len(merged)} merged, {len(same)} from two concurrent writers")
PY
cat "$out/checks.txt"; grep -E "^(reusing|resuming)" "$out/second_run.log"
exit $status
