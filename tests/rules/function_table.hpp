#pragma once
// Every function of the rule table, by the name tests/data/rules.txt gives it, as a generic
// builder: build(parameters, x0, x1, x2) applies the function to placeholders, dual numbers or
// plain numbers alike. The reference tests of every mode visit this one list.

#include <nabla/nabla.hpp>

#include <cstddef>
#include <string>

namespace nabla_test {

#define NABLA_TEST_UNARY(fn)                                                                       \
    check.template operator()<1>(#fn, [](const auto&, auto x, auto, auto) { return fn(x); })
#define NABLA_TEST_BINARY(fn)                                                                      \
    check.template operator()<2>(#fn, [](const auto&, auto a, auto b, auto) { return fn(a, b); })

template <class Check>
void for_each_rule_function(Check check) {
    using nabla::digamma, nabla::polygamma, nabla::min, nabla::max, nabla::sin_pi, nabla::cos_pi,
        nabla::sqrt1pm1, nabla::expint, nabla::lambert_w0, nabla::lambert_wm1, nabla::comp_ellint_1,
        nabla::comp_ellint_2, nabla::powm1, nabla::beta, nabla::hermite, nabla::sph_bessel,
        nabla::sph_neumann, nabla::sinc, nabla::ellint_1, nabla::ellint_2, nabla::fmod,
        nabla::comp_ellint_3, nabla::ellint_3, nabla::cyl_bessel_j, nabla::cyl_neumann,
        nabla::cyl_bessel_i, nabla::cyl_bessel_k, nabla::riemann_zeta, nabla::zeta_derivative,
        nabla::gegenbauer, nabla::assoc_laguerre, nabla::legendre, nabla::laguerre,
        nabla::assoc_legendre, nabla::sph_legendre;
    using std::abs, std::acos, std::acosh, std::asin, std::asinh, std::atan, std::atan2, std::atanh,
        std::cbrt, std::ceil, std::cos, std::cosh, std::erf, std::erfc, std::exp, std::exp2,
        std::expm1, std::floor, std::fma, std::fmax, std::fmin, std::hypot, std::lgamma, std::log,
        std::log10, std::log1p, std::log2, std::pow, std::round, std::sin, std::sinh, std::sqrt,
        std::tan, std::tanh, std::tgamma, std::trunc;
    check.template operator()<1>("neg", [](const auto&, auto x, auto, auto) { return -x; });
    check.template operator()<2>("add", [](const auto&, auto a, auto b, auto) { return a + b; });
    check.template operator()<2>("sub", [](const auto&, auto a, auto b, auto) { return a - b; });
    check.template operator()<2>("mul", [](const auto&, auto a, auto b, auto) { return a * b; });
    check.template operator()<2>("div", [](const auto&, auto a, auto b, auto) { return a / b; });
    check.template operator()<3>("fma",
                                 [](const auto&, auto a, auto b, auto c) { return fma(a, b, c); });
    check.template operator()<3>(
        "hypot3", [](const auto&, auto a, auto b, auto c) { return hypot(a, b, c); });
    NABLA_TEST_UNARY(exp);
    NABLA_TEST_UNARY(exp2);
    NABLA_TEST_UNARY(expm1);
    NABLA_TEST_UNARY(log);
    NABLA_TEST_UNARY(log2);
    NABLA_TEST_UNARY(log10);
    NABLA_TEST_UNARY(log1p);
    NABLA_TEST_UNARY(sqrt);
    NABLA_TEST_UNARY(cbrt);
    NABLA_TEST_BINARY(pow);
    NABLA_TEST_BINARY(hypot);
    NABLA_TEST_UNARY(sin);
    NABLA_TEST_UNARY(cos);
    NABLA_TEST_UNARY(tan);
    NABLA_TEST_UNARY(asin);
    NABLA_TEST_UNARY(acos);
    NABLA_TEST_UNARY(atan);
    NABLA_TEST_BINARY(atan2);
    NABLA_TEST_UNARY(sinh);
    NABLA_TEST_UNARY(cosh);
    NABLA_TEST_UNARY(tanh);
    NABLA_TEST_UNARY(asinh);
    NABLA_TEST_UNARY(acosh);
    NABLA_TEST_UNARY(atanh);
    NABLA_TEST_UNARY(erf);
    NABLA_TEST_UNARY(erfc);
    NABLA_TEST_UNARY(tgamma);
    NABLA_TEST_UNARY(lgamma);
    NABLA_TEST_UNARY(digamma);
    NABLA_TEST_UNARY(sin_pi);
    NABLA_TEST_UNARY(cos_pi);
    NABLA_TEST_UNARY(sqrt1pm1);
    NABLA_TEST_UNARY(expint);
    NABLA_TEST_UNARY(lambert_w0);
    NABLA_TEST_UNARY(lambert_wm1);
    NABLA_TEST_UNARY(comp_ellint_1);
    NABLA_TEST_UNARY(comp_ellint_2);
    NABLA_TEST_UNARY(sinc);
    NABLA_TEST_UNARY(riemann_zeta);
    NABLA_TEST_BINARY(powm1);
    NABLA_TEST_BINARY(beta);
    NABLA_TEST_BINARY(ellint_1);
    NABLA_TEST_BINARY(ellint_2);
    NABLA_TEST_BINARY(fmod);
    NABLA_TEST_BINARY(comp_ellint_3);
    check.template operator()<3>(
        "ellint_3", [](const auto&, auto k, auto nu, auto phi) { return ellint_3(k, nu, phi); });
    NABLA_TEST_UNARY(abs);
    NABLA_TEST_UNARY(floor);
    NABLA_TEST_UNARY(ceil);
    NABLA_TEST_UNARY(round);
    NABLA_TEST_UNARY(trunc);
    NABLA_TEST_BINARY(min);
    NABLA_TEST_BINARY(max);
    NABLA_TEST_BINARY(fmin);
    NABLA_TEST_BINARY(fmax);
    check.template operator()<1>("pow_double",
                                 [](const auto& p, auto x, auto, auto) { return pow(x, p[0]); });
    check.template operator()<1>("pow_int", [](const auto& p, auto x, auto, auto) {
        return pow(x, static_cast<int>(p[0]));
    });
    check.template operator()<1>("zeta_derivative", [](const auto& p, auto x, auto, auto) {
        return zeta_derivative(static_cast<int>(p[0]), x);
    });
    check.template operator()<1>("ldexp", [](const auto& p, auto x, auto, auto) {
        using std::ldexp;
        return ldexp(x, static_cast<int>(p[0]));
    });
    check.template operator()<1>("polygamma", [](const auto& p, auto x, auto, auto) {
        return polygamma(static_cast<int>(p[0]), x);
    });
    check.template operator()<1>("hermite", [](const auto& p, auto x, auto, auto) {
        return hermite(static_cast<int>(p[0]), x);
    });
    check.template operator()<1>("sph_bessel", [](const auto& p, auto x, auto, auto) {
        return sph_bessel(static_cast<int>(p[0]), x);
    });
    check.template operator()<1>("sph_neumann", [](const auto& p, auto x, auto, auto) {
        return sph_neumann(static_cast<int>(p[0]), x);
    });
    check.template operator()<1>("gegenbauer", [](const auto& p, auto x, auto, auto) {
        return gegenbauer(static_cast<int>(p[0]), p[1], x);
    });
    check.template operator()<1>("assoc_laguerre", [](const auto& p, auto x, auto, auto) {
        return assoc_laguerre(static_cast<int>(p[0]), p[1], x);
    });
    check.template operator()<1>("legendre", [](const auto& p, auto x, auto, auto) {
        return legendre(static_cast<int>(p[0]), x);
    });
    check.template operator()<1>("laguerre", [](const auto& p, auto x, auto, auto) {
        return laguerre(static_cast<int>(p[0]), x);
    });
    check.template operator()<1>("assoc_legendre", [](const auto& p, auto x, auto, auto) {
        return assoc_legendre(static_cast<int>(p[0]), static_cast<int>(p[1]), x);
    });
    check.template operator()<1>("sph_legendre", [](const auto& p, auto x, auto, auto) {
        return sph_legendre(static_cast<int>(p[0]), static_cast<int>(p[1]), x);
    });
    check.template operator()<1>("cyl_bessel_j", [](const auto& p, auto x, auto, auto) {
        return cyl_bessel_j(static_cast<double>(p[0]), x);
    });
    check.template operator()<1>("cyl_neumann", [](const auto& p, auto x, auto, auto) {
        return cyl_neumann(static_cast<double>(p[0]), x);
    });
    check.template operator()<1>("cyl_bessel_i", [](const auto& p, auto x, auto, auto) {
        return cyl_bessel_i(static_cast<double>(p[0]), x);
    });
    check.template operator()<1>("cyl_bessel_k", [](const auto& p, auto x, auto, auto) {
        return cyl_bessel_k(static_cast<double>(p[0]), x);
    });
}

#undef NABLA_TEST_UNARY
#undef NABLA_TEST_BINARY

}  // namespace nabla_test
