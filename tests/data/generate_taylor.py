#!/usr/bin/env python3
"""Reference derivatives of order 0..8 of compositions of every rule, for nabla's Taylor tests.

For each function f of the rule table, with inner functions that keep its arguments inside its
domain,
    u1(x) = a1 + b1 sin(x),   u2(x) = a2 + b2 cos(x),   u3(x) = a3 + b3 sin(2x),
the derivatives of g(x) = f(u1(x)) (unary), f(u1(x), u2(x)) (binary) or f(u1, u2, u3) (fma, hypot3, ellint_3) at
x0 are computed by mpmath.taylor at 40 digits and rounded to doubles. Each line of taylor.txt is

    name npar p... a1 b1 a2 b2 a3 b3 x0 d0 d1 ... d8

Rerun from the repository root:  /usr/bin/python3 tests/data/generate_taylor.py
"""

import os

import mpmath

mpmath.mp.dps = 40
ORDER = 8
X0 = 0.4

# name: (parameters, (a1, b1), (a2, b2), (a3, b3), function of mpmath numbers)
pi = mpmath.pi


def lgamma(x):
    return mpmath.re(mpmath.loggamma(x))


FUNCTIONS = {
    "neg": ((), (0.7, 0.5), None, None, lambda u: -u),
    "add": ((), (0.7, 0.5), (1.1, 0.3), None, lambda a, b: a + b),
    "sub": ((), (0.7, 0.5), (1.1, 0.3), None, lambda a, b: a - b),
    "mul": ((), (0.7, 0.5), (1.1, 0.3), None, lambda a, b: a * b),
    "div": ((), (0.7, 0.5), (1.1, 0.3), None, lambda a, b: a / b),
    "fma": ((), (0.7, 0.5), (1.1, 0.3), (-0.4, 0.6), lambda a, b, c: a * b + c),
    "exp": ((), (0.7, 0.5), None, None, mpmath.exp),
    "exp2": ((), (0.7, 0.5), None, None, lambda u: mpmath.power(2, u)),
    "expm1": ((), (0.1, 0.05), None, None, mpmath.expm1),
    "log": ((), (1.5, 0.5), None, None, mpmath.log),
    "log2": ((), (1.5, 0.5), None, None, lambda u: mpmath.log(u, 2)),
    "log10": ((), (1.5, 0.5), None, None, lambda u: mpmath.log10(u)),
    "log1p": ((), (0.3, 0.2), None, None, lambda u: mpmath.log(1 + u)),
    "sqrt": ((), (1.5, 0.5), None, None, mpmath.sqrt),
    "cbrt": ((), (-1.5, 0.5), None, None, lambda u: mpmath.sign(u) * mpmath.cbrt(abs(u))),
    "sin": ((), (0.7, 0.5), None, None, mpmath.sin),
    "cos": ((), (0.7, 0.5), None, None, mpmath.cos),
    "tan": ((), (0.3, 0.4), None, None, mpmath.tan),
    "asin": ((), (0.3, 0.2), None, None, mpmath.asin),
    "acos": ((), (0.3, 0.2), None, None, mpmath.acos),
    "atan": ((), (0.7, 0.5), None, None, mpmath.atan),
    "sinh": ((), (0.7, 0.5), None, None, mpmath.sinh),
    "cosh": ((), (0.7, 0.5), None, None, mpmath.cosh),
    "tanh": ((), (0.7, 0.5), None, None, mpmath.tanh),
    "asinh": ((), (0.7, 0.5), None, None, mpmath.asinh),
    "acosh": ((), (1.8, 0.3), None, None, mpmath.acosh),
    "atanh": ((), (0.3, 0.2), None, None, mpmath.atanh),
    "erf": ((), (0.7, 0.5), None, None, mpmath.erf),
    "erfc": ((), (0.7, 0.5), None, None, mpmath.erfc),
    "tgamma": ((), (1.7, 0.5), None, None, mpmath.gamma),
    "lgamma": ((), (1.7, 0.5), None, None, lgamma),
    "digamma": ((), (1.7, 0.5), None, None, mpmath.digamma),
    "abs": ((), (-0.7, 0.5), None, None, abs),
    "floor": ((), (2.3, 0.5), None, None, mpmath.floor),
    "ceil": ((), (2.3, 0.5), None, None, mpmath.ceil),
    "round": ((), (2.3, 0.5), None, None, lambda u: mpmath.floor(u + mpmath.mpf(0.5))),
    "trunc": ((), (2.3, 0.5), None, None, mpmath.floor),
    "pow": ((), (1.5, 0.5), (1.1, 0.3), None, mpmath.power),
    "hypot": ((), (0.7, 0.5), (1.1, 0.3), None, lambda a, b: mpmath.sqrt(a * a + b * b)),
    "hypot3": ((), (0.7, 0.5), (1.1, 0.3), (-0.4, 0.6),
               lambda a, b, c: mpmath.sqrt(a * a + b * b + c * c)),
    "atan2": ((), (0.7, 0.5), (-1.1, 0.3), None, mpmath.atan2),
    "min": ((), (0.7, 0.5), (1.5, 0.3), None, min),
    "max": ((), (0.7, 0.5), (1.5, 0.3), None, max),
    "fmin": ((), (0.7, 0.5), (1.5, 0.3), None, min),
    "fmax": ((), (0.7, 0.5), (1.5, 0.3), None, max),
    "riemann_zeta": ((), (0.3, 0.5), None, None, mpmath.zeta),
    "zeta_derivative": ((2,), (-1.7, 0.5), None, None, lambda u: mpmath.zeta(u, 1, 2)),
    "ldexp": ((-3,), (1.7, 0.5), None, None, lambda u: u / 8),
    "pow_double": ((2.5,), (1.5, 0.5), None, None, lambda u: mpmath.power(u, 2.5)),
    "pow_int": ((3,), (-1.5, 0.5), None, None, lambda u: u ** 3),
    "pow_int_negative": ((-2,), (-1.5, 0.5), None, None, lambda u: u ** -2),
    "polygamma": ((1,), (1.7, 0.5), None, None, lambda u: mpmath.psi(1, u)),
    "ellint_1": ((), (0.5, 0.3), (0.8, 0.5), None, lambda k, phi: mpmath.ellipf(phi, k * k)),
    "ellint_2": ((), (0.5, 0.3), (0.8, 0.5), None, lambda k, phi: mpmath.ellipe(phi, k * k)),
    "fmod": ((), (1.5, 0.5), (1.1, 0.3), None, mpmath.fmod),
    "sinc": ((), (0.7, 0.5), None, None, lambda u: mpmath.sin(u) / u),
    "hermite": ((3,), (0.7, 0.5), None, None, lambda u: mpmath.hermite(3, u)),
    "gegenbauer": ((4, 1.5), (0.3, 0.5), None, None, lambda u: mpmath.gegenbauer(4, 1.5, u)),
    "assoc_laguerre": ((3, 0.5), (1.7, 0.5), None, None, lambda u: mpmath.laguerre(3, 0.5, u)),
    "legendre": ((5,), (0.3, 0.5), None, None, lambda u: mpmath.legendre(5, u)),
    "laguerre": ((4,), (1.7, 0.5), None, None, lambda u: mpmath.laguerre(4, 0, u)),
    "assoc_legendre": ((4, 3), (0.3, 0.5), None, None,
                       lambda u: (-1) ** 3 * mpmath.legenp(4, 3, u)),
    "sph_legendre": ((3, 1), (0.7, 0.5), None, None,
                     lambda u: mpmath.re(mpmath.spherharm(3, 1, u, 0))),
    "sph_bessel": ((2,), (1.7, 0.5), None, None,
                   lambda u: mpmath.sqrt(mpmath.pi / (2 * u)) * mpmath.besselj(2.5, u)),
    "sph_neumann": ((1,), (1.7, 0.5), None, None,
                    lambda u: mpmath.sqrt(mpmath.pi / (2 * u)) * mpmath.bessely(1.5, u)),
    "cyl_bessel_j": ((0.5,), (1.7, 0.5), None, None, lambda u: mpmath.besselj(0.5, u)),
    "cyl_neumann": ((2.25,), (1.7, 0.5), None, None, lambda u: mpmath.bessely(2.25, u)),
    "cyl_bessel_i": ((-1.5,), (1.7, 0.5), None, None, lambda u: mpmath.besseli(-1.5, u)),
    "cyl_bessel_k": ((1,), (1.7, 0.5), None, None, lambda u: mpmath.besselk(1, u)),
    "sin_pi": ((), (0.7, 0.5), None, None, mpmath.sinpi),
    "cos_pi": ((), (0.7, 0.5), None, None, mpmath.cospi),
    "sqrt1pm1": ((), (0.3, 0.2), None, None, lambda u: mpmath.sqrt(1 + u) - 1),
    "expint": ((), (0.7, 0.5), None, None, mpmath.ei),
    "lambert_w0": ((), (0.7, 0.5), None, None, lambda u: mpmath.re(mpmath.lambertw(u, 0))),
    "lambert_wm1": ((), (-0.2, 0.1), None, None,
                    lambda u: mpmath.re(mpmath.lambertw(u, -1))),
    "comp_ellint_1": ((), (0.5, 0.3), None, None, lambda u: mpmath.ellipk(u * u)),
    "comp_ellint_2": ((), (0.5, 0.3), None, None, lambda u: mpmath.ellipe(u * u)),
    "powm1": ((), (1.5, 0.5), (1.1, 0.3), None, lambda a, b: mpmath.power(a, b) - 1),
    "beta": ((), (1.5, 0.5), (1.1, 0.3), None, mpmath.beta),
    # (nu away from 0 and from k^2, where the closed-form partials divide 0 by 0.)
    "comp_ellint_3": ((), (0.3, 0.2), (-0.5, 0.2), None,
                      lambda k, nu: mpmath.ellippi(nu, k * k)),
    "ellint_3": ((), (0.5, 0.3), (-0.6, 0.2), (0.8, 0.5),
                 lambda k, nu, phi: mpmath.ellippi(nu, phi, k * k)),
}


def composed(spec):
    _, inner1, inner2, inner3, f = spec
    def u1(x):
        return inner1[0] + inner1[1] * mpmath.sin(x)
    def u2(x):
        return inner2[0] + inner2[1] * mpmath.cos(x)
    def u3(x):
        return inner3[0] + inner3[1] * mpmath.sin(2 * x)
    if inner3 is not None:
        return lambda x: f(u1(x), u2(x), u3(x))
    if inner2 is not None:
        return lambda x: f(u1(x), u2(x))
    return lambda x: f(u1(x))


def main():
    lines = ["# generated by tests/data/generate_taylor.py with mpmath "
             f"{mpmath.__version__}; do not edit by hand",
             "# name npar p... a1 b1 a2 b2 a3 b3 x0 d0 .. d8"]
    for name, spec in FUNCTIONS.items():
        parameters, inner1, inner2, inner3 = spec[0], spec[1], spec[2], spec[3]
        coefficients = mpmath.taylor(composed(spec), mpmath.mpf(X0), ORDER)
        derivatives = [c * mpmath.factorial(k) for k, c in enumerate(coefficients)]
        fields = [name, str(len(parameters))] + [repr(p) for p in parameters]
        for pair in (inner1, inner2 or (0.0, 0.0), inner3 or (0.0, 0.0)):
            fields += [repr(float(pair[0])), repr(float(pair[1]))]
        fields.append(repr(X0))
        fields += [repr(float(mpmath.nstr(d, 30))) for d in derivatives]
        lines.append(" ".join(fields))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "taylor.txt")
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
