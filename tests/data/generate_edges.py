#!/usr/bin/env python3
"""Reference derivatives of nabla's special functions at the ends of their domains.

For each special function (besides the elliptic integrals: generate_elliptic.py), the points
where an implementation is most likely to lose digits: small arguments, large arguments, near
poles, zeros and branch points, and the places where nabla switches algorithms. Each partial
derivative (of order 0..8 along one operand; mixed ones of order 2 for the functions of two
operands) is computed by mpmath at 40 digits by central differences (differences.py) and
rounded to a double. Each line of edges.txt is

    name npar p1 .. p_npar nvar x1 .. x_nvar o1 .. o_nvar value cond

with the function's constant parameters p (an order, a degree) and the condition number cond of
the partial, sum_i |x_i d(partial)/dx_i| / |partial| (0 where the partial is 0), for the test's
tolerance: a few units in the last place times cond.

Rerun from the repository root:  /usr/bin/python3 tests/data/generate_edges.py
"""

import os

import mpmath

from differences import condition, partial

mp = mpmath.mp
mp.dps = 40


def lambert(branch):
    return lambda p, x: mpmath.re(mpmath.lambertw(x, branch))


def spherical(kind):
    def f(p, x):
        n = int(p[0])
        j = mpmath.sqrt(mpmath.pi / (2 * x)) * mpmath.besselj(n + mpmath.mpf(1) / 2, x)
        y = mpmath.sqrt(mpmath.pi / (2 * x)) * mpmath.bessely(n + mpmath.mpf(1) / 2, x)
        return j if kind == "j" else y
    return f


def gegenbauer(p, x):
    return mpmath.gegenbauer(int(p[0]), p[1], x)


def legendre(p, x):
    return mpmath.legendre(int(p[0]), x)


FUNCTIONS = {
    "sin_pi": lambda p, x: mpmath.sinpi(x),
    "cos_pi": lambda p, x: mpmath.cospi(x),
    "sqrt1pm1": lambda p, x: mpmath.sqrt(1 + x) - 1,
    "expint": lambda p, x: mpmath.ei(x),
    "lambert_w0": lambert(0),
    "lambert_wm1": lambert(-1),
    "sinc": lambda p, x: mpmath.sinc(x),
    "riemann_zeta": lambda p, x: mpmath.zeta(x),
    "zeta_derivative": lambda p, x: mpmath.zeta(x, 1, int(p[0])),
    "tgamma": lambda p, x: mpmath.gamma(x),
    "lgamma": lambda p, x: mpmath.log(abs(mpmath.gamma(x))),
    "digamma": lambda p, x: mpmath.digamma(x),
    "polygamma": lambda p, x: mpmath.polygamma(int(p[0]), x),
    "erf": lambda p, x: mpmath.erf(x),
    "erfc": lambda p, x: mpmath.erfc(x),
    "hermite": lambda p, x: mpmath.hermite(int(p[0]), x),
    "sph_bessel": spherical("j"),
    "sph_neumann": spherical("y"),
    "cyl_bessel_j": lambda p, x: mpmath.besselj(p[0], x),
    "cyl_neumann": lambda p, x: mpmath.bessely(p[0], x),
    "cyl_bessel_i": lambda p, x: mpmath.besseli(p[0], x),
    "cyl_bessel_k": lambda p, x: mpmath.besselk(p[0], x),
    "gegenbauer": gegenbauer,
    "assoc_laguerre": lambda p, x: mpmath.laguerre(int(p[0]), p[1], x),
    "legendre": legendre,
    "beta": lambda p, a, b: mpmath.beta(a, b),
    "powm1": lambda p, x, y: mpmath.power(x, y) - 1,
}

# The cylindrical Bessel functions' derivatives from DLMF 10.6.7 and 10.29.5, exact and fast
# where mpmath's integer orders at the precision of the differences are slow:
#   d^n C_v = 2^-n sum_j (-1)^j binomial(n, j) C_(v-n+2j)   (C = J, Y),
#   d^n I_v = 2^-n sum_j binomial(n, j) I_(v-n+2j),  d^n K_v = (-2)^-n sum_j binomial(n, j) K_(...).
BESSEL = {"cyl_bessel_j": (mpmath.besselj, -1, 1), "cyl_neumann": (mpmath.bessely, -1, 1),
          "cyl_bessel_i": (mpmath.besseli, 1, 1), "cyl_bessel_k": (mpmath.besselk, 1, -1)}


def bessel_derivative(name, v, x, n):
    f, sign, overall = BESSEL[name]
    v, x = mpmath.mpf(v), mpmath.mpf(x)
    total = sum(mpmath.binomial(n, j) * mpmath.mpf(sign) ** j * f(v - n + 2 * j, x)
                for j in range(n + 1))
    return total * (mpmath.mpf(overall) / 2) ** n


ONE_D = [(n,) for n in range(0, 9)]
TWO_D = [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (4, 0), (0, 4)]

# name: list of (parameters, point, distance to the nearest singularity, orders)
E = 0.36787944117144233  # 1/e, rounded


def points(name, params, xs, radius, orders=ONE_D):
    return [(params, (x,) if not isinstance(x, tuple) else x, radius, orders) for x in xs]


POINTS = {
    "sin_pi": points("sin_pi", (), [1e-8, 0.5, 3.0, 1e10 + 0.5, -7.125], 0.1),
    "cos_pi": points("cos_pi", (), [1e-8, 0.5, 3.0, 1e10 + 0.5, -7.125], 0.1),
    "sqrt1pm1": points("sqrt1pm1", (), [1e-10, -1e-8, 1e10], 0.5)
    + points("sqrt1pm1", (), [-0.999], 1e-4),
    "expint": points("expint", (), [1e-8], 1e-9)
    + points("expint", (), [0.37250741078136663, 50.0, 700.0, -30.0], 0.1),
    "lambert_w0": points("lambert_w0", (), [-0.3678], 1e-5)
    + points("lambert_w0", (), [1e-8, -1e-8, 1e100, 2.5], 1e-9),
    "lambert_wm1": points("lambert_wm1", (), [-0.3678], 1e-5)
    + points("lambert_wm1", (), [-1e-5], 1e-6) + points("lambert_wm1", (), [-1e-100], 1e-101),
    "sinc": points("sinc", (), [0.0, 1e-9, 1e-3, 100.5], 0.5),
    "riemann_zeta": points("riemann_zeta", (), [1 + 2.0 ** -30, 1 - 2.0 ** -30], 2.0 ** -31)
    + points("riemann_zeta", (), [0.0, -2.0, 50.0, -1.5], 0.1),
    "zeta_derivative": points("zeta_derivative", (1,), [1 + 2.0 ** -20], 2.0 ** -21)
    + points("zeta_derivative", (1,), [0.0, 50.0, -3.5], 0.1),
    "tgamma": points("tgamma", (), [1e-8], 1e-9) + points("tgamma", (), [170.5, -0.5], 0.1)
    + points("tgamma", (), [-2.999], 1e-4),
    "lgamma": points("lgamma", (), [1e-8], 1e-9)
    + points("lgamma", (), [1e10, 1 + 1e-8, 2 - 1e-8, -2.5], 0.1),
    "digamma": points("digamma", (), [1.4616321449683623, -0.5, 1e10], 0.1)
    + points("digamma", (), [1e-8], 1e-9),
    "polygamma": points("polygamma", (1,), [1e-8], 1e-9)
    + points("polygamma", (3,), [1e10, -0.5], 0.1),
    "erf": points("erf", (), [1e-8, -3.0, 26.0], 0.1),
    "erfc": points("erfc", (), [1e-8, -5.0, 26.5], 0.1),
    "hermite": points("hermite", (10,), [0.0, 1e-8, 7.25], 0.1),
    "sph_bessel": points("sph_bessel", (0,), [1e-3, 1e4], 1e-4)
    + points("sph_bessel", (5,), [1e-3, 30.5, 1e4], 1e-4),
    "sph_neumann": points("sph_neumann", (0,), [1e-3], 1e-4)
    + points("sph_neumann", (3,), [1e-3, 1e4], 1e-4),
    "cyl_bessel_j": points("cyl_bessel_j", (0.5,), [1e-3, 1e3], 1e-4)
    + points("cyl_bessel_j", (2.5,), [1e-3, 1e3], 1e-4)
    + points("cyl_bessel_j", (0.0,), [1e-3, 2.404825557695773], 1e-4),
    "cyl_neumann": points("cyl_neumann", (0.5,), [1e-3, 1e3], 1e-4)
    + points("cyl_neumann", (2.0,), [1e-3, 1e3], 1e-4),
    "cyl_bessel_i": points("cyl_bessel_i", (0.0,), [1e-3, 50.0], 1e-4)
    + points("cyl_bessel_i", (1.5,), [1e-3, 50.0], 1e-4),
    "cyl_bessel_k": points("cyl_bessel_k", (0.0,), [1e-3, 50.0], 1e-4)
    + points("cyl_bessel_k", (1.5,), [1e-3, 50.0], 1e-4),
    "gegenbauer": points("gegenbauer", (5, 1.5), [1.0, -1.0, 1e-8], 0.1),
    "assoc_laguerre": points("assoc_laguerre", (8, 0.5), [1e-8, 30.0], 0.1),
    "legendre": points("legendre", (12,), [1.0, -1.0, 0.999999], 0.1),
    # beta near its poles at a = 0 and b = 0, on both sides, with the other operand small,
    # moderate, negative and large (its near-pole form's three ways to K(a, b)), and near -1, -2.
    "beta": points("beta", (), [(30.0, 20.0), (0.5, 0.5), (0.3, 0.7)], 0.1, TWO_D)
    + points("beta", (), [(1e-8, 2.5), (2.5, 1e-8), (-1e-8, 0.75)], 5e-9, TWO_D)
    + points("beta", (), [(0.01, 0.02), (0.05, -0.3), (-0.02, 0.45)], 5e-3, TWO_D)
    + points("beta", (), [(0.1, 3.0), (1e-3, 1e6), (0.125, 0.6)], 0.05, TWO_D)
    + points("beta", (), [(-1 + 1e-6, 2.5), (2.5, -1 + 1e-6)], 5e-7, TWO_D)
    + points("beta", (), [(-2 - 1e-7, 0.7)], 5e-8, TWO_D),
    "powm1": points("powm1", (), [(2.0, 1e-12), (1 + 1e-10, 3.0), (0.5, -1e-12)], 1e-3, TWO_D),
}


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "edges.txt")
    lines = [
        "# edges.txt -- derivatives of nabla's special functions at the ends of their domains.",
        "# GENERATED by tests/data/generate_edges.py with mpmath " + mpmath.__version__
        + " (mp.dps = 40); do not edit by hand.",
        "# name npar p1 .. p_npar nvar x1 .. x_nvar o1 .. o_nvar value cond",
    ]
    for name, entries in POINTS.items():
        f = FUNCTIONS[name]
        for params, x, radius, all_orders in entries:
            print(name, params, x, flush=True)
            for orders in all_orders:
                if name in BESSEL:
                    value = bessel_derivative(name, params[0], x[0], orders[0])
                    after = bessel_derivative(name, params[0], x[0], orders[0] + 1)
                    cond = 0.0 if value == 0 else float(abs(x[0] * after / value))
                else:
                    g = (lambda f, p: lambda *xs: f([mpmath.mpf(v) for v in p], *xs))(f, params)
                    value = partial(g, x, orders, radius)
                    cond = None
                if abs(value) > 1e300:
                    continue
                if cond is None:
                    cond = condition(g, x, orders, radius, value)
                fields = [name, str(len(params))] + [repr(float(p)) for p in params]
                fields += [str(len(x))] + [repr(v) for v in x] + [str(o) for o in orders]
                fields += [repr(float(value)), "%.3g" % cond]
                lines.append(" ".join(fields))
    with open(out, "w") as handle:
        handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
