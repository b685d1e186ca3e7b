"""Sorts what went wrong with a corpus script into the classes of the Kernel Tuner users' issue:

1 Python the capture cannot translate   2 compilation (NVRTC where the script's tool used nvcc/CuPy)
3 element types                         4 paths and modules
5 the workflow (results the script uses after tune_kernel are placeholders)

and two that are not cutune's: 'KT fails too' (Kernel Tuner 1.5 raises on the same call or the script
fails before any call, e.g. a missing package or a GPU needed for its own setup) and 'skipped'. The
rules read the messages the tools print; each reason keeps the message it came from."""
import re

SYSTEM_INCLUDE = re.compile(r'cannot open source file "(stdio\.h|stdlib\.h|cstdio|cstdlib|cmath|math\.h|iostream|'
                            r'string|vector|cassert|assert\.h|cfloat|float\.h|climits|cstdint|algorithm|'
                            r'type_traits|complex|limits|sstream|stdexcept|memory|cuda\.h|cuda_runtime_api\.h|'
                            r'cublas_v2\.h|[a-z_]+\.h)"')


def first_line(text):
    return (text or "").strip().splitlines()[0][:300] if (text or "").strip() else ""


def capture_message_class(message, kind):
    m = (message or "").lower()
    if "lang: c:" in m:
        return 'other (lang="C")'
    if kind == "run_kernel" and "tune_params" in m:
        # run_kernel's params came from the script's own results file, written from placeholders
        return 5
    if "element type" in m or "dtype" in m:
        return 3
    if "no module named" in m or "no such file" in m or "cannot find" in m:
        return 4
    if any(w in m for w in ("callable", "lambda", "function", "translat", "restriction", "define", "metric",
                            "closure", "problem_size", "grid_div", "required field", "expression", "verify")):
        return 1
    return "other"


def compile_error_class(error):
    e = error or ""
    match = re.search(r'cannot open source file "([^"]+)"', e)
    if match:
        header = match.group(1)
        if SYSTEM_INCLUDE.search(e) and "/" not in header:
            return 2, f"NVRTC has no {header}"
        return 4, f"include {header} not found"
    if "unrecognized option" in e or "unknown option" in e:
        return 2, first_line(re.search(r"[^\n]*(unrecognized|unknown) option[^\n]*", e).group(0))
    if "__host__" in e or "JIT mode" in e:
        return 2, "host function in JIT mode"
    if re.search(r'identifier "half" is undefined|identifier "__half" is undefined', e):
        return 2, "half without cuda_fp16.h (CuPy includes it)"
    found = re.search(r"[^\n]*error[^\n]*", e)
    return 2, (found.group(0).strip()[:200] if found else first_line(e))


def kt_outcome(kt):
    status = kt["status"]
    tune = [c for c in kt["calls"] if c["kind"] == "tune_kernel"]
    errors = [c["kt_error"] for c in tune if "kt_error" in c]
    if errors:
        e = errors[0]
        return "raises", f"Kernel Tuner raises {e['type']}: {first_line(e['message'])}"
    if status["script_status"] != "ok" and not tune:
        return "setup fails", f"the script fails before any tune_kernel: {first_line(status.get('error') or status.get('stderr_tail') or status.get('exit_code'))}"
    if not tune:
        return "no tune_kernel", "the script calls no tune_kernel"
    valid = ", ".join(str(c.get("kt_valid")) for c in tune)
    text = f"Kernel Tuner builds {len(tune)} space(s): {valid} valid"
    if status["script_status"] != "ok":
        text += f"; the script then fails: {first_line(status.get('error'))}"
    return "builds", text


def capture_reasons(cap, kt_kind):
    reasons = []
    for c in cap["calls"]:
        where = f"call {c['index']} {c['kind']} {c['kernel_name']}"
        if c["status"] in ("unsupported", "error"):
            reasons.append((capture_message_class(c.get("message"), c["kind"]), f"{where}: capture {c['status']}: "
                            f"{c.get('message', '').split('): ', 1)[-1][:300]}"))
            continue
        if c.get("space_error"):
            reasons.append((1, f"{where}: cutune space fails: {first_line(c['space_error'])}"))
        space = c.get("space")
        if space and not space["equal"]:
            reasons.append((1, f"{where}: space differs: Kernel Tuner {space['kt']} valid, cutune {space['cutune']}"))
        if c.get("compiled") is False:
            cls, why = compile_error_class(c.get("compile_error"))
            reasons.append((cls, f"{where}: default does not compile: {why}"))
    if cap.get("status") == "script-failed":
        message = cap.get("message") or ""
        if kt_kind in ("setup fails", "raises"):
            reasons.append(("KT fails too", f"the script fails under the capture too: {first_line(message)}"))
        elif "No module named" in message:
            reasons.append((4, f"the script fails under the capture: {first_line(message)}"))
        else:
            reasons.append((5, f"the script fails after the stand-in's placeholder results: {first_line(message)}"))
    elif cap.get("status") == "no capture.json":
        reasons.append(("other", f"no capture: {first_line(cap.get('message'))}"))
    return reasons


def classify(row):
    if row.get("skipped"):
        row["outcome"] = {"kt": "skipped", "classes": ["skipped"], "reasons": [row["skipped"]]}
        return
    kt_kind, kt_text = kt_outcome(row["kt"])
    reasons = capture_reasons(row["capture"], kt_kind)
    if kt_kind in ("setup fails", "raises") and not any(r[0] == "KT fails too" for r in reasons):
        reasons.insert(0, ("KT fails too", kt_text))
    classes = sorted({str(r[0]) for r in reasons})
    row["outcome"] = {"kt": kt_text, "kt_kind": kt_kind, "classes": classes,
                      "reasons": [f"[{r[0]}] {r[1]}" for r in reasons]}
