// The elliptic integrals' partial derivatives at the ends of their domains (k = 0, near 0 and
// near 1; nu at 0, near 0 on both sides, on and near k^2, below -1), against mpmath at 40 digits
// (tests/data/elliptic.txt, from generate_elliptic.py), in every mode: static graphs (d to third
// order), dual numbers, the tape, forward-over-forward and forward-over-reverse Hessians, Taylor
// numbers (derivatives<8> along each operand) and the Taylor integrator's series tape. The
// tolerance is a few units in the last place times the partial's condition number, growing with the
// order.

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

// The function of a line (Which: its place among the functions of N operands), on any numbers.
template <std::size_t N, int Which>
struct function {
    template <class... X>
    auto operator()(const X&... x) const {
        using nabla::comp_ellint_1, nabla::comp_ellint_2, nabla::ellint_1, nabla::ellint_2,
            nabla::comp_ellint_3, nabla::ellint_3;
        if constexpr (N == 1 && Which == 0)
            return comp_ellint_1(x...);
        else if constexpr (N == 1)
            return comp_ellint_2(x...);
        else if constexpr (N == 2 && Which == 0)
            return ellint_1(x...);
        else if constexpr (N == 2 && Which == 1)
            return ellint_2(x...);
        else if constexpr (N == 2)
            return comp_ellint_3(x...);
        else
            return ellint_3(x...);
    }
};

// d^(a, b, c) of a static expression of up to three placeholders.
template <std::size_t N, std::size_t A, std::size_t B, std::size_t C, class E>
auto static_derivative(const E& e) {
    if constexpr (A > 0)
        return static_derivative<N, A - 1, B, C>(d_in<0, N>(e));
    else if constexpr (B > 0)
        return static_derivative<N, 0, B - 1, C>(d_in<1, N>(e));
    else if constexpr (C > 0)
        return static_derivative<N, 0, 0, C - 1>(d_in<2, N>(e));
    else
        return e;
}

// The static partial of the line's orders, where they add up to at most 3.
template <std::size_t N, class E>
bool static_partial(const E& e, const line& l, double& out) {
    bool found = false;
    const auto order = [&](std::size_t i) { return i < l.orders.size() ? l.orders[i] : 0; };
    const auto each = [&]<std::size_t A, std::size_t B, std::size_t C>() {
        if (found || order(0) != A || order(1) != B || order(2) != C)
            return;
        found = true;
        out = call<N>(static_derivative<N, A, B, C>(e), l.x);
    };
    each.template operator()<0, 0, 0>();
    each.template operator()<1, 0, 0>();
    each.template operator()<2, 0, 0>();
    each.template operator()<3, 0, 0>();
    if constexpr (N >= 2) {
        each.template operator()<0, 1, 0>();
        each.template operator()<0, 2, 0>();
        each.template operator()<0, 3, 0>();
        each.template operator()<1, 1, 0>();
        each.template operator()<2, 1, 0>();
        each.template operator()<1, 2, 0>();
    }
    if constexpr (N == 3) {
        each.template operator()<0, 0, 1>();
        each.template operator()<1, 0, 1>();
        each.template operator()<0, 1, 1>();
        each.template operator()<0, 0, 2>();
        each.template operator()<1, 1, 1>();
    }
    return found;
}

template <std::size_t N, int Which>
double static_for(const line& l, bool& found) {
    double out = 0.0;
    const auto expression = std::apply(function<N, Which>{}, nabla::variables<N>());
    found = static_partial<N>(expression, l, out);
    return out;
}

// The partial of the line in every mode that reaches its order, each checked.
template <std::size_t N, int Which>
void check(const line& l) {
    const function<N, Which> f;
    const double tolerance = l.tolerance();
    INFO(l.text << "  (tolerance " << tolerance << ")");
    bool found = false;
    const double s = static_for<N, Which>(l, found);
    if (found) {
        INFO("static graph: " << s);
        CHECK(nabla_test::close(s, l.value, tolerance));
    }
    // (One rule for both orders of differentiation: Hessians symmetric to the bit.)
    nabla_test::check_number_modes<N>(l, f, true);
}

}  // namespace

TEST_CASE(
    "elliptic integrals: every partial at the ends of the domain matches mpmath in every mode",
    "[rules][elliptic]") {
    const auto all = nabla_test::partial_lines("elliptic.txt", false);
    REQUIRE(all.size() > 200);
    for (const auto& l : all) {
        if (l.name == "comp_ellint_1")
            check<1, 0>(l);
        else if (l.name == "comp_ellint_2")
            check<1, 1>(l);
        else if (l.name == "ellint_1")
            check<2, 0>(l);
        else if (l.name == "ellint_2")
            check<2, 1>(l);
        else if (l.name == "comp_ellint_3")
            check<2, 2>(l);
        else
            check<3, 0>(l);
    }
}

TEST_CASE("elliptic integrals: the series at k = 0 are K's and E's, exactly even",
          "[rules][elliptic]") {
    const auto K = [](auto k) { return comp_ellint_1(k); };
    const auto E = [](auto k) { return comp_ellint_2(k); };
    const auto dk = nabla::derivatives<9>(K, 0.0);
    const auto de = nabla::derivatives<9>(E, 0.0);
    for (std::size_t n = 1; n <= 9; n += 2) {
        CHECK(dk[n] == 0.0);
        CHECK(de[n] == 0.0);
    }
    // K = pi/2 (1 + k^2/4 + 9 k^4/64 + ...), E = pi/2 (1 - k^2/4 - 3 k^4/64 - ...).
    const double pi = 3.141592653589793;
    CHECK(dk[2] == Approx(pi / 4).epsilon(1e-15));
    CHECK(dk[4] == Approx(pi / 2 * 9.0 / 64.0 * 24.0).epsilon(1e-15));
    // (E = K - (k^2 / 3) R_D: its k^4 coefficient is a difference, 4 times smaller than K's.)
    CHECK(de[2] == Approx(-pi / 4).epsilon(1e-15));
    CHECK(de[4] == Approx(-pi / 2 * 3.0 / 64.0 * 24.0).epsilon(4e-15));
}

TEST_CASE("elliptic integrals: conventions at the modulus 1 and outside", "[rules][elliptic]") {
    const double inf = std::numeric_limits<double>::infinity();
    const auto K = [](auto k) { return comp_ellint_1(k); };
    const auto E = [](auto k) { return comp_ellint_2(k); };
    CHECK(nabla::grad(K, 1.0)[0] == inf);
    CHECK(nabla::grad(K, -1.0)[0] == -inf);
    CHECK(nabla::grad(E, 1.0)[0] == -inf);
    CHECK(nabla::grad(E, -1.0)[0] == inf);
    CHECK(nabla::hessian(K, 1.0)(0, 0) == inf);
    CHECK(nabla::hessian(K, -1.0)(0, 0) == inf);
    CHECK(std::isnan(nabla::grad(K, 1.5)[0]));
    // The Taylor series at |k| = 1 stop at the value: K has none there.
    const auto at_one = nabla::derivatives<3>(K, 1.0);
    CHECK(at_one[0] == inf);
    CHECK(std::isnan(at_one[2]));
    // F at the modulus 1 within a quarter period is regular, and so are its derivatives.
    const auto F = [](auto k, auto phi) { return ellint_1(k, phi); };
    const auto g = nabla::grad(F, 1.0, 0.7);
    CHECK(std::isfinite(g[0]));
    CHECK(g[1] == Approx(1.0 / std::cos(0.7)).epsilon(1e-15));
}
