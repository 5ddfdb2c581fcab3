"""Overhead of the Python package: the same plan solve of a 3-contact
problem in a loop from C (overhead.c, linked to the same libclcone) and
from Python, microseconds per call, median of runs, on the reference and
on the default device. Run from the repository root after `make`:

    build/pyvenv/bin/python python/bench/overhead.py [CALLS] [RUNS]
"""
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import clcone

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "tests"))
from test_problems import three_contacts  # noqa: E402


def python_us(plan, calls, runs):
    per = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(calls):
            plan.solve()
        per.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(per)


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory() as d:
        exe, dat = Path(d) / "overhead", Path(d) / "three.dat"
        subprocess.run(["cc", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", str(ROOT / "python/bench/overhead.c"), "-I",
                        str(ROOT / "include"), "-L", str(ROOT / "build"), "-lclcone",
                        f"-Wl,-rpath,{ROOT / 'build'}", "-o", str(exe)], check=True)
        p = three_contacts()
        p.write(dat)
        print(f"3-contact coulomb plan solve, us per call (median of {runs} runs of {calls} calls)")
        for dev in ("ref", "cpu"):
            n = calls if dev == "ref" else max(calls // 10, 1)
            c_us = float(subprocess.run([str(exe), str(dat), dev, str(n), str(runs)], check=True,
                                        capture_output=True, text=True).stdout)
            plan = clcone.Plan(p, device=dev)
            r, res = plan.solve()
            assert res.converged and np.all(np.isfinite(r))
            py_us = python_us(plan, n, runs)
            print(f"{dev:4} iterations {res.iterations:3d}  C {c_us:8.2f}  Python {py_us:8.2f}  "
                  f"ratio {py_us / c_us:5.2f}")


if __name__ == "__main__":
    main()
