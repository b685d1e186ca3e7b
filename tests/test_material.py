"""Every test that reads the test material is labelled material, and without the material it is
reported by CTest as skipped, naming what is missing: never as failed, never as passed.

  test_material.py CTEST BUILD_DIR MATERIAL_DIR

1. From `ctest --show-only=json-v1`: a test run through material_test.sh is labelled material
   and skips with 77; no other test names the material folder (or ../shared) on its command
   line; there are material tests at all.
2. `ctest -L material -LE gpu` with CUTUNE_TEST_MATERIAL set to an empty folder: every test is
   Skipped, and its output names the empty folder (so the skip is the material's, not, say, a
   missing Kernel Tuner venv's). A Catch2 case that reads the material without the [material]
   tag fails wherever the material is there (tests/test_main.cpp), so the label cannot be
   forgotten on that side either.
"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ctest, build, material = sys.argv[1:4]
failures = []


def fail(message):
    failures.append(message)
    print(f"FAILED: {message}")


def prop(test, name, default=None):
    for p in test.get("properties", []):
        if p["name"] == name:
            return p["value"]
    return default


listing = json.loads(subprocess.run([ctest, "--test-dir", build, "--show-only=json-v1"], check=True,
                                    capture_output=True, text=True).stdout)
labelled = []
for t in listing["tests"]:
    name, command = t["name"], t.get("command", [])
    labels = prop(t, "LABELS", [])
    if any(c.endswith("/test_material.py") for c in command):
        continue  # this check, which is told the folder
    wrapped = any(c.endswith("/material_test.sh") for c in command)
    if "material" in labels:
        labelled.append(name)
        if prop(t, "SKIP_RETURN_CODE") != 77:
            fail(f"{name}: labelled material but exit 77 is not its skip (SKIP_RETURN_CODE)")
    if wrapped and "material" not in labels:
        fail(f"{name}: runs through material_test.sh but is not labelled material")
    args = command[command.index("--") + 1:] if wrapped and "--" in command else command
    for a in args:
        if a.startswith(material) or "/shared/" in a or a.endswith("/shared"):
            fail(f"{name}: names the material folder ({a}) outside material_test.sh")
if len(labelled) < 10:
    fail(f"only {len(labelled)} tests labelled material: the labels were lost")
print(f"{len(labelled)} tests labelled material")

with tempfile.TemporaryDirectory(prefix="cutune_no_material_") as empty:
    junit = os.path.join(empty, "junit.xml")
    env = dict(os.environ, CUTUNE_TEST_MATERIAL=os.path.join(empty, "material"))
    run = subprocess.run([ctest, "--test-dir", build, "-L", "material", "-LE", "gpu", "-j", "2",
                          "--output-junit", junit], env=env, capture_output=True, text=True)
    print(run.stdout[-3000:])
    cases = ET.parse(junit).getroot().iter("testcase")
    seen = 0
    for case in cases:
        seen += 1
        name = case.get("name")
        out = "".join(e.text or "" for e in case.iter("system-out"))
        if case.find("skipped") is None:
            fail(f"{name}: not skipped without the material (status {case.get('status')})")
        elif f"no test material at {env['CUTUNE_TEST_MATERIAL']}" not in out:
            fail(f"{name}: skipped, but its output does not name the missing material: {out.strip()[-300:]}")
    cpu = [t["name"] for t in listing["tests"] if t["name"] in labelled and "gpu" not in prop(t, "LABELS", [])]
    if seen != len(cpu):
        fail(f"ctest -L material -LE gpu ran {seen} tests, the listing labels {len(cpu)} CPU tests material")
    print(f"{seen} material tests run without the material")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("PASSED: every material test is labelled and skips without it")
