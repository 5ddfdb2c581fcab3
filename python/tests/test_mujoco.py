"""clcone.mujoco against the mujoco package's own mj_step, and a batch of
worlds against the same worlds stepped one by one (issue 31). `make
python-test` installs the mujoco extra; where mujoco is not installed
these tests are skipped, saying so."""
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco", reason="the mujoco package is not installed (pip install 'clcone[mujoco]')")
import clcone  # noqa: E402
import clcone.mujoco as cm  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HUMANOID = ROOT / "tests" / "data" / "models" / "mujoco" / "humanoid" / "humanoid.xml"

# Largest |qpos - qpos of mj_step| over 100 steps of the humanoid, soft
# model, clcone at tolerance 1e-10 against MuJoCo's Newton at the model's
# 1e-8: 1.05e-11 measured (2-core VM, reference); issue 31's bound.
QPOS_BOUND = 1e-7


def humanoid():
    return mujoco.MjModel.from_xml_path(str(HUMANOID))


def perturbed(m, n, seed=3):
    """n data of m, their velocities perturbed by up to 0.05 (world 0 not)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        d = mujoco.MjData(m)
        if k:
            d.qvel[:] += rng.uniform(-0.05, 0.05, m.nv)
        out.append(d)
    return out


def test_built_against_the_installed_mujoco():
    assert cm.MUJOCO_VERSION == mujoco.__version__


@pytest.mark.parametrize("solver,device", [("apgd", "ref"), (None, None)])
def test_humanoid_follows_mj_step(solver, device):
    """apgd on MuJoCo's dual problem, and the soft model's default,
    MuJoCo's Newton on its primal problem (on the reference with no
    device given, as the CLI)."""
    m = humanoid()
    dm, dc = mujoco.MjData(m), mujoco.MjData(m)
    worst = 0.0
    with cm.Stepper(m, solver=solver, device=device, tol=1e-10) as s:
        assert s.precision == "double"
        for _ in range(100):
            mujoco.mj_step(m, dm)
            st = s.step(dc)
            assert st.converged, st
            worst = max(worst, float(np.abs(dm.qpos - dc.qpos).max()))
    print(f"humanoid, 100 steps, {solver or 'default'}: largest qpos difference from mj_step {worst:.3e}")
    assert dc.time == pytest.approx(dm.time)
    assert (st.contacts > 0).all() and (st.blocks > 0).all()
    assert worst <= QPOS_BOUND


@pytest.mark.parametrize("device,precision,steps,solver",
                         [("ref", None, 20, "apgd"), ("cpu", "double", 10, None), (None, None, 20, None)])
def test_batch_equals_separate_runs(device, precision, steps, solver):
    """64 worlds stepped as one batch end bit for bit where each world
    stepped alone (its own Stepper) ends."""
    m = humanoid()
    batch, alone = perturbed(m, 64), perturbed(m, 64)
    st = cm.step(m, batch, steps, device=device, precision=precision, solver=solver)
    assert st.status.shape == (steps, 64) and st.converged
    for d in alone:
        one = cm.step(m, d, steps, device=device, precision=precision, solver=solver)
        assert one.status.shape == (steps,)
    for k, (b, a) in enumerate(zip(batch, alone)):
        assert np.array_equal(b.qpos, a.qpos) and np.array_equal(b.qvel, a.qvel), f"world {k}"
    # the perturbations reached the worlds' states
    assert not np.array_equal(batch[0].qpos, batch[1].qpos)


def test_coulomb_and_threads():
    """Hard contact runs too, and threads change nothing."""
    m = humanoid()
    a, b = perturbed(m, 4), perturbed(m, 4)
    sa = cm.step(m, a, 5, contact="coulomb", device="ref", threads=1)
    sb = cm.step(m, b, 5, contact="coulomb", device="ref", threads=3)
    assert sa.converged and np.array_equal(sa.iterations, sb.iterations)
    assert all(np.array_equal(x.qpos, y.qpos) for x, y in zip(a, b))


def test_coulomb_elliptic_beside_friction_loss():
    """Elliptic cones beside joint friction loss (the 3-row form holds no
    friction loss): hard contact on the primal form's rounds converges on
    every step, the humanoid's feet on the floor."""
    m = humanoid()
    m.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    m.dof_frictionloss[6:] = 0.05
    d = mujoco.MjData(m)
    st = cm.step(m, [d], 60, contact="coulomb", device="ref")
    assert st.converged, st.status
    assert d.ncon > 0 and (d.efc_type == mujoco.mjtConstraint.mjCNSTR_FRICTION_DOF).any()
    assert (d.efc_type == mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC).any()


def test_cancel_ends_the_steps():
    """A Cancel set during Stepper.step ends its steps at the one it
    stopped (the Stats have the steps taken); one left set takes none."""
    m = humanoid()
    d = mujoco.MjData(m)
    cancel = clcone.Cancel()
    s = cm.Stepper(m, device="ref", solver="pgs", tol=1e-300, max_iter=10**6, max_seconds=60, cancel=cancel)
    timer = threading.Timer(0.3, cancel.set)
    timer.start()
    try:
        st = s.step(d, 100000)
    finally:
        timer.cancel()
    taken = len(st.status)
    assert cancel.is_set and 1 <= taken < 100000
    assert d.time == pytest.approx(taken * m.opt.timestep)
    assert len(s.step(d, 5).status) == 0 and d.time == pytest.approx(taken * m.opt.timestep)
    cancel.clear()
    assert len(s.step(d, 1).status) == 1
    s.close()


def test_bad_input():
    m = humanoid()
    with pytest.raises(TypeError, match="data must be a mujoco.MjData or a list of them, got NoneType"):
        cm.step(m, None)
    other = mujoco.MjModel.from_xml_path(str(HUMANOID))
    with pytest.raises(TypeError, match="mujoco.MjModel"):
        cm.Stepper(object())
    with pytest.raises(ValueError, match="contact must be 'soft' or 'coulomb'"):
        cm.Stepper(m, contact="ccp")
    with pytest.raises(ValueError, match="the reference"):
        cm.Stepper(m, device="ref", precision="float")
    with pytest.raises(clcone.InvalidInput):
        cm.Stepper(m, tol=-1.0, device="ref").step(mujoco.MjData(m))
    # what the library refuses is refused when the Stepper is made, not at its first contact
    with pytest.raises(clcone.NotSupported, match="solver lemke: MuJoCo's problem .model soft. is solved on the ref"):
        cm.Stepper(m, solver="lemke", device="ref")
    with pytest.raises(clcone.InvalidInput, match="max_iter=0 >= 1"):
        cm.Stepper(m, max_iter=0, device="ref")
    s = cm.Stepper(m, device="ref")
    with pytest.raises(TypeError, match=r"data\[0\] must be a mujoco.MjData"):
        s.step([m])
    with pytest.raises(ValueError, match="not data of this stepper's model"):
        s.step(mujoco.MjData(other))
    d = mujoco.MjData(m)
    with pytest.raises(ValueError, match=r"data\[0\] and data\[1\] are the same MjData"):
        s.step([d, d])
    s.step([mujoco.MjData(m), mujoco.MjData(m)])
    with pytest.raises(ValueError, match="steps 2 worlds, got 1"):
        s.step(mujoco.MjData(m))
    with pytest.raises(ValueError, match="nstep must be an int from 0"):
        s.step([mujoco.MjData(m), mujoco.MjData(m)], 2**62)
    s.close()
    with pytest.raises(clcone.Error, match="closed"):
        s.step([mujoco.MjData(m), mujoco.MjData(m)])


def test_another_mujoco_version_is_refused(tmp_path):
    """A mujoco package of another version than the build's: a clear
    ImportError at import, naming both versions and the fix."""
    fake = tmp_path / "mujoco"
    fake.mkdir()
    (fake / "__init__.py").write_text("__version__ = '3.1.0'\ndef mj_versionString():\n    return '3.1.0'\n")
    r = subprocess.run([sys.executable, "-c", "import clcone.mujoco"], capture_output=True, text=True,
                       env={"PYTHONPATH": str(tmp_path), "PATH": ""})
    assert r.returncode != 0
    assert f"built against MuJoCo {cm.MUJOCO_VERSION}" in r.stderr
    assert "is 3.1.0" in r.stderr and f"pip install mujoco=={cm.MUJOCO_VERSION}" in r.stderr
