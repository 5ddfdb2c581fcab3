# %% [markdown]
# # A pile of spheres, on the device and on the reference
#
# Generates a pile, solves its contact problem (ccp model, ACGS) on the
# default OpenCL device and on the CPU reference, plots both convergence
# histories and the distribution of the normal contact forces with
# matplotlib, and draws the pile coloured by force with clcone's own
# renderer. Run it as a script (`python pile.py [N] [OUTDIR]`) or cell by
# cell in an editor that knows `# %%` cells.

# %%
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files, no window
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import clcone  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
out = Path(sys.argv[2] if len(sys.argv) > 2 else ".")
out.mkdir(parents=True, exist_ok=True)

# %% The pile: about n spheres in a box, at rest with their contacts
pile = clcone.generate("pile", n=n, seed=1)
print(pile)

# %% The same solve on the device (float) and on the reference (double)
opts = dict(model="ccp", solver="acgs", tol=1e-4, max_iter=5000, history=True)
r_dev, dev = clcone.solve(pile, device=None, **opts)
r_ref, ref = clcone.solve(pile, device="ref", **opts)
diff = np.abs(r_dev - r_ref).max()
print(f"{'':10} {'status':>10} {'iters':>7} {'error':>10} {'time ms':>9}")
for name, res in (("device", dev), ("reference", ref)):
    print(f"{name:10} {res.status:>10} {res.iterations:7d} {res.error:10.3e} {res.time_ms:9.1f}")
print(f"largest reaction difference {diff:.3e} of a largest reaction {np.abs(r_ref).max():.3e}")

# %% Convergence: the error at every check, against iterations and time
fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
for name, res in (("device", dev), ("reference", ref)):
    a.semilogy(res.history.iter, res.history.error, label=name)
    b.loglog(res.history.time_ms, res.history.error, label=name)
for ax, xl in ((a, "iteration"), (b, "time (ms)")):
    ax.axhline(opts["tol"], ls="--", c="grey", label="tol")
    ax.set_xlabel(xl)
    ax.set_ylabel("error")
    ax.legend()
fig.suptitle(f"pile of {pile.nbodies} spheres, {pile.ncontacts} contacts, ccp/acgs")
fig.tight_layout()
fig.savefig(out / "pile-convergence.png", dpi=100)

# %% The distribution of the normal contact forces (r_n / dt)
fn = r_ref[:, 0] / pile.dt
fig, ax = plt.subplots(figsize=(6, 4))
ax.hist(fn[fn > 0], bins=50, alpha=0.6, label="reference")
ax.hist(r_dev[:, 0][r_dev[:, 0] > 0] / pile.dt, bins=50, alpha=0.6, label="device")
ax.set_xlabel("normal force (N)")
ax.set_ylabel("contacts")
ax.set_yscale("log")
ax.legend()
fig.tight_layout()
fig.savefig(out / "pile-forces.png", dpi=100)

# %% The pile coloured by the force on each body (clcone's renderer)
pile.render_png(out / "pile.png", r_dev, size=(800, 600), title=f"pile, {pile.ncontacts} contacts")
print("wrote", *(str(out / f) for f in ("pile-convergence.png", "pile-forces.png", "pile.png")))
sys.exit(0 if dev.converged and ref.converged else 1)
