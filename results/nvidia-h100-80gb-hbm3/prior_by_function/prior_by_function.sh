set -u
gunzip -f .gpu-bench/bin/*.gz .gpu-bench/lib/*.gz; chmod +x .gpu-bench/bin/*
export LD_LIBRARY_PATH=$PWD/.gpu-bench/lib CUTUNE_CUPTI=$PWD/.gpu-bench/lib/libcupti.so.13
B=$PWD/.gpu-bench/bin/cutune
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader | tee $OUT/device.txt
M=$PWD/.material/data/real_kernels/kernel_tuner_examples
mkdir -p /tmp/q && cp $M/* /tmp/q/
# The same kernel (function cn_pnpoly) under another BenchmarkName: a copy, the original untouched.
python3 -c "
import json; d=json.load(open('$M/pnpoly-cutune.json')); d['General']['BenchmarkName']='pnpoly_renamed'
json.dump(d, open('/tmp/q/pnpoly-renamed.json','w'), indent=1)"
DB=/tmp/fn.db; rm -f $DB*
$B tune $M/pnpoly-cutune.json --budget 30 --seed 1 --db $DB --report $OUT/first.report.json > $OUT/first.log 2>&1; echo "first rc $?"
$B tune /tmp/q/pnpoly-renamed.json --budget 10 --seed 1 --db $DB --prior on --report $OUT/second.report.json > $OUT/second.log 2>&1; echo "second rc $?"
grep -i "prior" $OUT/second.log | head -5
python3 -c "
import sqlite3; c=sqlite3.connect('$DB')
print('user_version', c.execute('PRAGMA user_version').fetchone()[0])
for r in c.execute('SELECT id, name, function, source_hash FROM kernels'): print(r[0], r[1], r[2], r[3][:20])" | tee $OUT/kernels.txt
