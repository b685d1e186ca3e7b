set -u
gunzip -f .gpu-bench/bin/*.gz .gpu-bench/lib/*.gz; chmod +x .gpu-bench/bin/*
export LD_LIBRARY_PATH=$PWD/.gpu-bench/lib CUTUNE_CUPTI=$PWD/.gpu-bench/lib/libcupti.so.13
B=$PWD/.gpu-bench/bin/cutune
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader | tee $OUT/device.txt
DB=/tmp/os.db; rm -f $DB*
# The matmul template at 2048^3, then at 1024^3 with what the DB knows of 2048^3 as its prior
# (auto), and the same 1024^3 tuning without a prior from a copy of the first DB.
$B tune matmul --problem m=2048,n=2048,k=2048 --budget 60 --seed 1 --db $DB --report $OUT/first_2048.report.json > $OUT/first_2048.log 2>&1; echo "2048 rc $?"
cp $DB /tmp/os_noprior.db
$B tune matmul --problem m=1024,n=1024,k=1024 --budget 40 --seed 1 --db $DB --report $OUT/second_1024_prior.report.json > $OUT/second_1024_prior.log 2>&1; echo "1024 prior rc $?"
$B tune matmul --problem m=1024,n=1024,k=1024 --budget 40 --seed 1 --db /tmp/os_noprior.db --prior none --report $OUT/second_1024_no_prior.report.json > $OUT/second_1024_no_prior.log 2>&1; echo "1024 none rc $?"
grep -i "prior" $OUT/second_1024_prior.log | head -3
for d in $DB /tmp/os_noprior.db; do $B query --db $d --kernel matmul > $OUT/query_$(basename $d .db).txt 2>&1; done
# The runner's GPU tests with this build.
.gpu-bench/bin/test_runner "[gpu]" > $OUT/gpu_tests_prior_other_size_test_runner.log 2>&1; echo "test_runner rc $?"; tail -3 $OUT/gpu_tests_test_runner.log
# Each run's evaluations in the order stored, with the 2048^3 run's rank of each configuration.
python3 - "$DB" /tmp/os_noprior.db > $OUT/evaluation_order.txt <<'PY'
import sqlite3, sys
for path in sys.argv[1:]:
    c = sqlite3.connect(path)
    runs = c.execute("SELECT r.id, p.problem_key FROM runs r JOIN problems p ON p.id = r.problem_id ORDER BY r.id").fetchall()
    first = runs[0][0]
    ranked = [k for k, in c.execute("SELECT config_key FROM measurements WHERE run_id=? AND status='ok' ORDER BY median_ms", (first,))]
    rank = {k: i for i, k in enumerate(ranked)}
    for run_id, problem in runs[1:]:
        rows = c.execute("SELECT config_key, status, median_ms FROM measurements WHERE run_id=? ORDER BY id", (run_id,)).fetchall()
        print(f"{path} run {run_id} ({problem}): {len(rows)} evaluations, in order: config, status, ms, rank at 2048^3 (of {len(ranked)} measured)")
        for k, s, o in rows: print(f"  {k}  {s}  {o}  {rank.get(k, '-')}")
PY
