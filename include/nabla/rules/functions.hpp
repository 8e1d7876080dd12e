#pragma once
// The elementary functions of nabla: each name bound to its rule, once. Every mode (static
// graphs in core/functions.hpp, dual and Taylor numbers in forward/, the tape's expressions in
// reverse/expression.hpp) generates its overloads by applying a macro of its own to these lists,
// so adding a function is one rule in rules/ and one line here. tests/rules/every_rule_test.cpp
// checks that every rule is reachable in every mode.
//
// Not listed, because their overloads choose among rules by the arguments' types: the arithmetic
// operators (add, sub, mul, div, neg), pow (pow_rule, or powi_rule for an integer exponent), the
// functions of three real operands (fma, hypot of three, ellint_3), ldexp (an integer exponent
// after the operand) and digamma. Each mode writes those by hand.

// X(function, rule) for the functions of one operand.
#define NABLA_UNARY_FUNCTIONS(X)                                                                   \
    X(exp, exp_rule)                                                                               \
    X(exp2, exp2_rule)                                                                             \
    X(expm1, expm1_rule)                                                                           \
    X(log, log_rule)                                                                               \
    X(log2, log2_rule)                                                                             \
    X(log10, log10_rule)                                                                           \
    X(log1p, log1p_rule)                                                                           \
    X(sqrt, sqrt_rule)                                                                             \
    X(cbrt, cbrt_rule)                                                                             \
    X(sin, sin_rule)                                                                               \
    X(cos, cos_rule)                                                                               \
    X(tan, tan_rule)                                                                               \
    X(asin, asin_rule)                                                                             \
    X(acos, acos_rule)                                                                             \
    X(atan, atan_rule)                                                                             \
    X(sinh, sinh_rule)                                                                             \
    X(cosh, cosh_rule)                                                                             \
    X(tanh, tanh_rule)                                                                             \
    X(asinh, asinh_rule)                                                                           \
    X(acosh, acosh_rule)                                                                           \
    X(atanh, atanh_rule)                                                                           \
    X(erf, erf_rule)                                                                               \
    X(erfc, erfc_rule)                                                                             \
    X(tgamma, tgamma_rule)                                                                         \
    X(lgamma, lgamma_rule)                                                                         \
    X(sin_pi, sin_pi_rule)                                                                         \
    X(cos_pi, cos_pi_rule)                                                                         \
    X(sqrt1pm1, sqrt1pm1_rule)                                                                     \
    X(expint, expint_rule)                                                                         \
    X(lambert_w0, lambert_w0_rule)                                                                 \
    X(lambert_wm1, lambert_wm1_rule)                                                               \
    X(comp_ellint_1, comp_ellint_1_rule)                                                           \
    X(comp_ellint_2, comp_ellint_2_rule)                                                           \
    X(sinc, sinc_rule)                                                                             \
    X(riemann_zeta, riemann_zeta_rule)                                                             \
    X(abs, abs_rule)                                                                               \
    X(fabs, abs_rule)                                                                              \
    X(sign, sign_rule)                                                                             \
    X(floor, floor_rule)                                                                           \
    X(ceil, ceil_rule)                                                                             \
    X(round, round_rule)                                                                           \
    X(trunc, trunc_rule)

// X(function, rule) for the functions of two operands. The weights carry the derivatives of min
// and max, and the strong-zero products and quotients keep a structural zero exact
// (docs/conventions.md); derivative graphs are made of them.
#define NABLA_BINARY_FUNCTIONS(X)                                                                  \
    X(atan2, atan2_rule)                                                                           \
    X(hypot, hypot_rule)                                                                           \
    X(min, min_rule)                                                                               \
    X(max, max_rule)                                                                               \
    X(fmin, fmin_rule)                                                                             \
    X(fmax, fmax_rule)                                                                             \
    X(min_weight, min_weight_rule)                                                                 \
    X(fmin_weight, fmin_weight_rule)                                                               \
    X(fmax_weight, fmax_weight_rule)                                                               \
    X(mul_strong_zero, mul_strong_zero_rule)                                                       \
    X(div_strong_zero, div_strong_zero_rule)                                                       \
    X(powm1, powm1_rule)                                                                           \
    X(beta, beta_rule)                                                                             \
    X(ellint_1, ellint_1_rule)                                                                     \
    X(ellint_2, ellint_2_rule)                                                                     \
    X(comp_ellint_3, comp_ellint_3_rule)                                                           \
    X(fmod, fmod_rule)

// X(function, rule) for the functions f(n, x) of a constant index n, differentiable in x: the
// index is not a variable. An integer (an int, or nabla::literal<N> in static graphs), or a real
// order where rules::real_order<rule> says so (the cylindrical Bessel functions).
#define NABLA_INDEXED_FUNCTIONS(X)                                                                 \
    X(polygamma, polygamma_rule)                                                                   \
    X(hermite, hermite_rule)                                                                       \
    X(sph_bessel, sph_bessel_rule)                                                                 \
    X(sph_neumann, sph_neumann_rule)                                                               \
    X(cyl_bessel_j, cyl_bessel_j_rule)                                                             \
    X(cyl_neumann, cyl_neumann_rule)                                                               \
    X(cyl_bessel_i, cyl_bessel_i_rule)                                                             \
    X(cyl_bessel_k, cyl_bessel_k_rule)                                                             \
    X(zeta_derivative, zeta_derivative_rule)

// X(function, rule) for the functions f(n, a, x) of a constant integer degree n and a constant
// real parameter a, differentiable in x (the Gegenbauer and associated Laguerre polynomials).
#define NABLA_PARAMETRIC_FUNCTIONS(X)                                                              \
    X(gegenbauer, gegenbauer_rule)                                                                 \
    X(assoc_laguerre, assoc_laguerre_rule)
