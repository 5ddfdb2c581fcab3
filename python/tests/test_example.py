"""The examples run as written: python/examples/pile.py, the code of
python/README.md and the first Python block of the repository's README.md.
They need the `examples` extra (`pip install ./python[examples]`: scipy,
matplotlib), which `make python-test` installs; without it they fail,
naming it, rather than skip."""
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "pile.py"
ROOT = EXAMPLE.parents[2]


def need_examples_extra():
    missing = [m for m in ("scipy", "matplotlib") if importlib.util.find_spec(m) is None]
    assert not missing, f"{missing} missing: pip install ./python[examples]"


def run_code(code):
    """Runs code as a script from the repository root, where the
    examples' tests/data paths point."""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_pile_example_runs(tmp_path):
    need_examples_extra()
    run = subprocess.run([sys.executable, str(EXAMPLE), "300", str(tmp_path)], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "largest reaction difference" in run.stdout
    for f in ("pile-convergence.png", "pile-forces.png", "pile.png"):
        assert (tmp_path / f).read_bytes()[:4] == b"\x89PNG", f


def test_python_readme_examples_run():
    """The code of python/README.md, every Python block, as written."""
    need_examples_extra()
    readme = (EXAMPLE.parents[1] / "README.md").read_text()
    code = "\n".join(re.findall(r"```python\n(.*?)```", readme, re.S))
    assert "clcone.solve" in code
    run_code(code)


def test_readme_first_python_block_runs():
    """README.md's convention: its first ```python block is a complete
    script needing only the package and its `examples` extra."""
    need_examples_extra()
    blocks = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)
    assert blocks, "README.md has no ```python block"
    assert "import clcone" in blocks[0], blocks[0]
    assert run_code(blocks[0]).strip(), "README.md's Python example printed nothing"
