#!/usr/bin/env bash
# The default strategy tuning for real on the lent GPU, with a short budget (bayes_opt alone,
# search::kModelLedBudget) and a long one (the four-arm bandit), each on a fresh DB.
# Staging here (git-ignored .simrun/): the stripped build/ binaries cutune and cutune-worker in
# .simrun/gpu/, and the libraries the GPU machine lacks (Open MPI's, SQLite's: `ldd cutune`) in
# .simrun/lib/. Then on the device: studies/default_strategy_on_gpu.sh, with $OUT for the logs,
# reports and DBs.
set -u
cd "$(dirname "$0")/.."
if [ -z "${OUT:-}" ] || [ ! -x .simrun/gpu/cutune ]; then
  echo "default_strategy_on_gpu.sh: needs \$OUT and the staged .simrun/gpu/cutune (see the header)" >&2
  exit 2
fi
export LD_LIBRARY_PATH=$PWD/.simrun/lib:${LD_LIBRARY_PATH:-}
B=.simrun/gpu
$B/cutune devices 2>&1 | head -3
for budget in 40 500; do
  timeout 80 $B/cutune tune reduction --problem 'n=2**24' --budget $budget --seed 1 --prior none \
    --db $OUT/reduction_budget$budget.db --report $OUT/reduction_budget$budget.json > $OUT/reduction_budget$budget.log 2>&1
  echo "budget $budget rc=$?"; tail -6 $OUT/reduction_budget$budget.log
done
