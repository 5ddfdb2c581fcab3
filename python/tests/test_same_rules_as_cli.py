"""Python accepts and refuses what the CLI does: which options apply to a
model and which parameters to a generator is the library's one rule
(clcone_options_check_given, clcone_gen_check_given), and the messages
are the same but for the CLI's spelling of the name (--soft-dt for
soft_dt). Also: read_reactions judges a file's size before it allocates."""
import shlex
import subprocess
import tracemalloc

import numpy as np
import pytest

import clcone
from test_problems import three_contacts


def run_cli(cli, args):
    p = subprocess.run([str(cli)] + args, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stderr


def as_flag(msg):
    """The library's message as the CLI prints it: the name as its flag."""
    name, rest = msg.split(" ", 1)
    return "--" + name.replace("_", "-") + " " + rest


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("rules")
    three_contacts().write(d / "p.dat")
    clcone.generate("stack", n=2).write(d / "s.scene")
    clcone.write_reactions(d / "r.txt", np.zeros((3, 3)))
    return d


# (what Python is given, what the CLI is given, the start of the message)
REFUSED = [
    (dict(facets=8), "solve {p} --facets 8", "facets does not apply: only the pyramid model"),
    (dict(fit="inner"), "solve {p} --fit inner", "fit does not apply"),
    (dict(model="ccp", soft_impedance=0.5), "solve {p} --model ccp --soft-impedance 0.5",
     "soft_impedance does not apply: only for model soft"),
    (dict(sap_beta=2.0), "solve {p} --sap-beta 2", "sap_beta does not apply"),
    (dict(tol=0.0), "solve {p} --tol 0", "tol needs a number > 0"),
    (dict(scene=True, model="soft", soft_dt=0.01), "solve {s} --model soft --soft-dt 0.01",
     "soft_dt does not apply: a scene's soft model steps with the scene's dt"),
    (dict(scene=True, model="sap", check_every=2), "solve {s} --model sap --check-every 2",
     "check_every does not apply"),
]


@pytest.mark.parametrize("kw,cli_args,msg", REFUSED, ids=[c[2].split(" ")[0] for c in REFUSED])
def test_solve_refuses_what_the_cli_refuses(files, cli, kw, cli_args, msg):
    kw = dict(kw)
    what = clcone.read(files / "s.scene") if kw.pop("scene", False) else three_contacts()
    with pytest.raises(clcone.InvalidInput) as e:
        clcone.solve(what, device="ref", **kw)
    assert str(e.value).startswith(msg)
    rc, err = run_cli(cli, shlex.split(cli_args.format(p=files / "p.dat", s=files / "s.scene")) + ["--device", "ref"])
    assert rc == 2 and as_flag(msg) in err, err


def test_the_solver_table_judges_sap_as_every_model(files, cli):
    s = clcone.read(files / "s.scene")
    msg = "solver jacobi is not available for model sap on a scene (body form)"
    with pytest.raises(clcone.NotSupported) as e:
        clcone.solve(s, device="ref", model="sap", solver="jacobi")
    assert str(e.value).startswith(msg) and "newton (default)" in str(e.value)
    rc, err = run_cli(cli, ["solve", str(files / "s.scene"), "--device", "ref", "--model", "sap", "--solver", "jacobi"])
    assert rc == 2 and msg in err, err
    _, res = clcone.solve(s, device="ref", model="sap", solver="newton")
    assert res.converged
    assert any(o.forms == ("body",) and o.model == "sap" and o.solver == "newton" for o in clcone.solvers())


def test_what_applies_is_accepted_by_both(files, cli):
    p = three_contacts()
    _, res = clcone.solve(p, device="ref", model="pyramid", facets=6, fit="inner", tol=1e-8)
    assert res.converged
    rc, err = run_cli(cli, ["solve", str(files / "p.dat"), "--device", "ref", "--model", "pyramid", "--facets", "6",
                            "--fit", "inner", "--tol", "1e-8"])
    assert rc == 0, err
    s = clcone.read(files / "s.scene")
    clcone.solve(s, device="ref", model="soft", soft_impedance=0.8)
    assert run_cli(cli, ["solve", str(files / "s.scene"), "--device", "ref", "--model", "soft",
                         "--soft-impedance", "0.8"])[0] in (0, 1)


def test_check_refuses_facets_of_coulomb_as_the_cli(files, cli):
    p = three_contacts()
    with pytest.raises(clcone.InvalidInput, match="facets does not apply"):
        p.error(np.zeros((3, 3)), model="coulomb", facets=8)
    rc, err = run_cli(cli, ["check", str(files / "p.dat"), str(files / "r.txt"), "--facets", "8"])
    assert rc == 2 and "--facets does not apply" in err, err


def test_simulate_refuses_soft_dt_as_the_cli(files, cli):
    with pytest.raises(clcone.InvalidInput, match="soft_dt does not apply"):
        clcone.Simulation(clcone.generate("stack", n=2), device="ref", model="soft", soft_dt=0.01)
    rc, err = run_cli(cli, ["simulate", str(files / "s.scene"), "--steps", "1", "--device", "ref", "--model", "soft",
                            "--soft-dt", "0.01"])
    assert rc == 2 and "--soft-dt does not apply" in err, err


GEN_REFUSED = [
    (("stack",), dict(n=3, seed=7), "stack --n 3 --seed 7", "seed does not apply: only pile uses it, not stack"),
    (("grid",), dict(n=2, spread=0.2), "grid --n 2 --spread 0.2", "spread does not apply"),
    (("pile",), dict(n=5, theta=0.2), "pile --n 5 --theta 0.2", "theta does not apply: only incline uses it"),
    (("incline",), dict(n=3), "incline --n 3", "n does not apply: only pile, stack, wall, grid use it"),
    (("pile",), dict(seed=3), "pile --seed 3", "n (the size) is needed for pile"),
]


@pytest.mark.parametrize("args,kw,cli_args,msg", GEN_REFUSED, ids=[c[2] for c in GEN_REFUSED])
def test_generate_refuses_what_gen_refuses(tmp_path, cli, args, kw, cli_args, msg):
    with pytest.raises(clcone.InvalidInput) as e:
        clcone.generate(*args, **kw)
    assert str(e.value).startswith(msg)
    rc, err = run_cli(cli, ["gen"] + cli_args.split() + ["-o", str(tmp_path / "x.scene")])
    assert rc == 2 and as_flag(str(e.value)) in err, err
    assert not (tmp_path / "x.scene").exists()


def test_generate_accepts_what_gen_accepts(tmp_path, cli):
    for name, kw, cli_args in (("pile", dict(n=5, seed=2, spread=0.2), "--n 5 --seed 2 --spread 0.2"),
                               ("incline", dict(theta=0.2), "--theta 0.2"), ("wall", dict(n=3), "--n 3")):
        s = clcone.generate(name, **kw)
        out = tmp_path / f"{name}.scene"
        rc, err = run_cli(cli, ["gen", name] + cli_args.split() + ["-o", str(out)])
        assert rc == 0, err
        back = clcone.read(out)
        assert np.array_equal(back.positions, s.positions) and back.ncontacts == s.ncontacts


def test_read_reactions_judges_the_file_size_before_allocating(tmp_path):
    f = tmp_path / "r.txt"
    f.write_text("1 2 3\n4 5 6\n")  # 12 bytes: 6 numbers at most
    assert clcone.read_reactions(f, 2).tolist() == [[1, 2, 3], [4, 5, 6]]
    tracemalloc.start()
    try:
        with pytest.raises(clcone.FormatError, match="12 bytes hold at most 6 numbers, not the 300000000"):
            clcone.read_reactions(f, 10**8)  # 2.4 GB of reactions
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"{peak} bytes allocated"
    with pytest.raises(clcone.FormatError):
        clcone.read_reactions(f, 3)
    with pytest.raises(ValueError, match="must be in"):
        clcone.read_reactions(f, 2**31)
    with pytest.raises(ValueError, match="must be in"):
        clcone.read_reactions(f, -1)
    with pytest.raises(TypeError):
        clcone.read_reactions(f, 2.0)
    with pytest.raises(clcone.FileError):
        clcone.read_reactions(tmp_path / "none.txt", 2)
