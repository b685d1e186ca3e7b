"""A script's verify= function, called as Kernel Tuner 1.5 calls it (core.check_kernel_output:
`verify(answer, result_host, atol=atol)`) on the outputs of each configuration the engine
verifies: a Unix socket the GPU worker connects to (`cutune tune --verifier SOCKET`; the
conversation is in tuner/worker/include/cutune/worker/external_verifier.hpp). A False verdict
makes the configuration a correctness failure (its result carries an error, not a time)."""
import json
import os
import shutil
import socket
import struct
import tempfile
import threading

import numpy

_LENGTH = struct.Struct("=Q")  # cutune::process frames: the length as the host's uint64


def synced_arguments(arguments, answer):
    """The arguments Kernel Tuner copies back before verify: those whose answer entry is not
    None, or every numpy array when there is no answer."""
    return [i for i, a in enumerate(arguments)
            if isinstance(a, numpy.ndarray) and (answer is None or answer[i] is not None)]


class Verifier:
    def __init__(self, verify, answer, arguments, atol):
        self.verify = verify
        # As Kernel Tuner: each answer entry as a numpy array, None kept.
        self.answer = None if answer is None else [None if a is None else numpy.array(a) for a in answer]
        self.arguments = list(arguments)
        self.atol = atol
        self.wanted = synced_arguments(self.arguments, answer)
        self.rejected = 0
        self.errors = []  # exceptions the verify function raised, as text
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
                    ok, error = self.check(head["arguments"], contents)
                    _write_frame(conn, json.dumps({"seq": head["seq"], "ok": ok, "error": error}).encode())
            except (EOFError, OSError, ValueError, KeyError):
                return  # the worker ended (or was killed); a new one connects again

    def check(self, indices, contents):
        """(ok, error) for one configuration's argument contents."""
        result_host = [None] * len(self.arguments)
        for i, data in zip(indices, contents):
            arg = self.arguments[i]
            out = numpy.zeros_like(arg)
            out[...] = numpy.frombuffer(data, dtype=arg.dtype.newbyteorder("<")).reshape(arg.shape)
            result_host[i] = out
        try:
            correct = self.verify(self.answer, result_host, atol=self.atol)
        except Exception as e:  # noqa: BLE001 -- the script's function: its failure is the verdict
            self.errors.append(f"{type(e).__name__}: {e}")
            return False, f"the verify function raised {type(e).__name__}: {e}"
        if not correct:
            self.rejected += 1
            return False, "the verify function returned False (Kernel Tuner: 'Kernel result verification failed')"
        return True, ""


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
