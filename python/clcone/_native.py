"""The C library through cffi (ABI mode), clcone's errors as exceptions,
the checks every array passes before it reaches C, Ctrl-C for long
calls, and the locks that keep objects safe across threads."""
from __future__ import annotations

import functools
import os
import signal
import socket
import threading
from importlib import resources
from typing import Any, Callable, Optional, TypeVar

import numpy as np
from cffi import FFI

ffi = FFI()
ffi.cdef(resources.files(__package__).joinpath("_api.h").read_text())
ffi.cdef("void *calloc(size_t nmemb, size_t size); void free(void *ptr);")
lib: Any = ffi.dlopen(str(resources.files(__package__).joinpath("libclcone.so")))
# pictures and FCLib HDF5 files (include/clcone/output.h): libclcone_output,
# over the libclcone just loaded (its soname, libclcone.so.0, is that one's)
lib_output: Any = ffi.dlopen(str(resources.files(__package__).joinpath("libclcone_output.so")))
libc: Any = ffi.dlopen(None)


class Error(Exception):
    """A clcone call failed; ``status`` is the C status name, the message
    clcone's own (naming the file, line, contact or option)."""

    status = "error"


class InvalidInput(Error, ValueError):
    """CLCONE_EINVAL: invalid argument or problem data."""

    status = "invalid input"


class FileError(Error, OSError):
    """CLCONE_EIO: a file could not be opened, read or written."""

    status = "i/o error"


class FormatError(Error, ValueError):
    """CLCONE_EFORMAT: a file's content is malformed."""

    status = "format error"


class OutOfMemory(Error, MemoryError):
    """CLCONE_ENOMEM: a host allocation failed."""

    status = "out of memory"


class DeviceError(Error):
    """CLCONE_EDEVICE: OpenCL platform, device, build or run failure."""

    status = "device error"


class NotSupported(Error):
    """CLCONE_ENOTSUP: a combination the library does not run (a solver for
    a model on a backend, say)."""

    status = "not supported"


_BY_STATUS = {lib.CLCONE_EINVAL: InvalidInput, lib.CLCONE_EIO: FileError, lib.CLCONE_EFORMAT: FormatError,
              lib.CLCONE_ENOMEM: OutOfMemory, lib.CLCONE_EDEVICE: DeviceError, lib.CLCONE_ENOTSUP: NotSupported}


def new_error() -> Any:
    return ffi.new("clcone_error *")


def check(status: int, err: Any) -> None:
    """Raises the exception of a failed call's status with its message."""
    if status != lib.CLCONE_OK:
        cls = _BY_STATUS.get(status, Error)
        raise cls(ffi.string(err.msg).decode("utf-8", "replace"))


def c_string(s: str, what: str) -> bytes:
    if not isinstance(s, (str, os.PathLike)):
        raise TypeError(f"{what} must be a str or path, got {type(s).__name__}")
    b = os.fsencode(s)
    if b"\0" in b:
        raise ValueError(f"{what} contains a NUL character")
    return b


# Arrays ------------------------------------------------------------------

def _array(x: Any, kinds: str, what: str) -> np.ndarray:
    """A numpy array is taken as it is (its dtype checked, C order
    required); a Python sequence is converted."""
    if isinstance(x, np.ndarray):
        a = x
        if a.dtype.kind not in kinds:
            want = "a floating-point" if kinds == "f" else "an integer"
            raise TypeError(f"{what} must be {want} array, got dtype {a.dtype}")
        if not a.flags.c_contiguous:
            raise ValueError(f"{what} must be C-contiguous (np.ascontiguousarray makes a copy that is)")
        return a
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what} must be an array of numbers: {e}") from None
    if a.size == 0:
        return a.astype(np.float64 if kinds == "f" else np.int32)
    if a.dtype.kind == "b" or a.dtype.kind not in (kinds + ("iu" if kinds == "f" else "")):
        raise TypeError(f"{what} must be an array of {'numbers' if kinds == 'f' else 'integers'}, "
                        f"got {a.dtype}")
    return a


def _shape(a: np.ndarray, shape: tuple, what: str) -> None:
    if a.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, a.shape)):
        want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
        raise ValueError(f"{what} must have shape {want}, got {a.shape}")


def ndim(x: Any, what: str) -> int:
    """np.ndim(x), whose own error for a ragged list names no argument."""
    try:
        return int(np.ndim(x))
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what} must be an array of numbers: {e}") from None


def reals(x: Any, shape: tuple, what: str, finite: bool = True) -> np.ndarray:
    """x as float64 of the given shape (None = any length), finite."""
    a = _array(x, "f", what)
    _shape(a, shape, what)
    a = np.ascontiguousarray(a, dtype=np.float64)
    if finite and not np.isfinite(a).all():
        bad = np.flatnonzero(~np.isfinite(a.ravel()))[0]
        raise ValueError(f"{what}: entry {bad} is {a.ravel()[bad]}, not a finite number")
    return a


def ints(x: Any, shape: tuple, what: str) -> np.ndarray:
    a = _array(x, "iu", what)
    _shape(a, shape, what)
    if a.size and (a.min() < -2**31 or a.max() >= 2**31):
        raise ValueError(f"{what}: values must fit a C int")
    return np.ascontiguousarray(a, dtype=np.int32)


def copy_in(dst: Any, a: np.ndarray) -> None:
    """Copies a numpy array into C memory (a pointer into malloc'ed
    arrays)."""
    if a.size:
        ffi.memmove(dst, ffi.from_buffer(a), a.nbytes)


def copy_out(src: Any, dtype: Any, count: int) -> np.ndarray:
    out = np.empty(count, dtype=dtype)
    if count:
        ffi.memmove(ffi.from_buffer(out), src, out.nbytes)
    return out


def c_alloc(ctype: str, count: int) -> Any:
    """Zeroed malloc'ed C memory, for structures the library frees itself
    (clcone_world_free)."""
    p = libc.calloc(max(count, 1), ffi.sizeof(ctype))
    if p == ffi.NULL:
        raise OutOfMemory(f"out of memory for {count} {ctype}")
    return ffi.cast(ctype + " *", p)


# Cancelling --------------------------------------------------------------

class Cancel:
    """A cancel flag the library reads where it reads the time cap: set()
    from any thread (or a signal handler) stops a solve or simulation
    early, with status maxiter and reason "cancelled". Pass it as
    ``cancel=`` to solve, Plan or simulate; it stays set until clear()."""

    def __init__(self) -> None:
        self._flag = ffi.new("int *")

    def set(self) -> None:
        self._flag[0] = 1

    def clear(self) -> None:
        self._flag[0] = 0

    @property
    def is_set(self) -> bool:
        return bool(self._flag[0])


class _CtrlC:
    """Ctrl-C during a long call from the main thread: Python's own C-level
    SIGINT handler writes the signal number to the wakeup fd even while
    the main thread is inside the library, so a watcher thread reading it
    sets the running call's cancel flag; when the call returns, Python
    raises KeyboardInterrupt as usual. Bytes are passed on to a wakeup fd
    that was set before (an asyncio loop's). The main thread makes one
    call at a time, so one flag is armed at a time; plain assignments
    (atomic under the GIL) hand it to the watcher, keeping a call's cost
    at two set_wakeup_fd calls (the overhead figures of README.md)."""

    def __init__(self) -> None:
        self._main = threading.main_thread().ident
        self._sock: Optional[tuple] = None
        self._wfd = -1
        self._armed: Any = None
        self._old = -1

    def _watch(self) -> None:
        r = self._sock[0]
        while True:
            data = r.recv(256)
            if not data:
                return
            flag, old = self._armed, self._old
            if flag is not None and signal.SIGINT in data:
                flag[0] = 1
            if old >= 0:
                try:
                    os.write(old, data)
                except OSError:
                    pass

    def arm(self, flag: Any) -> bool:
        """Arms flag for Ctrl-C when called from the main thread; returns
        whether it did (then disarm() after the call)."""
        if threading.get_ident() != self._main:
            return False
        if self._sock is None:
            r, w = socket.socketpair()
            w.setblocking(False)
            self._sock, self._wfd = (r, w), w.fileno()
            threading.Thread(target=self._watch, name="clcone-ctrl-c", daemon=True).start()
        try:
            old = signal.set_wakeup_fd(self._wfd, warn_on_full_buffer=False)
        except ValueError:  # not the main interpreter
            return False
        self._old, self._armed = (old if old != self._wfd else -1), flag
        return True

    def disarm(self) -> None:
        self._armed = None
        signal.set_wakeup_fd(self._old)
        self._old = -1


ctrl_c = _CtrlC()


def call_cancellable(flag: Any, fn: Any, *args: Any) -> int:
    """fn(*args) (a library call) with Ctrl-C setting flag."""
    armed = ctrl_c.arm(flag)
    try:
        return fn(*args)
    finally:
        if armed:
            ctrl_c.disarm()


# Threads -----------------------------------------------------------------
#
# Every library call releases the GIL, so two threads can be inside the
# library at once. The C objects are not safe for that: a plan or a
# simulation keeps its work arrays, a world is stepped in place, and an
# OpenCL context shares its queue, lazily built programs and memory count
# among all its plans. So each Python object that owns one takes a lock
# around its calls, always in one order (plan or simulation, then scene,
# then device), and a device's lock is held only around the C call itself.

F = TypeVar("F", bound=Callable[..., Any])


def locked(fn: F) -> F:
    """fn(self, ...) under self._lock."""
    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return fn(self, *args, **kwargs)
    return wrapper  # type: ignore[return-value]


class Owner:
    """An object owning a C handle that close() frees: calls are
    serialised on its lock, close() waits for a running call and is
    idempotent, a call after it raises Error naming the method, and
    copies (copy, deepcopy, pickle) are refused, since two Python objects
    would share the handle that one of them frees."""

    _what = "object"   # noun for messages
    _no_copy = ""      # why it cannot be copied, and what to do instead

    def _live(self, method: str) -> Any:
        """The handle, or Error when closed (call under self._lock)."""
        h = self._handle
        if h is None:
            name = type(self).__name__
            raise Error(f"{name}.{method}(): this {self._what} was closed ({name}.close()); make a new one")
        return h

    def close(self) -> None:
        """Frees the C object now (else when garbage-collected): waits for
        a call running in another thread to return first (set the Cancel
        passed as cancel= to stop a long one sooner). Closing again does
        nothing; any other call afterwards raises clcone.Error."""
        with self._lock:
            h, self._handle = self._handle, None
            if h is not None:
                ffi.release(h)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise Error(f"a clcone.{type(self).__name__} cannot be copied or pickled: {self._no_copy}")
