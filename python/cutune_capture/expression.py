"""Python callables from a Kernel Tuner script -> expression strings over parameter names.

Kernel Tuner accepts lambdas and functions for restrictions, grid divisors, problem sizes,
shared-memory sizes and metrics. A T1 file holds expression strings, so a callable is
translated from its source: `p["x"]` (the dict argument) or a positional argument named
after a parameter becomes the name `x`; names from the closure or the module become literals;
sub-expressions that use no parameter are folded into one literal (cutune's expression
language need not know `**`, `numpy.prod` or the script's helper constants).
Anything else (statements, loops, calls of the script's own functions on parameters) cannot
be carried over: Untranslatable says why, and the capture reports it as unsupported.
"""
import ast
import builtins
import linecache
import math
import numbers

import numpy

# Functions an expression may still call on parameters; the rest must fold to a constant.
KEPT_CALLS = {"min", "max", "abs", "int", "float", "round", "bool"}


class Untranslatable(Exception):
    pass


def literal(value):
    """A Python literal for a value, or raise Untranslatable."""
    if isinstance(value, (bool, numpy.bool_)):
        return ast.Constant(bool(value))
    if isinstance(value, numbers.Integral):
        return ast.Constant(int(value))
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isnan(v) or math.isinf(v):
            raise Untranslatable(f"the value {v} has no literal")
        return ast.Constant(v)
    if isinstance(value, str):
        return ast.Constant(value)
    if isinstance(value, (list, tuple)):
        return ast.List([literal(v) for v in value], ast.Load())
    if isinstance(value, numpy.ndarray) and value.ndim == 1 and value.size <= 4096:
        return ast.List([literal(v) for v in value.tolist()], ast.Load())
    raise Untranslatable(f"a value of type {type(value).__name__} has no literal")


def _source_node(fn):
    """The Lambda or FunctionDef node that defined fn, from its file's source."""
    code = getattr(fn, "__code__", None)
    if code is None:
        raise Untranslatable(f"{fn!r} is not a Python function")
    lines = linecache.getlines(code.co_filename)
    if not lines:
        raise Untranslatable(f"the source of {code.co_name} ({code.co_filename}) cannot be read")
    tree = ast.parse("".join(lines), code.co_filename)
    want_lambda = code.co_name == "<lambda>"
    candidates = []
    for node in ast.walk(tree):
        if want_lambda and isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno:
            candidates.append(node)
        elif (not want_lambda and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
              and node.name == code.co_name
              and (node.lineno == code.co_firstlineno or
                   any(d.lineno == code.co_firstlineno for d in node.decorator_list))):
            candidates.append(node)
    if len(candidates) > 1:  # several lambdas on one line: the one whose bytecode is fn's
        def same(node):
            try:
                mod = compile(ast.Expression(node), code.co_filename, "eval")
            except SyntaxError:
                return False
            inner = [c for c in mod.co_consts if hasattr(c, "co_code")]
            return bool(inner) and inner[0].co_code == code.co_code and inner[0].co_names == code.co_names
        candidates = [n for n in candidates if same(n)] or candidates[:1]
    if not candidates:
        raise Untranslatable(f"the source of {code.co_name} ({code.co_filename}:{code.co_firstlineno}) was not found")
    return candidates[0]


def _body(node):
    if isinstance(node, ast.Lambda):
        return node.body
    stmts = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(stmts) == 1 and isinstance(stmts[0], ast.Return) and stmts[0].value is not None:
        return stmts[0].value
    raise Untranslatable(f"function {node.name} is not a single return statement")


def _environment(fn):
    env = {}
    env.update(vars(builtins))
    env.update(getattr(fn, "__globals__", {}))
    code = fn.__code__
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            env[name] = cell.cell_contents
        except ValueError:
            pass
    return env


class _Translate(ast.NodeTransformer):
    def __init__(self, fn, dict_arg, positional, names, inline):
        self.env = _environment(fn)
        self.dict_arg = dict_arg          # name of the params-dict argument, or None
        self.positional = positional      # argument name -> parameter name
        self.names = names                # names the expression may use (parameters, time, ...)
        self.inline = inline              # name -> expression text to put in parentheses
        self.used = []

    def _use(self, name, node):
        if name in self.inline:
            return ast.parse(f"({self.inline[name]})", mode="eval").body
        if name not in self.names:
            raise Untranslatable(f"'{name}' is not a tuning parameter or known value")
        if name not in self.used:
            self.used.append(name)
        return ast.copy_location(ast.Name(name, ast.Load()), node)

    def visit_Subscript(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == self.dict_arg:
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                return self._use(key.value, node)
            raise Untranslatable(f"{ast.unparse(node)}: the key is not a constant string")
        return self.generic_visit(node)

    def visit_Call(self, node):
        # p.get("x") / p.get("x", default): the parameter itself (the name always exists)
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr == "get" and isinstance(f.value, ast.Name)
                and f.value.id == self.dict_arg and node.args and isinstance(node.args[0], ast.Constant)):
            return self._use(node.args[0].value, node)
        return self.generic_visit(node)

    def visit_Name(self, node):
        if node.id == self.dict_arg:
            raise Untranslatable(f"the parameter dict '{node.id}' is used other than as {node.id}[\"name\"]")
        if node.id in self.positional:
            return self._use(self.positional[node.id], node)
        if node.id in KEPT_CALLS or node.id in ("True", "False", "None"):
            return node
        if node.id in self.env:
            value = self.env[node.id]
            if callable(value) or isinstance(value, type(math)):
                return node  # a function or module: folded below if its arguments are constants
            return ast.copy_location(literal(value), node)
        raise Untranslatable(f"the name '{node.id}' is not defined")

    def visit_Lambda(self, node):
        raise Untranslatable("a nested lambda")


def _mentions_parameters(node, used_names):
    return any(isinstance(n, ast.Name) and n.id in used_names for n in ast.walk(node))


def _fold(node, env, used_names):
    """Replace every sub-expression without parameters by its value."""
    if isinstance(node, ast.expr) and not isinstance(node, (ast.Constant, ast.Name)) \
            and not _mentions_parameters(node, used_names):
        try:
            value = eval(compile(ast.Expression(node), "<fold>", "eval"), dict(env))
            return literal(value)
        except Untranslatable:
            raise
        except Exception as e:  # noqa: BLE001 -- any failure means: keep the expression as it is
            raise Untranslatable(f"{ast.unparse(node)} cannot be evaluated ({e})")
    for field, old in ast.iter_fields(node):
        if isinstance(old, list):
            setattr(node, field, [_fold(v, env, used_names) if isinstance(v, ast.AST) else v for v in old])
        elif isinstance(old, ast.AST):
            setattr(node, field, _fold(old, env, used_names))
    return node


def _check_calls(node, used_names):
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            if not (isinstance(n.func, ast.Name) and n.func.id in KEPT_CALLS):
                raise Untranslatable(f"{ast.unparse(n)}: calls a function on tuning parameters")
        if isinstance(n, (ast.Attribute, ast.NamedExpr, ast.ListComp, ast.GeneratorExp, ast.DictComp,
                          ast.SetComp, ast.Await, ast.Yield, ast.YieldFrom, ast.Starred)):
            raise Untranslatable(f"{ast.unparse(n)}: not an expression over parameters")


def translate_callable(fn, names, inline=None, param_names=None):
    """The expression text of fn and the names it uses.

    fn takes either one dict argument (Kernel Tuner's `p["x"]` style) or positional arguments
    named after parameters (python-constraint style, or listed in param_names for Kernel
    Tuner's (function, [names]) restrictions). names: what the expression may mention.
    inline: names replaced by a parenthesised expression (earlier metrics without an
    identifier name).
    """
    inline = inline or {}
    node = _source_node(fn)
    args = node.args
    arg_names = [a.arg for a in args.posonlyargs + args.args]
    if args.vararg or args.kwarg:
        raise Untranslatable("*args/**kwargs arguments")
    dict_arg, positional = None, {}
    if param_names is not None:
        if len(param_names) != len(arg_names):
            raise Untranslatable(f"{len(arg_names)} arguments for {len(param_names)} parameter names")
        positional = dict(zip(arg_names, param_names))
    elif len(arg_names) == 1 and arg_names[0] not in names:
        dict_arg = arg_names[0]
    else:
        positional = {a: a for a in arg_names}
    t = _Translate(fn, dict_arg, positional, set(names), inline)
    body = t.visit(ast.parse(ast.unparse(_body(node)), mode="eval").body)
    body = _fold(body, t.env, set(names))
    _check_calls(body, set(names))
    return ast.unparse(body), t.used


def parameters_in(expression, names):
    """The names of `names` that an expression string mentions, in order of first use."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return [n for n in names if n in expression]
    seen = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id in names and n.id not in seen:
            seen.append(n.id)
    return seen
