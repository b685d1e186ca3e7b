"""Kernel Tuner 1.5's search space, built in Python from the user's own restrictions.

Kernel Tuner's Searchspace (python-constraint) keeps a configuration when every restriction
holds and the product of the block sizes that are parameters is at most max_threads. The
forms it takes, and how it calls them (searchspace.py __build_searchspace/__add_restrictions,
util.convert_constraint_lambdas):
  - a string: a Python expression over the parameters;
  - a lambda: its body (Kernel Tuner rewrites `p["x"]` to `x` from the source; here the lambda
    is called with the configuration dict, which gives the same value);
  - another callable in the list: called with every parameter's value, positionally;
  - a single callable of one argument when there are several parameters: called with the dict;
  - a (callable, names) tuple: Kernel Tuner 1.5 raises ValueError when parsing it, and so do we.
String restrictions are evaluated on whole numpy columns of the cartesian product where the
expression allows (arithmetic, comparisons, and/or/not, conditional expressions over numeric
parameters); any other expression, or one that fails on arrays, is evaluated per configuration
on the configurations still valid, as Python evaluates it.
"""
import ast
import builtins
import inspect

import numpy

CHUNK = 1 << 20


class _Vectorise(ast.NodeTransformer):
    """and/or/not, chained comparisons and x if c else y as numpy element-wise calls."""

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        fn = "logical_and" if isinstance(node.op, ast.And) else "logical_or"
        out = node.values[0]
        for v in node.values[1:]:
            out = ast.Call(ast.Attribute(ast.Name("__np", ast.Load()), fn, ast.Load()), [out, v], [])
        return out

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.Call(ast.Attribute(ast.Name("__np", ast.Load()), "logical_not", ast.Load()), [node.operand], [])
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if any(isinstance(op, (ast.In, ast.NotIn, ast.Is, ast.IsNot)) for op in node.ops):
            raise ValueError("membership/identity tests are evaluated per configuration")
        if len(node.ops) == 1:
            return node
        parts, left = [], node.left
        for op, right in zip(node.ops, node.comparators):
            parts.append(ast.Compare(left, [op], [right]))
            left = right
        return self.visit_BoolOp(ast.BoolOp(ast.And(), parts))

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return ast.Call(ast.Attribute(ast.Name("__np", ast.Load()), "where", ast.Load()),
                        [node.test, node.body, node.orelse], [])

    def visit_Call(self, node):
        raise ValueError("calls are evaluated per configuration")


def _is_numeric(values):
    return all(isinstance(v, (int, float, numpy.integer, numpy.floating)) and not isinstance(v, (bool, numpy.bool_))
               for v in values)


class _Restriction:
    def __init__(self, kind, obj, names, text=None):
        self.kind, self.obj, self.names, self.text = kind, obj, names, text
        self.vector = None
        if kind == "string":
            self.code = compile(obj, "<restriction>", "eval")
            try:
                tree = _Vectorise().visit(ast.parse(obj.strip(), mode="eval"))
                self.vector = compile(ast.fix_missing_locations(tree), "<restriction>", "eval")
            except (ValueError, SyntaxError):
                self.vector = None

    def check(self, config):
        """One configuration (a dict), as Kernel Tuner calls the restriction."""
        if self.kind == "string":
            return eval(self.code, {"__builtins__": builtins}, dict(config))
        if self.kind == "dict":
            return self.obj(config)
        return self.obj(*config.values())


def _lambda_as_string(fn):
    """Kernel Tuner's conversion of `lambda p: p["x"] < p["y"]` to "x < y" (from the source),
    when the source line holds this one lambda only and its body reads nothing but the
    parameters through p[...], names of builtins and constants; else None (then called)."""
    try:
        source = inspect.getsource(fn)
        import textwrap
        tree = ast.parse(textwrap.dedent(source).strip())
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
    if len(lambdas) != 1:
        return None
    arg = lambdas[0].args.args[0].arg
    body = lambdas[0].body

    class Rewrite(ast.NodeTransformer):
        def visit_Subscript(self, node):
            if (isinstance(node.value, ast.Name) and node.value.id == arg and isinstance(node.slice, ast.Constant)
                    and isinstance(node.slice.value, str)):
                return ast.Name(node.slice.value, ast.Load())
            return self.generic_visit(node)
    new = Rewrite().visit(body)
    free = {n.id for n in ast.walk(new) if isinstance(n, ast.Name)}
    if arg in free or any(n not in fn.__code__.co_consts and not hasattr(builtins, n) and n not in _NAMES_SEEN
                          for n in free - set(_NAMES_SEEN)):
        return None
    return ast.unparse(new)


_NAMES_SEEN = set()


def _classify(restrictions, names):
    if restrictions is None:
        return []
    items = list(restrictions) if isinstance(restrictions, (list, tuple)) else [restrictions]
    if any(isinstance(r, tuple) for r in items) and not all(isinstance(r, str) for r in items):
        # util.convert_constraint_lambdas drops tuples from its list, then finds it shorter.
        raise ValueError("An error occured when parsing restrictions. If you mix lambdas and string-based "
                         "restrictions, please define the lambda first.")
    if (len(items) == 1 and callable(items[0]) and not isinstance(items[0], str)
            and len(inspect.signature(items[0]).parameters) == 1 and len(names) > 1):
        return [_Restriction("dict", items[0], names)]
    out = []
    _NAMES_SEEN.clear()
    _NAMES_SEEN.update(names)
    for r in items:
        if isinstance(r, str):
            out.append(_Restriction("string", r, names))
        elif callable(r):
            is_lambda = getattr(r, "__name__", "") == "<lambda>"
            n_args = len(inspect.signature(r).parameters)
            text = _lambda_as_string(r) if is_lambda and n_args == 1 else None
            if text is not None:
                out.append(_Restriction("string", text, names))
            else:
                out.append(_Restriction("dict" if is_lambda and n_args == 1 else "positional", r, names))
        else:
            raise ValueError(f"Unrecognized restriction type {type(r)} ({r})")
    return out


class Space:
    """The valid configurations: `indices` (N x P uint32 value indices, product order) and the
    parameter values; `configs()` yields them as dicts in that order."""

    def __init__(self, tune_params, restrictions, block_size_names, max_threads=1024):
        self.names = list(tune_params)
        self.values = [list(v) for v in tune_params.values()]
        self.restrictions = _classify(restrictions, self.names)
        self.block_names = [b for b in block_size_names if b in self.names]
        self.max_threads = max_threads
        self.indices = self._build()

    def __len__(self):
        return len(self.indices)

    def _columns(self):
        cols = []
        for vals in self.values:
            cols.append(numpy.array(vals) if _is_numeric(vals) else numpy.array(vals, dtype=object))
        return cols

    def _build(self):
        lengths = [len(v) for v in self.values]
        total = int(numpy.prod(lengths, dtype=object)) if lengths else 1
        strides = [int(numpy.prod(lengths[i + 1:], dtype=object)) for i in range(len(lengths))]
        cols = self._columns()
        numeric = all(c.dtype != object for c in cols)
        kept = []
        for start in range(0, total, CHUNK):
            flat = numpy.arange(start, min(total, start + CHUNK), dtype=numpy.int64)
            idx = [(flat // s) % n for s, n in zip(strides, lengths)]
            kept.append(self._filter(idx, cols, numeric))
        rows = numpy.concatenate(kept) if kept else numpy.zeros((0, len(self.names)), numpy.uint32)
        return rows.reshape(-1, len(self.names)).astype(numpy.uint32)

    def _filter(self, idx, cols, numeric):
        n = len(idx[0]) if idx else 1
        mask = numpy.ones(n, dtype=bool)
        env = {name: c[i] for name, c, i in zip(self.names, cols, idx)}
        if self.block_names:
            prod = numpy.ones(n, dtype=object if not numeric else numpy.int64)
            for b in self.block_names:
                prod = prod * env[b]
            mask &= numpy.asarray(prod <= self.max_threads, dtype=bool)
        scalar = []
        for r in self.restrictions:
            if r.vector is not None and numeric:
                try:
                    with numpy.errstate(all="raise"):
                        v = eval(r.vector, {"__builtins__": builtins, "__np": numpy}, env)
                    v = numpy.asarray(v)
                    if v.shape in ((), (n,)) and v.dtype != object:
                        mask &= numpy.broadcast_to(v.astype(bool), (n,))
                        continue
                except Exception:  # noqa: BLE001 -- evaluated per configuration below, as Python does
                    pass
            scalar.append(r)
        rows = numpy.stack(idx, axis=1) if idx else numpy.zeros((1, 0), numpy.int64)
        if scalar:
            for k in numpy.nonzero(mask)[0]:
                config = {name: self.values[p][rows[k, p]] for p, name in enumerate(self.names)}
                for r in scalar:
                    if not r.check(config):
                        mask[k] = False
                        break
        return rows[mask]

    def configs(self):
        for row in self.indices:
            yield {name: self.values[p][row[p]] for p, name in enumerate(self.names)}

    def keys(self):
        """Kernel Tuner's cache keys of the valid configurations."""
        return [",".join(str(v) for v in c.values()) for c in self.configs()]


def product_size(tune_params):
    return int(numpy.prod([len(v) for v in tune_params.values()], dtype=object))


