"""Plans, simulations and scenes shared by threads: calls take turns (a
lock per object, one per OpenCL device), so each gets the result it gets
alone; close() waits for a running call and may be repeated; a call
after it, and a copy, raise clcone.Error. `make python-sanitize` runs
this file under ASan+UBSan, where a race on freed memory is reported
instead of passing by luck."""
import copy
import gc
import pickle
import random
import threading
import time

import numpy as np
import pytest

import clcone

DEVICES = ["ref", "cpu"]
# a fixed number of iterations (a tolerance none reaches): every solve does the same work
FIXED = dict(model="ccp", tol=1e-300)


def run_threads(target, count):
    """target(k) on count threads at once; re-raises the first failure."""
    errors = []
    start = threading.Barrier(count)

    def body(k):
        try:
            start.wait()
            target(k)
        except BaseException as e:  # noqa: B902 - handed to the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
        assert not t.is_alive(), "a thread hung"
    if errors:
        raise errors[0]


def wait_until(cond, what, timeout=60):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.005)


@pytest.fixture(scope="module")
def pile():
    return clcone.generate("pile", n=60, seed=3)


@pytest.mark.parametrize("device", DEVICES)
def test_a_plan_shared_by_threads_gives_each_solve_its_result_alone(pile, device):
    plan = clcone.Plan(pile, device=device, max_iter=40, **FIXED)
    r0, res0 = plan.solve()
    warm = np.full_like(r0, 0.01)
    rw, _ = plan.solve(warm)

    def solves(k):
        for i in range(8):
            if (i + k) % 2:
                r, res = plan.solve(warm)
                assert np.array_equal(r, rw)
            else:
                r, res = plan.solve()
                assert np.array_equal(r, r0)
                assert (res.iterations, res.error) == (res0.iterations, res0.error)

    run_threads(solves, 4)


@pytest.mark.parametrize("device", DEVICES)
def test_set_q_and_solve_from_threads_never_mix_sizes(pile, device):
    # a scene plan's contact count changes with set_scene; each solve
    # returns the reactions of the scene set when it ran, never a mix
    other = clcone.generate("stack", n=3)
    plan = clcone.Plan(pile, device=device, max_iter=20, **FIXED)
    sizes = {pile.ncontacts, other.ncontacts}

    def work(k):
        for i in range(6):
            if k == 0:
                plan.set_scene(other if i % 2 else pile)
            else:
                r, res = plan.solve()
                assert r.shape[0] in sizes and res.problems

    run_threads(work, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_close_waits_for_the_running_solve_then_refuses(pile, device):
    cancel = clcone.Cancel()
    plan = clcone.Plan(pile, device=device, max_iter=2**31 - 1, max_seconds=120, cancel=cancel, **FIXED)
    out = {}
    solver = threading.Thread(target=lambda: out.update(res=plan.solve()[1]))
    solver.start()
    wait_until(plan._lock.locked, "the solve to start")
    closer = threading.Thread(target=plan.close)
    closer.start()
    time.sleep(0.3)
    assert closer.is_alive(), "close() returned while a solve was running"
    cancel.set()
    solver.join(60)
    closer.join(60)
    assert not closer.is_alive() and out["res"].reason == "cancelled"
    with pytest.raises(clcone.Error, match=r"Plan\.solve\(\): this plan was closed"):
        plan.solve()
    plan.close()  # again: nothing to do


@pytest.mark.parametrize("device", DEVICES)
def test_threads_stepping_one_simulation_make_the_sequential_run(device):
    shared, alone = clcone.generate("stack", n=4), clcone.generate("stack", n=4)
    sim = clcone.Simulation(shared, device=device, max_iter=50)
    steps, seen, finished = [], [], []

    def step_or_read(k):
        if k < 2:
            try:
                for _ in range(5):
                    steps.append(sim.step().step)
            finally:
                finished.append(k)
        else:
            # a reader sees whole states while the steps run
            while len(finished) < 2:
                x = shared.positions
                assert x.shape == (4, 3) and np.isfinite(x).all()
                seen.append(shared.contact_bodies.shape[1])

    run_threads(step_or_read, 3)
    assert sorted(steps) == list(range(1, 11))
    assert set(seen) <= {2}
    ref = clcone.Simulation(alone, device=device, max_iter=50)
    for _ in range(10):
        ref.step()
    assert np.array_equal(shared.positions, alone.positions)
    assert np.array_equal(sim.reactions(), ref.reactions())


@pytest.mark.parametrize("device", DEVICES)
def test_a_call_after_close_names_the_object_and_method(pile, device):
    problem = pile.to_problem()
    with clcone.Plan(problem, device=device, max_iter=5, **FIXED) as plan:
        plan.solve()
    plan.close()
    for call, name in ((plan.solve, "Plan.solve"), (lambda: plan.set_q(problem.q), "Plan.set_q")):
        with pytest.raises(clcone.Error, match=name + r"\(\): this plan was closed"):
            call()
    splan = clcone.Plan(pile, device=device, max_iter=5, **FIXED)
    splan.close()
    with pytest.raises(clcone.Error, match=r"Plan\.set_scene\(\)"):
        splan.set_scene(pile)
    sim = clcone.Simulation(clcone.generate("stack", n=2), device=device)
    sim.step()
    sim.close()
    sim.close()
    for call, name in ((sim.step, "Simulation.step"), (sim.reactions, "Simulation.reactions")):
        with pytest.raises(clcone.Error, match=name + r"\(\): this simulation was closed"):
            call()


def test_plans_and_simulations_cannot_be_copied(pile):
    plan = clcone.Plan(pile, device="ref", max_iter=5, **FIXED)
    sim = clcone.Simulation(clcone.generate("stack", n=2), device="ref")
    for obj, name in ((plan, "Plan"), (sim, "Simulation")):
        for how in (copy.copy, copy.deepcopy, pickle.dumps):
            with pytest.raises(clcone.Error, match=f"a clcone.{name} cannot be copied"):
                how(obj)
    # the original is untouched by the refused copies
    plan.close()
    with pytest.raises(clcone.Error):
        plan.solve()
    dev = clcone.Device("ref")
    assert copy.copy(dev) is dev and copy.deepcopy(dev) is dev


def test_problems_scenes_and_devices_pickle_for_other_processes(pile):
    # a problem (a batch too) and a scene go whole, to the bit; a device as
    # what chose it, opened again where it is unpickled
    p = pile.to_problem()
    b = clcone.batch([p, clcone.Problem.from_dense(np.eye(3), [-1.0, 0.2, 0.0], [0.3]), p])
    for prob in (p, b):
        for got in (pickle.loads(pickle.dumps(prob)), copy.deepcopy(prob)):
            assert got is not prob and got.nprob == prob.nprob
            for a in ("row_ptr", "col", "blocks", "q", "mu", "offsets"):
                assert np.array_equal(getattr(got, a), getattr(prob, a)), a
    for got in (pickle.loads(pickle.dumps(pile)), copy.deepcopy(pile)):
        assert got is not pile and got.kinds == pile.kinds and got.dt == pile.dt and got.mu == pile.mu
        for a in ("positions", "velocities", "angular_velocities", "orientations", "sizes", "masses", "planes",
                  "gravity", "contact_bodies", "contact_points", "contact_normals", "contact_gaps"):
            assert np.array_equal(getattr(got, a), getattr(pile, a)), a
        r, _ = clcone.solve(got, device="ref", max_iter=20, **FIXED)
        assert np.array_equal(r, clcone.solve(pile, device="ref", max_iter=20, **FIXED)[0])
    for dev in (clcone.Device("ref"), clcone.Device("cpu", precision="double")):
        got = pickle.loads(pickle.dumps(dev))
        assert got.spec == dev.spec and got.precision == dev.precision and got.name == dev.name


def test_plans_on_one_device_from_threads_match_their_solves_alone():
    # made in the threads on a new context, whose programs are built at
    # the first plan that needs them
    scenes = [clcone.generate("pile", n=40 + 10 * k, seed=k + 1) for k in range(3)]
    alone = [clcone.solve(s, device="cpu", max_iter=30, **FIXED)[0] for s in scenes]
    dev = clcone.Device("cpu")

    def solves(k):
        plan = clcone.Plan(scenes[k], device=dev, max_iter=30, **FIXED)
        for _ in range(5):
            assert np.array_equal(plan.solve()[0], alone[k])

    run_threads(solves, 3)


def test_a_plan_outliving_the_last_reference_to_its_device(pile):
    # the plan's free needs its context: the device must outlive it even
    # when the plan held the last reference
    for _ in range(3):
        dev = clcone.Device("cpu")
        plan = clcone.Plan(pile, device=dev, max_iter=5, **FIXED)
        sim = clcone.Simulation(clcone.generate("stack", n=2), device=dev)
        del dev
        plan.solve()
        sim.step()
        del plan, sim
        gc.collect()


def test_plans_dropped_while_another_thread_solves_on_the_device(pile):
    busy = clcone.Plan(pile, device="cpu", max_iter=30, **FIXED)
    r0 = busy.solve()[0]
    done = threading.Event()

    def work(k):
        if k == 0:
            try:
                for _ in range(10):
                    assert np.array_equal(busy.solve()[0], r0)
            finally:
                done.set()
        else:
            while not done.is_set():
                clcone.Plan(pile, device="cpu", max_iter=5, **FIXED).solve()  # freed when dropped

    run_threads(work, 2)


@pytest.mark.parametrize("device", DEVICES)
def test_threads_hammering_one_plan_and_one_simulation(pile, device):
    """Random solves, steps, reads, copies and closes on shared objects:
    every call either works or raises clcone.Error for a closed object or
    a refused copy."""
    plan = clcone.Plan(pile, device=device, max_iter=10, **FIXED)
    scene = clcone.generate("pile", n=30, seed=9)
    sim = clcone.Simulation(scene, device=device, max_iter=20)
    ops = {
        "solve": lambda: plan.solve(),
        "step": lambda: sim.step(),
        "reactions": lambda: sim.reactions(),
        "read": lambda: (scene.positions, scene.contact_points, scene.to_problem()),
        "copy": lambda: copy.copy(plan if random.random() < 0.5 else sim),
        "close": lambda: (plan if random.random() < 0.5 else sim).close(),
    }
    names = sorted(ops)
    weights = [1 if n == "close" else 6 for n in names]
    counts = {n: 0 for n in names}

    def hammer(k):
        rng = random.Random(k)
        for _ in range(25):
            name = rng.choices(names, weights)[0]
            try:
                ops[name]()
                counts[name] += 1
            except clcone.Error as e:
                assert "was closed" in str(e) or "cannot be copied" in str(e), str(e)

    run_threads(hammer, 4)
    assert counts["solve"] + counts["step"] > 0
    plan.close()
    sim.close()


@pytest.mark.parametrize("device", DEVICES)
def test_reactions_before_the_first_step_are_empty(device):
    # the stepper has no reactions yet though the scene has contacts (read
    # past a NULL array before)
    scene = clcone.generate("stack", n=3)
    sim = clcone.Simulation(scene, device=device)
    assert scene.ncontacts > 0 and sim.reactions().shape == (0, 3)
    st = sim.step()
    assert st.applied and np.array_equal(sim.reactions(), st.reactions)
    assert st.reactions.shape == (st.contacts, 3) == (scene.ncontacts, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_a_batch_on_host_threads_gives_the_bits_of_one(device):
    # tiny piles, whose hybrid hands problems to the host's Newton on a
    # float device and runs them whole on the reference
    parts = [clcone.generate("pile", n=3 + k, seed=40 + k).to_problem() for k in range(6)]
    one, res1 = clcone.solve(parts, device=device, tol=5e-7, max_iter=20000)
    many, res4 = clcone.solve(parts, device=device, tol=5e-7, max_iter=20000, threads=4)
    for a, b, p1, p4 in zip(one, many, res1.problems, res4.problems):
        assert p1.status == "converged"
        assert (p4.status, p4.iterations, p4.inner_iterations) == (p1.status, p1.iterations, p1.inner_iterations)
        assert np.array_equal(a, b)
    with pytest.raises(clcone.InvalidInput, match="threads=257"):
        clcone.solve(parts, device=device, threads=257)
    with pytest.raises(ValueError, match="threads=1099511627776: an int from 1 to 256"):
        clcone.solve(parts, device=device, threads=2**40)
