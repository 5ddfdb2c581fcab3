"""Writes the convex mesh models that stand in for a user's scene of about
800 elliptic mesh contacts (`clcone mujoco --model coulomb`), each settled
by MuJoCo's own mj_step and written with its settled poses:

rocks.xml: 144 convex mesh rocks (8 shapes, hulls of 14 random points on
a 5 cm sphere, radius scaled 0.8-1.2) settled for 1,500 steps of 2 ms in
a 0.8 m box, about 615 contacts. Its hard-contact problems have no
bounded solution (docs/measured.md): rocks wedged between the walls ask
for separations that no accelerations give them all.

heap.xml: 200 of the same rocks (seed 7) dropped 5 x 5 a layer on the
plane, no box, settled for 1,500 steps: about 770 contacts, up to four
a rock pair (MuJoCo's multi-point convex contacts), some a fraction of
a millimetre apart. Its problems are strictly feasible (docs/measured.md:
a velocity opens every contact with margin 0.12 over the inner 8-facet
pyramid), so a Coulomb answer exists.

bricks.xml: a running-bond wall of 115 mesh bricks (20 x 10 x 6 cm, 10
courses, 2 mm joints) on a plane, settled for 1,000 steps, multiccd face
contacts: 840. Lifting each course faster than the one below opens every
contact, so its problems are strictly feasible and have a Coulomb answer
(Acary, Cadoux, Lemarechal and Malick 2011).

All elliptic, condim 3 (MuJoCo's default friction, mu = 1): past the
dense Newton's 512 contacts.

Run with the mujoco package: build/pyvenv/bin/python bench/models/make_models.py
"""
import math
import os
import random
import re

import mujoco


def settle(name, xml, steps, what):
    """Steps xml's model, then writes it with each free body at its settled pose."""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    for _ in range(steps):
        mujoco.mj_step(model, data)
    count = iter(range(model.nbody - 1))

    def settled(_):
        q = data.qpos[7 * next(count):][:7]
        return (f'<body pos="{q[0]:.6f} {q[1]:.6f} {q[2]:.6f}" '
                f'quat="{q[3]:.6f} {q[4]:.6f} {q[5]:.6f} {q[6]:.6f}"><freejoint/>')

    head = (f"<!-- Written by bench/models/make_models.py: {what} settled\n"
            f"     by MuJoCo {mujoco.__version__}, {data.ncon} contacts, elliptic cones. -->\n")
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    with open(out, "w") as f:
        f.write(head + re.sub(r'<body pos="[^"]*"><freejoint/>', settled, xml))
    print(f"{out}: {data.ncon} contacts")


def rock_pile(name, seed, count, side, walls, what):
    """count convex mesh rocks dropped in layers of side x side, in a box
    (walls) or free on the plane, settled for 1,500 steps."""
    random.seed(seed)
    meshes, bodies = [], []
    for k in range(8):
        pts = []
        for _ in range(14):
            u, t = random.uniform(-1, 1), random.uniform(0, 2 * math.pi)
            r, s = math.sqrt(1 - u * u), random.uniform(0.8, 1.2)
            pts.append((0.05 * s * r * math.cos(t), 0.05 * s * r * math.sin(t), 0.05 * s * u))
        meshes.append(f'<mesh name="rock{k}" vertex="{" ".join("%.4f %.4f %.4f" % p for p in pts)}"/>')
    for n in range(count):
        layer, i, j = n // (side * side), n // side % side, n % side
        x = (i - (side - 1) / 2) * 0.11 + random.uniform(-0.01, 0.01)
        y = (j - (side - 1) / 2) * 0.11 + random.uniform(-0.01, 0.01)
        bodies.append(f'<body pos="{x:.3f} {y:.3f} {0.06 + layer * 0.11:.3f}"><freejoint/>'
                      f'<geom type="mesh" mesh="rock{n % 8}" density="2000"/></body>')
    box = "".join(f'<geom type="box" pos="{x} {y} 0.2" size="{sx} {sy} 0.2"/>'
                  for x, y, sx, sy in ((0, 0.4, 0.45, 0.02), (0, -0.4, 0.45, 0.02),
                                       (0.4, 0, 0.02, 0.45), (-0.4, 0, 0.02, 0.45))) if walls else ""
    xml = (f'<mujoco model="{name[:-4]}">\n  <option cone="elliptic" timestep="0.002"/>\n'
           f'  <asset>{"".join(meshes)}</asset>\n  <worldbody><geom type="plane" size="2 2 .1"/>{box}\n'
           f'  {"".join(bodies)}</worldbody>\n</mujoco>\n')
    settle(name, xml, 1500, what)


def bricks():
    half = (0.10, 0.05, 0.03)
    joint, courses, per = 0.002, 10, 12
    verts = " ".join(f"{sx * half[0]:.3f} {sy * half[1]:.3f} {sz * half[2]:.3f}"
                     for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1))
    bodies = []
    for k in range(courses):
        # every other course shifted by half a brick and one brick shorter: each brick rests on two
        shift, n = (0, per) if k % 2 == 0 else (half[0] + joint / 2, per - 1)
        for i in range(n):
            x = (i - (per - 1) / 2) * (2 * half[0] + joint) + shift
            bodies.append(f'<body pos="{x:.4f} 0 {half[2] + k * (2 * half[2] + 0.0005):.4f}"><freejoint/>'
                          f'<geom type="mesh" mesh="brick" density="1800"/></body>')
    xml = (f'<mujoco model="bricks">\n  <option cone="elliptic" timestep="0.002"><flag multiccd="enable"/></option>\n'
           f'  <asset><mesh name="brick" vertex="{verts}"/></asset>\n'
           f'  <worldbody><geom type="plane" size="3 3 .1"/>\n  {"".join(bodies)}</worldbody>\n</mujoco>\n')
    settle("bricks.xml", xml, 1000, f"a wall of {len(bodies)} mesh bricks")


rock_pile("rocks.xml", 3, 144, 6, True, "144 convex mesh rocks in a box")
rock_pile("heap.xml", 7, 200, 5, False, "a heap of 200 convex mesh rocks")
bricks()
