#!/usr/bin/env python3
"""Reference partial derivatives of the elliptic integrals at the ends of their domains.

The points are where DLMF 19.4's closed forms of the derivatives cancel or divide 0 by 0: the
modulus k at 0, near 0 and near 1, the characteristic nu at 0, near 0 (both sides), on and near
k^2, and below -1, where nabla moves the characteristic; and ordinary points for comparison.
Each partial d^(o1 + o2 + o3) f / dx1^o1 dx2^o2 dx3^o3 is computed by mpmath at 40 digits by
central differences (mpmath.diff) with a step far inside the distance to the nearest singularity
(1e-20 of the radius given with each point), at the high working precision mpmath takes
for them, checked against half the step, and rounded to a double. Each line of elliptic.txt is

    name nvar x1 .. x_nvar o1 .. o_nvar value cond

cond is the condition number of the partial, sum_i |x_i d(partial)/dx_i| / |partial| (0 where
the partial is 0), for the tolerance of the test: a few units in the last place times cond.

Rerun from the repository root:  /usr/bin/python3 tests/data/generate_elliptic.py
"""

import os

import mpmath

mp = mpmath.mp
mp.dps = 40


def K(k):
    return mpmath.ellipk(k * k)


def E(k):
    return mpmath.ellipe(k * k)


def F(k, phi):
    return mpmath.ellipf(phi, k * k)


def Ephi(k, phi):
    return mpmath.ellipe(phi, k * k)


def Pi(k, nu):
    return mpmath.ellippi(nu, k * k)


def Piphi(k, nu, phi):
    return mpmath.ellippi(nu, phi, k * k)


FUNCTIONS = {"comp_ellint_1": K, "comp_ellint_2": E, "ellint_1": F, "ellint_2": Ephi,
             "comp_ellint_3": Pi, "ellint_3": Piphi}


def partial(f, x, orders, step):
    """d^orders f at x by mpmath's finite differences of step `step` in every variable, at the
    working precision mpmath raises to make the differences exact to 40 digits."""
    if not any(orders):
        return f(*x)
    return mpmath.diff(f, tuple(x), tuple(orders), h=step)


def reference(f, x, orders, radii):
    """The partial with a step 1e-20 of the smallest distance to a singularity, checked
    against half that step (the error of the central differences is O(step^2))."""
    x = [mpmath.mpf(v) for v in x]
    step = mpmath.mpf(min(radii)) * mpmath.mpf(10) ** -20
    a = partial(f, x, orders, step)
    b = partial(f, x, orders, step / 2)
    # (A partial that vanishes, an odd one at k = 0, comes out as noise far below 1e-30.)
    if abs(a) < mpmath.mpf(10) ** -30 and abs(b) < mpmath.mpf(10) ** -30:
        return mpmath.mpf(0)
    if abs(a - b) > mpmath.mpf(10) ** -25 * abs(a):
        raise RuntimeError(f"no agreement at {x} {orders}: {a} {b}")
    return mpmath.re(a)


def condition(f, x, orders, radii, value):
    if value == 0:
        return 0.0
    total = mpmath.mpf(0)
    for i in range(len(x)):
        if x[i] == 0:
            continue
        raised = list(orders)
        raised[i] += 1
        total += abs(mpmath.mpf(x[i]) * reference(f, x, raised, radii))
    return float(total / abs(value))


# name: list of (point, radii, list of orders)
S = 2.0 ** -14
NEAR_ONE = 1 - 2.0 ** -20
ONE_D = [(n,) for n in range(0, 9)]
TWO_D = [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (3, 0), (2, 1), (1, 2), (0, 3), (4, 0),
         (6, 0)]
THREE_D = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (2, 0, 0), (1, 1, 0), (1, 0, 1),
           (0, 2, 0), (0, 1, 1), (0, 0, 2), (3, 0, 0), (0, 3, 0), (1, 1, 1)]
POINTS = {
    "comp_ellint_1": [((0.0,), [0.25], ONE_D), ((S,), [0.25], ONE_D), ((-S,), [0.25], ONE_D),
                      ((0.5,), [0.2], ONE_D), ((NEAR_ONE,), [2.0 ** -22], ONE_D[:6])],
    "comp_ellint_2": [((0.0,), [0.25], ONE_D), ((S,), [0.25], ONE_D), ((0.5,), [0.2], ONE_D),
                      ((NEAR_ONE,), [2.0 ** -22], ONE_D[:6])],
    "ellint_1": [((0.0, 1.0), [0.25, 0.2], TWO_D), ((S, 1.0), [0.25, 0.2], TWO_D),
                 ((NEAR_ONE, 1.5), [2.0 ** -22, 0.01], TWO_D[:10]),
                 ((1.0, 0.7), [0.1, 0.1], TWO_D[:10]), ((0.5, 4.0), [0.2, 0.2], TWO_D),
                 ((0.5, 1.5707963267948966), [0.2, 0.2], TWO_D)],
    "ellint_2": [((0.0, 1.0), [0.25, 0.2], TWO_D), ((S, 1.0), [0.25, 0.2], TWO_D),
                 ((NEAR_ONE, 1.5), [2.0 ** -22, 0.01], TWO_D[:10]),
                 ((0.5, 4.0), [0.2, 0.2], TWO_D)],
    "comp_ellint_3": [((0.5, 2.0 ** -30), [0.2, 0.2], TWO_D), ((0.5, 0.0), [0.2, 0.2], TWO_D),
                      ((0.5, -(2.0 ** -30)), [0.2, 0.2], TWO_D),
                      ((0.5, 0.25), [0.2, 0.2], TWO_D),
                      ((0.5, 0.25 + 2.0 ** -20), [0.2, 0.2], TWO_D),
                      ((0.0, 0.3), [0.2, 0.2], TWO_D), ((S, 0.3), [0.2, 0.2], TWO_D),
                      ((0.5, -3.0), [0.2, 0.5], TWO_D), ((0.5, -0.7), [0.2, 0.2], TWO_D),
                      ((NEAR_ONE, 0.3), [2.0 ** -22, 0.2], TWO_D[:6])],
    "ellint_3": [((0.5, 2.0 ** -30, 1.2), [0.2, 0.2, 0.1], THREE_D),
                 ((0.5, 0.25 + 2.0 ** -20, 1.2), [0.2, 0.2, 0.1], THREE_D),
                 ((0.0, 0.3, 1.2), [0.2, 0.2, 0.1], THREE_D),
                 ((S, 0.3, 1.2), [0.2, 0.2, 0.1], THREE_D),
                 ((0.5, -3.0, 1.2), [0.2, 0.5, 0.1], THREE_D),
                 ((0.5, -(2.0 ** -30), 1.2), [0.2, 0.2, 0.1], THREE_D),
                 ((0.5, 0.3, 4.0), [0.2, 0.2, 0.1], THREE_D)],
}


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "elliptic.txt")
    lines = [
        "# elliptic.txt -- partial derivatives of the elliptic integrals at the ends of their",
        "# domains. GENERATED by tests/data/generate_elliptic.py with mpmath "
        + mpmath.__version__ + " (mp.dps = 40); do not edit by hand.",
        "# name nvar x1 .. x_nvar o1 .. o_nvar value cond",
    ]
    for name, points in POINTS.items():
        f = FUNCTIONS[name]
        for x, radii, all_orders in points:
            print(name, x, flush=True)
            for orders in all_orders:
                value = reference(f, x, orders, radii)
                cond = condition(f, x, orders, radii, value)
                fields = [name, str(len(x))] + [repr(v) for v in x] + [str(o) for o in orders]
                fields += [repr(float(value)), "%.3g" % cond]
                lines.append(" ".join(fields))
    with open(out, "w") as handle:
        handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
