"""Partial derivatives by mpmath's central differences, for the generators of reference data.

A partial d^(o1 + ... + on) f / dx1^o1 ... dxn^on at x is mpmath.diff with a step of 1e-20 of
the distance to the nearest singularity (the radius given), at the working precision mpmath
raises to make the differences exact, checked against half the step (the error of the central
differences is O(step^2)), at 40 digits.
"""

import mpmath


def partial(g, x, orders, radius):
    x = [mpmath.mpf(v) for v in x]
    step = mpmath.mpf(radius) * mpmath.mpf(10) ** -20

    def at(h):
        if not any(orders):
            return g(*x)
        return mpmath.diff(g, tuple(x), tuple(orders), h=h)

    a, b = at(step), at(step / 2)
    # (A partial that vanishes, an odd one at a centre of symmetry, comes out as noise.)
    if abs(a) < mpmath.mpf(10) ** -30 and abs(b) < mpmath.mpf(10) ** -30:
        return mpmath.mpf(0)
    if abs(a - b) > mpmath.mpf(10) ** -25 * abs(a):
        raise RuntimeError(f"no agreement at {x} {orders}: {a} {b}")
    return mpmath.re(a)


def condition(g, x, orders, radius, value):
    """sum_i |x_i d(partial)/dx_i| / |partial|, 0 where the partial is 0."""
    if value == 0:
        return 0.0
    total = mpmath.mpf(0)
    for i in range(len(x)):
        if x[i] == 0:
            continue
        raised = list(orders)
        raised[i] += 1
        total += abs(mpmath.mpf(x[i]) * partial(g, x, raised, radius))
    return float(total / abs(value))
