"""Builds the clcone package from the repository's own C sources.

The package is the C library plus a cffi binding in ABI mode: the build
runs the repository's `make build/libclcone.so build/libclcone_output.so`
(the one build of the libraries, with their flags and embedded kernels),
ships those shared libraries inside the package, and ships the public headers run through the C
preprocessor, which cffi reads as its declarations at import time. So no
declaration, version or source is written twice, and no Python headers
or compiler for Python extensions are needed. clcone.mujoco's library,
libclcone_mujoco, is built and shipped the same way (`make mujoco-lib`)
where MuJoCo can be had. See README.md.
"""
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BASE_H = ROOT / "include" / "clcone" / "base.h"


def repository_file(path):
    if not path.is_file():
        raise SystemExit(
            f"clcone: {path} not found: the package builds from a clone of the clcone "
            "repository (pip install ./python from its root), not from a copy of python/ alone")
    return path


def library_version():
    text = repository_file(BASE_H).read_text()
    m = re.search(r'^#define CLCONE_VERSION "([^"]+)"', text, re.M)
    if not m:
        raise SystemExit(f"clcone: no CLCONE_VERSION in {BASE_H}")
    return m.group(1)


def preprocessed(header, defines=()):
    """A public header as plain C declarations: the export macro and the
    system headers are left out (-undef: no __GNUC__, so CLCONE_API is
    empty; empty stddef.h and stdio.h: cffi knows size_t and FILE)."""
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory() as fake:
        for h in ("stddef.h", "stdio.h"):
            Path(fake, h).write_text("")
        return subprocess.run(
            [cc, "-E", "-P", "-undef", "-nostdinc", "-I", fake, *defines, str(repository_file(header))],
            check=True, capture_output=True, text=True).stdout


def preprocessed_api():
    """clcone.h's declarations and libclcone_output's (output.h includes clcone.h)."""
    return preprocessed(ROOT / "include" / "clcone" / "output.h")


def preprocessed_mujoco_api():
    """include/clcone/mujoco.h's own declarations (clcone.mujoco's): the
    headers it includes, which _api.h holds, left out by their include
    guards (base.h's export macro with them, so defined empty here)."""
    guards = sorted({m for h in ROOT.joinpath("include", "clcone").glob("*.h") if h.name != "mujoco.h"
                     for m in re.findall(r"^#define (CLCONE_API_\w+_H)$", h.read_text(), re.M)})
    return preprocessed(ROOT / "include" / "clcone" / "mujoco.h", ["-DCLCONE_API="] + [f"-D{g}" for g in guards])


def mujoco_pin():
    """The mujoco package of the MuJoCo the Makefile builds against (its
    MUJOCO_PIP, the wheel mujoco-core, which the mujoco package of the
    same version requires), for the mujoco extra."""
    m = re.search(r"^MUJOCO_PIP := mujoco-core==(\S+)$", repository_file(ROOT / "Makefile").read_text(), re.M)
    if not m:
        raise SystemExit(f"clcone: no MUJOCO_PIP := mujoco-core==VERSION in {ROOT / 'Makefile'}")
    return f"mujoco=={m.group(1)}"


class build_with_library(build_py):
    def run(self):
        super().run()
        version = library_version()
        make = os.environ.get("MAKE", "make")
        build = os.environ.get("CLCONE_BUILD", "build")  # the Makefile's BUILD
        subprocess.run([make, "-C", str(ROOT), f"BUILD={build}", f"{build}/libclcone.so", f"{build}/libclcone_output.so"],
                       check=True)
        dest = Path(self.build_lib) / "clcone"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / build / f"libclcone.so.{version}", dest / "libclcone.so")
        shutil.copyfile(ROOT / build / f"libclcone_output.so.{version}", dest / "libclcone_output.so")
        (dest / "_api.h").write_text(preprocessed_api())
        # clcone.mujoco where MuJoCo can be had (`make mujoco-lib`: its
        # wheel from PyPI); without it the package is whole but for
        # clcone.mujoco, whose import says why
        # MUJOCO_VENV as `make python-sanitize` passes it: the wheel already
        # installed for the other build, not installed again under this one
        venv = [f"MUJOCO_VENV={os.environ['MUJOCO_VENV']}"] if os.environ.get("MUJOCO_VENV") else []
        if subprocess.run([make, "-C", str(ROOT), f"BUILD={build}", *venv, "mujoco-lib"]).returncode == 0:
            shutil.copyfile(ROOT / build / "libclcone_mujoco.so", dest / "libclcone_mujoco.so")
            (dest / "_mujoco_api.h").write_text(preprocessed_mujoco_api())
        else:
            print("clcone: libclcone_mujoco not built (no MuJoCo, see above): clcone.mujoco left out")


class with_native_library(Distribution):
    """The package holds a native library: a platform wheel, installed
    where binaries go (platlib)."""

    def has_ext_modules(self):
        return True


class platform_wheel(bdist_wheel):
    """No Python extension, though: any Python 3 on this platform loads
    the library through cffi."""

    def get_tag(self):
        return ("py3", "none", super().get_tag()[2])


setup(version=library_version(), distclass=with_native_library,
      extras_require={"scipy": ["scipy"],
                      # what python/examples/ and the READMEs' Python examples import beside numpy
                      "examples": ["scipy", "matplotlib"],
                      "test": ["pytest", "scipy", "matplotlib"],
                      "mujoco": [mujoco_pin()]},
      cmdclass={"build_py": build_with_library, "bdist_wheel": platform_wheel})
