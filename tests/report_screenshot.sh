#!/bin/sh
# report_screenshot.sh CUTUNE RECORDED_SPACE OUT_DIR: a simulated run, its report, and the
# report rendered by headless Chromium to a PNG, which must be a real picture of the page
# (a PNG, of the window's size, not a blank one). Exit 77 (skipped) without Chromium.
set -eu
cutune=$1 space=$2 out=$3
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIPPED: no chromium on PATH (Debian package chromium; scripts/setup.sh installs it)"
  exit 77
fi
rm -rf "$out"
mkdir -p "$out"
"$cutune" tune --simulate "$space" --budget 80 --seed 1 --db "$out/sim.db" >/dev/null
"$cutune" report --db "$out/sim.db" -o "$out/report.html"
# A private profile and no sandbox (CI runs as root); the screenshot is taken once the page
# has loaded, which for a page without scripts or fetches is when its SVG is drawn.
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$out/profile" \
  --screenshot="$out/report.png" --window-size=1280,2400 "file://$out/report.html" >"$out/chromium.log" 2>&1 || {
  echo "chromium failed:"; tail -5 "$out/chromium.log"; exit 1; }
test -s "$out/report.png" || { echo "no PNG written"; exit 1; }
python3 - "$out/report.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
width, height = struct.unpack(">II", data[16:24])
assert (width, height) == (1280, 2400), f"{width}x{height}, not the window's 1280x2400"
# A blank page compresses to a few KiB; the charts' lines and text do not.
assert len(data) > 60_000, f"only {len(data)} bytes: a blank page?"
# The picture has many colours: decode the rows (filters of the PNG format) and count.
pos, idat = 8, b""
bit_depth, color_type = data[24], data[25]
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    if kind == b"IDAT":
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
bpp = {2: 3, 6: 4}[color_type]
stride = width * bpp
colours, prev = set(), bytearray(stride)
for y in range(height):
    f, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = row[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: row[i] = (row[i] + a) & 255
        elif f == 2: row[i] = (row[i] + b) & 255
        elif f == 3: row[i] = (row[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 8 == 0:
        for x in range(0, stride, bpp * 4):
            colours.add(bytes(row[x:x + 3]))
    prev = row
assert len(colours) > 50, f"only {len(colours)} colours: the charts are not drawn"
print(f"report.png: {width}x{height}, {len(data)} bytes, {len(colours)} colours sampled")
PY
