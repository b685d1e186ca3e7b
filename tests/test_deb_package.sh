#!/bin/sh
# test_deb_package.sh BUILD_DIR: `cpack -G DEB` makes a Debian package holding the tool (cutune,
# cutune-worker, cutune-capture and its Python package), the templates where cutune looks for
# them, and the library's CMake package; its cutune runs from the unpacked tree.
set -eu
build=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cutune_deb_XXXXXX")
trap 'rm -rf "$work"' EXIT
command -v dpkg-deb >/dev/null || { echo "SKIPPED: no dpkg-deb (Debian package dpkg)"; exit 77; }
cpack -G DEB -B "$work" --config "$build/CPackConfig.cmake" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/*.deb)
dpkg-deb -c "$deb" >"$work/contents"
for f in ./usr/bin/cutune ./usr/bin/cutune-worker ./usr/bin/cutune-capture \
         ./usr/share/cutune/kernel_templates/reduction/reduction.json \
         ./usr/share/cutune/python/cutune_capture/__main__.py ./usr/include/cutune/loader/loader.hpp; do
  grep -q " $f\$" "$work/contents" || { echo "FAILED: $(basename "$deb") lacks $f"; exit 1; }
done
grep -q "cutune/cmake/cutune/cutuneConfig.cmake\|/cmake/cutune/cutuneConfig.cmake" "$work/contents" ||
  { echo "FAILED: no CMake package in $(basename "$deb")"; exit 1; }
depends=$(dpkg-deb -f "$deb" Depends)
case $depends in *libsqlite3-0*) ;; *) echo "FAILED: Depends lacks libsqlite3-0: $depends"; exit 1 ;; esac
echo "ok: $(basename "$deb"): $(wc -l <"$work/contents") entries, Depends: $depends"
dpkg-deb -x "$deb" "$work/root"
out=$("$work/root/usr/bin/cutune" kernels) || { echo "FAILED: the package's cutune kernels: $out"; exit 1; }
case $out in *"reduction  ("*) echo "ok: the package's cutune finds the package's templates" ;;
             *) echo "FAILED: the package's cutune kernels: $out"; exit 1 ;; esac
