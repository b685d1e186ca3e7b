"""Which Kernel Tuner and Python features a corpus script uses: from the calls kt_intercept.py
recorded (what the script really passed) and from the script's source (its kernel_tuner imports)."""
import ast
import re
from pathlib import Path

SYSTEM_HEADERS = re.compile(r"^<(stdio\.h|stdlib\.h|cstdio|cstdlib|cmath|math\.h|iostream|string|vector|"
                            r"cassert|assert\.h|cfloat|float\.h|climits|cstdint|stdint\.h|algorithm|"
                            r"type_traits|complex|limits)>$")


def kernel_tuner_imports(script):
    """'kernel_tuner', 'kernel_tuner.accuracy', ... as the script (and the local modules beside it
    that it imports) name them."""
    seen, todo, names = set(), [Path(script)], set()
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        try:
            tree = ast.parse(path.read_text(errors="replace"))
        except SyntaxError:
            names.add("(python 2 syntax)")
            continue
        for node in ast.walk(tree):
            modules = []
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names
                                           if node.module == "kernel_tuner" and a.name[0].islower()
                                           and a.name not in ("tune_kernel", "run_kernel")]
            for m in modules:
                if m == "kernel_tuner" or m.startswith("kernel_tuner."):
                    names.add(m)
                elif (path.parent / f"{m.split('.')[0]}.py").is_file():
                    todo.append(path.parent / f"{m.split('.')[0]}.py")
    return sorted(names)


def value_kinds(v):
    """The kinds inside a value as kt_intercept.describe_value wrote it."""
    if isinstance(v, dict) and "callable" in v:
        return {"callable:" + v["callable"]} | ({"closure"} if v.get("uses") else set())
    if isinstance(v, list):
        out = set()
        for x in v:
            out |= value_kinds(x)
        return out
    if isinstance(v, str):
        return {"string"}
    return set()


def call_features(c, params):
    f = set()
    f |= {"restriction:" + k for k in c.get("restriction_kinds", [])}
    ps = value_kinds(c.get("problem_size"))
    f |= {"problem_size:" + k for k in ps if k != "closure"}
    for d, v in c.get("grid_div", {}).items():
        f |= {"grid_div:" + k for k in value_kinds(v) if k.startswith("callable")}
    for name, v in c.get("defines", {}).items():
        if isinstance(v, dict) and "callable" in v:
            f.add("defines:callable")
        elif isinstance(v, str):
            f.add("defines:string naming a parameter" if v in params else "defines:string")
    for name, v in (c.get("metrics") or {}).items():
        kinds = value_kinds(v)
        f |= {"metrics:" + k for k in kinds if k != "closure"}
        if "closure" in kinds:
            f.add("metrics:over closure/global values")
    if c.get("verify"):
        f.add("verify function")
    answer = c.get("answer") or []
    if any(a == "run_kernel output" for a in answer):
        f.add("answer from run_kernel")
    elif any(a is not None for a in answer):
        f.add("answer arrays")
    for inc in c.get("includes", []):
        if SYSTEM_HEADERS.match(inc):
            f.add("#include " + inc)
        elif "cub" in inc:
            f.add("#include cub")
        elif inc.startswith("<"):
            f.add("#include other <...> " + inc)
    for opt in c.get("compiler_options") or []:
        if opt.startswith("-O"):
            f.add("option " + opt)
        elif opt.startswith("-I") and not opt[2:].startswith("/"):
            f.add("option relative -I")
        elif opt.startswith("-D"):
            f.add("option -D")
        elif opt.startswith(("-std", "--std")):
            f.add("option -std")
    for a in c.get("arguments", []):
        if a["kind"] in ("array", "scalar") and a["dtype"] not in ("float32", "float64", "int32"):
            f.add("dtype " + a["dtype"])
        elif a["kind"] == "TunablePrecision":
            f.add("TunablePrecision argument")
        elif a["kind"] in ("int", "float"):
            f.add("python " + a["kind"] + " argument")
    for key in ("cmem_args", "texmem_args"):
        if c.get(key):
            f.add(key)
    if c.get("smem_args"):
        f.add("smem_args")
    if c.get("observers"):
        f.add("observers " + ",".join(c["observers"]))
    name = c.get("kernel_name", "")
    if "<" in name:
        f.add("templated kernel name")
    if "::" in name:
        f.add("namespaced kernel name")
    if any(isinstance(v, list) and any(isinstance(x, str) for x in v) for v in c.get("tune_params", {}).values()):
        f.add("string parameter values")
    if c.get("lang"):
        f.add("lang=" + str(c["lang"]))
    if c.get("block_size_names"):
        f.add("block_size_names")
    if c.get("objective"):
        f.add("objective")
    return f


def script_features(script, calls):
    f = set()
    for c in calls:
        f |= call_features(c, set(c.get("tune_params", {})))
    kinds = [c["kind"] for c in calls]
    f.add(f"{kinds.count('tune_kernel')} tune_kernel / {kinds.count('run_kernel')} run_kernel calls")
    return {"used": sorted(f), "kernel_tuner_imports": kernel_tuner_imports(script)}
