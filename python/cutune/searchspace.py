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
import itertools

import numpy

CHUNK = 1 << 20
SMALL = 16  # products up to this size are enumerated one configuration at a time


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


def _compiled(node):
    tree = _Vectorise().visit(ast.Expression(node))
    return compile(ast.fix_missing_locations(tree), "<restriction>", "eval")


def _truth_program(node):
    """The restriction as a function of a chunk giving each row's truth, with Python's
    short-circuits: the right of `a or b` is evaluated only on the rows where `a` is false (so
    `unroll == 0 or tile % unroll == 0` never divides by zero), a conditional's branches only on
    their rows. Raises ValueError for what has no element-wise form."""
    if isinstance(node, ast.BoolOp):
        parts = [_truth_program(v) for v in node.values]
        is_or = isinstance(node.op, ast.Or)

        def run(chunk):
            out = numpy.full(chunk.size, not is_or)
            todo = numpy.ones(chunk.size, dtype=bool)
            for part in parts:
                if not todo.any():
                    break
                idx = numpy.nonzero(todo)[0]
                v = part(chunk.subset(todo) if len(idx) < chunk.size else chunk)
                if is_or:
                    out[idx[v]] = True
                    todo[idx[v]] = False
                else:
                    out[idx[~v]] = False
                    todo[idx[~v]] = False
            return out
        return run
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth_program(node.operand)
        return lambda chunk: ~inner(chunk)
    if isinstance(node, ast.IfExp):
        test, body, orelse = _truth_program(node.test), _truth_program(node.body), _truth_program(node.orelse)

        def run_if(chunk):
            t = test(chunk)
            out = numpy.zeros(chunk.size, dtype=bool)
            if t.any():
                out[t] = body(chunk.subset(t))
            if (~t).any():
                out[~t] = orelse(chunk.subset(~t))
            return out
        return run_if
    code = _compiled(node)

    def leaf(chunk):
        with numpy.errstate(all="raise"):
            v = numpy.asarray(eval(code, {"__builtins__": builtins, "__np": numpy}, chunk))
        if v.dtype == object or v.shape not in ((), (chunk.size,)):
            raise ValueError("no element-wise value")
        return numpy.broadcast_to(v.astype(bool), (chunk.size,)).copy()
    return leaf


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
                self.vector = _truth_program(ast.parse(obj.strip(), mode="eval").body)
            except (ValueError, SyntaxError):
                self.vector = None

    def check(self, config):
        """One configuration (a dict), as Kernel Tuner calls the restriction."""
        if self.kind == "string":
            return eval(self.code, {"__builtins__": builtins}, dict(config))
        if self.kind == "dict":
            return self.obj(config)
        return self.obj(*config.values())


def _unparse_lambda(node):
    """Kernel Tuner's unparse_constraint_lambda: the body with `p["x"]` as `x`."""
    arg = node.args.args[0].arg if node.args.args else None

    class Rewrite(ast.NodeTransformer):
        def visit_Subscript(self, sub):
            if (isinstance(sub.value, ast.Name) and sub.value.id == arg and isinstance(sub.slice, ast.Constant)
                    and isinstance(sub.slice.value, str)):
                return ast.Name(sub.slice.value, ast.Load())
            return self.generic_visit(sub)
    import copy
    return ast.unparse(Rewrite().visit(copy.deepcopy(node.body))).strip()


def _kt_converted(items):
    """What Kernel Tuner's convert_constraint_lambdas makes of the restrictions (as a set)."""
    out = []
    for c in items:
        if isinstance(c, str):
            out.append(c)
        elif callable(c):
            if getattr(c, "__name__", "") != "<lambda>":
                out.append(c)
                continue
            try:
                import textwrap
                tree = ast.parse(textwrap.dedent(inspect.getsource(c)).strip())
                lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
                out.extend(_unparse_lambda(n) for n in lambdas)
            except SyntaxError:
                pass
            except (OSError, TypeError):
                out.append(c)
    return set(out)


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
    new = ast.parse(_unparse_lambda(lambdas[0]), mode="eval").body
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
    if not all(isinstance(r, str) for r in items) and len(_kt_converted(items)) != len(items):
        # util.convert_constraint_lambdas: tuples dropped, every lambda on a lambda's source
        # line added, duplicates merged (a set); a list of another length is refused.
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


class _Chunk(dict):
    """A slice of the cartesian product: a parameter's column of values (or of value indices)
    is made when an expression first reads it."""

    def __init__(self, flat, strides, lengths, names, cols):
        super().__init__()
        self.flat, self.strides, self.lengths, self.names, self.cols = flat, strides, lengths, names, cols
        self.position = {n: i for i, n in enumerate(names)}
        self.size = len(flat)
        self._index = {}

    def subset(self, ok):
        return _Chunk(self.flat[ok], self.strides, self.lengths, self.names, self.cols)

    def index(self, p):
        if p not in self._index:
            self._index[p] = (self.flat // self.strides[p]) % self.lengths[p]
        return self._index[p]

    def __missing__(self, name):
        p = self.position.get(name)
        if p is None:
            raise KeyError(name)
        value = self.cols[p][self.index(p)]
        self[name] = value
        return value


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
        if total <= SMALL:
            return self._build_small()
        cols = self._columns()
        numeric = all(c.dtype != object for c in cols)
        kept = []
        for start in range(0, total, CHUNK):
            flat = numpy.arange(start, min(total, start + CHUNK), dtype=numpy.int64)
            kept.append(self._filter(_Chunk(flat, strides, lengths, self.names, cols), numeric))
        rows = numpy.concatenate(kept) if kept else numpy.zeros((0, len(self.names)), numpy.uint32)
        return rows.reshape(-1, len(self.names)).astype(numpy.uint32)

    def _build_small(self):
        """A small product, one configuration at a time: numpy's set-up would cost more than
        the whole space (measured: numpy wins from a few tens of configurations on)."""
        rows = []
        ranges = [range(len(v)) for v in self.values]
        for idx in itertools.product(*ranges):
            config = {name: self.values[p][i] for p, (name, i) in enumerate(zip(self.names, idx))}
            if self.block_names:
                prod = 1
                for b in self.block_names:
                    prod *= config[b]
                if prod > self.max_threads:
                    continue
            if all(r.check(config) for r in self.restrictions):
                rows.append(idx)
        # len(rows), not -1: with no parameters (run_kernel(..., params={})) the one row is empty
        return numpy.array(rows, dtype=numpy.uint32).reshape(len(rows), len(self.names))

    def _filter(self, chunk, numeric):
        """The rows of `chunk` every restriction keeps; the chunk shrinks to the survivors after
        each vectorised check, so later checks read fewer rows."""
        def narrowed(chunk, ok):
            return chunk if ok.all() else chunk.subset(ok)
        if self.block_names:
            prod = numpy.ones(chunk.size, dtype=object if not numeric else numpy.int64)
            for b in self.block_names:
                prod = prod * chunk[b]
            chunk = narrowed(chunk, numpy.asarray(prod <= self.max_threads, dtype=bool))
        scalar = []
        for r in self.restrictions:
            if r.vector is not None and numeric and chunk.size:
                try:
                    chunk = narrowed(chunk, r.vector(chunk))
                    continue
                except Exception:  # noqa: BLE001 -- evaluated per configuration below, as Python does
                    pass
            scalar.append(r)
        rows = numpy.stack([chunk.index(p) for p in range(len(self.names))], axis=1) if self.names else \
            numpy.zeros((chunk.size, 0), numpy.int64)
        if scalar:
            ok = numpy.ones(len(rows), dtype=bool)
            for k, row in enumerate(rows):
                config = {name: self.values[p][row[p]] for p, name in enumerate(self.names)}
                for r in scalar:
                    if not r.check(config):
                        ok[k] = False
                        break
            rows = rows[ok]
        return rows

    def configs(self):
        for row in self.indices:
            yield {name: self.values[p][row[p]] for p, name in enumerate(self.names)}

    def keys(self):
        """Kernel Tuner's cache keys of the valid configurations."""
        return [",".join(str(v) for v in c.values()) for c in self.configs()]


def product_size(tune_params):
    return int(numpy.prod([len(v) for v in tune_params.values()], dtype=object))


