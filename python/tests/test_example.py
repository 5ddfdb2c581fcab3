"""The notebook-style example runs and writes its pictures."""
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "pile.py"


def test_pile_example_runs(tmp_path):
    pytest.importorskip("matplotlib")
    run = subprocess.run([sys.executable, str(EXAMPLE), "300", str(tmp_path)], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "largest reaction difference" in run.stdout
    for f in ("pile-convergence.png", "pile-forces.png", "pile.png"):
        assert (tmp_path / f).read_bytes()[:4] == b"\x89PNG", f
