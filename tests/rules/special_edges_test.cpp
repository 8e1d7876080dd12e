// The special functions' derivatives at the ends of their domains (small and large arguments,
// near poles, zeros and branch points, where an algorithm changes), against mpmath at 40 digits
// (tests/data/edges.txt, from generate_edges.py), in every mode: static graphs (d to second
// order), dual numbers, the tape, forward-over-forward and forward-over-reverse Hessians, Taylor
// numbers (derivatives<8>) and the Taylor integrator's series tape. The tolerance is a few units
// in the last place times the partial's condition number, growing with the order. The elliptic
// integrals have a test of their own (elliptic_test.cpp).

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "partials.hpp"

namespace {

using nabla_test::call;
using nabla_test::d_in;
using line = nabla_test::partial_line;

// The partial of the line in every mode that reaches its order.
template <std::size_t N, class F>
void check(const line& l, const F& f) {
    const double tolerance = l.tolerance();
    INFO(l.text << "  (tolerance " << tolerance << ")");
    // Static graphs to second order.
    const auto e = std::apply(f, nabla::variables<N>());
    const auto order = [&](std::size_t i) { return i < N ? l.orders[i] : std::size_t(0); };
    double s = std::numeric_limits<double>::quiet_NaN();
    bool found = true;
    if (order(0) == 1 && order(1) == 0)
        s = call<N>(d_in<0, N>(e), l.x);
    else if (order(0) == 2 && order(1) == 0)
        s = call<N>(d_in<0, N>(d_in<0, N>(e)), l.x);
    else if constexpr (N == 2) {
        if (order(0) == 0 && order(1) == 1)
            s = call<N>(d_in<1, N>(e), l.x);
        else if (order(0) == 1 && order(1) == 1)
            s = call<N>(d_in<1, N>(d_in<0, N>(e)), l.x);
        else if (order(0) == 0 && order(1) == 2)
            s = call<N>(d_in<1, N>(d_in<1, N>(e)), l.x);
        else
            found = false;
    } else {
        found = false;
    }
    if (found) {
        INFO("static graph: " << s);
        CHECK(nabla_test::close(s, l.value, tolerance));
    }

    nabla_test::check_number_modes<N>(l, f, false);
}

// The special functions by name, with their constant parameters.
void check_line(const line& l) {
    using nabla::sin_pi, nabla::cos_pi, nabla::sqrt1pm1, nabla::expint, nabla::lambert_w0,
        nabla::lambert_wm1, nabla::sinc, nabla::riemann_zeta, nabla::zeta_derivative,
        nabla::digamma, nabla::polygamma, nabla::hermite, nabla::sph_bessel, nabla::sph_neumann,
        nabla::cyl_bessel_j, nabla::cyl_neumann, nabla::cyl_bessel_i, nabla::cyl_bessel_k,
        nabla::gegenbauer, nabla::assoc_laguerre, nabla::legendre, nabla::beta, nabla::powm1;
    using std::erf, std::erfc, std::tgamma, std::lgamma;
    const auto n = [&] { return static_cast<int>(l.p[0]); };
#define NABLA_EDGE_UNARY(function)                                                                 \
    if (l.name == #function)                                                                       \
        return check<1>(l, [](const auto& x) { return function(x); });
    NABLA_EDGE_UNARY(sin_pi)
    NABLA_EDGE_UNARY(cos_pi)
    NABLA_EDGE_UNARY(sqrt1pm1)
    NABLA_EDGE_UNARY(expint)
    NABLA_EDGE_UNARY(lambert_w0)
    NABLA_EDGE_UNARY(lambert_wm1)
    NABLA_EDGE_UNARY(sinc)
    NABLA_EDGE_UNARY(riemann_zeta)
    NABLA_EDGE_UNARY(tgamma)
    NABLA_EDGE_UNARY(lgamma)
    NABLA_EDGE_UNARY(digamma)
    NABLA_EDGE_UNARY(erf)
    NABLA_EDGE_UNARY(erfc)
#undef NABLA_EDGE_UNARY
#define NABLA_EDGE_INDEXED(function, index)                                                        \
    if (l.name == #function)                                                                       \
        return check<1>(l, [i = index](const auto& x) { return function(i, x); });
    NABLA_EDGE_INDEXED(zeta_derivative, n())
    NABLA_EDGE_INDEXED(polygamma, n())
    NABLA_EDGE_INDEXED(hermite, n())
    NABLA_EDGE_INDEXED(sph_bessel, n())
    NABLA_EDGE_INDEXED(sph_neumann, n())
    NABLA_EDGE_INDEXED(legendre, n())
    NABLA_EDGE_INDEXED(cyl_bessel_j, l.p[0])
    NABLA_EDGE_INDEXED(cyl_neumann, l.p[0])
    NABLA_EDGE_INDEXED(cyl_bessel_i, l.p[0])
    NABLA_EDGE_INDEXED(cyl_bessel_k, l.p[0])
#undef NABLA_EDGE_INDEXED
    if (l.name == "gegenbauer")
        return check<1>(l, [i = n(), a = l.p[1]](const auto& x) { return gegenbauer(i, a, x); });
    if (l.name == "assoc_laguerre")
        return check<1>(l,
                        [i = n(), a = l.p[1]](const auto& x) { return assoc_laguerre(i, a, x); });
    if (l.name == "beta")
        return check<2>(l, [](const auto& a, const auto& b) { return beta(a, b); });
    if (l.name == "powm1")
        return check<2>(l, [](const auto& a, const auto& b) { return powm1(a, b); });
    FAIL("edges.txt names a function this test does not know: " << l.name);
}

}  // namespace

TEST_CASE("special functions: every derivative at the ends of the domain matches mpmath in every "
          "mode",
          "[rules][edges]") {
    const auto all = nabla_test::partial_lines("edges.txt", true);
    REQUIRE(all.size() > 300);
    for (const auto& l : all)
        check_line(l);
}
