#!/usr/bin/python3
"""Generate tests/data/rules.txt: reference values, gradients and Hessians
of every elementary function of nabla, computed independently with mpmath.

Purpose
-------
The C++ test suite reads rules.txt and compares the value, gradient and
Hessian that nabla computes for each elementary function against the data
here.  The data is computed with mpmath at 60 significant digits from
closed-form derivative formulas, cross-checked against mpmath's numerical
differentiation, and finally rounded to the nearest double.

How to rerun
------------
From the repository root:

    /usr/bin/python3 tests/data/generate_rules.py

This writes tests/data/rules.txt (next to this script) and prints a summary
(rows per function) to stdout.  An explicit output path may be given as the
single argument; "-" writes the data to stdout instead.  Only the Python
standard library and mpmath are needed (developed with Debian's
python3-mpmath 1.2.1).  The output is deterministic.

File format (also written as a comment header into rules.txt)
-------------------------------------------------------------
Lines starting with '#' are comments; blank lines are ignored.  Every other
line holds whitespace-separated fields:

    name npar p1..p_npar nvar x1..x_nvar value g1..g_nvar h_upper tol_value tol_grad tol_hess

* npar: number of fixed parameters (0, except pow_double: c, pow_int: n, ldexp: n,
  the indexed functions polygamma, hermite, sph_bessel, sph_neumann,
  zeta_derivative, legendre and laguerre: n,
  and the cylindrical Bessel functions: the order v, which have 1; gegenbauer and
  assoc_laguerre: the degree n and the parameter a, assoc_legendre and sph_legendre: the degree
  l and the order m, which have 2).  Derivatives are never taken with respect to
  parameters.
* nvar: number of variables (1, 2 or 3), followed by their values.
* value, gradient (nvar entries), upper triangle of the Hessian, row-major
  (nvar*(nvar+1)/2 entries: h00 | h00 h01 h11 | h00 h01 h02 h11 h12 h22).
* tol_value, tol_grad, tol_hess: relative tolerances.  A computed quantity c
  with reference r passes if |c - r| <= tol * |r|, or, when r == 0 exactly,
  if |c| <= tol.
* Numbers are printed with Python's repr(float) (round-trip exact) or as
  inf / -inf / nan, all readable by strtod.

Reference values
----------------
Every input is an exactly representable double (a Python float), converted
to mpmath with mpf(float) so that mpmath evaluates at exactly the point the
C++ code sees.  Results are rounded to nearest double.  A point is dropped
(and reported on stderr) if any reference quantity overflows a double, or if
the value is nonzero but below the smallest normal double (2.2e-308).  A
gradient or Hessian entry below 2.2e-308 in magnitude is written as 0.0, so
the test checks it absolutely (|computed| <= tol) instead of comparing with
a subnormal number.  Rows at points where the textbook derivative formulas
overflow in intermediate steps (see EXTREME) are preceded by a comment line
"# extreme: ...".  Loose tolerances (> 1e-9) are listed on stderr.

Tolerances
----------
For a nonzero reference quantity q depending on the variables x_i:

    cond = sum_i |x_i * dq/dx_i| / |q|
    tol  = max(1e-12, 64 * 2**-52 * cond), rounded up to one significant digit

The derivatives dq/dx_i are analytic for the value and the gradient (they are
the gradient and Hessian) and numerical (a central difference of the analytic
Hessian at several hundred digits, see partial()) for the Hessian entries.
For a reference that is exactly 0 the test is absolute, so the needed
tolerance is

    64 * 2**-52 * max(sum_i |x_i * dq/dx_i|, M)

where M is the largest magnitude of the other entries of the same group
(value / gradient / Hessian) if the zero is a "point zero" (zero only at this
point, like sin(0) or the mixed partial of atan2 at a == b), which covers
rounding in formulas that cancel to zero there; entries that are zero in a
whole neighbourhood (floor', mixed partial of add, ...) need nothing beyond
the base 1e-12.  One tolerance per group is written: the maximum over the
group's entries.
"""

import math
import sys
import os

import mpmath
from mpmath import mp, mpf

mp.dps = 60

EPS = 2.0 ** -52
BASE_TOL = mpf("1e-12")
SAFETY = 64
DBL_MAX = mpf(sys.float_info.max)
DBL_MIN = mpf(sys.float_info.min)  # smallest normal double

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def to_double(q):
    """Round an mpf to the nearest double (mpf.__float__ truncates)."""
    q = mpf(q)
    if mpmath.isnan(q):
        return math.nan
    if mpmath.isinf(q):
        return math.inf if q > 0 else -math.inf
    return mpmath.libmp.to_float(q._mpf_, rnd=mpmath.libmp.round_nearest)


def fmt(x):
    """Format a double so that strtod reads it back exactly."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


def fmt_tol(t):
    """Round a tolerance up to one significant digit, e.g. 2.07e-12 -> 3e-12."""
    t = mpf(t)
    e = int(mpmath.floor(mpmath.log10(t)))
    m = int(mpmath.ceil(t / mpf(10) ** e - mpf("1e-40")))
    if m < 1:  # guard against log10 rounding just below a power of ten
        m, e = 10, e - 1
    if m >= 10:
        m, e = m // 10 + (1 if m % 10 else 0), e + 1
    return "%de%d" % (m, e)


def real_cbrt(x):
    return mpmath.cbrt(x) if x >= 0 else -mpmath.cbrt(-x)


def sgn(x):
    return mpf(1) if x > 0 else (mpf(-1) if x < 0 else mpf(0))


def lgamma_ref(x):
    """log|Gamma(x)| for real non-integer (or positive) x."""
    if x > 0:
        return mpmath.loggamma(x)
    return mpmath.log(abs(mpmath.gamma(x)))


def round_half_away(x):
    return sgn(x) * mpmath.floor(abs(x) + mpf(1) / 2)


def real_pow(x, c):
    """x**c for x > 0, or x < 0 with integer-valued c (real result)."""
    if x > 0:
        return mpmath.power(x, c)
    if x == 0:
        if c == 0:
            return mpf(1)
        if c > 0:
            return mpf(0)
        return mpmath.inf
    n = int(c)
    assert n == c, "negative base needs an integer exponent"
    return (-1) ** (n % 2) * mpmath.power(-x, c)


ZERO = mpf(0)
ONE = mpf(1)

# ---------------------------------------------------------------------------
# Function table
#
# Each rule maps (params, xs) -> (value, gradient list, full Hessian matrix),
# all as mpf, from closed-form formulas.
# ---------------------------------------------------------------------------


def unary(f, d1, d2):
    def rule(p, xs):
        x = xs[0]
        return f(x), [d1(x)], [[d2(x)]]
    return rule


LN2 = lambda: mpmath.log(2)
LN10 = lambda: mpmath.log(10)
TWO_OVER_SQRTPI = lambda: 2 / mpmath.sqrt(mpmath.pi)

RULES = {}

RULES["neg"] = unary(lambda x: -x, lambda x: -ONE, lambda x: ZERO)
RULES["exp"] = unary(mpmath.exp, mpmath.exp, mpmath.exp)
RULES["exp2"] = unary(lambda x: mpmath.power(2, x),
                      lambda x: LN2() * mpmath.power(2, x),
                      lambda x: LN2() ** 2 * mpmath.power(2, x))
RULES["expm1"] = unary(mpmath.expm1, mpmath.exp, mpmath.exp)
RULES["log"] = unary(mpmath.log, lambda x: 1 / x, lambda x: -1 / x ** 2)
RULES["log2"] = unary(lambda x: mpmath.log(x) / LN2(),
                      lambda x: 1 / (x * LN2()),
                      lambda x: -1 / (x ** 2 * LN2()))
RULES["log10"] = unary(lambda x: mpmath.log(x) / LN10(),
                       lambda x: 1 / (x * LN10()),
                       lambda x: -1 / (x ** 2 * LN10()))
RULES["log1p"] = unary(mpmath.log1p, lambda x: 1 / (1 + x),
                       lambda x: -1 / (1 + x) ** 2)
RULES["sqrt"] = unary(mpmath.sqrt, lambda x: 1 / (2 * mpmath.sqrt(x)),
                      lambda x: -1 / (4 * x * mpmath.sqrt(x)))
RULES["cbrt"] = unary(real_cbrt,
                      lambda x: 1 / (3 * real_cbrt(x) ** 2),
                      lambda x: -2 / (9 * x * real_cbrt(x) ** 2))
RULES["sin"] = unary(mpmath.sin, mpmath.cos, lambda x: -mpmath.sin(x))
RULES["cos"] = unary(mpmath.cos, lambda x: -mpmath.sin(x),
                     lambda x: -mpmath.cos(x))
RULES["tan"] = unary(mpmath.tan, lambda x: 1 + mpmath.tan(x) ** 2,
                     lambda x: 2 * mpmath.tan(x) * (1 + mpmath.tan(x) ** 2))
RULES["asin"] = unary(mpmath.asin, lambda x: 1 / mpmath.sqrt(1 - x ** 2),
                      lambda x: x / (1 - x ** 2) ** mpf(1.5))
RULES["acos"] = unary(mpmath.acos, lambda x: -1 / mpmath.sqrt(1 - x ** 2),
                      lambda x: -x / (1 - x ** 2) ** mpf(1.5))
RULES["atan"] = unary(mpmath.atan, lambda x: 1 / (1 + x ** 2),
                      lambda x: -2 * x / (1 + x ** 2) ** 2)
RULES["sinh"] = unary(mpmath.sinh, mpmath.cosh, mpmath.sinh)
RULES["cosh"] = unary(mpmath.cosh, mpmath.sinh, mpmath.cosh)
RULES["tanh"] = unary(mpmath.tanh, lambda x: mpmath.sech(x) ** 2,
                      lambda x: -2 * mpmath.tanh(x) * mpmath.sech(x) ** 2)
RULES["asinh"] = unary(mpmath.asinh, lambda x: 1 / mpmath.sqrt(1 + x ** 2),
                       lambda x: -x / (1 + x ** 2) ** mpf(1.5))
RULES["acosh"] = unary(mpmath.acosh, lambda x: 1 / mpmath.sqrt(x ** 2 - 1),
                       lambda x: -x / (x ** 2 - 1) ** mpf(1.5))
RULES["atanh"] = unary(mpmath.atanh, lambda x: 1 / (1 - x ** 2),
                       lambda x: 2 * x / (1 - x ** 2) ** 2)
RULES["erf"] = unary(mpmath.erf,
                     lambda x: TWO_OVER_SQRTPI() * mpmath.exp(-x ** 2),
                     lambda x: -2 * x * TWO_OVER_SQRTPI() * mpmath.exp(-x ** 2))
RULES["erfc"] = unary(mpmath.erfc,
                      lambda x: -TWO_OVER_SQRTPI() * mpmath.exp(-x ** 2),
                      lambda x: 2 * x * TWO_OVER_SQRTPI() * mpmath.exp(-x ** 2))
RULES["tgamma"] = unary(mpmath.gamma,
                        lambda x: mpmath.gamma(x) * mpmath.psi(0, x),
                        lambda x: mpmath.gamma(x) * (mpmath.psi(0, x) ** 2
                                                     + mpmath.psi(1, x)))
RULES["lgamma"] = unary(lgamma_ref, lambda x: mpmath.psi(0, x),
                        lambda x: mpmath.psi(1, x))
RULES["abs"] = unary(abs, sgn, lambda x: ZERO)
RULES["floor"] = unary(mpmath.floor, lambda x: ZERO, lambda x: ZERO)
RULES["ceil"] = unary(mpmath.ceil, lambda x: ZERO, lambda x: ZERO)
RULES["round"] = unary(round_half_away, lambda x: ZERO, lambda x: ZERO)
RULES["trunc"] = unary(lambda x: sgn(x) * mpmath.floor(abs(x)),
                       lambda x: ZERO, lambda x: ZERO)
RULES["digamma"] = unary(lambda x: mpmath.psi(0, x),
                         lambda x: mpmath.psi(1, x),
                         lambda x: mpmath.psi(2, x))



def lambert_ref(branch):
    def w(x):
        return mpmath.re(mpmath.lambertw(x, branch))
    return unary(w,
                 lambda x: mpmath.exp(-w(x)) / (1 + w(x)),
                 lambda x: -mpmath.exp(-2 * w(x)) * (2 + w(x)) / (1 + w(x)) ** 3)


def ellip_k(k):
    return mpmath.ellipk(k * k)


def ellip_e(k):
    return mpmath.ellipe(k * k)


def ellip_k_d1(k):
    return (ellip_e(k) - (1 - k * k) * ellip_k(k)) / (k * (1 - k * k))


def ellip_e_d1(k):
    return (ellip_e(k) - ellip_k(k)) / k


RULES["sin_pi"] = unary(mpmath.sinpi, lambda x: mpmath.pi * mpmath.cospi(x),
                        lambda x: -mpmath.pi ** 2 * mpmath.sinpi(x))
RULES["cos_pi"] = unary(mpmath.cospi, lambda x: -mpmath.pi * mpmath.sinpi(x),
                        lambda x: -mpmath.pi ** 2 * mpmath.cospi(x))
RULES["sqrt1pm1"] = unary(lambda x: mpmath.sqrt(1 + x) - 1,
                          lambda x: 1 / (2 * mpmath.sqrt(1 + x)),
                          lambda x: -1 / (4 * (1 + x) * mpmath.sqrt(1 + x)))
RULES["expint"] = unary(mpmath.ei, lambda x: mpmath.exp(x) / x,
                        lambda x: mpmath.exp(x) * (x - 1) / x ** 2)


def sinc(x):
    return mpmath.sin(x) / x if x != 0 else mpf(1)


def sinc_d1(x):
    return (x * mpmath.cos(x) - mpmath.sin(x)) / x ** 2 if x != 0 else mpf(0)


def sinc_d2(x):
    if x == 0:
        return -mpf(1) / 3
    return ((2 - x * x) * mpmath.sin(x) - 2 * x * mpmath.cos(x)) / x ** 3


RULES["sinc"] = unary(sinc, sinc_d1, sinc_d2)
RULES["lambert_w0"] = lambert_ref(0)
RULES["lambert_wm1"] = lambert_ref(-1)
# K and E from their ODEs: k (1 - k^2) K'' + (1 - 3 k^2) K' - k K = 0 and
# k (1 - k^2) E'' + (1 - k^2) E' + k E = 0.
RULES["comp_ellint_1"] = unary(
    ellip_k, ellip_k_d1,
    lambda k: (k * ellip_k(k) - (1 - 3 * k * k) * ellip_k_d1(k)) / (k * (1 - k * k)))
RULES["comp_ellint_2"] = unary(
    ellip_e, ellip_e_d1,
    lambda k: -((1 - k * k) * ellip_e_d1(k) + k * ellip_e(k)) / (k * (1 - k * k)))


def rule_add(p, xs):
    a, b = xs
    return a + b, [ONE, ONE], [[ZERO, ZERO], [ZERO, ZERO]]


def rule_sub(p, xs):
    a, b = xs
    return a - b, [ONE, -ONE], [[ZERO, ZERO], [ZERO, ZERO]]


def rule_mul(p, xs):
    a, b = xs
    return a * b, [b, a], [[ZERO, ONE], [ONE, ZERO]]


def rule_div(p, xs):
    a, b = xs
    hab = -1 / b ** 2
    return a / b, [1 / b, -a / b ** 2], [[ZERO, hab], [hab, 2 * a / b ** 3]]


def rule_pow(p, xs):
    a, b = xs
    assert a > 0
    v = mpmath.power(a, b)
    la = mpmath.log(a)
    hab = mpmath.power(a, b - 1) * (1 + b * la)
    return (v, [b * mpmath.power(a, b - 1), v * la],
            [[b * (b - 1) * mpmath.power(a, b - 2), hab], [hab, v * la ** 2]])


def rule_hypot(p, xs):
    a, b = xs
    r = mpmath.sqrt(a ** 2 + b ** 2)
    r3 = r ** 3
    hab = -a * b / r3
    return r, [a / r, b / r], [[b ** 2 / r3, hab], [hab, a ** 2 / r3]]


def rule_hypot3(p, xs):
    r = mpmath.sqrt(sum(v ** 2 for v in xs))
    r3 = r ** 3
    hess = [[((r * r - xs[i] ** 2) if i == j else -xs[i] * xs[j]) / r3
             for j in range(3)] for i in range(3)]
    return r, [v / r for v in xs], hess


def rule_atan2(p, xs):
    a, b = xs  # atan2(a, b): angle of the point (b, a)
    r2 = a ** 2 + b ** 2
    r4 = r2 ** 2
    hab = (a ** 2 - b ** 2) / r4
    return (mpmath.atan2(a, b), [b / r2, -a / r2],
            [[-2 * a * b / r4, hab], [hab, 2 * a * b / r4]])


def rule_min(p, xs):
    a, b = xs
    assert a != b
    g = [ONE, ZERO] if a < b else [ZERO, ONE]
    return min(a, b), g, [[ZERO, ZERO], [ZERO, ZERO]]


def rule_max(p, xs):
    a, b = xs
    assert a != b
    g = [ONE, ZERO] if a > b else [ZERO, ONE]
    return max(a, b), g, [[ZERO, ZERO], [ZERO, ZERO]]


def rule_fma(p, xs):
    a, b, c = xs
    return (a * b + c, [b, a, ONE],
            [[ZERO, ONE, ZERO], [ONE, ZERO, ZERO], [ZERO, ZERO, ZERO]])


def rule_ldexp(p, xs):
    n, = p
    x, = xs
    scale = mpmath.ldexp(ONE, int(n))
    return (x * scale, [scale], [[ZERO]])


def zeta(n, s):
    """zeta^(n)(s), with the trivial zeros exact (mpmath returns them exactly too)."""
    if s == 1:
        raise Dropped("pole")
    return mpmath.zeta(s, 1, n)


def rule_riemann_zeta(p, xs):
    s, = xs
    return (zeta(0, s), [zeta(1, s)], [[zeta(2, s)]])


def rule_zeta_derivative(p, xs):
    n = int(p[0])
    s, = xs
    return (zeta(n, s), [zeta(n + 1, s)], [[zeta(n + 2, s)]])


def rule_pow_param(p, xs):
    c, = p
    x, = xs
    return (real_pow(x, c), [c * real_pow(x, c - 1)],
            [[c * (c - 1) * real_pow(x, c - 2)]])


def rule_polygamma(p, xs):
    n, = p
    x, = xs
    n = int(n)
    return (mpmath.psi(n, x), [mpmath.psi(n + 1, x)],
            [[mpmath.psi(n + 2, x)]])


def rule_powm1(p, xs):
    x, y = xs
    v = mpmath.power(x, y)
    lx = mpmath.log(x)
    return (v - 1, [y * v / x, v * lx],
            [[y * (y - 1) * v / x ** 2, v / x * (1 + y * lx)],
             [v / x * (1 + y * lx), v * lx ** 2]])


def rule_beta(p, xs):
    a, b = xs
    v = mpmath.beta(a, b)
    pa = mpmath.psi(0, a) - mpmath.psi(0, a + b)
    pb = mpmath.psi(0, b) - mpmath.psi(0, a + b)
    t = mpmath.psi(1, a + b)
    return (v, [v * pa, v * pb],
            [[v * (pa ** 2 + mpmath.psi(1, a) - t), v * (pa * pb - t)],
             [v * (pa * pb - t), v * (pb ** 2 + mpmath.psi(1, b) - t)]])


def hermite(n, x):
    return mpmath.hermite(n, x) if n >= 0 else mpf(0)


def rule_hermite(p, xs):
    n = int(p[0])
    x, = xs
    return (hermite(n, x), [2 * n * hermite(n - 1, x)],
            [[4 * n * (n - 1) * hermite(n - 2, x)]])


def spherical(kind, n, x):
    """j_n(x) (kind 0) or y_n(x) (kind 1) for every integer n and real x."""
    if x < 0:
        sign = (-1) ** (n % 2) if kind == 0 else -((-1) ** (n % 2))
        return sign * spherical(kind, n, -x)
    if x == 0:
        if kind == 1 or n < 0:
            raise ValueError("pole")
        return mpf(1) if n == 0 else mpf(0)
    scale = mpmath.sqrt(mpmath.pi / (2 * x))
    order = n + mpf(1) / 2
    return scale * (mpmath.besselj(order, x) if kind == 0
                    else mpmath.bessely(order, x))


def spherical_derivative(f, n):
    """f_n' = (n f_(n-1) - (n+1) f_(n+1)) / (2n + 1) for f(n) a function of n."""
    below = n * f(n - 1) if n != 0 else mpf(0)
    return (below - (n + 1) * f(n + 1)) / (2 * n + 1)


def rule_spherical(kind):
    def rule(p, xs):
        n = int(p[0])
        x, = xs
        f = lambda m: spherical(kind, m, x)
        d1 = lambda m: spherical_derivative(f, m)
        return (f(n), [d1(n)], [[spherical_derivative(d1, n)]])
    return rule


CYLINDER = {"cyl_bessel_j": (mpmath.besselj, mpf(1) / 2, -mpf(1) / 2),
            "cyl_neumann": (mpmath.bessely, mpf(1) / 2, -mpf(1) / 2),
            "cyl_bessel_i": (mpmath.besseli, mpf(1) / 2, mpf(1) / 2),
            "cyl_bessel_k": (mpmath.besselk, -mpf(1) / 2, -mpf(1) / 2)}


def cylinder(name, v, x):
    """J_v, Y_v, I_v or K_v for real v and x (x < 0: J and I of integer v)."""
    f = CYLINDER[name][0]
    integer = v == int(v)
    # Negative integer orders (and K's every negative order) by reflection: mpmath takes them
    # as limits, slowly.
    if v < 0 and (integer or name == "cyl_bessel_k"):
        sign = (-1) ** (int(-v) % 2) if name in ("cyl_bessel_j", "cyl_neumann") else 1
        return sign * cylinder(name, -v, x)
    if x < 0:
        if not integer or name in ("cyl_neumann", "cyl_bessel_k"):
            raise ValueError("complex")
        return (-1) ** (int(v) % 2) * cylinder(name, v, -x)
    if x == 0:
        if name in ("cyl_neumann", "cyl_bessel_k") or (v < 0 and not integer):
            raise ValueError("pole")
        return mpf(1) if v == 0 else mpf(0)
    value = f(v, x)
    if isinstance(value, mpmath.mpc):
        raise ValueError("complex")
    return value


def rule_cylinder(name):
    """f_v' = a f_(v-1) + b f_(v+1), and f_v'' by the same recurrence."""
    a, b = CYLINDER[name][1:]

    def rule(p, xs):
        v = mpf(p[0])
        x, = xs
        f = lambda nu: cylinder(name, nu, x)
        d1 = lambda nu: a * f(nu - 1) + b * f(nu + 1)
        try:
            return (f(v), [d1(v)], [[a * d1(v - 1) + b * d1(v + 1)]])
        except ValueError as why:  # a pole or a complex value on the way
            raise Dropped(str(why))
    return rule


def incomplete_elliptic(k, phi):
    """F, E, their first derivatives and the pieces of the second ones."""
    m = k * k
    F = mpmath.ellipf(phi, m)
    E = mpmath.ellipe(phi, m)
    s, c = mpmath.sin(phi), mpmath.cos(phi)
    d = mpmath.sqrt(1 - m * s * s)
    N = E - (1 - m) * F - m * s * c / d
    D = k * (1 - m)
    F_k = N / D
    E_k = (E - F) / k
    N_k = E_k + 2 * k * F - (1 - m) * F_k - (2 * k * s * c / d + k * m * s ** 3 * c / d ** 3)
    F_kk = (N_k * D - N * (1 - 3 * m)) / D ** 2
    E_kk = (E_k - F_k) / k - (E - F) / m
    return F, E, s, c, d, F_k, E_k, F_kk, E_kk


def rule_ellint_1(p, xs):
    k, phi = xs
    F, E, s, c, d, F_k, E_k, F_kk, E_kk = incomplete_elliptic(k, phi)
    mixed = k * s * s / d ** 3
    return (F, [F_k, 1 / d], [[F_kk, mixed], [mixed, k * k * s * c / d ** 3]])


def rule_ellint_2(p, xs):
    k, phi = xs
    F, E, s, c, d, F_k, E_k, F_kk, E_kk = incomplete_elliptic(k, phi)
    mixed = -k * s * s / d
    return (E, [E_k, d], [[E_kk, mixed], [mixed, -k * k * s * c / d]])


class Jet:
    """A number with its gradient in the variables of a rule, for second derivatives built
    from closed-form first ones (the elliptic integrals of the third kind)."""

    def __init__(self, v, g):
        self.v, self.g = v, list(g)

    @staticmethod
    def lift(x, n):
        return x if isinstance(x, Jet) else Jet(mpf(x), [mpf(0)] * n)

    def _bin(self, o, v, da, db):
        o = Jet.lift(o, len(self.g))
        return Jet(v(self.v, o.v), [da(self.v, o.v) * a + db(self.v, o.v) * b
                                    for a, b in zip(self.g, o.g)])

    def __add__(self, o):
        return self._bin(o, lambda a, b: a + b, lambda a, b: 1, lambda a, b: 1)
    __radd__ = __add__

    def __sub__(self, o):
        return self._bin(o, lambda a, b: a - b, lambda a, b: 1, lambda a, b: -1)

    def __rsub__(self, o):
        return Jet.lift(o, len(self.g)) - self

    def __mul__(self, o):
        return self._bin(o, lambda a, b: a * b, lambda a, b: b, lambda a, b: a)
    __rmul__ = __mul__

    def __truediv__(self, o):
        return self._bin(o, lambda a, b: a / b, lambda a, b: 1 / b, lambda a, b: -a / b ** 2)

    def __rtruediv__(self, o):
        return Jet.lift(o, len(self.g)) / self

    def __neg__(self):
        return Jet(-self.v, [-a for a in self.g])

    def apply(self, v, d):
        return Jet(v, [d * a for a in self.g])


def jet_sqrt(x):
    r = mpmath.sqrt(x.v)
    return x.apply(r, 1 / (2 * r))


def jet_sin(x):
    return x.apply(mpmath.sin(x.v), mpmath.cos(x.v))


def jet_cos(x):
    return x.apply(mpmath.cos(x.v), -mpmath.sin(x.v))


def third_kind(k, n, phi):
    """Pi(n, k, phi) (phi None: complete) and its gradient in (k, n[, phi]) by DLMF 19.4's
    closed forms, for numbers or Jets (then the gradient of each entry too)."""
    def val(x):
        return x.v if isinstance(x, Jet) else x
    m = val(k) ** 2
    if phi is None:
        F, E, P = mpmath.ellipk(m), mpmath.ellipe(m), mpmath.ellippi(val(n), m)
    else:
        F, E = mpmath.ellipf(val(phi), m), mpmath.ellipe(val(phi), m)
        P = mpmath.ellippi(val(n), val(phi), m)
    if not isinstance(k, Jet):
        F_, E_, P_ = F, E, P
        sc = d = s2 = 0
        if phi is not None:
            s, c = mpmath.sin(phi), mpmath.cos(phi)
            s2, d = s * s, mpmath.sqrt(1 - m * s * s)
            sc = s * c
    else:
        # F, E, Pi as Jets: their own gradients from the first-kind and second-kind rules
        # and from this function's closed forms at the primal point.
        kv, nv = k.v, n.v
        kp2 = 1 - m
        if phi is not None:
            s0, c0 = mpmath.sin(phi.v), mpmath.cos(phi.v)
            d0 = mpmath.sqrt(1 - m * s0 * s0)
        if kv == 0:  # (the limits: F and E are even in k)
            F_k = E_k = mpf(0)
        else:
            F_k = (E - kp2 * F - (m * s0 * c0 / d0 if phi is not None else 0)) / (kv * kp2)
            E_k = (E - F) / kv
        if phi is None:
            F_ = Jet(F, [F_k * a for a in k.g])
            E_ = Jet(E, [E_k * a for a in k.g])
        else:
            F_ = Jet(F, [F_k * a + b / d0 for a, b in zip(k.g, phi.g)])
            E_ = Jet(E, [E_k * a + b * d0 for a, b in zip(k.g, phi.g)])
        grad0 = third_kind(kv, nv, None if phi is None else phi.v)[1]
        P_ = Jet(P, [sum(grad0[i] * x.g[j] for i, x in enumerate(
            [k, n] + ([] if phi is None else [phi]))) for j in range(len(k.g))])
        sc = d = s2 = 0
        if phi is not None:
            s, c = jet_sin(phi), jet_cos(phi)
            s2, sc = s * s, s * c
            d = jet_sqrt(1 - k * k * s2)
    k2 = k * k
    kp2 = 1 - k2
    P_k = k * (E_ - kp2 * P_ - (k2 * sc / d if phi is not None else 0)) / (kp2 * (k2 - n))
    P_n = ((n * E_ + (k2 - n) * F_ + (n * n - k2) * P_
            - (n * n * d * sc / (1 - n * s2) if phi is not None else 0))
           / (2 * n * (k2 - n) * (n - 1)))
    grad = [P_k, P_n]
    if phi is not None:
        grad.append(1 / ((1 - n * s2) * d))
    return P_, grad


def rule_third_kind(complete):
    def rule(p, xs):
        n_var = len(xs)
        value, grad = third_kind(*xs, None) if complete else third_kind(*xs)
        jets = [Jet(x, [mpf(int(i == j)) for j in range(n_var)]) for i, x in enumerate(xs)]
        gj = third_kind(*jets, None)[1] if complete else third_kind(*jets)[1]
        hess = [[Jet.lift(gj[i], n_var).g[j] for j in range(n_var)] for i in range(n_var)]
        return value, grad, hess
    return rule


def rule_fmod(p, xs):
    x, y = xs
    n = mpmath.floor(x / y) if x / y > 0 else mpmath.ceil(x / y)
    return (x - n * y, [mpf(1), -n], [[mpf(0), mpf(0)], [mpf(0), mpf(0)]])


def three_term(n, first, step):
    """The n-th of a sequence y_0 = 1, y_1 = first, y_k = step(k, y_(k-1), y_(k-2)); 0 for
    n < 0."""
    if n < 0:
        return mpf(0)
    previous, current = mpf(1), first
    if n == 0:
        return previous
    for k in range(2, n + 1):
        previous, current = current, step(k, current, previous)
    return current


def checked(y, reference):
    """y from a recurrence at 60 digits, against mpmath's hypergeometric form where that
    converges (it does not at the polynomial's zeros); not at the several hundred digits of the
    numerical differentiation, where the hypergeometric sums take seconds."""
    if mp.dps > 60:
        return y
    try:
        r = reference()
    except ValueError:
        return y
    assert abs(y - r) <= mpf(10) ** -40 * max(1, abs(r)), (y, r)
    return y


def gegenbauer(n, a, x):
    y = three_term(n, 2 * a * x, lambda k, c, b: (2 * x * (k + a - 1) * c - (k + 2 * a - 2) * b) / k)
    return checked(y, lambda: mpmath.gegenbauer(n, a, x)) if n >= 0 else y


def assoc_laguerre(n, a, x):
    y = three_term(n, 1 + a - x, lambda k, c, b: ((2 * k - 1 + a - x) * c - (k - 1 + a) * b) / k)
    return checked(y, lambda: mpmath.laguerre(n, a, x)) if n >= 0 else y


def rule_gegenbauer(p, xs):
    n, a = int(p[0]), p[1]
    x, = xs
    return (gegenbauer(n, a, x), [2 * a * gegenbauer(n - 1, a + 1, x)],
            [[4 * a * (a + 1) * gegenbauer(n - 2, a + 2, x)]])


def rule_assoc_laguerre(p, xs):
    n, a = int(p[0]), p[1]
    x, = xs
    return (assoc_laguerre(n, a, x), [-assoc_laguerre(n - 1, a + 1, x)],
            [[assoc_laguerre(n - 2, a + 2, x)]])


def rule_legendre(p, xs):
    return rule_gegenbauer([p[0], mpf(0.5)], xs)


def rule_laguerre(p, xs):
    return rule_assoc_laguerre([p[0], mpf(0)], xs)


def legendre_derivative(l, m, x):
    """d^m P_l / dx^m from P_l's explicit sum,
    P_l(x) = 2^-l sum_k (-1)^k (2l - 2k)! / (k! (l - k)! (l - 2k)!) x^(l - 2k)."""
    total = mpf(0)
    for k in range(l // 2 + 1):
        j = l - 2 * k
        if j < m:
            continue
        c = mpf((-1) ** k * math.factorial(2 * l - 2 * k)) / (
            math.factorial(k) * math.factorial(l - k) * math.factorial(j))
        total += c * mpf(math.factorial(j)) / math.factorial(j - m) * x ** (j - m)
    return total / mpf(2) ** l


def ferrers(l, m, x):
    """P_l^m(x) = (1 - x^2)^(m/2) d^m P_l / dx^m for |x| < 1, without the Condon-Shortley phase
    (std::assoc_legendre; mpmath's legenp, which the value is checked against at 60 digits,
    carries the phase (-1)^m), and its first and second derivatives from
    (1 - x^2) P' = (l + m) P_(l-1)^m - l x P and Legendre's equation."""
    def P(k):
        if m > k:
            return mpf(0)
        y = (1 - x * x) ** (mpf(m) / 2) * legendre_derivative(k, m, x)
        return checked(y, lambda: (-1) ** m * mpmath.legenp(k, m, x))
    y = P(l)
    d1 = ((l + m) * P(l - 1) - l * x * y) / (1 - x * x)
    d2 = (2 * x * d1 - (l * (l + 1) - m * m / (1 - x * x)) * y) / (1 - x * x)
    return y, d1, d2


def rule_assoc_legendre(p, xs):
    l, m = int(p[0]), int(p[1])
    x, = xs
    y, d1, d2 = ferrers(l, m, x)
    return (y, [d1], [[d2]])


def rule_sph_legendre(p, xs):
    """Y_l^m(theta, 0) = (-1)^m sqrt((2l + 1) / (4 pi) (l - m)! / (l + m)!) P_l^m(cos theta),
    checked against mpmath's spherharm; derivatives by the chain rule."""
    l, m = int(p[0]), int(p[1])
    theta, = xs
    if m > l:
        return (mpf(0), [mpf(0)], [[mpf(0)]])
    c = (-1) ** m * mpmath.sqrt((2 * l + 1) / (4 * mpmath.pi) * mpmath.factorial(l - m)
                                / mpmath.factorial(l + m))
    s, co = mpmath.sin(theta), mpmath.cos(theta)
    y, d1, d2 = ferrers(l, m, co)
    value = c * y
    if mp.dps <= 60:
        reference = mpmath.re(mpmath.spherharm(l, m, theta, 0))
        assert abs(value - reference) <= mpf(10) ** -40 * (1 + abs(value)), (value, reference)
    return (value, [-c * s * d1], [[c * (s * s * d2 - co * d1)]])


RULES.update({
    "fmod": rule_fmod,
    "hermite": rule_hermite, "sph_bessel": rule_spherical(0),
    "gegenbauer": rule_gegenbauer, "assoc_laguerre": rule_assoc_laguerre,
    "legendre": rule_legendre, "laguerre": rule_laguerre,
    "assoc_legendre": rule_assoc_legendre, "sph_legendre": rule_sph_legendre,
    "sph_neumann": rule_spherical(1),
    "cyl_bessel_j": rule_cylinder("cyl_bessel_j"),
    "cyl_neumann": rule_cylinder("cyl_neumann"),
    "cyl_bessel_i": rule_cylinder("cyl_bessel_i"),
    "cyl_bessel_k": rule_cylinder("cyl_bessel_k"),
    "ellint_1": rule_ellint_1, "ellint_2": rule_ellint_2,
    "comp_ellint_3": rule_third_kind(True), "ellint_3": rule_third_kind(False),
    "powm1": rule_powm1, "beta": rule_beta,
    "add": rule_add, "sub": rule_sub, "mul": rule_mul, "div": rule_div,
    "pow": rule_pow, "hypot": rule_hypot, "hypot3": rule_hypot3,
    "atan2": rule_atan2,
    "fmin": rule_min, "fmax": rule_max, "min": rule_min, "max": rule_max,
    "fma": rule_fma,
    "pow_double": rule_pow_param, "pow_int": rule_pow_param,
    "ldexp": rule_ldexp,
    "riemann_zeta": rule_riemann_zeta, "zeta_derivative": rule_zeta_derivative,
    "polygamma": rule_polygamma,
})

# ---------------------------------------------------------------------------
# Points.  Each entry: name -> list of (params tuple, variables tuple),
# all Python floats (exact doubles) / ints.
# ---------------------------------------------------------------------------


def pts1(*xs):
    return [((), (float(x),)) for x in xs]


def pts2(*pairs):
    return [((), (float(a), float(b))) for a, b in pairs]


POINTS = {
    "neg": pts1(0.0, 1.0, -2.5, 1e-300, -1e300, 3.141592653589793, 1e-8),
    "exp": pts1(0.0, 1.0, -1.0, 0.5, -3.7, 1e-8, 1e-300, 20.25, -20.0,
                700.0, -700.0, 709.5, -708.0),
    "exp2": pts1(0.0, 1.0, -1.0, 0.5, 10.3, -10.3, 1e-8, 1e-300, 52.0,
                 1022.5, -1000.25, -1020.0),
    "expm1": pts1(0.0, 1e-8, -1e-8, 1e-300, 1e-5, 0.5, -0.5, 1.0, -1.0,
                  30.0, -30.0, 700.0, -700.0),
    "log": pts1(1.0, 2.0, 0.5, 10.0, 123.456, 2.718281828459045, 0.999,
                1.0000001, 1e-8, 1e-150, 1e300),
    "log2": pts1(1.0, 2.0, 0.5, 10.0, 1024.0, 3.3, 0.999, 1e-8, 1e-150,
                 1e300),
    "log10": pts1(1.0, 10.0, 0.5, 2.0, 1000.0, 3.3, 0.999, 1e-8, 1e-150,
                  1e300),
    "log1p": pts1(0.0, 1e-8, -1e-8, 1e-300, 1e-5, 0.5, -0.5, 1.0, 10.0,
                  -0.999, -0.9999999, 1e300),
    "sqrt": pts1(1.0, 2.0, 0.25, 0.1, 3.5, 100.0, 1e-8, 1e-100, 1e-200,
                 1e300),
    "cbrt": pts1(1.0, 8.0, -8.0, 2.0, -2.0, 27.5, -0.3, 0.001, 1e-8, -1e-8,
                 1e-150, 1e300, -1e300),
    "sin": pts1(0.0, 0.5, -0.5, 1.0, 1e-8, 1e-300, 1.5, 3.0, -2.5, 10.0,
                100.0, 1e6),
    "cos": pts1(0.0, 0.5, -0.5, 1.0, 1e-8, 1e-300, 1.5, 3.0, -2.5, 10.0,
                100.0, 1e6),
    "tan": pts1(0.0, 0.5, -0.5, 1.0, 1e-8, 1e-300, 1.5, -1.5, 1.57, 3.0,
                10.0, -7.0),
    "asin": pts1(0.0, 0.5, -0.5, 0.75, -0.3, 0.9, 1e-8, 1e-300, 0.999999,
                 -0.999999),
    "acos": pts1(0.0, 0.5, -0.5, 0.75, -0.3, 0.9, 1e-8, 1e-300, 0.999999,
                 -0.999999),
    "atan": pts1(0.0, 0.5, -0.5, 1.0, -1.0, 3.0, 1e-8, 1e-300, 30.0, -30.0,
                 1e10, 1e100, 1e300),
    "sinh": pts1(0.0, 0.5, -0.5, 1.0, 3.0, 1e-8, 1e-300, 20.0, -20.0, 700.0,
                 -700.0, 710.0),
    "cosh": pts1(0.0, 0.5, -0.5, 1.0, 3.0, 1e-8, 1e-300, 20.0, -20.0, 700.0,
                 -700.0, 710.0),
    "tanh": pts1(0.0, 0.5, -0.5, 1.0, 5.0, -3.0, 0.001, 1e-8, 1e-300, 30.0,
                 -30.0, 300.0),
    "asinh": pts1(0.0, 0.5, -0.5, 1.0, 3.0, -30.0, 1e-8, 1e-300, 1e10, -1e10,
                  1e150, 1e300),
    "acosh": pts1(1.000001, 1.1, 1.5, 2.0, 3.7, 10.0, 1e10, 1e100, 1e300),
    "atanh": pts1(0.0, 0.5, -0.5, 0.9, -0.3, 1e-8, 1e-300, 0.999999,
                  -0.999999),
    "erf": pts1(0.0, 0.1, 0.5, -0.5, 1.0, -2.0, 3.0, -3.0, 5.0, 10.0, 26.0,
                1e-8, 1e-300),
    "erfc": pts1(0.0, 0.5, -0.5, 1.0, 3.0, -3.0, 5.0, 10.0, 20.0, 26.0, 26.5,
                 1e-8, 1e-300),
    "tgamma": pts1(1.0, 2.0, 0.5, 0.1, 3.5, 5.25, 10.0, 1e-8, 1e-100, -0.5,
                   -1.5, -2.5, -3.3, 170.5),
    "lgamma": pts1(1.0, 2.0, 0.5, 1.5, 3.0, 10.0, 100.25, 1e10, 1e300, 1e-8,
                   1e-150, -0.5, -1.5, -2.5, -3.7),
    "abs": pts1(0.5, -0.5, 3.0, -3.0, 2.5, -7.25, 1e-300, -1e-300, 1e300,
                -1e300),
    "floor": pts1(2.5, -2.5, 0.5, -0.5, 4.99, -0.01, -3.7, 123.456,
                  10000000000.5),
    "ceil": pts1(2.5, -2.5, 0.5, -0.5, 4.01, -0.01, -3.7, 123.456,
                 10000000000.5),
    "round": pts1(2.3, 2.7, -2.3, -2.7, 0.4, -0.4, 0.6, -99.9, 123.456,
                  10000000000.25),
    "trunc": pts1(2.5, -2.5, 0.5, -0.5, 4.99, -0.01, -3.7, 123.456,
                  -10000000000.5),
    "digamma": pts1(1.0, 2.0, 0.5, 3.7, 10.0, 100.5, 1e10, 1e-8, 1e-100,
                    -0.5, -1.5, -2.3),
    "sin_pi": pts1(0.3, -0.75, 0.5, 1.0, -3.0, 2.25, 1e-8, 123.25, 0.0,
                   1e10 + 0.5, -7.125),
    "cos_pi": pts1(0.3, -0.75, 0.5, 1.0, -3.0, 2.25, 1e-8, 123.25, 0.0,
                   1e10 + 0.5, -7.125),
    "sqrt1pm1": pts1(0.3, 1e-10, -0.5, 3.0, 1e10, -0.999, 1e-300, -1e-8),
    "expint": pts1(0.3, 1.0, -1.0, 5.0, -5.0, 1e-8, 50.0, -30.0, 0.372507410781366634,
                   700.0),
    "lambert_w0": pts1(0.3, 1.0, -0.3, -0.36, 10.0, 1e3, 1e100, 1e-8, -1e-8, 2.5,
                       -0.3678),
    "lambert_wm1": pts1(-0.3, -0.1, -0.01, -1e-5, -1e-100, -0.36, -0.2,
                        -0.3678),
    "comp_ellint_1": pts1(0.3, -0.5, 0.9, 0.99, 0.999999, 0.01, 0.7, -0.25),
    "comp_ellint_2": pts1(0.3, -0.5, 0.9, 0.99, 0.999999, 0.01, 0.7, -0.25),
    "powm1": pts2((1.3, 0.7), (2.0, 3.0), (0.5, -2.0), (2.0, 1e-12),
                  (1.5, 1e-9), (10.0, 0.25), (0.01, 1.5), (3.0, -0.5)),
    "beta": pts2((1.3, 0.7), (2.0, 3.0), (0.5, 0.5), (10.0, 0.25), (0.1, 5.0),
                 (1.5, 1.5), (30.0, 20.0), (0.01, 0.02)),
    "add": pts2((1, 2), (0.5, -0.25), (-3, 7.5), (1e300, 1e300),
                (1e-300, 2e-300), (1e10, -1e-10), (0, 4), (-1e-8, -3)),
    "sub": pts2((1, 2), (0.5, -0.25), (-3, 7.5), (1e300, -1e300),
                (2e-300, 1e-300), (1e10, 1e-10), (0, 4), (-1e-8, -3)),
    "mul": pts2((2, 3), (-1.5, 4), (-2.5, -4), (0.5, 0), (0, -3),
                (1e150, 1e150), (1e-150, 1e150), (1e-8, 7), (3.3, -0.1)),
    "div": pts2((1, 2), (3, -4), (-7.5, 0.5), (0, 3), (1e-300, 1),
                (1e100, 1e50), (1, 1e-100), (2, 1e100), (-1e-8, -0.25)),
    "pow": pts2((2, 3), (2, 0.5), (0.5, -2), (1.5, 2.5), (3, -1.5),
                (1e-10, 0.25), (7, 0), (1, 5), (0.1, 100), (100, 0.001),
                (10, 300), (2, 1000.5), (1e-100, 1.5)),
    "hypot": pts2((3, 4), (-3, 4), (1, 1), (-2, -7), (5, 1e-8), (1, 0),
                  (0, -2.5), (1e300, 1e300), (1e-300, 1e-300)),
    "hypot3": [((), (1.0, 2.0, 2.0)), ((), (-3.0, 4.0, 12.0)), ((), (0.5, -0.25, 1e-8)),
               ((), (1.0, 0.0, 0.0)), ((), (0.0, -2.5, 0.0)), ((), (1e300, 1e300, 1e300)),
               ((), (1e-300, 2e-300, 3e-300)), ((), (7.0, 1e100, -3.0))],
    "atan2": pts2((1, 1), (1, -1), (-1, -1), (-1, 1), (0, 1), (0, -1),
                  (1, 0), (-1, 0), (3, 4), (-2.5, 0.5), (1e-300, 1),
                  (1e-8, -1), (1e300, 1e300)),
    "fmin": pts2((1, 2), (2, 1), (-3, 5), (1e300, -1e300), (-0.5, -0.25),
                 (1e-300, 2e-300), (7.5, 7.25), (0, 3)),
    "fma": [((), (2.0, 3.0, 4.0)), ((), (-1.5, 2.0, 0.5)),
            ((), (1e150, 1e150, 1e300)), ((), (1e-200, 1e-100, 1e-300)),
            ((), (3.0, 5.0, -7.0)), ((), (0.0, 5.0, 1.0)),
            ((), (2.5, 0.0, -1.0)), ((), (-4.0, -0.25, 0.0)),
            ((), (1e-8, 1e8, 0.5))],
    "pow_double": [((c,), (x,)) for c, x in [
        (0.5, 2.0), (2.5, 3.0), (-1.5, 0.25), (0.3333333333333333, 27.0),
        (1e-8, 5.0), (100.0, 1.5), (0.0, 3.0), (1.0, 7.5), (-1.0, 1e-100),
        (3.0, -2.0), (-2.0, -1.5), (7.0, -1.1), (2.0, -0.5), (-3.0, -4.0)]],
    "pow_int": [((n,), (x,)) for n in [0, 1, 2, 3, -1, -2, 7]
                for x in ([2.5, -2.5, 0.5, -0.75, 1e-8]
                          + ([1e100] if n <= 3 else [])
                          + ([0.0] if n >= 2 else []))],
    "polygamma": [((n,), (x,)) for n in [0, 1, 2, 3]
                  for x in [0.5, 1.0, 2.5, 10.0, 100.25, 1e-5, -0.5, -1.3,
                            -2.75]],
}
POINTS["fmax"] = POINTS["fmin"]
POINTS["min"] = POINTS["fmin"]
POINTS["max"] = POINTS["fmin"]

POINTS["ellint_1"] = pts2((0.6, 0.7), (0.3, 1.2), (0.9, 0.3), (-0.5, 2.5),
                          (0.99, 1.0), (0.1, -1.0), (0.05, 0.4), (0.7, 4.0))
POINTS["ellint_2"] = POINTS["ellint_1"]
# (Away from nu = 0 and nu = k^2, where the closed forms of the derivatives divide 0 by 0, and
# from k = 0, where exact zeros among the third derivatives send the numerical differences to
# thousands of digits; tests/rules/conventions_test.cpp pins both.)
POINTS["comp_ellint_3"] = pts2((0.6, 0.3), (0.3, -0.5), (0.9, 0.5), (-0.5, -3.0), (0.99, 0.2),
                               (0.1, 0.7), (0.8, 0.95), (0.5, -40.0))
POINTS["ellint_3"] = [((), xs) for xs in [
    (0.6, 0.3, 0.9), (0.3, -0.5, 1.2), (0.9, 0.5, 0.3), (-0.5, -3.0, 2.5), (0.99, 0.2, 1.0),
    (0.1, 0.7, -1.0), (0.7, 2.0, 0.4), (0.5, 0.4, 4.0)]]
POINTS["fmod"] = pts2((5.3, 2.0), (-5.3, 2.0), (1.0, 0.1), (7.5, -2.0), (0.5, 3.0),
                      (1e10, 3.7), (-0.1, 0.7), (2.5, 0.75))
POINTS["sinc"] = pts1(0.7, -2.5, 1e-3, 0.0, 10.0, 3.14, 1e-9, 100.5)
POINTS["hermite"] = [((n,), (x,)) for n in [0, 1, 2, 3, 6, 10]
                     for x in [0.5, -1.3, 2.0, 0.0, 7.25]]
POINTS["gegenbauer"] = [((n, a), (x,)) for n in [0, 1, 2, 5, 10]
                        for a in [0.5, 1.5, 2.25, -0.25] for x in [0.3, -0.7, 1.0, 2.5]]
POINTS["assoc_laguerre"] = [((n, a), (x,)) for n in [0, 1, 3, 8]
                            for a in [0.0, 0.5, 2.0, 3.75] for x in [0.5, 2.0, 7.5, -1.0]]
POINTS["legendre"] = [((n,), (x,)) for n in [0, 1, 2, 5, 12]
                      for x in [0.3, -0.85, 1.0, -1.0, 0.0, 1.5]]
POINTS["laguerre"] = [((n,), (x,)) for n in [0, 1, 4, 9] for x in [0.5, 3.25, 10.0, -0.5]]
LEGENDRE_ORDERS = [(1, 0), (1, 1), (2, 1), (3, 2), (5, 0), (5, 3), (8, 8), (4, 6), (12, 5)]
POINTS["assoc_legendre"] = [((l, m), (x,)) for l, m in LEGENDRE_ORDERS
                            for x in [0.3, -0.6, 0.95, 0.0]]
POINTS["sph_legendre"] = [((l, m), (t,)) for l, m in LEGENDRE_ORDERS
                          for t in [0.4, 1.3, 2.9]]
POINTS["sph_bessel"] = [((n,), (x,)) for n in [0, 1, 2, 5]
                        for x in [0.5, 1.0, 3.7, 20.0, -2.5, 1e-3, 0.0, 1e-30,
                                  1e4, 1e10]]
POINTS["sph_neumann"] = [((n,), (x,)) for n in [0, 1, 2, 5]
                         for x in [0.5, 1.0, 3.7, 20.0, -2.5, 0.01, 1e-30,
                                   1e4, 1e10]]

CYLINDER_ORDERS = [0.0, 0.5, 1.0, 2.25, 7.0, -0.5, -1.0, -2.75]
# (mpmath's Y_n and K_n of integer n are limits, seconds each at the self-check's precisions:
# fewer points for them.)
NONINTEGER_ORDERS = [0.5, 2.25, -0.5, -2.75, 7.5]
POINTS["cyl_bessel_j"] = [((v,), (x,)) for v in CYLINDER_ORDERS
                          for x in [0.5, 1.0, 3.7, 20.0, 30.0, 1e-3, 0.0, 1e-30,
                                    1e4, 1e10, -2.5]]
POINTS["cyl_bessel_i"] = [((v,), (x,)) for v in CYLINDER_ORDERS
                          for x in [0.5, 1.0, 3.7, 20.0, 1e-3, 0.0, 1e-30,
                                    650.0, 705.0, -2.5]]
POINTS["cyl_neumann"] = ([((v,), (x,)) for v in NONINTEGER_ORDERS
                          for x in [0.5, 1.0, 3.7, 20.0, 30.0, 1e-3, 1e-30,
                                    1e4, 1e10]]
                         + [((0.0,), (1.0,)), ((1.0,), (3.7,)), ((-1.0,), (0.5,))])
POINTS["cyl_bessel_k"] = ([((v,), (x,)) for v in NONINTEGER_ORDERS
                           for x in [0.5, 1.0, 3.7, 20.0, 1e-3, 1e-30, 650.0,
                                     700.0]]
                          + [((0.0,), (1.0,)), ((1.0,), (3.7,)), ((-1.0,), (0.5,))])

POINTS["ldexp"] = [((n,), (x,)) for n, x in [
    (3, 1.5), (-2, -7.25), (0, 0.1), (1000, 1e-290), (-1060, 1.5), (-1074, 1.0),
    (52, 1e-300), (1, -0.0)]]

ZETA_POINTS = [2.0, 0.5, 3.75, -0.1, 1e-8, 0.0, 1.001, 0.999, -2.0, -7.5, -30.25,
               12.0, 60.0, -120.5]
POINTS["riemann_zeta"] = pts1(*ZETA_POINTS)
POINTS["zeta_derivative"] = [((n,), (s,)) for n in [1, 2, 4] for s in ZETA_POINTS]

NPAR = {"ldexp": 1, "zeta_derivative": 1, "pow_double": 1, "pow_int": 1,
        "polygamma": 1, "hermite": 1, "sph_bessel": 1, "sph_neumann": 1, "cyl_bessel_j": 1,
        "cyl_neumann": 1, "cyl_bessel_i": 1, "cyl_bessel_k": 1, "legendre": 1, "laguerre": 1,
        "gegenbauer": 2, "assoc_laguerre": 2, "assoc_legendre": 2, "sph_legendre": 2}

# Points where the textbook derivative formulas overflow or underflow in an
# intermediate step even though every reference quantity is a normal double
# or underflows harmlessly (e.g. atan''(x) = -2x/(1+x^2)^2 at x = 1e300, or
# the Hessian b^2/r^3 of hypot at 1e-300).  They are kept on purpose to test
# a scaled / stable implementation; each such row is preceded by a
# "# extreme:" comment line in rules.txt so that a failure is easy to place.
EXTREME = {
    "log1p": {(1e300,)},
    "atan": {(1e300,)},
    "asinh": {(1e150,), (1e300,)},
    "acosh": {(1e300,)},
    "hypot": {(1e300, 1e300), (1e-300, 1e-300)},
    "hypot3": {(1e300, 1e300, 1e300), (1e-300, 2e-300, 3e-300)},
    "atan2": {(1e300, 1e300)},
}

# ---------------------------------------------------------------------------
# Row computation
# ---------------------------------------------------------------------------


def partial(fun, xs, i, side=0):
    """d fun / d x_i at xs by a central difference at very high precision.

    The step is 2**-(prec+20) relative to |x_i| (absolute if x_i == 0).  The
    working precision starts well above that and is doubled until two
    successive results agree to 1e-40, so that f(x+h) - f(x-h) is resolved
    even when the derivative is tiny compared with the function value
    (e.g. expm1 at -700, or add(1e10, -1e-10) w.r.t. the second variable).
    side=+1 uses a one-sided difference from above (for a point on a branch
    cut, where the double input +0.0 selects the upper side).
    """
    K = mp.prec + 20
    x = xs[i]
    prec = mp.prec + 2 * K + 64
    prev = None
    for _ in range(12):
        with mpmath.workprec(prec):
            h = mpmath.ldexp(1, (int(mpmath.mag(x)) if x != 0 else 0) - K)
            def at(t):
                ys = list(xs)
                ys[i] = x + t * h
                return fun(ys)
            if side == 0:
                d = (at(1) - at(-1)) / (2 * h)
            else:  # one-sided, second order: (-3f(0) + 4f(h) - f(2h)) / 2h
                h *= side
                d = (-3 * at(0) + 4 * at(1) - at(2)) / (2 * h)
        # an exact zero is only trusted once it survives high precision
        if (prev is not None and rel_close(d, prev, mpf("1e-40"))
                and (d != 0 or prec > 20000)):
            return +d
        prev = d
        prec *= 2
    raise AssertionError("numerical derivative does not converge")


def rel_close(a, b, rtol=mpf("1e-25"), scale=0, atol=0):
    scale = max(abs(a), abs(b), scale)
    return abs(a - b) <= rtol * scale + atol


class Dropped(Exception):
    pass


def compute_row(name, params, xs_f):
    rule = RULES[name]
    p = [mpf(v) for v in params]
    xs = [mpf(v) for v in xs_f]
    n = len(xs)
    value, grad, hess = rule(p, xs)
    upper = [(i, j) for i in range(n) for j in range(i, n)]

    # atan2(+0.0, b < 0) = +pi lies on the branch cut: the derivative with
    # respect to a is the one-sided one from a > 0.
    sides = [0] * n
    if name == "atan2" and xs[0] == 0 and xs[1] < 0:
        sides[0] = 1

    # --- self-check of the closed forms against numerical differentiation
    # (difference tolerated: 1e-25 relative to the larger of the two numbers
    # and of the largest entry of the same group, so that an exact zero is
    # compared on the scale of its neighbours)
    # (plus 1e-100 absolute: the truncation error h**2 f'''/6 of an
    # absolute step 2**-223 at x == 0, e.g. for x**3 at 0)
    ATOL = mpf("1e-100")
    gscale = max(abs(g) for g in grad)
    hscale = max(abs(h) for row in hess for h in row)
    for i in range(n):
        num = partial(lambda ys: rule(p, ys)[0], xs, i, sides[i])
        if not rel_close(num, grad[i], scale=gscale, atol=ATOL):
            raise AssertionError("%s%s: grad[%d] %s vs numeric %s"
                                 % (name, xs_f, i, grad[i], num))
        for j in range(n):
            num = partial(lambda ys: rule(p, ys)[1][i], xs, j, sides[j])
            if not rel_close(num, hess[i][j], scale=hscale, atol=ATOL):
                raise AssertionError("%s%s: hess[%d][%d] %s vs numeric %s"
                                     % (name, xs_f, i, j, hess[i][j], num))

    # --- sensitivities S = sum_k |x_k dq/dx_k| for every quantity
    def sens(dq):
        return sum((abs(xs[k] * dq[k]) for k in range(n) if xs[k] != 0),
                   mpf(0))

    s_value = sens(grad)
    s_grad = [sens(hess[i]) for i in range(n)]
    s_hess = []
    for (i, j) in upper:
        d3 = [partial(lambda ys: rule(p, ys)[2][i][j], xs, k, sides[k])
              if xs[k] != 0 else mpf(0) for k in range(n)]
        s_hess.append(sens(d3))

    # --- which exact zeros are zero only at this point?
    pert = [x * (1 + mpf(k + 1) * mpf(2) ** -30) + mpf(k + 1) * mpf(2) ** -40
            for k, x in enumerate(xs)]
    try:
        pv, pg, ph = rule(p, pert)
        pert_vals = [pv] + list(pg) + [ph[i][j] for (i, j) in upper]
    except (AssertionError, ValueError, ZeroDivisionError):
        pert_vals = [mpf(1)] * (1 + n + len(upper))  # treat as point zeros

    values = [value] + list(grad) + [hess[i][j] for (i, j) in upper]
    sensitivities = [s_value] + s_grad + s_hess
    groups = [[0], list(range(1, 1 + n)), list(range(1 + n, len(values)))]

    # --- range checks.  Anything that overflows a double drops the row, as
    # does a value below the normal range.  A gradient or Hessian entry below
    # the normal range (|q| < 2.2e-308, e.g. log'' at 1e300) is written as
    # 0.0: the test then checks |computed| <= tol, which is the meaningful
    # check for a true result that small (a subnormal reference would make a
    # relative comparison meaningless).
    out = list(values)
    underflow = [False] * len(values)
    for k, q in enumerate(values):
        if not mpmath.isfinite(q) or abs(q) > DBL_MAX:
            raise Dropped("overflow")
        if q != 0 and abs(q) < DBL_MIN:
            if k == 0:
                raise Dropped("value below normal range")
            out[k] = mpf(0)
            underflow[k] = True

    tols = []
    for g in groups:
        mag = max([abs(out[k]) for k in g])
        t = BASE_TOL
        for k in g:
            q, s = values[k], sensitivities[k]
            if underflow[k]:
                continue
            if q != 0:
                t = max(t, SAFETY * EPS * s / abs(q))
            elif pert_vals[k] != 0:  # point zero: absolute tolerance
                t = max(t, SAFETY * EPS * max(s, mag))
        tols.append(t)

    fields = [name, str(len(params))] + [fmt(float(v)) if not isinstance(v, int)
                                         else str(v) for v in params]
    fields += [str(n)] + [fmt(x) for x in xs_f]
    fields += [fmt(to_double(q)) for q in out]
    fields += [fmt_tol(t) for t in tols]
    return fields, tols


def header():
    return """\
# rules.txt -- reference data for nabla's elementary functions.
# GENERATED by tests/data/generate_rules.py with mpmath %s (mp.dps = %d).
# DO NOT EDIT BY HAND: rerun `/usr/bin/python3 tests/data/generate_rules.py`.
#
# Format: lines starting with '#' are comments, blank lines are ignored.
# Every other line has whitespace-separated fields:
#   name npar p1..p_npar nvar x1..x_nvar value g1..g_nvar h_upper... tol_value tol_grad tol_hess
# npar:    number of fixed parameters (1 for pow_double: c, pow_int: n, ldexp: n,
#          polygamma, hermite, sph_bessel, sph_neumann, zeta_derivative, legendre, laguerre: n,
#          cyl_*: v; 2 for gegenbauer, assoc_laguerre: n a, assoc_legendre, sph_legendre: l m;
#          else 0); no derivatives w.r.t. parameters.
# nvar:    number of variables (1..3), followed by their values.
# value:   f(x); g: gradient (nvar entries);
# h_upper: Hessian upper triangle, row-major, nvar*(nvar+1)/2 entries
#          (nvar=2: h00 h01 h11; nvar=3: h00 h01 h02 h11 h12 h22).
# tol_*:   relative tolerances for the value, each gradient entry and each
#          Hessian entry: pass if |computed - ref| <= tol*|ref|, or, when
#          ref == 0 exactly, if |computed| <= tol.
# References are exact results at the given (exactly representable) double
# inputs, rounded to the nearest double; numbers are repr(float) or inf/nan.
# Gradient/Hessian entries whose magnitude is below 2.2e-308 are written as
# 0.0 (absolute check).  "# extreme:" marks a row where textbook derivative
# formulas overflow or underflow in intermediate steps.
# Tolerance: max(1e-12, 64 * 2^-52 * cond), cond = sum_i |x_i dq/dx_i| / |q|,
# rounded up to one significant digit (see the generator's docstring).
""" % (mpmath.__version__, mp.dps)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    out_path = argv[1] if len(argv) > 1 else os.path.join(here, "rules.txt")

    lines = [header()]
    counts = {}
    order = list(POINTS)
    for name in order:
        npar = NPAR.get(name, 0)
        kept = 0
        lines.append("\n# --- %s\n" % name)
        for params, xs in POINTS[name]:
            assert len(params) == npar
            try:
                fields, tols = compute_row(name, params, xs)
            except Dropped as why:
                print("dropped %s %s %s: %s" % (name, params, xs, why),
                      file=sys.stderr)
                continue
            if max(tols) > mpf("1e-9"):
                print("note: loose tolerance %s %s %s: %s"
                      % (name, params, xs, fields[-3:]), file=sys.stderr)
            if xs in EXTREME.get(name, ()):
                lines.append("# extreme: intermediate overflow/underflow in "
                             "textbook derivative formulas\n")
            lines.append(" ".join(fields) + "\n")
            kept += 1
        counts[name] = kept

    text = "".join(lines)
    if out_path == "-":
        sys.stdout.write(text)
    else:
        with open(out_path, "w") as f:
            f.write(text)
    total = sum(counts.values())
    summary = ["rows per function:"]
    summary += ["  %-11s %3d" % (k, v) for k, v in counts.items()]
    summary.append("total rows: %d" % total)
    print("\n".join(summary), file=sys.stderr if out_path == "-" else sys.stdout)


if __name__ == "__main__":
    main(sys.argv)
