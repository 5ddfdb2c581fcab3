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


def test_readme_examples_run(tmp_path):
    """The code of python/README.md, as written (run from the repository
    root, where its ../shared path points)."""
    import re
    readme = (EXAMPLE.parents[1] / "README.md").read_text()
    code = "\n".join(re.findall(r"```python\n(.*?)```", readme, re.S))
    assert "clcone.solve" in code
    pytest.importorskip("scipy")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         cwd=EXAMPLE.parents[2])
    assert run.returncode == 0, run.stdout + run.stderr
