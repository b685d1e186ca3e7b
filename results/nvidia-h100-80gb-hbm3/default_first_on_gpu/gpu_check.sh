#!/bin/bash
# This session's GPU check: the gpu tests, then real tunings whose first evaluation depends on
# whether the problem names a default (transpose: named; point-in-polygon and Kernel Tuner's
# convolution_correct capture: not named).
set -u
B=.gpu-bench/bin; mkdir -p $B
for f in .gpu-bench/bin.gz/*.gz; do gunzip -c $f > $B/$(basename $f .gz); chmod +x $B/$(basename $f .gz); done
export LD_LIBRARY_PATH=$PWD/.gpu-bench/lib:/usr/local/cuda/lib64
export CUTUNE_TEMPLATE_DIR=$PWD/kernel_templates CUTUNE_TEST_DATA_DIR=$PWD/tests/data
L=$OUT/logs; mkdir -p $L
{ date -u; echo "build $(cat .gpu-bench/commit)"; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; $B/cutune devices; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
echo "== gpu tests"
$B/test_runner "[gpu]" --durations yes > $L/gpu_tests.log 2>&1; echo "rc $?"
grep -E "^(All tests passed|test cases:|assertions:)" $L/gpu_tests.log
$B/test_interop "[gpu]" --durations yes > $L/gpu_tests_interop.log 2>&1; echo "interop rc $?"
grep -E "^(All tests passed|test cases:|assertions:)" $L/gpu_tests_interop.log
echo "== transpose (named default)"
$B/cutune tune transpose --budget 12 --seed 1 --prior none --db $L/transpose.db --cache $L/transpose.cache.json --report $L/transpose.report.json > $L/transpose.log 2>&1; echo "rc $?"
grep -E "^(default|winner|configurations)" $L/transpose.log; head -c 900 $L/transpose.cache.json | grep -o '"cutune_\(default\|problem\)"[^}]*' ; python3 -c "import json;r=json.load(open('$L/transpose.report.json'));print('default_evaluated',r.get('default_evaluated'))"
M=.material/data/real_kernels/kernel_tuner_examples
python3 -m studies.pnpoly_problem $M 2000000 > /dev/null && python3 -m studies.pnpoly_problem $M > /dev/null
for p in pnpoly-cutune-2000000 pnpoly-cutune; do
  echo "== $p (no named default)"
  $B/cutune tune $M/$p.json --budget 60 --seed 1 --prior none --db $L/$p.db --cache $L/$p.cache.json --report $L/$p.report.json > $L/$p.log 2>&1; echo "rc $?"
  grep -E "^(default|winner|configurations|speedup)" $L/$p.log; grep -c cutune_default $L/$p.cache.json
  python3 -c "import json;r=json.load(open('$L/$p.report.json'));print('default_evaluated',r.get('default_evaluated'))"
done
echo "== Kernel Tuner's convolution_correct.py, second call (answer given, no default named)"
W=/tmp/kt-cc; rm -rf $W; cp -r $M $W
(cd $W && PYTHONPATH=$OLDPWD/python python3 -m cutune_capture --out captured convolution_correct.py) > $L/capture.log 2>&1; echo "capture rc $?"
T=$(python3 -c "import json;c=json.load(open('$W/captured/capture.json'))['calls'];print(next(x['t1'] for x in c if x['index']==2))")
$B/cutune space $W/captured/$T > $L/cc_space.txt 2>&1; grep -i default $L/cc_space.txt
$B/cutune tune $W/captured/$T --budget 60 --seed 1 --prior none --db $L/cc.db --cache $L/cc.cache.json --report $L/cc.report.json > $L/cc.log 2>&1; echo "rc $?"
grep -E "^(default|winner|configurations|speedup|  failed|verif)" $L/cc.log; grep -c cutune_default $L/cc.cache.json
python3 -c "import json;r=json.load(open('$L/cc.report.json'));print({k:r.get(k) for k in ('default_evaluated','configs_tried','configs_failed','failures_by_status')})"
rm -f $L/*.db
tar czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $L
