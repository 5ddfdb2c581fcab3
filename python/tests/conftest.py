"""Where the tests find the Siconos problems and the CLI they compare
with: $CLCONE_PROBLEMS (else the repository's copy, tests/data/problems)
and $CLCONE_CLI (else build/clcone of the repository)."""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def problems_dir() -> Path:
    d = Path(os.environ.get("CLCONE_PROBLEMS", ROOT / "tests" / "data" / "problems"))
    assert d.is_dir(), f"{d}: the Siconos problems are missing (set CLCONE_PROBLEMS)"
    return d


@pytest.fixture(scope="session")
def cli() -> Path:
    p = Path(os.environ.get("CLCONE_CLI", ROOT / "build" / "clcone"))
    assert p.is_file(), f"{p}: build the CLI first (make)"
    return p


@pytest.fixture(scope="session")
def shared_problems() -> list:
    """The 23 problems, read from the C header that lists them once."""
    text = (ROOT / "host" / "cli" / "shared_problems.h").read_text()
    import re
    body = text[text.index("SHARED_PROBLEMS[] = {"):text.index("};")]
    names = re.findall(r'"([^"]+)"', body)
    assert len(names) == 23
    return names
