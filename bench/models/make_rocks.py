"""Writes rocks.xml: 144 convex mesh rocks (8 shapes, hulls of 14 random
points on a 5 cm sphere, radius scaled 0.8-1.2) settled by MuJoCo's own
mj_step for 1,500 steps of 2 ms into a 0.8 m box, elliptic cones of
condim 3 (MuJoCo's default friction). The settled state has about 615
mesh contacts: clcone's --model coulomb past the dense Newton's 512.

Run with the mujoco package: build/pyvenv/bin/python bench/models/make_rocks.py
"""
import math
import os
import random
import re

import mujoco

random.seed(3)
meshes, bodies = [], []
for k in range(8):
    pts = []
    for _ in range(14):
        u, t = random.uniform(-1, 1), random.uniform(0, 2 * math.pi)
        r, s = math.sqrt(1 - u * u), random.uniform(0.8, 1.2)
        pts.append((0.05 * s * r * math.cos(t), 0.05 * s * r * math.sin(t), 0.05 * s * u))
    meshes.append(f'<mesh name="rock{k}" vertex="{" ".join("%.4f %.4f %.4f" % p for p in pts)}"/>')
for n in range(144):
    layer, i, j = n // 36, n // 6 % 6, n % 6
    x = (i - 2.5) * 0.11 + random.uniform(-0.01, 0.01)
    y = (j - 2.5) * 0.11 + random.uniform(-0.01, 0.01)
    bodies.append(f'<body pos="{x:.3f} {y:.3f} {0.06 + layer * 0.11:.3f}"><freejoint/>'
                  f'<geom type="mesh" mesh="rock{n % 8}" density="2000"/></body>')
walls = "".join(f'<geom type="box" pos="{x} {y} 0.2" size="{sx} {sy} 0.2"/>'
                for x, y, sx, sy in ((0, 0.4, 0.45, 0.02), (0, -0.4, 0.45, 0.02),
                                     (0.4, 0, 0.02, 0.45), (-0.4, 0, 0.02, 0.45)))
xml = (f'<mujoco model="rocks">\n  <option cone="elliptic" timestep="0.002"/>\n'
       f'  <asset>{"".join(meshes)}</asset>\n  <worldbody><geom type="plane" size="2 2 .1"/>{walls}\n'
       f'  {"".join(bodies)}</worldbody>\n</mujoco>\n')
model = mujoco.MjModel.from_xml_string(xml)
data = mujoco.MjData(model)
for _ in range(1500):
    mujoco.mj_step(model, data)
count = iter(range(144))


def settled(_):
    q = data.qpos[7 * next(count):][:7]
    return (f'<body pos="{q[0]:.6f} {q[1]:.6f} {q[2]:.6f}" '
            f'quat="{q[3]:.6f} {q[4]:.6f} {q[5]:.6f} {q[6]:.6f}"><freejoint/>')


head = ("<!-- Written by bench/models/make_rocks.py: 144 convex mesh rocks settled\n"
        f"     in a box by MuJoCo {mujoco.__version__}, {data.ncon} contacts, elliptic cones. -->\n")
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rocks.xml")
with open(out, "w") as f:
    f.write(head + re.sub(r'<body pos="[^"]*"><freejoint/>', settled, xml))
print(f"{out}: {data.ncon} contacts")
