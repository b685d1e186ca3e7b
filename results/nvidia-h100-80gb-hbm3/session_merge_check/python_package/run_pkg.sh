#!/bin/bash
# The Python package on the GPU: two Kernel Tuner scripts run unchanged by python -m cutune.
OUT=$1; R=$PWD
export CUTUNE_BIN=$R/.gpu/bin/cutune LD_LIBRARY_PATH=$R/.gpu/lib:${LD_LIBRARY_PATH:-} PYTHONPATH=$R/python PYTHONUNBUFFERED=1
export CUTUNE_TEMPLATE_DIR=$R/kernel_templates
mkdir -p $OUT/pkg; cd $OUT/pkg
for s in vector_add_kt stdio_kernel; do
  cp $R/.gpu-old/pkg/$s.py .
  timeout 150 python3 -m cutune $s.py > $s.log 2>&1; echo "$s rc=$?"; tail -n 3 $s.log
done
