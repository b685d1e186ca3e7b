"""A script's verify= function and observers, called as Kernel Tuner 1.5 calls them
(core.check_kernel_output) on the outputs of each configuration the engine verifies: a Unix
socket the GPU worker connects to (`cutune tune --verifier SOCKET`; the conversation is in
tuner/worker/include/cutune/worker/external_verifier.hpp). Per configuration, as Kernel Tuner:
the answer (a Tunable one selected for the configuration), the output observers'
process_output, then the verdict: verify= decides; else with output observers the output is
taken as correct; else a Tunable answer is compared as Kernel Tuner's default verify function
does (a fixed answer is cutune's own check, in the engine). A False verdict makes the
configuration a correctness failure (its result carries an error, not a time); what the
observers give goes back with the verdict and is kept with the result."""
import json
import os
import shutil
import socket
import struct
import tempfile
import threading

import numpy

from cutune_capture.tunable_arguments import is_tunable

from . import observing

_LENGTH = struct.Struct("=Q")  # cutune::process frames: the length as the host's uint64


def select(answer, params):
    """The answer for one configuration, as Kernel Tuner's check_kernel_output selects it."""
    if not is_tunable(answer):
        return answer
    if hasattr(answer, "select_for_configuration"):
        return answer.select_for_configuration(params)
    key = answer.param_key  # Kernel Tuner's Tunable.select_for_configuration
    option = key(params) if callable(key) else params[key] if key in params else eval(key, dict(params), dict(params))
    return select(answer[option], params)


def _answer_lists(answer):
    if is_tunable(answer):
        return [x for v in answer.values() for x in _answer_lists(v)]
    return [answer]


def synced_arguments(arguments, answer):
    """The arguments Kernel Tuner copies back before verify: those whose answer entry is not
    None (of any of a Tunable answer's lists), or every numpy array when there is no answer."""
    answers = [a for a in _answer_lists(answer) if a is not None] if answer is not None else []
    return [i for i, a in enumerate(arguments)
            if isinstance(a, numpy.ndarray) and (not answers or any(x[i] is not None for x in answers))]


def _wire(value):
    """A float as JSON can carry it: NaN and infinities as Python's json module spells them."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return value


class Verifier:
    def __init__(self, verify, answer, arguments, atol, plan=None, space=None):
        self.verify = verify
        self.tunable = is_tunable(answer)
        self.answer = answer
        self.arguments = list(arguments)
        self.atol = atol
        self.plan = plan
        self.space = space
        self.checks_outputs = verify is not None or self.tunable or bool(plan is not None and plan.output)
        # Only a RegisterObserver: no outputs to look at, the engine's own check decides.
        self.wanted = synced_arguments(self.arguments, answer) if self.checks_outputs else []
        self.reserved = set(space.names) if space is not None else set()
        self.rejected = 0
        self.errors = []  # exceptions the verify function or an observer raised, as text
        self.refused = set()  # observed values left out, said once each
        # A socket path must fit in 108 bytes: a short folder of its own.
        base = tempfile.gettempdir()
        self.dir = tempfile.mkdtemp(prefix="cutune-v-", dir=base if len(base) < 60 else "/tmp")
        self.path = os.path.join(self.dir, "verify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(8)
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        self.closed = True
        self.sock.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _accept(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            # One connection per GPU worker process; a restarted worker connects anew.
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        with conn:
            try:
                hello = json.loads(_read_frame(conn))
                # The engine's problem may have more (cmem_args come after the call's own).
                if len(hello.get("arguments", [])) < len(self.arguments):
                    raise ValueError(f"the engine's problem has {len(hello.get('arguments', []))} arguments, "
                                     f"the script's call {len(self.arguments)}")
                _write_frame(conn, json.dumps({"arguments": self.wanted}).encode())
                while True:
                    head = json.loads(_read_frame(conn))
                    contents = [_read_frame(conn) for _ in head["arguments"]]
                    ok, error, observed = self.check(head, contents)
                    reply = {"seq": head["seq"], "ok": ok, "error": error,
                             "observed": {k: _wire(v) for k, v in observed.items()}}
                    _write_frame(conn, json.dumps(reply).encode())
            except (EOFError, OSError, ValueError, KeyError):
                return  # the worker ended (or was killed); a new one connects again

    def params(self, head):
        """The configuration's parameters as the script's own Python values (from its value
        indices; from the key's text only where there is no space to read them from)."""
        indices = head.get("indices")
        if self.space is not None and indices is not None and len(indices) == len(self.space.names):
            return {n: self.space.values[p][i] for p, (n, i) in enumerate(zip(self.space.names, indices))}
        return {}

    def host_results(self, indices, contents, answer):
        """Kernel Tuner's result_host: the outputs read back, None for an argument not synced
        (an answer entry of None)."""
        result_host = [None] * len(self.arguments)
        for i, data in zip(indices, contents):
            if answer is not None and i < len(answer) and answer[i] is None:
                continue
            arg = self.arguments[i]
            out = numpy.zeros_like(arg)
            out[...] = numpy.frombuffer(data, dtype=arg.dtype.newbyteorder("<")).reshape(arg.shape)
            result_host[i] = out
        return result_host

    def check(self, head, contents):
        """(ok, error, observed) for one configuration's argument contents."""
        params = self.params(head)
        try:
            answer = select(self.answer, params) if self.checks_outputs else None
            if answer is not None:  # as Kernel Tuner: each entry as a numpy array, None kept
                answer = [None if a is None else numpy.array(a) for a in answer]
            result_host = self.host_results(head["arguments"], contents, answer if self.tunable else None)
            observed = {}
            if self.plan is not None and self.plan.python:
                observed = observing.observe(self.plan, answer, result_host, params, head.get("resources"),
                                             self.reserved, self.refused)
            correct = self.decide(answer, result_host)
        except observing.ObserverError as e:
            self.errors.append(str(e))
            return False, f"an observer raised: {e}", {}
        except Exception as e:  # noqa: BLE001 -- the script's function: its failure is the verdict
            self.errors.append(f"{type(e).__name__}: {e}")
            return False, f"the verify function raised {type(e).__name__}: {e}", {}
        if not correct:
            self.rejected += 1
            if self.verify is None:
                return False, (f"the outputs differ from the answer selected for the configuration (Kernel Tuner's "
                               f"default verify function: numpy.allclose, atol={self.atol})"), {}
            return False, "the verify function returned False (Kernel Tuner: 'Kernel result verification failed')", {}
        return True, "", observed

    def decide(self, answer, result_host):
        """Kernel Tuner's order: verify= decides; else output observers mean correct; else a
        Tunable answer is compared by the default verify function (a fixed one the engine has
        compared already)."""
        if self.verify is not None:
            return self.verify(answer, result_host, atol=self.atol)
        if self.plan is not None and self.plan.output:
            return True
        if self.tunable:
            return default_verify(self.arguments, answer, result_host, self.atol)
        return True


def default_verify(arguments, answer, result_host, atol):
    """Kernel Tuner 1.5's core._default_verify_function on numpy arrays: each answer entry that
    is not None against its output, numpy.allclose with atol (NaNs equal where the answer has
    any); TypeError/ValueError for an entry of the wrong type or size, as Kernel Tuner raises."""
    if len(arguments) != len(answer):
        raise TypeError("The length of argument list and provided results do not match.")
    correct = True
    for i, arg in enumerate(arguments):
        expected = answer[i]
        if expected is None:
            continue
        if isinstance(expected, numpy.ndarray) and isinstance(arg, numpy.ndarray):
            if not numpy.can_cast(arg.dtype, expected.dtype):
                raise TypeError(f"Element {i} of the expected results list has a dtype that is not compatible with "
                                f"the dtype of the kernel output: {expected.dtype} != {arg.dtype}.")
            if expected.size != arg.size:
                raise ValueError(f"Element {i} of the expected results list has a size different from the kernel "
                                 f"argument: {expected.size} != {arg.size}.")
        else:
            raise TypeError(f"Element {i} of expected results list and kernel arguments have different types.")
        result = result_host[i].ravel()
        expected = expected.flatten()
        nan = numpy.isnan(expected)
        correct = correct and bool(numpy.allclose(expected, result, atol=atol, equal_nan=bool(nan.any())))
    return correct


def _read_exactly(conn, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = conn.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


def _read_frame(conn):
    (n,) = _LENGTH.unpack(_read_exactly(conn, _LENGTH.size))
    return _read_exactly(conn, n)


def _write_frame(conn, data):
    conn.sendall(_LENGTH.pack(len(data)) + data)
