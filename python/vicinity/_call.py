"""One library call: its context, its errors as exceptions, Ctrl-C as
vic_ctx_cancel.

The call runs in a worker thread while the calling (main) thread waits:
Python delivers KeyboardInterrupt to the main thread only between
bytecodes, never inside a foreign call, so the waiting thread receives it,
cancels the context (safe from any thread) and re-raises once the library
has stopped.  ctypes releases the GIL for the whole library call.
A host that keeps SIGINT for itself in C (pvpython's logger aborts on
it) gets Python's handler for the length of the call and its own back.
"""
import ctypes
import signal
import threading
import warnings

from . import _abi
from ._abi import lib

OK, E_ARGUMENT, E_NONFINITE, E_NOMEM, E_NODEVICE, E_DEVICE, E_CANCELLED, E_IO, E_FORMAT, E_UNSUPPORTED = range(10)
LOG_WARNING = 2


class Error(RuntimeError):
    """A failed library call; str() is the core's message, .status its name."""

    def __init__(self, status, message):
        self.status = lib.vic_status_name(status).decode()
        super().__init__(message or self.status)


class ArgumentError(Error, ValueError):
    """Bad parameters or data (VIC_E_ARGUMENT, VIC_E_NONFINITE)."""


class CancelledError(Error):
    """The call was cancelled (VIC_E_CANCELLED) by something else than Ctrl-C."""


class FileError(Error, OSError):
    """An index file could not be read or written, or is not one (VIC_E_IO, VIC_E_FORMAT)."""


_CLASSES = {E_ARGUMENT: ArgumentError, E_NONFINITE: ArgumentError, E_CANCELLED: CancelledError, E_IO: FileError,
            E_FORMAT: FileError}


def _enum(parse, what, value):
    if isinstance(value, int):
        return value
    out = ctypes.c_int()
    if parse(str(value).encode(), ctypes.byref(out)) != OK:
        raise ValueError("unknown %s %r" % (what, value))
    return out.value


def backend_code(name):
    return _enum(lib.vic_backend_parse, "backend", name)


def method_code(name):
    return _enum(lib.vic_method_parse, "method", name)


def metric_code(name):
    return _enum(lib.vic_metric_parse, "metric", name)


class _PythonSigint:
    """Python's SIGINT handler while a call runs, when the process had a
    handler that Python does not know (signal.getsignal gives None); the
    host's own is put back with sigaction afterwards."""

    def __enter__(self):
        self._saved = None
        if signal.getsignal(signal.SIGINT) is not None:
            return self
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            saved = ctypes.create_string_buffer(512)  # larger than any struct sigaction
            if libc.sigaction(signal.SIGINT, None, saved) == 0:
                self._libc, self._saved = libc, saved
                signal.signal(signal.SIGINT, signal.default_int_handler)
        except (OSError, AttributeError, ValueError):
            self._saved = None
        return self

    def __exit__(self, *exc):
        if self._saved is not None:
            self._libc.sigaction(signal.SIGINT, self._saved, None)
        return False


class Context:
    """A vic_ctx for one call (or one Index's lifetime)."""

    def __init__(self, backend="auto", threads=0, seed=42, device=0):
        o = _abi.init(_abi.CtxOptions)
        o.backend = backend_code(backend)
        o.threads = int(threads)
        o.seed = int(seed)
        o.device = int(device)
        self.log = []  # (level, message) of this context's calls
        self._log_fn = _abi.LOG_FN(lambda user, level, msg: self.log.append((level, msg.decode(errors="replace"))))
        o.log = self._log_fn
        self._handle = ctypes.c_void_p()
        s = lib.vic_ctx_create(ctypes.byref(o), ctypes.byref(self._handle))
        if s != OK:
            raise ArgumentError(s, "invalid context options (backend %r, threads %r, device %r)" %
                                (backend, threads, device))

    @property
    def handle(self):
        return self._handle

    def close(self):
        if self._handle:
            lib.vic_ctx_destroy(self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        self.close()

    def call(self, fn, *args):
        """fn(ctx, *args) with Ctrl-C cancelling it; raises on failure."""
        del self.log[:]
        status = [None]
        done = threading.Event()

        def work():
            try:
                status[0] = fn(self._handle, *args)
            finally:
                done.set()

        if threading.current_thread() is not threading.main_thread():
            work()  # signals reach the main thread only: nothing to catch here
        else:
            interrupted = False
            with _PythonSigint():
                t = threading.Thread(target=work, name="vicinity", daemon=True)
                t.start()
                # Wait on our own event, not Thread.join: on Python 3.11 a
                # KeyboardInterrupt inside join can mark a running thread
                # stopped (is_alive() False), and the caller would go on --
                # even exit the interpreter -- while the library still runs
                # and calls back into Python.
                while not done.is_set():
                    try:
                        done.wait(0.1)
                    except KeyboardInterrupt:
                        interrupted = True
                        lib.vic_ctx_cancel(self._handle)
            if interrupted:
                raise KeyboardInterrupt("vicinity: cancelled")
        for level, msg in self.log:
            if level == LOG_WARNING:
                warnings.warn("vicinity: " + msg, RuntimeWarning, stacklevel=3)
        s = status[0]
        if s != OK:
            raise _CLASSES.get(s, Error)(s, lib.vic_ctx_error(self._handle).decode(errors="replace"))
