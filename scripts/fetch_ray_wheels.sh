#!/usr/bin/env bash
# Fetches, on this machine (which reaches PyPI), what Kernel Tuner's parallel runner needs on the
# lent GPU machine (python3.12, no internet), into .raywhl/ (git-ignored), for
# studies/bench_kt_parallel.py: Kernel Tuner's own wheels (as scripts/fetch_kt_wheels.sh pins
# them), Ray's dependencies, and Ray itself unpacked and packed again as ray_slim.tar.xz.
# Ray 2.60's wheel is 79 MB, more than the 64 MiB a device call carries in all; its Java jars
# (34 MB) and the libraries Kernel Tuner does not import (rllib, data, serve, tune, train, llm and
# the dashboard's web client) are left out: 28 MB (ray.experimental and ray.air stay: ray.util imports them).
# Usage: scripts/fetch_ray_wheels.sh [DEST]   then carry ".raywhl".
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p "${1:-.raywhl}"; DEST=$(cd "${1:-.raywhl}" && pwd)
PY=${PYTHON:-python3}
RAY=ray==2.60.0
DEPS=(click==8.5.1 filelock==4.3.1 msgpack==1.2.4 protobuf==7.36.2 requests==2.34.2 idna==3.20
      charset-normalizer==3.5.3 urllib3==2.8.0 certifi==2026.10.19.post1 aiohappyeyeballs==2.7.1
      aiosignal==1.4.0 frozenlist==1.8.0 "multidict==6.9.1" propcache==0.5.4 yarl==1.25.1)
mkdir -p "$DEST"
fetch() {
  "$PY" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 -d "$1" "$2"
}
for d in "${DEPS[@]}"; do fetch "$DEST" "$d"; done
kt=$(mktemp -d)
scripts/fetch_kt_wheels.sh "$kt" >/dev/null
for w in kernel_tuner python_constraint2 jsonschema-4 jsonschema_specifications referencing rpds_py attrs \
         typing_extensions xmltodict packaging pyyaml; do cp "$kt"/${w}*.whl "$DEST"/; done
tmp=$(mktemp -d)
fetch "$tmp" "$RAY"
# Unpacked keeping each file's mode (zipfile -e drops it, and Ray's gcs_server and raylet
# then cannot start: "Permission denied").
"$PY" - "$tmp" <<'PY'
import glob, os, sys, zipfile
z = zipfile.ZipFile(glob.glob(os.path.join(sys.argv[1], "ray-*.whl"))[0])
for i in z.infolist():
    p = z.extract(i, os.path.join(sys.argv[1], "x"))
    if (i.external_attr >> 16) & 0o777:
        os.chmod(p, (i.external_attr >> 16) & 0o777)
PY
(cd "$tmp/x" \
  && rm -rf ray/jars ray/rllib ray/data ray/serve ray/tune ray/train ray/llm ray/dashboard/client \
  && tar cf - . | xz -T0 -6 > "$DEST/ray_slim.tar.xz")
rm -rf "$tmp" "$kt"
echo "$(ls -1 "$DEST" | wc -l) files, $(du -sh "$DEST" | cut -f1) in $DEST"
