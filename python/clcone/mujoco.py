"""clcone as MuJoCo's constraint solver, on the ``mujoco`` package's own
objects: :func:`step` and :class:`Stepper` step a ``mujoco.MjModel``'s
``mujoco.MjData`` in place as ``mujoco.mj_step`` does, but with clcone
solving MuJoCo's constraint problem (the adapter of ``clcone mujoco``,
docs/mujoco.md); a list of MjData is stepped together, their problems
solved as one batch a step, each world as it would be alone.

The work is libclcone_mujoco's (include/clcone/mujoco.h), shipped in the
package when its build found MuJoCo, and linked against one MuJoCo
version: the ``mujoco`` package imported must be that version
(``pip install 'clcone[mujoco]'`` installs it)."""
from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any, Optional, Sequence, Union

import numpy as np

from ._api import _RUN_STATUS, Device, _options, solvers
from ._native import Cancel, Owner, call_cancellable, check, ffi, locked, new_error

try:
    import mujoco as _mj
except ImportError as e:
    raise ImportError(f"clcone.mujoco needs the mujoco package ({e}): pip install 'clcone[mujoco]' installs the "
                      "version clcone was built against") from None

_pkg = resources.files(__package__)
if not _pkg.joinpath("libclcone_mujoco.so").is_file():
    raise ImportError("this clcone package was built without MuJoCo (its build found none: `make mujoco-lib` in the "
                      "clcone repository says why), so clcone.mujoco is not in it")
# after `import mujoco`: the libmujoco that package loaded is the one
# libclcone_mujoco links to (the same soname), so both drive one MuJoCo
ffi.cdef(_pkg.joinpath("_mujoco_api.h").read_text())
lib: Any = ffi.dlopen(str(_pkg.joinpath("libclcone_mujoco.so")))

#: The MuJoCo version libclcone_mujoco was compiled against.
MUJOCO_VERSION = ffi.string(lib.clcone_mj_version()).decode()

if _mj.__version__ != MUJOCO_VERSION or _mj.mj_versionString() != MUJOCO_VERSION:
    raise ImportError(f"clcone.mujoco was built against MuJoCo {MUJOCO_VERSION}, but the mujoco package imported is "
                      f"{_mj.__version__} (its library {_mj.mj_versionString()}): pip install "
                      f"mujoco=={MUJOCO_VERSION} (or 'clcone[mujoco]')")


@dataclass
class Stats:
    """What steps did, one entry per step and world: shape (steps, worlds)
    for a list of MjData, (steps,) for one. status: "converged",
    "maxiter", "diverged" or "failed" ("converged" on a step without
    constraint rows, where nothing is solved); solve_ms on a device is
    the whole batch's solve."""

    rows: np.ndarray        # MuJoCo's constraint rows (nefc)
    contacts: np.ndarray    # its contacts (ncon)
    blocks: np.ndarray      # clcone's blocks (0: nothing solved)
    warm: np.ndarray        # blocks warm-started from the last step's forces
    status: np.ndarray
    iterations: np.ndarray
    error: np.ndarray
    solve_ms: np.ndarray

    @property
    def converged(self) -> bool:
        """Whether every solve converged."""
        return bool((self.status == "converged").all())


def _primal_form(contact: str, solver: Optional[str]) -> bool:
    """Whether the solver table sends MuJoCo's soft problem under solver
    (None: the default) to its primal form, whose solvers run on the
    reference where no device is given (on a CPU the faster), as in
    `clcone mujoco`; a device given runs them itself. coulomb keeps the
    device's default (the 3-row form takes the states it holds)."""
    return contact == "soft" and any("primal" in o.forms and o.model == contact and o.reference_default
                                     and (o.solver == solver or (solver is None and o.reference_default))
                                     for o in solvers())


def _device_spec(device: Union[None, str, int, Device], precision: Optional[str], ref_default: bool = False) -> tuple:
    """(spec, precision) for libclcone_mujoco, which opens its own
    context: device as :class:`clcone.Device` takes it (a Device: its
    spec and precision); ref_default: no device given (nor CLCONE_DEVICE)
    means the reference, as ``clcone mujoco`` takes it for MuJoCo's
    Newton, the soft model's default (a device given runs it itself,
    slower on a CPU: docs/mujoco.md); a precision given asks for the
    default device."""
    if ref_default and device is None and precision is None and not os.environ.get("CLCONE_DEVICE"):
        device = "ref"
    if isinstance(device, Device):
        if precision is not None and precision != device.precision:
            raise ValueError(f"precision {precision!r} differs from the Device's {device.precision!r}")
        return ("ref" if device.is_reference else device.spec), device.precision
    if isinstance(device, (bool, np.bool_)) or not (device is None or isinstance(device, (str, int, np.integer))):
        raise TypeError(f"device must be None, a str, an int or a clcone.Device, got {type(device).__name__}")
    if isinstance(device, (int, np.integer)):
        if device < 0:
            raise ValueError(f"device index {device} must be >= 0")
        device = str(int(device))
    if precision is not None and precision not in ("float", "double"):
        raise ValueError(f"precision must be 'float' or 'double', got {precision!r}")
    if device == "ref" or (device is None and os.environ.get("CLCONE_DEVICE") == "ref"):
        if precision == "float":
            raise ValueError("precision does not apply: the reference (device 'ref') is the CPU solver in double")
        return "ref", "double"
    return device, precision or "float"


class Stepper(Owner):
    """Steps MjData of one MjModel with clcone as the constraint solver,
    keeping each world's warm start (the last step's forces) and the
    device from call to call: make one and call :meth:`step` in a loop.

    contact: "soft" (MuJoCo's own problem, its R and a_ref) or "coulomb"
    (hard contact), the ``--model`` of ``clcone mujoco``; solver, tol,
    max_iter, check_every, max_seconds as for :func:`clcone.solve` (tol:
    the precision's default when None, 1e-8 in double); device and
    precision as :class:`clcone.Device` takes them (a Device given: its
    device, opened again by libclcone_mujoco). threads: MuJoCo's stages
    of a batch's worlds run on this many threads (the results do not
    depend on it). The number of worlds is fixed by the first step."""

    _what = "stepper"
    _no_copy = "it keeps each world's warm start and its device; make another Stepper"
    _handle = None

    def __init__(self, model: Any, *, contact: str = "soft", solver: Optional[str] = None,
                 device: Union[None, str, int, Device] = None, precision: Optional[str] = None,
                 tol: Optional[float] = None, max_iter: Optional[int] = None, check_every: Optional[int] = None,
                 max_seconds: Optional[float] = None, threads: int = 1, cancel: Optional[Cancel] = None) -> None:
        self._lock = threading.Lock()
        if not isinstance(model, _mj.MjModel):
            raise TypeError(f"model must be a mujoco.MjModel, got {type(model).__name__}")
        if contact not in ("soft", "coulomb"):
            raise ValueError(f"contact must be 'soft' or 'coulomb' (MuJoCo's problem), got {contact!r}")
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= 256:
            raise ValueError(f"threads must be an int from 1 to 256, got {threads!r}")
        threads = int(threads)
        if cancel is not None and not isinstance(cancel, Cancel):
            raise TypeError("cancel must be a clcone.Cancel")
        self.model = model
        self._spec, self.precision = _device_spec(device, precision, _primal_form(contact, solver))
        self._o = _options(contact, solver, tol, max_iter, check_every, max_seconds)
        err = new_error()  # the stepper is made at the first step; its options are refused now
        check(lib.clcone_mj_options_check(self._o, 0 if self._spec == "ref" else 1, err), err)
        self._cancel = cancel or Cancel()
        self._own_cancel = cancel is None
        self._o.cancel = self._cancel._flag
        self._threads = threads
        self._closed = False
        self.worlds = 0

    def _create(self, n: int) -> Any:
        out = ffi.new("clcone_mj_stepper **")
        err = new_error()
        spec = ffi.NULL if self._spec is None else self._spec.encode()
        check(lib.clcone_mj_stepper_create(spec, 1 if self.precision == "double" else 0, self._o,
                                           ffi.cast("struct mjModel_ *", self.model._address), n, self._threads,
                                           out, err), err)
        self.worlds = n
        return ffi.gc(out[0], lib.clcone_mj_stepper_free)

    @locked
    def step(self, data: Union[Any, Sequence[Any]], nstep: int = 1) -> Stats:
        """nstep steps of data (an MjData of the model, or a list of them,
        stepped together) in place; their :class:`Stats`. The stepper's
        ``cancel`` set (from another thread) ends them early: the step
        whose solve it stopped (status ``maxiter``) is the last, and the
        Stats have a row for each step taken; one already set takes none
        (``Cancel.clear()`` it to step again)."""
        one = isinstance(data, _mj.MjData)
        if not one and not isinstance(data, Iterable):
            raise TypeError(f"data must be a mujoco.MjData or a list of them, got {type(data).__name__}")
        datas = [data] if one else list(data)
        if not datas:
            raise ValueError("no MjData to step")
        for k, d in enumerate(datas):
            if not isinstance(d, _mj.MjData):
                raise TypeError(f"data[{k}] must be a mujoco.MjData, got {type(d).__name__}")
            if d.model._address != self.model._address:
                raise ValueError(f"data[{k}] is not data of this stepper's model (mujoco.MjData(model))")
        seen: dict = {}
        for k, d in enumerate(datas):
            j = seen.setdefault(d._address, k)
            if j != k:  # one state stepped as two worlds would take two steps a step
                raise ValueError(f"data[{j}] and data[{k}] are the same MjData; each world needs its own")
        if isinstance(nstep, bool) or not isinstance(nstep, (int, np.integer)) or not 0 <= nstep < 2**31:
            raise ValueError(f"nstep must be an int from 0 to 2**31 - 1, got {nstep!r}")
        nstep = int(nstep)
        n = len(datas)
        if self._handle is None:
            if self._closed:
                self._live("step")
            self._handle = self._create(n)
        elif n != self.worlds:
            raise ValueError(f"this Stepper steps {self.worlds} worlds, got {n} MjData; make another Stepper")
        h = self._handle
        ptrs = ffi.new("struct mjData_ *[]", [ffi.cast("struct mjData_ *", d._address) for d in datas])
        st = ffi.new("clcone_mj_stats[]", n)
        buf = ffi.buffer(st)
        raw = np.empty((nstep, len(buf)), dtype=np.uint8)
        err, flag = new_error(), self._cancel._flag
        taken = 0
        try:
            # a set Cancel ends the steps as it ends simulate's: the step
            # whose solve it stopped is the last, none starts after it
            while taken < nstep and not flag[0]:
                check(call_cancellable(flag, lib.clcone_mj_stepper_step, h, ptrs, n, st, err), err)
                raw[taken] = np.frombuffer(buf, dtype=np.uint8)
                taken += 1
        finally:
            if self._own_cancel and flag[0]:
                self._cancel.clear()
        return _stats(raw[:taken], n, one)

    def close(self) -> None:
        self._closed = True
        super().close()


_STATS_DTYPE = np.dtype({"names": ["rows", "contacts", "blocks", "warm", "status", "iterations", "error", "solve_ms"],
                         "formats": ["i4", "i4", "i4", "i4", "i4", "i4", "f8", "f8"],
                         "offsets": [ffi.offsetof("clcone_mj_stats", f) for f in
                                     ("rows", "contacts", "blocks", "warm", "status", "iters", "error", "solve_ms")],
                         "itemsize": ffi.sizeof("clcone_mj_stats")})


def _stats(raw: np.ndarray, n: int, one: bool) -> Stats:
    """Stats from nstep rows of n clcone_mj_stats each (raw bytes)."""
    a = raw.view(_STATS_DTYPE).reshape(raw.shape[0], n)
    if one:
        a = a[:, 0]
    names = np.array([_RUN_STATUS[k] for k in range(len(_RUN_STATUS))])
    return Stats(a["rows"].copy(), a["contacts"].copy(), a["blocks"].copy(), a["warm"].copy(), names[a["status"]],
                 a["iterations"].copy(), a["error"].copy(), a["solve_ms"].copy())


def step(model: Any, data: Union[Any, Sequence[Any]], nstep: int = 1, **options: Any) -> Stats:
    """nstep steps of data (an MjData of model, or a list of them, stepped
    together) in place, as ``mujoco.mj_step`` does with clcone solving
    the constraint problem; options as for :class:`Stepper`. Each call
    opens the device and starts cold: a loop of steps goes faster on one
    :class:`Stepper`."""
    with Stepper(model, **options) as s:
        return s.step(data, nstep)


__all__ = ["MUJOCO_VERSION", "Stats", "Stepper", "step"]
