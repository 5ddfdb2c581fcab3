"""Bad input of every kind raises TypeError / ValueError before any C
call, or a clcone.Error subclass carrying the library's message; nothing
crashes the interpreter."""
import numpy as np
import pytest

import clcone
from test_problems import one_contact, three_contacts


@pytest.mark.parametrize("field,value,exc,words", [
    ("q", np.array([-1, 0, 0]), TypeError, "floating-point"),
    ("q", np.array([-1.0, 0.0, 0.0, 1.0]), ValueError, "shape"),
    ("q", np.array([[-1.0, 0.0, 0.0, 2.0, 0.0, 0.0]])[:, ::2], ValueError, "C-contiguous"),
    ("q", [np.nan, 0.0, 0.0], ValueError, "not a finite"),
    ("q", [np.inf, 0.0, 0.0], ValueError, "not a finite"),
    ("q", np.array([1 + 2j, 0, 0]), TypeError, "floating-point"),
    ("q", ["a", "b", "c"], TypeError, "numbers"),
    ("mu", [0.5, 0.5], ValueError, "shape"),
    ("mu", [True], TypeError, "numbers"),
    ("blocks", np.eye(3), ValueError, "shape"),
    ("blocks", np.eye(3, dtype=np.float32).reshape(1, 3, 3)[:, :, ::-1], ValueError, "C-contiguous"),
    ("col", np.array([0.0]), TypeError, "integer"),
    ("col", [2**40], ValueError, "C int"),
    ("row_ptr", [], ValueError, r"n \+ 1"),
])
def test_bad_arrays_raise_before_c(field, value, exc, words):
    with pytest.raises(exc, match=words):
        one_contact(**{field: value})


@pytest.mark.parametrize("field,value,words", [
    ("mu", [-0.5], "mu"),
    ("col", [1], "col"),
    ("row_ptr", [0, 5], "row"),
    ("blocks", -np.eye(3).reshape(1, 3, 3), r"W\[0\]\[0\] = -1 must be > 0"),
])
def test_bad_problem_data_raise_the_library_message(field, value, words):
    with pytest.raises(clcone.InvalidInput, match=words) as e:
        one_contact(**{field: value})
    assert isinstance(e.value, clcone.Error) and isinstance(e.value, ValueError)


def test_bad_options_raise():
    p = one_contact()
    with pytest.raises(clcone.InvalidInput, match="coulomb"):
        clcone.solve(p, model="newtonian")
    with pytest.raises(clcone.InvalidInput, match="nsgs"):
        clcone.solve(p, solver="magic")
    with pytest.raises(clcone.NotSupported, match="nsgs"):
        clcone.solve(p, solver="nsgs", device="cpu")
    with pytest.raises(clcone.NotSupported):
        clcone.solve(p, model="sap", device="ref")
    with pytest.raises(clcone.Error, match="max_iter"):
        clcone.solve(p, max_iter=0, device="ref")
    with pytest.raises(TypeError, match="max_iter"):
        clcone.solve(p, max_iter=1.5)
    with pytest.raises(TypeError, match="tol"):
        clcone.solve(p, tol="small")
    with pytest.raises(ValueError, match="tol"):
        clcone.solve(p, tol=float("nan"))
    with pytest.raises(ValueError, match="precision"):
        clcone.solve(p, device="ref", precision="float")
    with pytest.raises(ValueError, match="precision"):
        clcone.solve(p, precision="half")
    with pytest.raises(ValueError, match="fit"):
        clcone.solve(p, model="pyramid", fit="tight")
    with pytest.raises(TypeError, match="unknown option 'unknown_option'; the options are model, solver, tol"):
        clcone.solve(p, unknown_option=1)
    with pytest.raises(TypeError, match="device must be 'ref', an index, part of a device name or a clcone.Device"):
        clcone.solve(p, device=[0])
    with pytest.raises(clcone.DeviceError, match="no-such-device"):
        clcone.solve(p, device="no-such-device")
    with pytest.raises(clcone.DeviceError):
        clcone.solve(p, device=99)
    with pytest.raises(ValueError, match="index"):
        clcone.Device(-1)
    with pytest.raises(TypeError, match="device"):
        clcone.Device(1.5)
    with pytest.raises(ValueError, match="shape"):
        clcone.solve(p, warm=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="finite"):
        clcone.solve(p, warm=[np.nan, 0, 0])
    with pytest.raises(TypeError, match="Problem"):
        clcone.solve("p.dat")
    with pytest.raises(TypeError, match="Problem"):
        clcone.batch([p, "x"])
    with pytest.raises(TypeError, match="cancel"):
        clcone.solve(p, cancel=True)
    # a batch's starts: one per problem, each named where it is wrong
    with pytest.raises(ValueError, match="one start per problem: 2 problems, 3 starts"):
        clcone.solve([p, p], warm=[np.zeros((1, 3))] * 3, device="ref")
    with pytest.raises(ValueError, match=r"warm\[1\]"):
        clcone.solve([p, p], warm=[np.zeros((1, 3)), np.zeros((2, 3))], device="ref")
    # the measure: a pyramid of 2 or 2^31 - 1 facets is refused (the latter
    # took minutes), and an overflow is said to be one
    r = np.zeros((1, 3))
    for facets in (2, 2**31 - 1):
        with pytest.raises(ValueError, match="facets must be from 3 to 1024"):
            p.error(r, model="pyramid", facets=facets)
    with pytest.raises(clcone.InvalidInput, match="overflows"):
        p.error(np.full((1, 3), 1e160))


def test_bad_plan_use():
    p = three_contacts()
    plan = clcone.Plan(p, device="ref")
    with pytest.raises(ValueError, match="shape"):
        plan.set_q(np.zeros(4))
    with pytest.raises(ValueError, match="finite"):
        plan.set_q(np.full((3, 3), np.nan))
    with pytest.raises(clcone.InvalidInput, match="set_q"):
        plan.set_scene(clcone.generate("stack", n=1))
    splan = clcone.Plan(clcone.generate("stack", n=1), device="ref", model="ccp")
    with pytest.raises(clcone.InvalidInput, match="set_scene"):
        splan.set_q(np.zeros((4, 3)))
    with pytest.raises(TypeError):
        splan.set_scene(p)
    with pytest.raises(clcone.InvalidInput):
        p.problem(5)


def test_bad_files(tmp_path, problems_dir):
    with pytest.raises(clcone.FileError, match="nope.dat") as e:
        clcone.read(tmp_path / "nope.dat")
    assert isinstance(e.value, OSError)
    bad = tmp_path / "bad.dat"
    bad.write_text("3\n1\nnot a number\n")
    with pytest.raises(clcone.FormatError, match="bad.dat"):
        clcone.read(bad)
    scene = tmp_path / "bad.scene"
    scene.write_text("clcone-scene 1\ndt -1\n")
    with pytest.raises(clcone.FormatError, match="bad.scene:2"):
        clcone.read(scene)
    with pytest.raises(clcone.FileError):
        clcone.write(tmp_path / "no" / "dir" / "p.dat", one_contact())
    with pytest.raises(TypeError):
        clcone.write(tmp_path / "x", object())
    with pytest.raises(ValueError, match="NUL"):
        clcone.read("a\0b")
    with pytest.raises(TypeError):
        clcone.read(3)
    with pytest.raises(clcone.Error):
        clcone.read_reactions(problems_dir / "Rover4396.dat", 2)


def test_bad_scenes(tmp_path):
    ok = dict(kinds=["sphere"], sizes=[[0.5, 0, 0]], masses=[1.0], positions=[[0, 0, 0.5]])
    clcone.Scene(**ok)
    with pytest.raises(ValueError, match="'cone'"):
        clcone.Scene(**{**ok, "kinds": ["cone"]})
    with pytest.raises(TypeError, match="kinds"):
        clcone.Scene(**{**ok, "kinds": "sphere"})
    with pytest.raises(ValueError, match="shape"):
        clcone.Scene(**{**ok, "positions": [[0, 0]]})
    with pytest.raises(ValueError, match="finite"):
        clcone.Scene(**{**ok, "masses": [np.nan]})
    with pytest.raises(clcone.InvalidInput, match="size"):
        clcone.Scene(**{**ok, "sizes": [[-0.5, 0, 0]]})
    with pytest.raises(clcone.InvalidInput):
        clcone.Scene(**ok, orientations=[[2.0, 0, 0, 0]])
    with pytest.raises(clcone.InvalidInput):
        clcone.Scene(**ok, planes=[[0, 0, 2.0, 0]])
    with pytest.raises(ValueError, match="dt"):
        clcone.Scene(**ok, dt=float("inf"))
    with pytest.raises(clcone.InvalidInput, match="unknown|pile"):
        clcone.generate("tower", n=3)
    with pytest.raises(clcone.InvalidInput):
        clcone.generate("pile", n=-1)
    with pytest.raises(TypeError):
        clcone.generate("pile", n=2.5)
    s = clcone.generate("stack", n=1)
    with pytest.raises(ValueError, match="shape"):
        s.render_png(tmp_path / "x.png", reactions=np.zeros((1, 3)))
    with pytest.raises(clcone.Error):
        s.render_png(tmp_path / "x.png", size=(10, 10))
    with pytest.raises(TypeError):
        s.render_png(tmp_path / "x.png", size=100)
    with pytest.raises(clcone.FileError):
        s.render_png(tmp_path / "none" / "x.png")
    with pytest.raises(ValueError):
        clcone.simulate(s, -1)
    with pytest.raises(TypeError):
        clcone.simulate(s, 2, callback=3)
    with pytest.raises(TypeError):
        clcone.simulate(one_contact(), 2)


def test_numbers_named_and_bounded():
    # a size past C's int, or a value of the wrong type, names the argument
    p = one_contact()
    with pytest.raises(ValueError, match="the problem index 1099511627776 does not fit a C int"):
        p.problem(2**40)
    with pytest.raises(ValueError, match="n 1099511627776 does not fit a C int"):
        clcone.generate("pile", n=2**40)
    with pytest.raises(TypeError, match="mu must be a number, got str"):
        clcone.generate("pile", n=3, mu="a")
    with pytest.raises(TypeError, match="dt must be a number, got NoneType"):
        clcone.generate("pile", n=3, dt=None)
    with pytest.raises(TypeError, match="spread must be a number"):
        clcone.generate("pile", n=3, spread="a")
    s = clcone.generate("pile", n=3)
    with pytest.raises(TypeError, match="margin must be a number, got str"):
        s.detect("a")
    with pytest.raises(ValueError, match="threads=1099511627776: an int from 1 to 256"):
        clcone.Simulation(s, threads=2**40)
    # as the CLI's --threads (0 was taken as one), and yes/no options are bools
    with pytest.raises(ValueError, match="threads=0: an int from 1 to 256"):
        clcone.solve(one_contact(), device="ref", threads=0)
    with pytest.raises(TypeError, match="history must be True or False, got 'no'"):
        clcone.solve(one_contact(), device="ref", history="no")
    with pytest.raises(TypeError, match="warm_start must be True or False, got 1"):
        clcone.Simulation(s, warm_start=1)
    assert clcone.Device(np.int64(0)).spec == "0"
    with pytest.raises(ValueError, match="width 1099511627776 does not fit a C int"):
        s.render_png("x.png", size=(2**40, 100))


def test_ragged_and_non_finite_named():
    p = one_contact()
    with pytest.raises(TypeError, match="q must be an array of numbers"):
        clcone.Problem([0, 1], [0], np.eye(3).reshape(1, 3, 3), [[-1, 0], [0]], [0.5])
    with pytest.raises(TypeError, match="warm must be an array of numbers"):
        clcone.solve(p, warm=[[0, 0], [0]], device="ref")
    import scipy.sparse as sp
    W = sp.lil_matrix((3, 3))
    W[0, 0], W[1, 1], W[2, 2], W[1, 2] = 1.0, 1.0, 1.0, np.nan
    with pytest.raises(ValueError, match=r"W\[1\]\[2\] is nan, not a finite number"):
        clcone.Problem.from_scipy(W.tocsr(), [-1, 0, 0], [0.5])
    s = clcone.Scene([], np.zeros((0, 3)), [], np.zeros((0, 3)))
    assert s.positions.shape == (0, 3) and s.velocities.shape == (0, 3)
