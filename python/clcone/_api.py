"""The Python API over the C library: every computation is a libclcone
call; this module only checks arrays, fills the C structures and turns
results into numpy arrays and dataclasses."""
from __future__ import annotations

import contextlib
import inspect
import math
import os
import stat
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

from ._native import (Cancel, FileError, FormatError, InvalidInput, Owner, c_alloc, c_string, call_cancellable, check,
                      copy_in, copy_out, ffi, ints, lib, lib_output, locked, ndim, new_error, reals)

PathLike = Union[str, "os.PathLike[str]"]


def _str(p: Any) -> str:
    return ffi.string(p).decode("utf-8", "replace")


# Devices -----------------------------------------------------------------

@dataclass(frozen=True)
class DeviceInfo:
    """One OpenCL device, as `clcone devices` lists it."""

    index: int
    platform: str
    name: str
    version: str
    is_gpu: bool
    is_cpu: bool
    compute_units: int
    global_mem: int
    max_alloc: int
    fp64: bool


def _device_info(d: Any) -> DeviceInfo:
    return DeviceInfo(d.index, _str(d.platform), _str(d.name), _str(d.version), bool(d.is_gpu), bool(d.is_cpu),
                      d.compute_units, d.global_mem, d.max_alloc, bool(d.fp64))


def devices() -> List[DeviceInfo]:
    """Every OpenCL device of every platform, in the order that an index
    (``device=N``) counts."""
    lst = ffi.new("clcone_device_info **")
    count = ffi.new("int *")
    err = new_error()
    check(lib.clcone_list_devices(lst, count, err), err)
    try:
        return [_device_info(lst[0][i]) for i in range(count[0])]
    finally:
        lib.clcone_device_list_free(lst[0])


_PRECISIONS = {"float": 0, "double": 1}
_UNLOCKED = contextlib.nullcontext()  # the reference's guard: made once, it is a tenth of a call's cost


class Device:
    """A backend: the CPU reference (``"ref"``: double, one thread) or an
    OpenCL device with its precision.

    spec chooses as the CLI's ``--device`` does: None = ``$CLCONE_DEVICE``
    if set, else the first GPU, else the first CPU device; ``"ref"`` the
    reference; an int or digits an index of :func:`devices`; ``"cpu"`` /
    ``"gpu"`` the first device of that type; any other text a part of a
    device name. precision: ``"float"`` (default on devices) or
    ``"double"`` (needs cl_khr_fp64); the reference is double only.

    A Device may be shared by any number of plans, simulations and
    threads: the calls that reach its OpenCL context (plan and simulation
    set-up, solves, steps, frees) take turns on its lock. A copy is the
    same Device."""

    def __init__(self, spec: Union[None, str, int] = None, precision: Optional[str] = None) -> None:
        if isinstance(spec, (bool, np.bool_)) or not (spec is None or isinstance(spec, (str, int, np.integer))):
            raise TypeError(f"device must be None, a str or an int, got {type(spec).__name__}")
        if isinstance(spec, (int, np.integer)):
            if spec < 0:
                raise ValueError(f"device index {spec} must be >= 0")
            spec = str(int(spec))
        if precision is not None and precision not in _PRECISIONS:
            raise ValueError(f"precision must be 'float' or 'double', got {precision!r}")
        ref = spec == "ref" or (spec is None and os.environ.get("CLCONE_DEVICE") == "ref")
        self.spec = spec  # as given (None: $CLCONE_DEVICE or the first GPU), for a library opening it again
        self._ctx = ffi.NULL
        self._lock = threading.RLock()
        if ref:
            if precision == "float":
                raise ValueError("precision does not apply: the reference (device 'ref') is the CPU solver in double")
            self.precision = "double"
            self.info: Optional[DeviceInfo] = None
            return
        self.precision = precision or "float"
        ctx = ffi.new("clcone_context **")
        err = new_error()
        check(lib.clcone_context_create(c_string(spec, "device") if spec else ffi.NULL,
                                        _PRECISIONS[self.precision], ctx, err), err)
        self._ctx = ffi.gc(ctx[0], lib.clcone_context_free)
        self.info = _device_info(lib.clcone_context_device(self._ctx))

    @property
    def is_reference(self) -> bool:
        return self._ctx == ffi.NULL

    def _guard(self) -> Any:
        """The context's lock; none for the reference, whose plans share
        nothing. Re-entrant, so that a collected plan freed (_owned) by a
        thread already holding it does not wait for itself."""
        return _UNLOCKED if self._ctx == ffi.NULL else self._lock

    def _owned(self, handle: Any, free: Any, *keep: Any) -> Any:
        """handle, freed by free(handle) under the device's lock when
        released (close) or collected. The finalizer holds the device (its
        context must outlive the handle) and keep (what the C object points
        to: a scene's world, a history, a cancel flag) until it has run."""
        def finalize(h: Any, dev: Device = self, _keep: tuple = keep) -> None:
            with dev._guard():
                free(h)
        return ffi.gc(handle, finalize)

    def __copy__(self) -> "Device":
        return self

    def __deepcopy__(self, memo: Any) -> "Device":
        return self

    def __reduce__(self) -> Any:
        # another process opens it again by what chose it (None: that process's $CLCONE_DEVICE or first GPU)
        return (Device, (self.spec, self.precision))

    @property
    def name(self) -> str:
        return "ref" if self.info is None else self.info.name

    def __repr__(self) -> str:
        return f"Device({self.name!r}, precision={self.precision!r})"


_opened: dict = {}
_opening = threading.Lock()  # one thread opens a missing context, the others wait for it


def _device(device: Union[None, str, int, Device], precision: Optional[str]) -> Device:
    """The backend for a device argument; contexts are opened once per
    (device, precision) and kept, since opening one builds its programs."""
    if isinstance(device, Device):
        if precision is not None and precision != device.precision:
            raise ValueError(f"precision {precision!r} differs from the Device's {device.precision!r}")
        return device
    if device is not None and (isinstance(device, bool) or not isinstance(device, (str, int, np.integer))):
        raise TypeError(f"device must be 'ref', an index, part of a device name or a clcone.Device, "
                        f"got {type(device).__name__}")
    key = (device, precision, os.environ.get("CLCONE_DEVICE") if device is None else None)
    with _opening:
        if key not in _opened:
            _opened[key] = Device(device, precision)
        return _opened[key]


# Results -----------------------------------------------------------------

@dataclass
class ProblemResult:
    """How one problem's solve ended (the CLI's last line)."""

    status: str            # converged, maxiter, diverged or failed
    error: float           # the model's error measure
    iterations: int
    time_ms: float         # the solve alone (no set-up or compilation)
    reason: str            # why it stopped when not converged ("cancelled", ...)
    inner_iterations: int = 0
    cost: float = 0.0

    @property
    def converged(self) -> bool:
        return self.status == "converged"

    @property
    def time(self) -> float:
        """time_ms in seconds."""
        return self.time_ms / 1e3


_RUN_STATUS = {s: _str(lib.clcone_run_status_name(s))
               for s in (lib.CLCONE_CONVERGED, lib.CLCONE_MAXITER, lib.CLCONE_DIVERGED, lib.CLCONE_FAILED)}


def _prob_result(it: Any) -> ProblemResult:
    return ProblemResult(_RUN_STATUS[it.status], it.error, it.iters, it.time_ms,
                         _str(it.reason) if it.reason[0] != b"\0" else "", it.inner_iters, it.cost)


@dataclass
class History:
    """Every error check of an iterative solve: problem of the batch,
    iteration, time since that problem's start and error (numpy arrays)."""

    prob: np.ndarray
    iter: np.ndarray
    time_ms: np.ndarray
    error: np.ndarray
    truncated: bool = False


@dataclass
class Result(ProblemResult):
    """A solve's result: for one problem its own; for a batch the worst
    status, the largest error, the summed iterations and the batch's
    time, each problem's in ``problems``."""

    problems: List[ProblemResult] = field(default_factory=list)
    history: Optional[History] = None


_ORDER = ["converged", "maxiter", "diverged", "failed"]


def _history(hist: Any) -> History:
    pts = [hist.points[i] for i in range(hist.count)]
    return History(np.array([p.prob for p in pts], dtype=np.int32), np.array([p.iter for p in pts], dtype=np.int32),
                   np.array([p.time_ms for p in pts], dtype=np.float64),
                   np.array([p.error for p in pts], dtype=np.float64), bool(hist.truncated))


def _result(res: Any, hist: Any, batch: bool) -> Result:
    history = _history(hist) if hist is not None else None
    if not batch:
        it = res.items[0]
        one = Result(_RUN_STATUS[it.status], it.error, it.iters, it.time_ms,
                     _str(it.reason) if it.reason[0] != b"\0" else "", it.inner_iters, it.cost, [], history)
        one.problems.append(_prob_result(it))
        return one
    items = [_prob_result(res.items[k]) for k in range(res.nprob)]
    worst = max(items, key=lambda x: _ORDER.index(x.status))
    return Result(worst.status, max(x.error for x in items), sum(x.iterations for x in items), res.time_ms,
                  worst.reason, sum(x.inner_iterations for x in items), sum(x.cost for x in items), items, history)


# Problems ----------------------------------------------------------------

class Problem:
    """A local-form problem (or a batch of them): u = W r + q, 3 values a
    contact (normal first), W in block-CSR with 3x3 row-major blocks.

    row_ptr (n + 1 ints), col (nnzb ints, strictly increasing in a row,
    every diagonal block present), blocks (nnzb, 3, 3) or (nnzb, 9),
    q (n, 3) or (3n,), mu (n,). The data are copied and checked by
    clcone_problem_validate."""

    def __init__(self, row_ptr: Any, col: Any, blocks: Any, q: Any, mu: Any) -> None:
        rp = ints(row_ptr, (None,), "row_ptr")
        if rp.size < 1:
            raise ValueError("row_ptr must have n + 1 >= 1 entries")
        n = rp.size - 1
        c = ints(col, (None,), "col")
        nnzb = c.size
        b = reals(blocks, (nnzb, 3, 3) if ndim(blocks, "blocks") == 3 else (nnzb, 9), "blocks")
        qq = reals(q, (n, 3) if ndim(q, "q") == 2 else (3 * n,), "q")
        m = reals(mu, (n,), "mu")
        self._p = self._alloc(n, nnzb)
        copy_in(self._p.row_ptr, rp)
        copy_in(self._p.col, c)
        copy_in(self._p.blocks, b)
        copy_in(self._p.q, qq)
        copy_in(self._p.mu, m)
        self._validate()

    @staticmethod
    def _alloc(n: int, nnzb: int) -> Any:
        p = ffi.new("clcone_problem *")
        err = new_error()
        check(lib.clcone_problem_alloc(p, n, nnzb, err), err)
        return ffi.gc(p, lib.clcone_problem_free)

    @classmethod
    def _own(cls, p: Any) -> "Problem":
        self = cls.__new__(cls)
        self._p = ffi.gc(p, lib.clcone_problem_free)
        return self

    def _validate(self) -> None:
        err = new_error()
        check(lib.clcone_problem_validate(self._p, err), err)

    @classmethod
    def from_dense(cls, W: Any, q: Any, mu: Any) -> "Problem":
        """From a dense 3n x 3n W (all-zero off-diagonal blocks dropped)."""
        m = reals(mu, (None,), "mu")
        n = m.size
        w = reals(W, (3 * n, 3 * n), "W")
        qq = reals(q, (n, 3) if ndim(q, "q") == 2 else (3 * n,), "q")
        p = ffi.new("clcone_problem *")
        err = new_error()
        check(lib.clcone_problem_from_dense(p, n, ffi.cast("double *", ffi.from_buffer(w)),
                                            ffi.cast("double *", ffi.from_buffer(qq)),
                                            ffi.cast("double *", ffi.from_buffer(m)), err), err)
        self = cls._own(p)
        self._validate()
        return self

    @classmethod
    def from_scipy(cls, W: Any, q: Any, mu: Any) -> "Problem":
        """From a scipy.sparse matrix W (3n x 3n, any format): its 3x3
        blocks that hold a stored entry become W's blocks."""
        if not hasattr(W, "tobsr"):
            raise TypeError(f"W must be a scipy.sparse matrix, got {type(W).__name__}")
        if W.shape[0] != W.shape[1] or W.shape[0] % 3:
            raise ValueError(f"W must be square with a multiple of 3 rows, got shape {W.shape}")
        if W.dtype.kind != "f":
            raise TypeError(f"W must be a floating-point matrix, got dtype {W.dtype}")
        coo = W.tocoo()
        bad = np.flatnonzero(~np.isfinite(coo.data))
        if bad.size:
            k = bad[0]
            raise ValueError(f"W[{coo.row[k]}][{coo.col[k]}] is {coo.data[k]}, not a finite number")
        bsr = W.tobsr(blocksize=(3, 3), copy=True)
        bsr.sum_duplicates()
        bsr.sort_indices()
        return cls(bsr.indptr.astype(np.int64), bsr.indices.astype(np.int64),
                   np.ascontiguousarray(bsr.data), q, mu)

    @property
    def n(self) -> int:
        """Contacts (of the whole batch)."""
        return self._p.n

    @property
    def nnzb(self) -> int:
        return self._p.nnzb

    @property
    def nprob(self) -> int:
        """Problems in the batch (1 for a single problem)."""
        return self._p.nprob

    @property
    def row_ptr(self) -> np.ndarray:
        return copy_out(self._p.row_ptr, np.int32, self.n + 1)

    @property
    def col(self) -> np.ndarray:
        return copy_out(self._p.col, np.int32, self.nnzb)

    @property
    def blocks(self) -> np.ndarray:
        """(nnzb, 3, 3) row-major blocks."""
        return copy_out(self._p.blocks, np.float64, 9 * self.nnzb).reshape(self.nnzb, 3, 3)

    @property
    def q(self) -> np.ndarray:
        return copy_out(self._p.q, np.float64, 3 * self.n).reshape(self.n, 3)

    @property
    def mu(self) -> np.ndarray:
        return copy_out(self._p.mu, np.float64, self.n)

    @property
    def offsets(self) -> np.ndarray:
        """Contact offsets of the batch's problems (nprob + 1)."""
        return copy_out(self._p.prob_off, np.int32, self.nprob + 1)

    def to_scipy(self) -> Any:
        """W as a scipy.sparse.bsr_matrix (needs scipy)."""
        import scipy.sparse as sp
        return sp.bsr_matrix((self.blocks, self.col, self.row_ptr), shape=(3 * self.n, 3 * self.n))

    def problem(self, k: int) -> "Problem":
        """Problem k of a batch, on its own."""
        k = _option_value("the problem index", k, True)
        out = ffi.new("clcone_problem *")
        err = new_error()
        check(lib.clcone_batch_extract(self._p, k, out, err), err)
        return Problem._own(out)

    def velocity(self, r: Any) -> np.ndarray:
        """u = W r + q, shape (n, 3)."""
        rr = _reactions(r, self.n, "r")
        u = np.empty((self.n, 3))
        lib.clcone_problem_velocity(self._p, ffi.cast("double *", ffi.from_buffer(rr)),
                                    ffi.cast("double *", ffi.from_buffer(u)))
        if not np.isfinite(u).all():
            raise InvalidInput("W r + q overflows: r is too large for this problem's W")
        return u

    def error(self, r: Any, model: str = "coulomb", facets: Optional[int] = None,
              fit: Optional[str] = None) -> float:
        """The model's error measure of reactions r (coulomb, ccp or
        pyramid; the CLI's `check`)."""
        rr = _reactions(r, self.n, "r")
        o = _options(model=model, facets=facets, fit=fit)
        e = lib.clcone_error_of(self._p, o, ffi.cast("double *", ffi.from_buffer(rr)), 0, self.n)
        if math.isnan(e):
            if model in ("soft", "sap"):
                raise InvalidInput(f"model {model} has no error measure on (W, q) alone")
            if model == "pyramid" and not 3 <= o.facets <= 1024:
                raise ValueError(f"facets must be from 3 to 1024, got {facets}")
            raise InvalidInput("the error of r is not a number: r or W r + q overflows")
        return e

    def write(self, path: PathLike) -> None:
        """Siconos .dat (SBM storage, %.17g: an exact round trip)."""
        err = new_error()
        check(lib.clcone_write_problem_dat(c_string(path, "path"), self._p, err), err)

    def __repr__(self) -> str:
        return f"<clcone.Problem n={self.n} nnzb={self.nnzb} nprob={self.nprob}>"

    def __reduce__(self) -> Any:
        # its arrays, a batch problem by problem, so that pickle and deepcopy make an equal Problem
        parts = [self] if self.nprob == 1 else [self.problem(k) for k in range(self.nprob)]
        return (_problem_of_parts, ([(p.row_ptr, p.col, p.blocks, p.q, p.mu) for p in parts],))


def _problem_of_parts(parts: Sequence[tuple]) -> "Problem":
    ps = [Problem(*a) for a in parts]
    return ps[0] if len(ps) == 1 else batch(ps)


def batch(problems: Sequence[Problem]) -> Problem:
    """Several problems as one batch (solved together, each exactly as
    alone)."""
    ps = list(problems)
    if not ps or not all(isinstance(p, Problem) for p in ps):
        raise TypeError("batch takes a non-empty sequence of clcone.Problem")
    parts = ffi.new("clcone_problem *[]", [p._p for p in ps])
    out = ffi.new("clcone_problem *")
    err = new_error()
    check(lib.clcone_batch_concat(parts, len(ps), out, err), err)
    return Problem._own(out)


def _reactions(r: Any, n: int, what: str) -> np.ndarray:
    return reals(r, (n, 3) if ndim(r, what) == 2 else (3 * n,), what).reshape(n, 3)


# Scenes ------------------------------------------------------------------

_KINDS = {"sphere": 0, "box": 1}


class Scene:
    """A world: bodies (spheres, boxes) with shapes, orientations and
    velocities, static planes, gravity, time step and friction, and the
    contacts at the current state. Made by :func:`generate`,
    :func:`read` or from numpy arrays::

        Scene(kinds, sizes, masses, positions, orientations=None,
              velocities=None, angular_velocities=None, planes=None,
              gravity=(0, 0, -9.81), dt=0.01, mu=0.5, margin=1e-3)

    kinds: n of "sphere" / "box"; sizes (n, 3): radius (then 0, 0) or
    half extents; masses (n,), 0 = static; positions (n, 3); orientations
    (n, 4) unit quaternions (w, x, y, z), default identity; velocities and
    angular_velocities (n, 3), default 0; planes (p, 4): nx ny nz offset,
    the half-space n . x >= offset free. Contacts are detected at the
    given state (pairs closer than margin).

    A scene may be read from several threads while a :class:`Simulation`
    steps it in another: each accessor takes the scene's lock, as a step
    does, so it sees the state before or after a step, never one half
    written."""

    def __init__(self, kinds: Sequence[str], sizes: Any, masses: Any, positions: Any, orientations: Any = None,
                 velocities: Any = None, angular_velocities: Any = None, planes: Any = None,
                 gravity: Any = (0.0, 0.0, -9.81), dt: float = 0.01, mu: float = 0.5, margin: float = 1e-3) -> None:
        if isinstance(kinds, str):
            raise TypeError("kinds must be a sequence of 'sphere' / 'box', one a body")
        ks = list(kinds)
        bad = [k for k in ks if k not in _KINDS]
        if bad:
            raise ValueError(f"kinds: {bad[0]!r} is not 'sphere' or 'box'")
        n = len(ks)
        size = reals(sizes, (n, 3), "sizes")
        mass = reals(masses, (n,), "masses")
        x = reals(positions, (n, 3), "positions")
        q = reals(orientations if orientations is not None else np.tile([1.0, 0, 0, 0], (n, 1)), (n, 4),
                  "orientations")
        v = reals(velocities if velocities is not None else np.zeros((n, 3)), (n, 3), "velocities")
        w = reals(angular_velocities if angular_velocities is not None else np.zeros((n, 3)), (n, 3),
                  "angular_velocities")
        pl = reals(planes if planes is not None else np.zeros((0, 4)), (None, 4), "planes")
        g = reals(gravity, (3,), "gravity")
        for name, val in (("dt", dt), ("mu", mu), ("margin", margin)):
            if isinstance(val, bool) or not isinstance(val, (int, float, np.floating, np.integer)):
                raise TypeError(f"{name} must be a number")
            if not math.isfinite(val):
                raise ValueError(f"{name} must be finite, got {val}")
        self._lock = threading.RLock()
        wd = ffi.new("clcone_world *")
        self._w = ffi.gc(wd, lib.clcone_world_free)
        wd.s.nbodies = n
        wd.s.bodies = c_alloc("clcone_body", n)
        wd.shapes = c_alloc("clcone_shape", n)
        wd.nplanes = pl.shape[0]
        wd.planes = c_alloc("clcone_plane", pl.shape[0])
        for i in range(n):
            sh, b = wd.shapes[i], wd.s.bodies[i]
            sh.kind = _KINDS[ks[i]]
            sh.size = list(size[i])
            sh.quat = list(q[i])
            sh.mass = mass[i]
            b.x = list(x[i])
            b.v = list(v[i]) + list(w[i])
        for i in range(pl.shape[0]):
            wd.planes[i].normal = list(pl[i, :3])
            wd.planes[i].offset = pl[i, 3]
        wd.gravity = list(g)
        wd.dt = dt
        wd.mu = mu
        lib.clcone_world_update_inertia(wd)
        err = new_error()
        check(lib.clcone_world_validate(wd, err), err)
        self.detect(margin)

    @classmethod
    def _own(cls, w: Any) -> "Scene":
        self = cls.__new__(cls)
        self._lock = threading.RLock()
        self._w = ffi.gc(w, lib.clcone_world_free)
        return self

    @classmethod
    def generate(cls, name: str, n: Optional[int] = None, mu: float = 0.5, dt: float = 0.01,
                 spread: Optional[float] = None, theta: Optional[float] = None,
                 seed: Optional[int] = None) -> "Scene":
        """A generated scene (`clcone gen`): pile, stack, wall, grid or
        incline, bodies at rest with their contacts. As in the CLI, n (the
        size) is needed by all but incline, which takes none; seed and
        spread (default 1 and 0.1) are pile's, theta (default 0.3)
        incline's; a parameter the generator does not use is refused
        (clcone_gen_check_given)."""
        given = 0
        for bit, v in ((lib.CLCONE_GEN_GIVEN_N, n), (lib.CLCONE_GEN_GIVEN_SEED, seed),
                       (lib.CLCONE_GEN_GIVEN_SPREAD, spread), (lib.CLCONE_GEN_GIVEN_THETA, theta)):
            given |= bit if v is not None else 0
        if n is not None:
            n = _option_value("n", n, True)
        mu, dt = _number("mu", mu), _number("dt", dt)
        spread = None if spread is None else _number("spread", spread)
        theta = None if theta is None else _number("theta", theta)
        if seed is not None and (not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32):
            raise ValueError("seed must be an int in [0, 2**32)")
        cname = c_string(name, "generator name")
        err = new_error()
        check(lib.clcone_gen_check_given(cname, given, err), err)
        p = ffi.new("clcone_gen_params *")
        lib.clcone_gen_params_default(p)
        p.mu, p.dt = mu, dt
        for attr, v in (("n", n), ("spread", spread), ("theta", theta), ("seed", seed)):
            if v is not None:
                setattr(p, attr, v if attr in ("spread", "theta") else int(v))
        w = ffi.new("clcone_world *")
        check(lib.clcone_world_generate(cname, p, w, err), err)
        return cls._own(w)

    @locked
    def detect(self, margin: float = 1e-3) -> None:
        """Replaces the contacts by those at the current positions."""
        err = new_error()
        check(lib.clcone_world_detect(self._w, _number("margin", margin), ffi.NULL, err), err)

    # bodies
    @property
    @locked
    def nbodies(self) -> int:
        return self._w.s.nbodies

    @property
    @locked
    def ncontacts(self) -> int:
        return self._w.s.ncontacts

    @property
    @locked
    def dt(self) -> float:
        return self._w.dt

    @property
    @locked
    def mu(self) -> float:
        return self._w.mu

    @property
    @locked
    def gravity(self) -> np.ndarray:
        return np.array(list(self._w.gravity))

    @locked
    def _bodies(self) -> np.ndarray:
        """A copy of the bodies' state, a row of doubles a body."""
        n = self._w.s.nbodies
        row = ffi.sizeof("clcone_body") // 8  # explicit: a scene of no bodies has no -1 to infer
        return copy_out(self._w.s.bodies, np.uint8, n * ffi.sizeof("clcone_body")).view(np.float64).reshape(n, row)

    @locked
    def _shapes(self) -> np.ndarray:
        raw = copy_out(self._w.shapes, np.uint8, self.nbodies * ffi.sizeof("clcone_shape"))
        return raw.reshape(self.nbodies, ffi.sizeof("clcone_shape"))

    @property
    def positions(self) -> np.ndarray:
        """(n, 3) centres of mass."""
        return self._bodies()[:, 0:3].copy()

    @property
    def velocities(self) -> np.ndarray:
        """(n, 3) linear velocities."""
        off = ffi.offsetof("clcone_body", "v") // 8
        return self._bodies()[:, off:off + 3].copy()

    @property
    def angular_velocities(self) -> np.ndarray:
        off = ffi.offsetof("clcone_body", "v") // 8
        return self._bodies()[:, off + 3:off + 6].copy()

    def _shape_field(self, name: str, width: int) -> np.ndarray:
        off = ffi.offsetof("clcone_shape", name)
        return self._shapes()[:, off:off + 8 * width].copy().view(np.float64)

    @property
    def orientations(self) -> np.ndarray:
        """(n, 4) unit quaternions (w, x, y, z), body to world."""
        return self._shape_field("quat", 4)

    @property
    def sizes(self) -> np.ndarray:
        return self._shape_field("size", 3)

    @property
    def masses(self) -> np.ndarray:
        return self._shape_field("mass", 1).ravel()

    @property
    @locked
    def kinds(self) -> List[str]:
        names = {v: k for k, v in _KINDS.items()}
        return [names[self._w.shapes[i].kind] for i in range(self.nbodies)]

    @property
    @locked
    def planes(self) -> np.ndarray:
        """(p, 4): normal and offset."""
        return copy_out(self._w.planes, np.float64, 4 * self._w.nplanes).reshape(-1, 4)

    # contacts
    @locked
    def _contacts(self) -> np.ndarray:
        dt = np.dtype({"names": ["a", "b", "point", "normal", "mu", "gap"],
                       "formats": [np.int32, np.int32, (np.float64, 3), (np.float64, 3), np.float64, np.float64],
                       "offsets": [ffi.offsetof("clcone_contact", f) for f in ("a", "b", "point", "normal", "mu",
                                                                                "gap")],
                       "itemsize": ffi.sizeof("clcone_contact")})
        raw = copy_out(self._w.s.contacts, np.uint8, self.ncontacts * dt.itemsize)
        return raw.view(dt)

    @property
    def contact_bodies(self) -> np.ndarray:
        """(c, 2) body indices a, b (b = -1: the static world); the normal
        points from b into a."""
        c = self._contacts()
        return np.stack([c["a"], c["b"]], axis=1) if c.size else np.zeros((0, 2), np.int32)

    @property
    def contact_points(self) -> np.ndarray:
        return self._contacts()["point"].reshape(-1, 3)

    @property
    def contact_normals(self) -> np.ndarray:
        return self._contacts()["normal"].reshape(-1, 3)

    @property
    def contact_gaps(self) -> np.ndarray:
        return self._contacts()["gap"].copy()

    @locked
    def contact_frames(self) -> np.ndarray:
        """(c, 3, 3): rows normal, t1, t2 of each contact's frame (the
        frame reactions are given in)."""
        nrm = self.contact_normals
        out = np.empty((self.ncontacts, 3, 3))
        for i in range(self.ncontacts):
            lib.clcone_contact_frame(list(nrm[i]), ffi.cast("double *", ffi.from_buffer(out[i])))
        return out

    @locked
    def kinetic_energy(self) -> float:
        return lib.clcone_world_kinetic_energy(self._w, ffi.NULL)

    @locked
    def _contact_scene(self) -> Any:
        s = ffi.new("clcone_scene *")
        err = new_error()
        check(lib.clcone_world_contact_scene(self._w, s, err), err)
        return ffi.gc(s, lib.clcone_scene_free)

    @locked
    def to_problem(self) -> Problem:
        """The local form of the contact problem at the current state
        (free velocity v + dt g): W = J M^-1 J^T, q = J v*."""
        p = ffi.new("clcone_problem *")
        err = new_error()
        check(lib.clcone_scene_to_local(self._contact_scene(), p, err), err)
        return Problem._own(p)

    @locked
    def write(self, path: PathLike) -> None:
        """Scene file (text, %.17g: an exact round trip)."""
        err = new_error()
        check(lib.clcone_write_world(c_string(path, "path"), self._w, err), err)

    @locked
    def write_vtk(self, bodies_path: PathLike, contacts_path: PathLike, reactions: Any = None) -> None:
        """Legacy VTK of the bodies and of the contacts (forces r / dt)."""
        r = ffi.NULL if reactions is None else _reactions(reactions, self.ncontacts, "reactions")
        err = new_error()
        check(lib.clcone_write_vtk(c_string(bodies_path, "bodies_path"), c_string(contacts_path, "contacts_path"),
                                   self._w, ffi.NULL if r is ffi.NULL else ffi.cast("double *", ffi.from_buffer(r)),
                                   err), err)

    @locked
    def render_png(self, path: PathLike, reactions: Any = None, size: Tuple[int, int] = (1200, 900),
                   title: Optional[str] = None) -> None:
        """The CLI's picture: bodies coloured by contact force."""
        r = None if reactions is None else _reactions(reactions, self.ncontacts, "reactions")
        w, h = _png_size(size)
        err = new_error()
        check(lib_output.clcone_render_png(c_string(path, "path"), self._w,
                                           ffi.NULL if r is None else ffi.cast("double *", ffi.from_buffer(r)), w, h,
                                           c_string(title, "title") if title is not None else ffi.NULL, err), err)

    @locked
    def __repr__(self) -> str:
        return f"<clcone.Scene bodies={self.nbodies} planes={self._w.nplanes} contacts={self.ncontacts}>"

    @locked
    def __reduce__(self) -> Any:
        # the scene file's text (%.17g: the same bits), so that pickle and deepcopy make an equal, separate Scene
        with tempfile.TemporaryDirectory(prefix="clcone-") as d:
            path = os.path.join(d, "pickled.scene")
            self.write(path)
            with open(path, "rb") as f:
                return (_scene_of_text, (f.read(),))


def _scene_of_text(text: bytes) -> Scene:
    with tempfile.TemporaryDirectory(prefix="clcone-") as d:
        path = os.path.join(d, "pickled.scene")
        with open(path, "wb") as f:
            f.write(text)
        out = read(path)
    if not isinstance(out, Scene):
        raise FormatError("a pickled clcone.Scene holds no scene")
    return out


def _png_size(size: Any) -> Tuple[int, int]:
    if (not isinstance(size, (tuple, list)) or len(size) != 2
            or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in size)):
        raise TypeError("size must be a pair of ints (width, height)")
    return _option_value("width", size[0], True), _option_value("height", size[1], True)


generate = Scene.generate


# Files -------------------------------------------------------------------

def read(path: PathLike) -> Union[Problem, Scene]:
    """A Siconos .dat or FCLib .hdf5 problem (a :class:`Problem`) or a
    clcone scene file (a :class:`Scene`), told apart by content."""
    inp = ffi.new("clcone_input *")
    err = new_error()
    check(lib_output.clcone_read_input_hdf5(c_string(path, "path"), inp, err), err)
    if inp.is_world:
        w = ffi.new("clcone_world *")
        w[0] = inp.world
        return Scene._own(w)
    p = ffi.new("clcone_problem *")
    p[0] = inp.problem
    return Problem._own(p)


def write(path: PathLike, obj: Union[Problem, Scene]) -> None:
    """A problem as Siconos .dat, a scene as a scene file."""
    if not isinstance(obj, (Problem, Scene)):
        raise TypeError(f"write takes a clcone.Problem or clcone.Scene, got {type(obj).__name__}")
    obj.write(path)


def read_reactions(path: PathLike, n: int) -> np.ndarray:
    """Reactions as `clcone solve --out` writes them: (n, 3). A regular
    file too short to hold 3n numbers is refused before the array is
    made."""
    n = _number("n", n, integer=True)
    most = (2**31 - 1) // 3  # the library counts the 3n numbers in a C int
    if not 0 <= n <= most:
        raise ValueError(f"n = {n} must be in [0, {most}]")
    cpath = c_string(path, "path")
    try:
        st = os.stat(cpath)
    except OSError:
        st = None  # the library's message names the file
    # each number takes a character and a separator but the last
    if st is not None and stat.S_ISREG(st.st_mode) and 3 * n > (st.st_size + 1) // 2:
        raise FormatError(f"{os.fsdecode(cpath)}: {st.st_size} bytes hold at most {(st.st_size + 1) // 2} numbers, "
                          f"not the {3 * n} of {n} contacts (3 per contact)")
    r = np.empty((n, 3))
    err = new_error()
    check(lib.clcone_read_reactions(cpath, n, ffi.cast("double *", ffi.from_buffer(r)), err), err)
    return r


def write_reactions(path: PathLike, r: Any) -> None:
    rr = reals(r, (None, 3), "r")
    err = new_error()
    check(lib.clcone_write_reactions(c_string(path, "path"), rr.shape[0], ffi.cast("double *", ffi.from_buffer(rr)),
                                     err), err)


# Options -----------------------------------------------------------------

def _number(name: str, v: Any, integer: bool = False) -> Any:
    ok = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(v, bool) or not isinstance(v, ok):
        raise TypeError(f"{name} must be {'an int' if integer else 'a number'}, got {type(v).__name__}")
    if not integer and not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return int(v) if integer else float(v)


def _flag(name: str, v: Any) -> bool:
    """v as a yes/no option: a bool (numpy's too), never a truthy string."""
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {v!r}")
    return bool(v)


def _threads(v: Any) -> int:
    """v as a count of host threads, 1 to 256 as the CLI's --threads."""
    n = _number("threads", v, integer=True)
    if not 1 <= n <= 256:
        raise InvalidInput(f"threads={n}: an int from 1 to 256 host threads")
    return n


def _option_value(name: str, v: Any, integer: bool) -> Union[int, float]:
    """v for the options' field name: a number, an int that fits C's."""
    v = _number(name, v, integer)
    if integer and not -2**31 <= v < 2**31:
        raise ValueError(f"{name} {v} does not fit a C int")
    return v


def _options(model: str = "coulomb", solver: Optional[str] = None, tol: Optional[float] = None,
             max_iter: Optional[int] = None, check_every: Optional[int] = None, max_seconds: Optional[float] = None,
             facets: Optional[int] = None, fit: Optional[str] = None, soft_timeconst: Optional[float] = None,
             soft_dampratio: Optional[float] = None, soft_impedance: Optional[float] = None,
             soft_dt: Optional[float] = None, sap_beta: Optional[float] = None,
             sap_stiffness: Optional[float] = None, sap_dissipation: Optional[float] = None, *,
             scene: bool = False, **unknown: Any) -> Any:
    """clcone_options from keywords; None keeps the library's default.
    The names are parsed by the library (its message lists the valid
    ones); which keywords apply to the model (on a scene when scene) is
    the library's rule, the CLI's too (clcone_options_check_given);
    values are checked by the solve."""
    if unknown:
        known = [k for k in inspect.signature(_options).parameters if k not in ("scene", "unknown")]
        raise TypeError(f"unknown option {', '.join(map(repr, unknown))}; the options are {', '.join(known)}")
    o = ffi.new("clcone_options *")
    lib.clcone_options_default(o)
    err = new_error()
    check(lib.clcone_parse_model(c_string(model, "model"), ffi.cast("clcone_model *", ffi.addressof(o, "model")),
                                 err), err)
    if solver is not None:
        check(lib.clcone_parse_solver(c_string(solver, "solver"),
                                      ffi.cast("clcone_solver *", ffi.addressof(o, "solver")), err), err)
    if fit is not None:
        if fit not in ("outer", "inner"):
            raise ValueError(f"fit must be 'outer' or 'inner', got {fit!r}")
        o.fit = lib.CLCONE_FIT_INNER if fit == "inner" else lib.CLCONE_FIT_OUTER
    given = (lib.CLCONE_GIVEN_SOLVER if solver is not None else 0) | (lib.CLCONE_GIVEN_FIT if fit is not None else 0)
    for name, v, integer in (("tol", tol, False), ("max_iter", max_iter, True), ("check_every", check_every, True),
                             ("max_seconds", max_seconds, False), ("facets", facets, True),
                             ("soft_timeconst", soft_timeconst, False), ("soft_dampratio", soft_dampratio, False),
                             ("soft_impedance", soft_impedance, False), ("soft_dt", soft_dt, False),
                             ("sap_beta", sap_beta, False), ("sap_stiffness", sap_stiffness, False),
                             ("sap_dissipation", sap_dissipation, False)):
        if v is not None:
            setattr(o, name, _option_value(name, v, integer))
            given |= getattr(lib, "CLCONE_GIVEN_" + name.upper())
    check(lib.clcone_options_check_given(o, given, 1 if scene else 0, err), err)
    return o


# Plans and solves --------------------------------------------------------

class Plan(Owner):
    """Set up once, solve many times (clcone_plan_*): on a device the
    uploaded problem or scene, step sizes, colouring and compiled kernels
    are kept, and each :meth:`solve` reports the solve alone. A plan gives
    exactly what :func:`solve` gives. Keywords as for :func:`solve`.

    Threads: calls on one plan take turns (a lock per plan), so a plan
    shared by threads gives each call the result it gives alone; plans on
    one OpenCL device take turns on the device's lock. :meth:`close` waits
    for a running call; a call after it raises :class:`clcone.Error`. A
    plan cannot be copied (make another one)."""

    _what = "plan"
    _no_copy = "it owns its solver's state (on a device, its buffers); make another Plan from the same problem"
    _handle = None

    def __init__(self, problem: Union[Problem, Scene], *, model: str = "coulomb", solver: Optional[str] = None,
                 device: Union[None, str, int, Device] = None, precision: Optional[str] = None,
                 tol: Optional[float] = None, max_iter: Optional[int] = None, check_every: Optional[int] = None,
                 max_seconds: Optional[float] = None, history: bool = False, cancel: Optional[Cancel] = None,
                 threads: Optional[int] = None, **model_options: Any) -> None:
        self._lock = threading.Lock()
        if not isinstance(problem, (Problem, Scene)):
            raise TypeError(f"a plan is made for a clcone.Problem or clcone.Scene, got {type(problem).__name__}")
        if cancel is not None and not isinstance(cancel, Cancel):
            raise TypeError("cancel must be a clcone.Cancel")
        self.device = _device(device, precision)
        self._guard = self.device._guard()
        self._scene = isinstance(problem, Scene)
        self._o = _options(model, solver, tol, max_iter, check_every, max_seconds, scene=self._scene,
                           **model_options)
        self._o.warm_start = 1
        if threads is not None:
            self._o.threads = _threads(threads)
        # the plan keeps the options' pointers: the history it appends to, the cancel flag
        history = _flag("history", history)
        self._hist = ffi.gc(ffi.new("clcone_history *"), lib.clcone_history_free) if history else None
        self._o.history = self._hist if history else ffi.NULL
        self._cancel = cancel or Cancel()
        self._own_cancel = cancel is None
        self._o.cancel = self._cancel._flag
        self._batch = not self._scene and problem.nprob > 1
        pl = ffi.new("clcone_plan **")
        err = new_error()
        if self._scene:
            s = problem._contact_scene()
            self.n = s.ncontacts
            with self.device._guard():
                check(lib.clcone_plan_create_scene(self.device._ctx, s, self._o, pl, err), err)
        else:
            self.n = problem.n
            with self.device._guard():
                check(lib.clcone_plan_create(self.device._ctx, problem._p, self._o, pl, err), err)
        self._handle = self.device._owned(pl[0], lib.clcone_plan_free, self._hist, self._cancel)
        self._res, self._err = ffi.new("clcone_result *"), err

    @locked
    def set_q(self, q: Any) -> None:
        """A new q (n, 3) for a local-form plan."""
        pl = self._live("set_q")
        if self._scene:
            raise InvalidInput("set_q is for a plan of a problem; a scene plan takes set_scene")
        qq = reals(q, (self.n, 3) if ndim(q, "q") == 2 else (3 * self.n,), "q")
        err = new_error()
        with self.device._guard():
            status = lib.clcone_plan_set_q(pl, ffi.cast("double *", ffi.from_buffer(qq)), err)
        check(status, err)

    @locked
    def set_scene(self, scene: Scene) -> None:
        """Another scene (new velocities, positions, contacts) for a scene
        plan, on the same device buffers."""
        pl = self._live("set_scene")
        if not isinstance(scene, Scene):
            raise TypeError("set_scene takes a clcone.Scene")
        if not self._scene:
            raise InvalidInput("set_scene is for a plan of a scene; a problem plan takes set_q")
        s = scene._contact_scene()
        err = new_error()
        with self.device._guard():
            status = lib.clcone_plan_set_scene(pl, s, err)
        check(status, err)
        self.n = s.ncontacts

    def solve(self, warm: Any = None) -> Tuple[np.ndarray, Result]:
        """Reactions (n, 3) and the result; warm: a start (n, 3), else 0."""
        with self._lock:  # not @locked: a wrapper's call is a few percent of a tiny solve
            pl = self._live("solve")
            r = np.zeros((self.n, 3)) if warm is None else _reactions(warm, self.n, "warm").copy()
            res, err, flag = self._res, self._err, self._cancel._flag
            if self._hist is not None:
                lib.clcone_history_free(self._hist)
                self._hist.count = self._hist.capacity = self._hist.truncated = 0
            try:
                with self._guard:
                    status = call_cancellable(flag, lib.clcone_plan_solve, pl, ffi.from_buffer("double[]", r), res,
                                              err)
                check(status, err)
                return r, _result(res, self._hist, self._batch)
            finally:
                lib.clcone_result_free(res)
                if self._own_cancel and flag[0]:
                    self._cancel.clear()


def solve(problem: Union[Problem, Scene, Sequence[Problem]], *, model: str = "coulomb", solver: Optional[str] = None,
          device: Union[None, str, int, Device] = None, precision: Optional[str] = None, tol: Optional[float] = None,
          max_iter: Optional[int] = None, warm: Any = None, check_every: Optional[int] = None,
          max_seconds: Optional[float] = None, history: bool = False, cancel: Optional[Cancel] = None,
          threads: Optional[int] = None, **model_options: Any) -> Tuple[Any, Result]:
    """Solves a problem, a scene's contact problem or a batch.

    model: coulomb, ccp, pyramid, soft or sap; solver: the backend's
    default for the model when None (see :func:`solvers`); device and
    precision: see :class:`Device` ("ref" = the CPU reference); tol: the
    precision's default when None (1e-5 float, 1e-8 double); max_iter:
    1,000,000 when None; max_seconds: no cap when None (Ctrl-C or cancel
    stop a solve); warm: a start (n, 3); history: record every error check
    in result.history; threads: a batch's problems on that many host
    threads (1 to 256, default 1; the same results): the reference's
    solves, a device's hand-overs to the host; model_options: facets, fit (pyramid),
    soft_timeconst, soft_dampratio, soft_impedance, soft_dt (soft),
    sap_beta, sap_stiffness, sap_dissipation (sap).

    Returns (r, result): r the reactions (n, 3), result a :class:`Result`.
    A list of problems is solved as one batch (each exactly as alone); r
    is then a list of (n_k, 3) arrays and result.problems has each one's
    result."""
    if isinstance(problem, (list, tuple)):
        b = batch(problem)
        if warm is not None and len(warm) != len(problem):
            raise ValueError(f"warm must hold one start per problem: {len(problem)} problems, {len(warm)} starts")
        w = None if warm is None else np.concatenate([_reactions(x, p.n, f"warm[{k}]")
                                                      for k, (x, p) in enumerate(zip(warm, problem))])
        r, res = solve(b, model=model, solver=solver, device=device, precision=precision, tol=tol, max_iter=max_iter,
                       warm=w, check_every=check_every, max_seconds=max_seconds, history=history, cancel=cancel,
                       threads=threads, **model_options)
        return np.split(r, b.offsets[1:-1]), res
    with Plan(problem, model=model, solver=solver, device=device, precision=precision, tol=tol, max_iter=max_iter,
              check_every=check_every, max_seconds=max_seconds, history=history, cancel=cancel, threads=threads,
              **model_options) as plan:
        return plan.solve(warm)


FORMS = ("local", "body", "blocks", "primal", "scenes")


@dataclass(frozen=True)
class Offer:
    """A row of the solver table (`clcone solvers`): the forms on which a
    solver serves a model, which backend runs it, where it is the
    default, and its default tolerance in float and in double."""

    forms: tuple
    model: str
    solver: str
    reference: bool
    device: bool
    reference_default: bool
    device_default: bool
    tol_float: float
    tol_double: float


def solvers() -> List[Offer]:
    """The library's solver table."""
    out = []
    i = 0
    while True:
        o = lib.clcone_offer_at(i)
        if o == ffi.NULL:
            return out
        forms = tuple(_str(lib.clcone_form_name(k)) for k in range(len(FORMS)) if o.forms & (1 << k))
        out.append(Offer(forms, _str(lib.clcone_model_name(o.model)), _str(lib.clcone_solver_name(o.solver)),
                         bool(o.reference), bool(o.device), bool(o.reference_default), bool(o.device_default),
                         o.tol_float, o.tol_double))
        i += 1


# Simulation --------------------------------------------------------------

@dataclass
class Step:
    """One time step: what clcone_sim_step reports, and the state after
    it as numpy arrays (copies)."""

    step: int
    contacts: int
    solve: ProblemResult      # the solve applied (the fallback's, if any)
    applied: bool             # False: the step was not applied (see fell_back)
    fell_back: bool           # the first solve failed or diverged
    fallback: Optional[str]   # the fallback's solver
    ke_free: float
    ke_after: float
    max_penetration: float
    warm_matched: int
    detect_ms: float
    setup_ms: float
    positions: np.ndarray         # (bodies, 3)
    velocities: np.ndarray        # (bodies, 3)
    angular_velocities: np.ndarray
    reactions: np.ndarray         # (contacts, 3) impulses in the contact frames (NaN: not applied)
    contact_bodies: np.ndarray    # (contacts, 2)
    contact_points: np.ndarray    # (contacts, 3)
    contact_normals: np.ndarray   # (contacts, 3)
    dt: float

    @property
    def contact_forces(self) -> np.ndarray:
        """(contacts, 3) forces r / dt in the contact frames (normal, t1, t2)."""
        return self.reactions / self.dt


class Simulation(Owner):
    """The time stepper (clcone_sim_*) on a scene, in place: one plan for
    the whole run. Keywords as for :func:`solve`, plus margin, projection,
    slop and warm_start of the stepper, and threads (1 to 256): the host
    threads :func:`step_together` runs the worlds' detection and update
    on when this simulation is its first. The defaults are the stepper's,
    as in the CLI: model ccp, solved with acgs to 1e-4 a step, at most
    1000 iterations a step (clcone_sim_options_resolve).

    Threads: steps take turns (a lock per simulation, then the scene's,
    as every reader of the scene does); :meth:`close` waits for a running
    step; a call after it raises :class:`clcone.Error`. A simulation
    cannot be copied."""

    _what = "simulation"
    _no_copy = "it steps its scene in place; make another Simulation on another Scene"
    _handle = None

    def __init__(self, scene: Scene, *, model: str = "ccp", solver: Optional[str] = None,
                 device: Union[None, str, int, Device] = None, precision: Optional[str] = None,
                 tol: Optional[float] = None, max_iter: Optional[int] = 1000, check_every: Optional[int] = None,
                 max_seconds: Optional[float] = None, margin: Optional[float] = None,
                 projection: Optional[float] = None, slop: Optional[float] = None, warm_start: bool = True,
                 cancel: Optional[Cancel] = None, threads: int = 1, **model_options: Any) -> None:
        self._lock = threading.Lock()
        if not isinstance(scene, Scene):
            raise TypeError(f"simulate takes a clcone.Scene, got {type(scene).__name__}")
        if cancel is not None and not isinstance(cancel, Cancel):
            raise TypeError("cancel must be a clcone.Cancel")
        self.scene = scene
        self.device = _device(device, precision)
        o = _options(model, solver, tol, max_iter, check_every, max_seconds, scene=True, **model_options)
        so = ffi.new("clcone_sim_options *")
        lib.clcone_sim_options_default(so)
        so.solve = o[0]
        for name, v in (("margin", margin), ("projection", projection), ("slop", slop)):
            if v is not None:
                setattr(so, name, _number(name, v))
        so.warm_start = 1 if _flag("warm_start", warm_start) else 0
        so.threads = _threads(threads)
        self._cancel = cancel or Cancel()
        self._own_cancel = cancel is None
        so.solve.cancel = self._cancel._flag
        self.label = f"{model}/{solver or 'default'}, {self.device.name}"
        sim = ffi.new("clcone_sim **")
        err = new_error()
        with scene._lock, self.device._guard():
            status = lib.clcone_sim_create(scene._w, self.device._ctx, so, sim, err)
        check(status, err)
        # the stepper keeps pointers to the scene's world and the cancel flag
        self._handle = self.device._owned(sim[0], lib.clcone_sim_free, scene, self._cancel)
        # contacts of the stepper's reactions: those of the last applied step
        # (a step not applied keeps them, though the scene has new contacts)
        self._nr = 0

    @locked
    def step(self) -> Step:
        """Advances one step and returns it."""
        sim = self._live("step")
        info = ffi.new("clcone_step_info *")
        err = new_error()
        sc = self.scene
        with sc._lock:
            try:
                with self.device._guard():
                    status = call_cancellable(self._cancel._flag, lib.clcone_sim_step, sim, info, err)
            finally:
                if self._own_cancel:
                    self._cancel.clear()
            check(status, err)
            return self._step_of(sim, info)

    def _step_of(self, sim: Any, info: Any) -> Step:
        """The Step of a finished clcone_step_info (under the scene's lock)."""
        sc = self.scene
        c = info.contacts
        if info.applied:
            self._nr = c
            r = copy_out(lib.clcone_sim_reactions(sim), np.float64, 3 * c).reshape(c, 3)
        else:
            r = np.full((c, 3), np.nan)  # no solve was applied to these contacts
        return Step(info.step, info.contacts, _prob_result(info.solve), bool(info.applied),
                    bool(info.fell_back), _str(lib.clcone_solver_name(info.fallback)) if info.fell_back else None,
                    info.ke_free, info.ke_after, info.max_penetration, info.warm_matched, info.detect_ms,
                    info.setup_ms, sc.positions, sc.velocities, sc.angular_velocities, r, sc.contact_bodies,
                    sc.contact_points, sc.contact_normals, sc.dt)

    @locked
    def reactions(self) -> np.ndarray:
        """The reactions (contacts, 3) of the last step applied; (0, 3)
        before the first."""
        sim = self._live("reactions")
        c = self._nr
        return copy_out(lib.clcone_sim_reactions(sim), np.float64, 3 * c).reshape(c, 3)


def step_together(sims: Sequence[Simulation]) -> List[Step]:
    """One step of every simulation at once (clcone_sim_step_many): on a
    device their small steps' contact problems are one batch, and each
    world gets the bits it gets stepped alone. The simulations share one
    device, their solve options and their cancel flag (make them with one
    cancel=Cancel()), each on its own scene. Returns a Step per world."""
    sims = list(sims)
    if not sims:
        raise ValueError("step_together needs at least one Simulation")
    for s in sims:
        if not isinstance(s, Simulation):
            raise TypeError(f"step_together takes clcone.Simulation objects, got {type(s).__name__}")
    if len({id(s.scene) for s in sims}) != len(sims):
        raise ValueError("each Simulation of one step_together needs a scene of its own")
    if any(s.device is not sims[0].device for s in sims):
        raise ValueError("the simulations of one step_together share one device (pass the same device=)")
    if any(s._cancel is not sims[0]._cancel for s in sims):
        raise ValueError("the simulations of one step_together share one cancel flag (pass the same cancel=)")
    with contextlib.ExitStack() as held:
        # the order every caller takes them in: simulations, then scenes
        for s in sorted(sims, key=id):
            held.enter_context(s._lock)
        for s in sorted(sims, key=lambda x: id(x.scene)):
            held.enter_context(s.scene._lock)
        handles = ffi.new("clcone_sim *[]", [s._live("step") for s in sims])
        infos = ffi.new("clcone_step_info[]", len(sims))
        err = new_error()
        first = sims[0]
        try:
            with first.device._guard():
                status = call_cancellable(first._cancel._flag, lib.clcone_sim_step_many, handles, len(sims), infos,
                                          err)
        finally:
            if first._own_cancel:
                first._cancel.clear()
        check(status, err)
        return [s._step_of(handles[k], infos[k]) for k, s in enumerate(sims)]


def _simulate_worlds(scenes: List[Scene], steps: int, callback: Optional[Callable[[List[Step]], Any]],
                     options: dict) -> List[List[Step]]:
    """simulate() of several scenes: the worlds stepped together."""
    options = dict(options)
    options["device"] = _device(options.pop("device", None), options.pop("precision", None))
    options.setdefault("cancel", Cancel())
    sims = [Simulation(sc, **options) for sc in scenes]
    try:
        done: List[List[Step]] = [[] for _ in scenes]
        for _ in range(steps):
            now = step_together(sims)
            for k, st in enumerate(now):
                done[k].append(st)
            if (not all(st.applied for st in now) or options["cancel"].is_set
                    or (callback is not None and callback(now) is False)):
                break
        return done
    finally:
        for s in sims:
            s.close()


def simulate(scene: Union[Scene, Sequence[Scene]], steps: int, *, callback: Optional[Callable[[Any], Any]] = None,
             vtk: Optional[PathLike] = None, vtk_every: Optional[int] = None, png: Optional[PathLike] = None,
             png_size: Optional[Tuple[int, int]] = None, **options: Any) -> Any:
    """Steps the scene (in place) `steps` times, as `clcone simulate`.

    callback(step) is called after every step with a :class:`Step`
    (positions, velocities, reactions and contact forces as numpy);
    returning False stops the run. vtk: a folder for the CLI's VTK frames
    (bodies_NNNNNN.vtk, contacts_NNNNNN.vtk every vtk_every steps and the
    last, series.pvd; vtk_every 1 unless given); png: a picture of the
    final state, png_size (width, height) each within 96 .. 8192 (default
    (1200, 900)), checked before the first step. A step that
    could not be applied ends the run (its Step has applied False), and
    so does a ``cancel=`` flag set during a step: that step is the last,
    its solve stopped early (status maxiter, reason "cancelled") where the
    flag came while the solve ran.
    Returns the steps (without callback, each with its arrays).

    A list of scenes is worlds stepped together (:func:`step_together`),
    each as it is alone, to the bit: the result is a list of steps per
    world, callback gets the list of the worlds' Steps of each step, and
    vtk and png take one scene."""
    if vtk is None and vtk_every is not None:
        raise ValueError("vtk_every does not apply: no vtk folder")
    if png is None and png_size is not None:
        raise ValueError("png_size does not apply: no png file to size")
    if not isinstance(scene, Scene):
        scenes = list(scene)
        if vtk is not None or png is not None:
            raise ValueError("vtk and png take one scene; simulate several one by one for pictures")
        steps = _number("steps", steps, integer=True)
        if steps < 0:
            raise ValueError("steps must be >= 0")
        if callback is not None and not callable(callback):
            raise TypeError("callback must be callable")
        return _simulate_worlds(scenes, steps, callback, options)
    steps = _number("steps", steps, integer=True)
    vtk_every = 1 if vtk_every is None else _number("vtk_every", vtk_every, integer=True)
    if steps < 0 or vtk_every < 1:
        raise ValueError("steps must be >= 0 and vtk_every >= 1")
    if png is not None:
        png_size = (1200, 900) if png_size is None else png_size
        w, h = _png_size(png_size)
        # the picture's own check, here before the steps rather than after them
        err = new_error()
        if lib_output.clcone_check_picture_size(w, h, err) != lib.CLCONE_OK:
            raise InvalidInput("png_size: " + ffi.string(err.msg).decode("utf-8", "replace"))
        _check_writable(png, "png")
    if callback is not None and not callable(callback):
        raise TypeError("callback must be callable")
    sim = Simulation(scene, **options)
    try:
        frames: List[Tuple[str, str, float]] = []
        if vtk is not None:
            os.makedirs(vtk, exist_ok=True)
            _vtk_frame(scene, os.fspath(vtk), 0, None, frames)
        done: List[Step] = []
        last = None
        for k in range(1, steps + 1):
            st = sim.step()
            done.append(st)
            if not st.applied:
                break
            last = st
            # a cancelled step (its solve stopped early) is the last: the
            # next would run on a flag still set and solve nothing
            stop = sim._cancel.is_set
            if vtk is not None and (k % vtk_every == 0 or k == steps or stop):
                _vtk_frame(scene, os.fspath(vtk), k, st.reactions, frames)
            if stop or (callback is not None and callback(st) is False):
                break
        if vtk is not None:
            names = [ffi.new("char[]", os.fsencode(f)) for fr in frames for f in fr[:2]]
            err = new_error()
            check(lib.clcone_write_pvd(c_string(os.path.join(os.fspath(vtk), "series.pvd"), "vtk"), len(frames),
                                       ffi.new("char *[]", names), [fr[2] for fr in frames], 2, err), err)
        if png is not None:
            applied = done and done[-1].applied  # else the scene's contacts are the unapplied step's
            scene.render_png(png, done[-1].reactions if applied else None, png_size,
                             f"{sim.label}, step {last.step if last else 0}, {scene.ncontacts} contacts")
    finally:
        sim.close()
    return done


def _check_writable(path: PathLike, what: str) -> None:
    """Refuses, before a run, a file the run would write only at its end
    where it cannot be written (the library writes beside it, then
    renames): a directory's name, or a directory that takes no files."""
    p = os.fsdecode(c_string(path, what))
    if p.endswith(os.sep) or os.path.isdir(p):
        raise FileError(f"{what} {p}: names a directory, not a file")
    folder = os.path.dirname(os.path.realpath(p)) or "."
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK | os.X_OK):
        raise FileError(f"{what} {p}: cannot write there: directory {folder} "
                        f"{'takes no new files' if os.path.isdir(folder) else 'does not exist'}")


def _vtk_frame(scene: Scene, folder: str, k: int, r: Any, frames: list) -> None:
    b, c = f"bodies_{k:06d}.vtk", f"contacts_{k:06d}.vtk"
    scene.write_vtk(os.path.join(folder, b), os.path.join(folder, c), r)
    frames.append((b, c, k * scene.dt))


def version() -> str:
    """The loaded library's version (clcone_version())."""
    return _str(lib.clcone_version())

