"""Long solves release the GIL, stop early on a cancel flag set from
another thread, and on Ctrl-C (SIGINT) raise KeyboardInterrupt after the
library stopped with reason "cancelled"."""
import os
import signal
import threading
import time

import pytest

import clcone

# A solve that runs far longer than the tests wait (a tolerance no solver
# reaches), capped at 120 s so that a broken cancel fails rather than hangs.
LONG = dict(model="ccp", tol=1e-300, max_seconds=120)


@pytest.fixture(scope="module")
def pile():
    return clcone.generate("pile", n=300, seed=5)


@pytest.mark.parametrize("device", ["ref", "cpu"])
def test_cancel_from_another_thread_stops_the_solve(pile, device):
    cancel = clcone.Cancel()
    ticks = []
    stop = threading.Event()

    def other():
        # runs while the solve holds no GIL; then cancels it
        while not stop.is_set() and len(ticks) < 1000:
            ticks.append(1)
            time.sleep(0.001)
        cancel.set()

    t = threading.Thread(target=other)
    start = time.monotonic()
    t.start()
    try:
        _, res = clcone.solve(pile, device=device, cancel=cancel, **LONG)
    finally:
        stop.set()
        t.join()
    assert res.status == "maxiter" and res.reason == "cancelled"
    assert time.monotonic() - start < 60
    assert len(ticks) >= 100, "the other thread did not run during the solve"
    assert cancel.is_set
    cancel.clear()
    assert not cancel.is_set


# A process started with SIGINT ignored (a background job of a
# non-interactive shell) never sees Ctrl-C: Python keeps the signal
# ignored, so there is nothing to test there.
needs_sigint = pytest.mark.skipif(signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
                                  reason="SIGINT is ignored in this process (started in the background)")


@needs_sigint
def test_ctrl_c_interrupts_a_solve_and_the_plan_stays_usable(pile):
    plan = clcone.Plan(pile, device="cpu", **LONG)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        plan.solve()
    assert time.monotonic() - start < 60
    timer.cancel()
    # the plan's own flag is down again: a short solve runs to its cap
    plan2 = clcone.Plan(pile, device="cpu", model="ccp", max_iter=5, tol=1e-300)
    _, res = plan2.solve()
    assert res.iterations == 5 and res.reason == "iteration cap 5 reached"


@needs_sigint
def test_ctrl_c_interrupts_a_simulation():
    s = clcone.generate("pile", n=200, seed=1)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    start = time.monotonic()
    # three steps of at most 30 s: a cancel that does not work fails
    # within 90 s instead of stepping on
    with pytest.raises(KeyboardInterrupt):
        clcone.simulate(s, 3, device="ref", model="ccp", tol=1e-300, max_iter=10**6, max_seconds=30)
    assert time.monotonic() - start < 20


def test_cancel_set_during_simulate_ends_the_run():
    # a solve long enough (10**6 iterations, tens of seconds) that the flag
    # is set while one runs, not in the milliseconds between two (the run
    # then ends after that step too, but its solve finished: with 1,000
    # iterations a step, a loaded machine put the flag there once); the
    # run ends at that step instead of running the rest on a set flag
    s = clcone.generate("pile", n=200, seed=1)
    cancel = clcone.Cancel()
    timer = threading.Timer(0.3, cancel.set)
    timer.start()
    try:
        steps = clcone.simulate(s, 100000, device="ref", model="ccp", tol=1e-300, max_iter=10**6, max_seconds=60,
                                cancel=cancel)
    finally:
        timer.cancel()
    assert cancel.is_set
    assert 1 <= len(steps) < 100000
    assert steps[-1].solve.status == "maxiter" and steps[-1].solve.reason == "cancelled"
    assert all(st.solve.reason != "cancelled" for st in steps[:-1])
