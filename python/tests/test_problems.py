"""Problems from numpy, scipy and files; solves, batches and plans; the
same reactions as the CLI, bit for bit."""
import subprocess

import numpy as np
import pytest

import clcone

ONE = dict(row_ptr=[0, 1], col=[0], blocks=np.eye(3).reshape(1, 3, 3), q=[-1.0, 0.5, 0.0], mu=[0.5])


def one_contact(**kw):
    d = dict(ONE)
    d.update(kw)
    return clcone.Problem(d["row_ptr"], d["col"], d["blocks"], d["q"], d["mu"])


def three_contacts():
    """Three coupled contacts, the overhead benchmark's size."""
    blocks = []
    rp, col = [0], []
    for i in range(3):
        for j in range(3):
            if abs(i - j) <= 1:
                col.append(j)
                blocks.append(np.eye(3) * 2.0 if i == j else np.full((3, 3), 0.1))
        rp.append(len(col))
    return clcone.Problem(rp, col, np.array(blocks), [[-1.0, 0.2, 0.1], [-0.5, -0.3, 0.0], [-2.0, 0.0, 0.4]],
                          [0.3, 0.5, 0.8])


def test_version_is_the_library_header_version():
    import re
    from conftest import ROOT
    m = re.search(r'#define CLCONE_VERSION "([^"]+)"', (ROOT / "include/clcone/base.h").read_text())
    assert clcone.__version__ == m.group(1) == clcone.version()


def test_one_contact_sticks_and_converges():
    p = one_contact()
    r, res = clcone.solve(p, device="ref")
    assert res.converged and res.status == "converged" and res.reason == ""
    assert r.shape == (1, 3)
    # W = I, q = (-1, 0.5, 0): the contact sticks with r = -q
    np.testing.assert_allclose(r[0], [1.0, -0.5, 0.0], atol=1e-8)
    assert p.error(r) <= 1e-8
    np.testing.assert_allclose(p.velocity(r), np.zeros((1, 3)), atol=1e-8)
    assert res.iterations >= 1 and res.time_ms >= 0 and res.time == res.time_ms / 1e3


def test_velocity_that_overflows_is_an_error_not_nan():
    p = three_contacts()
    with pytest.raises(clcone.InvalidInput, match="overflows"):
        p.velocity(np.full((3, 3), 1e308))
    # the largest reactions W r + q still holds are answered as they are
    assert np.isfinite(p.velocity(np.full((3, 3), 1e307))).all()


def test_problem_arrays_round_trip(tmp_path):
    p = three_contacts()
    assert (p.n, p.nnzb, p.nprob) == (3, 7, 1)
    assert p.row_ptr.tolist() == [0, 2, 5, 7] and p.col.tolist() == [0, 1, 0, 1, 2, 1, 2]
    q = p.q
    assert q.shape == (3, 3) and q[2, 2] == 0.4
    np.testing.assert_array_equal(p.mu, [0.3, 0.5, 0.8])
    p.write(tmp_path / "p.dat")
    back = clcone.read(tmp_path / "p.dat")
    assert isinstance(back, clcone.Problem)
    for a in ("row_ptr", "col", "blocks", "q", "mu"):
        np.testing.assert_array_equal(getattr(back, a), getattr(p, a))
    clcone.write(tmp_path / "w.dat", p)
    assert (tmp_path / "w.dat").read_bytes() == (tmp_path / "p.dat").read_bytes()


def test_dense_and_scipy_give_the_same_problem():
    sp = pytest.importorskip("scipy.sparse")
    p = three_contacts()
    W = p.to_scipy().toarray()
    d = clcone.Problem.from_dense(W, p.q, p.mu)
    s = clcone.Problem.from_scipy(sp.csr_matrix(W), p.q.ravel(), p.mu)
    for x in (d, s):
        np.testing.assert_array_equal(x.blocks, p.blocks)
        np.testing.assert_array_equal(x.col, p.col)
    r0, _ = clcone.solve(p, device="ref")
    r1, _ = clcone.solve(s, device="ref")
    assert np.array_equal(r0, r1)


@pytest.mark.parametrize("device", ["ref", "cpu"])
def test_same_reactions_as_the_cli_on_the_siconos_problems(problems_dir, cli, shared_problems, tmp_path, device):
    """Every shared problem solved by the package and by `clcone solve`
    with the default model and solver: the same bits (%.17g round trip)."""
    for name in shared_problems:
        p = clcone.read(problems_dir / name)
        r, res = clcone.solve(p, device=device)
        out = tmp_path / (name + ".r")
        run = subprocess.run([str(cli), "solve", str(problems_dir / name), "--device", device, "--out", str(out)],
                             capture_output=True, text=True)
        assert run.returncode in (0, 1), run.stderr
        last = run.stdout.strip().splitlines()[-1]
        assert f"status={res.status} " in last and f"iters={res.iterations} " in last, (name, last)
        assert np.array_equal(r, clcone.read_reactions(out, p.n)), name


def test_batch_solves_each_problem_as_alone(problems_dir):
    names = ["Rover4396.dat", "FC3D_Example1.dat", "Confeti-ex13-4contact-Fc3D-SBM.dat"]
    ps = [clcone.read(problems_dir / n) for n in names]
    for dev in ("ref", "cpu"):
        rs, res = clcone.solve(ps, device=dev, model="ccp")
        assert len(rs) == len(ps) and len(res.problems) == len(ps)
        for p, r, it in zip(ps, rs, res.problems):
            r1, one = clcone.solve(p, device=dev, model="ccp")
            assert r.shape == (p.n, 3) and np.array_equal(r, r1)
            assert it.iterations == one.iterations and it.status == one.status
        assert res.iterations == sum(x.iterations for x in res.problems)
    b = clcone.batch(ps)
    assert b.nprob == 3 and b.offsets.tolist() == [0, ps[0].n, ps[0].n + ps[1].n, b.n]
    np.testing.assert_array_equal(b.problem(1).q, ps[1].q)


@pytest.mark.parametrize("device,model,solver", [("ref", "coulomb", "nsgs"), ("cpu", "ccp", "apgd"),
                                                 ("cpu", "coulomb", "cgs")])
def test_plan_gives_what_solve_gives_after_set_q(device, model, solver):
    p = three_contacts()
    plan = clcone.Plan(p, model=model, solver=solver, device=device)
    r0, res0 = plan.solve()
    r1, res1 = clcone.solve(p, model=model, solver=solver, device=device)
    assert np.array_equal(r0, r1) and res0.iterations == res1.iterations
    q = p.q * 1.5
    plan.set_q(q)
    r2, res2 = plan.solve()
    r3, _ = clcone.solve(clcone.Problem(p.row_ptr, p.col, p.blocks, q, p.mu), model=model, solver=solver,
                         device=device)
    assert res2.converged and np.array_equal(r2, r3)
    # a warm start from the solution converges sooner
    r4, res4 = plan.solve(warm=r2)
    assert res4.converged and res4.iterations <= res2.iterations
    plan.close()


def test_warm_start_and_history():
    p = three_contacts()
    r, res = clcone.solve(p, device="ref", model="ccp", solver="apgd", history=True, tol=1e-10)
    h = res.history
    assert h is not None and h.error.size >= 1 and not h.truncated
    assert h.iter[-1] == res.iterations and h.error[-1] == res.error
    assert np.all(np.diff(h.iter) > 0)
    _, warm = clcone.solve(p, device="ref", model="ccp", solver="apgd", warm=r, tol=1e-10)
    assert warm.iterations <= 1


def test_models_and_devices():
    p = three_contacts()
    for model in ("coulomb", "ccp", "pyramid", "soft"):
        r, res = clcone.solve(p, model=model, device="ref")
        assert res.converged, (model, res)
    r, res = clcone.solve(p, model="pyramid", facets=16, fit="inner", device="ref")
    assert res.converged and p.error(r, model="pyramid", facets=16, fit="inner") <= 1e-8
    d = clcone.Device("cpu", precision="double")
    assert not d.is_reference and d.info.is_cpu and d.precision == "double"
    r, res = clcone.solve(p, device=d)
    assert res.converged and res.error <= 1e-8
    assert clcone.Device(0).info.index == 0
    assert clcone.Device("ref").is_reference
    devs = clcone.devices()
    assert devs and all(isinstance(x, clcone.DeviceInfo) for x in devs)
    assert clcone.Device(devs[0].name[:6]).info.name == devs[0].name
    offers = clcone.solvers()
    assert any(o.model == "coulomb" and o.solver == "hybrid" and o.reference_default for o in offers)
