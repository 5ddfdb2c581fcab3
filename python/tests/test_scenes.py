"""Scenes from numpy arrays and generators, their solves, the stepper
with per-step callbacks, VTK and PNG output, and the CLI's answers."""
import subprocess

import numpy as np
import pytest

import clcone


def ball_on_floor(**kw):
    return clcone.Scene(["sphere"], [[0.5, 0, 0]], [1.0], [[0.0, 0.0, 0.5]], planes=[[0, 0, 1, 0]], **kw)


def test_scene_from_arrays_detects_its_contacts(tmp_path):
    s = clcone.Scene(["sphere", "box"], [[0.5, 0, 0], [0.5, 0.5, 0.5]], [1.0, 2.0], [[0, 0, 0.5], [3, 0, 0.5]],
                     planes=[[0, 0, 1, 0]], mu=0.3)
    assert (s.nbodies, s.ncontacts) == (2, 5)  # the sphere's one, the box's four corners
    assert s.kinds == ["sphere", "box"]
    np.testing.assert_array_equal(s.masses, [1.0, 2.0])
    np.testing.assert_array_equal(s.orientations, [[1, 0, 0, 0]] * 2)
    np.testing.assert_array_equal(s.contact_bodies[:, 1], [-1] * 5)
    np.testing.assert_allclose(s.contact_normals, [[0, 0, 1]] * 5)
    frames = s.contact_frames()
    assert frames.shape == (5, 3, 3)
    np.testing.assert_allclose(frames[:, 0], s.contact_normals)
    s.write(tmp_path / "s.scene")
    back = clcone.read(tmp_path / "s.scene")
    assert isinstance(back, clcone.Scene)
    for a in ("positions", "velocities", "sizes", "planes", "contact_points"):
        np.testing.assert_array_equal(getattr(back, a), getattr(s, a))


def test_resting_ball_carries_its_weight():
    s = ball_on_floor()
    r, res = clcone.solve(s, model="ccp", device="ref", tol=1e-10)
    assert res.converged
    # impulse m g dt on the normal, none tangential
    np.testing.assert_allclose(r, [[9.81 * 0.01, 0, 0]], atol=1e-9)
    p = s.to_problem()
    r2, _ = clcone.solve(p, model="ccp", device="ref", tol=1e-10)
    np.testing.assert_allclose(r2, r, atol=1e-12)


def test_scene_solve_matches_the_cli(tmp_path, cli):
    s = clcone.generate("pile", n=60, seed=3)
    path = tmp_path / "pile.scene"
    s.write(path)
    for dev in ("ref", "cpu"):
        r, res = clcone.solve(s, model="ccp", device=dev, tol=1e-5)
        out = tmp_path / f"{dev}.r"
        run = subprocess.run([str(cli), "solve", str(path), "--model", "ccp", "--device", dev, "--tol", "1e-5",
                              "--out", str(out)],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert np.array_equal(r, clcone.read_reactions(out, s.ncontacts))
        assert f"iters={res.iterations} " in run.stdout


def test_scene_plan_follows_new_scenes():
    a = clcone.generate("pile", n=40, seed=2)
    b = clcone.generate("stack", n=3)
    plan = clcone.Plan(a, model="ccp", device="cpu")
    ra, _ = plan.solve()
    plan.set_scene(b)
    rb, _ = plan.solve()
    assert rb.shape == (12, 3)
    assert np.array_equal(rb, clcone.solve(b, model="ccp", device="cpu")[0])
    assert np.array_equal(ra, clcone.solve(a, model="ccp", device="cpu")[0])


@pytest.mark.parametrize("name", ["pile", "stack", "wall", "grid", "incline"])
def test_generators(name):
    # as `clcone gen`: incline takes no size
    s = clcone.generate(name, mu=0.4) if name == "incline" else clcone.generate(name, n=3, mu=0.4)
    assert s.nbodies >= 1 and s.ncontacts >= 1 and s.mu == 0.4
    assert np.all(np.isfinite(s.positions))


def test_simulate_refuses_its_picture_options_before_the_steps(tmp_path):
    s = clcone.generate("stack", n=3)
    start = s.positions.copy()
    with pytest.raises(ValueError, match=r"png_size: each side must be within 96 \.\. 8192 pixels \(got 50 x 50\)"):
        clcone.simulate(s, 5, png=tmp_path / "a.png", png_size=(50, 50), model="ccp", device="ref")
    with pytest.raises(ValueError, match="png_size does not apply"):
        clcone.simulate(s, 5, png_size=(200, 200), model="ccp", device="ref")
    with pytest.raises(ValueError, match="vtk_every does not apply"):
        clcone.simulate(s, 5, vtk_every=2, model="ccp", device="ref")
    with pytest.raises(clcone.FileError, match="names a directory"):
        clcone.simulate(s, 5, png=str(tmp_path) + "/", model="ccp", device="ref")
    with pytest.raises(clcone.FileError, match="does not exist"):
        clcone.simulate(s, 5, png=tmp_path / "no" / "a.png", model="ccp", device="ref")
    np.testing.assert_array_equal(s.positions, start)  # not one step taken
    assert not (tmp_path / "a.png").exists()
    # the sides Python checks are the library's own
    s.render_png(tmp_path / "min.png", None, (96, 8192))
    with pytest.raises(clcone.InvalidInput, match="within 96 .. 8192"):
        s.render_png(tmp_path / "small.png", None, (95, 96))


def test_simulate_calls_back_every_step_and_writes_outputs(tmp_path, cli):
    s = clcone.generate("stack", n=3)
    seen = []

    def cb(step):
        assert step.positions.shape == (3, 3) and step.velocities.shape == (3, 3)
        assert step.reactions.shape == (step.contacts, 3)
        np.testing.assert_array_equal(step.contact_forces, step.reactions / s.dt)
        seen.append(step.step)

    steps = clcone.simulate(s, 5, callback=cb, model="ccp", device="ref", tol=1e-10, vtk=tmp_path / "vtk",
                            vtk_every=2, png=tmp_path / "end.png")
    assert seen == [1, 2, 3, 4, 5] and len(steps) == 5 and all(x.applied for x in steps)
    # a resting stack: the bottom interface carries the three boxes
    np.testing.assert_allclose(steps[-1].contact_forces[:4, 0].sum(), 3 * 9.81, rtol=1e-6)
    names = sorted(p.name for p in (tmp_path / "vtk").iterdir())
    assert names == ["bodies_000000.vtk", "bodies_000002.vtk", "bodies_000004.vtk", "bodies_000005.vtk",
                     "contacts_000000.vtk", "contacts_000002.vtk", "contacts_000004.vtk", "contacts_000005.vtk",
                     "series.pvd"]
    assert (tmp_path / "end.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the same run through the CLI ends in the same state, to the bit
    t = clcone.generate("stack", n=3)
    t.write(tmp_path / "in.scene")
    run = subprocess.run([str(cli), "simulate", str(tmp_path / "in.scene"), "--steps", "5", "--model", "ccp",
                          "--device", "ref", "--tol", "1e-10", "--out", str(tmp_path / "out.scene")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    cli_end = clcone.read(tmp_path / "out.scene")
    assert np.array_equal(cli_end.positions, s.positions)
    assert np.array_equal(cli_end.velocities, s.velocities)


def test_simulate_stops_when_the_callback_says_so():
    s = clcone.generate("pile", n=20)
    steps = clcone.simulate(s, 10, callback=lambda st: st.step < 3, model="ccp", device="cpu")
    assert [x.step for x in steps] == [1, 2, 3]
    sim = clcone.Simulation(s, model="ccp", device="cpu")
    st = sim.step()
    assert st.step == 1 and st.solve.status in ("converged", "maxiter")


def test_scene_vtk_and_png(tmp_path):
    s = ball_on_floor()
    r, _ = clcone.solve(s, model="ccp", device="ref")
    s.write_vtk(tmp_path / "b.vtk", tmp_path / "c.vtk", r)
    assert "contact_force" in (tmp_path / "b.vtk").read_text()
    s.render_png(tmp_path / "p.png", r, size=(320, 240), title="ball")
    assert (tmp_path / "p.png").stat().st_size > 100


def world(k):
    """World k of a batch: piles of 3-12 spheres and, every eighth, a stack."""
    return clcone.generate("stack", n=2 + k % 3) if k % 8 == 7 else clcone.generate("pile", n=3 + k % 10, seed=k + 1)


def test_sixty_four_worlds_together_equal_each_alone():
    """The issue's goal: 64 scenes stepped with clcone.simulate equal 64
    separate runs bit for bit, on a device (their small steps one batch)."""
    worlds = [world(k) for k in range(64)]
    together = clcone.simulate(worlds, 10, device="cpu", threads=2)
    assert len(together) == 64 and all(len(w) == 10 and all(s.applied for s in w) for w in together)
    assert sum(s.contacts for w in together for s in w) > 0
    for k in range(64):
        alone = world(k)
        steps = clcone.simulate(alone, 10, device="cpu")
        assert [s.solve.iterations for s in steps] == [s.solve.iterations for s in together[k]]
        assert np.array_equal(alone.positions, worlds[k].positions), k
        assert np.array_equal(alone.velocities, worlds[k].velocities), k
        assert np.array_equal(alone.angular_velocities, worlds[k].angular_velocities), k


def test_step_together_refuses_what_cannot_be_one_batch():
    a, b = world(1), world(2)
    flag = clcone.Cancel()
    sa = clcone.Simulation(a, device="cpu", cancel=flag)
    with pytest.raises(ValueError, match="scene of its own"):
        clcone.step_together([sa, clcone.Simulation(a, device="cpu", cancel=flag)])
    with pytest.raises(ValueError, match="one device"):
        clcone.step_together([sa, clcone.Simulation(b, device="ref", cancel=flag)])
    with pytest.raises(ValueError, match="cancel"):
        clcone.step_together([sa, clcone.Simulation(b, device="cpu")])
    with pytest.raises(clcone.Error, match="world 1.*options"):
        clcone.step_together([sa, clcone.Simulation(b, device="cpu", cancel=flag, tol=1e-3)])
    with pytest.raises(ValueError, match="vtk and png take one scene"):
        clcone.simulate([a, b], 2, png="x.png")
    steps = clcone.step_together([sa, clcone.Simulation(b, device="cpu", cancel=flag)])
    assert [s.step for s in steps] == [1, 1]
