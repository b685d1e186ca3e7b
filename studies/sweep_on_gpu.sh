#!/usr/bin/env bash
# A shape sweep end to end on a real GPU (correctness, not speed): tune the reduction over 4
# sizes in one session, distil them (cross matrix measured and stored), export the wisdom,
# and ask the loader's selection (cutune select, and python's cutune.best_config) at a tuned
# size (exact), an untuned size between tuned ones (selector) and without selectors (ladder).
# Checks: every sweep shape has a winner, distill stored a selector and a cross matrix of
# shapes x candidates, the wisdom carries it, and the selections' rungs are as said.
# Usage: studies/sweep_on_gpu.sh BIN OUT [BUDGET]   (exit 1 when a check fails; ~1-2 min on an H100)
set -uo pipefail
bin=$1 out=$2 budget=${3:-12}
mkdir -p "$out"; db=$out/sweep.db; status=0
here=$(cd "$(dirname "$0")/.." && pwd)
cutune() { "$bin/cutune" "$@"; }
cutune tune reduction --sweep "n=2**18..2**24:*4" --budget "$budget" --db "$db" --samples 5 --time-cap 0.1 \
  > "$out/tune_sweep.log" 2>&1 || { echo "tune --sweep failed"; status=1; }
cutune distill reduction --db "$db" --bound 0.05 --top-k 3 --time-cap 0.1 --json "$out/distill.json" \
  > "$out/distill.log" 2>&1 || { echo "distill failed"; status=1; }
cutune export --format wisdom --kernel reduction --db "$db" -o "$out/wisdom.json" > "$out/export.log" 2>&1 \
  || { echo "export failed"; status=1; }
cutune select reduction --problem "n=2**20" --winners "$out/wisdom.json" --json > "$out/select_tuned.json" 2>&1 || status=1
cutune select reduction --problem "n=2**21" --winners "$out/wisdom.json" --json > "$out/select_between.json" 2>&1 || status=1
cutune select reduction --problem "n=2**21" --winners "$out/wisdom.json" --no-selectors --json \
  > "$out/select_ladder.json" 2>&1 || status=1
CUTUNE_BIN=$bin/cutune PYTHONPATH=$here/python python3 - "$out" > "$out/checks.txt" 2>&1 <<'PY' || status=1
import json, sqlite3, sys
out = sys.argv[1]
c = sqlite3.connect(f"{out}/sweep.db")
winners = c.execute("SELECT COUNT(*) FROM winners w JOIN kernels k ON k.id = w.kernel_id WHERE k.name = 'reduction'").fetchone()[0]
assert winners == 4, f"{winners} winners, not 4"
cells = c.execute("SELECT COUNT(*), COUNT(DISTINCT problem_id) FROM cross_measurements").fetchone()
assert cells[1] == 4 and cells[0] >= 4, f"cross matrix: {cells}"
assert c.execute("SELECT COUNT(*) FROM selectors").fetchone()[0] == 1
w = json.load(open(f"{out}/wisdom.json"))
assert len(w["selectors"]) == 1, "the wisdom has no selector"
rung = lambda f: json.load(open(f"{out}/{f}"))["rung_name"]
assert rung("select_tuned.json") == "exact", rung("select_tuned.json")
assert rung("select_between.json") == "selector", rung("select_between.json")
assert rung("select_ladder.json") == "nearest problem", rung("select_ladder.json")
print("ok: distilled, worst slowdown over the sweep", json.load(open(f"{out}/distill.json"))["selector"]["worst_slowdown"])
try:
    import cutune  # the package's Kernel Tuner interface imports numpy
except ImportError as e:
    print(f"python best_config: skipped ({e})")
else:
    py = cutune.best_config("reduction", {"n": 2**21}, winners=f"{out}/wisdom.json")
    assert py["config_key"] == json.load(open(f"{out}/select_between.json"))["config_key"]
    print("ok: python best_config:", py.describe())
PY
cat "$out/checks.txt"
exit $status
