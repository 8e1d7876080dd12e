// nabla::dual: every rule against mpmath (gradients from dual<double, n>, Hessians from
// dual<dual<double, n>, n>), agreement with the static graphs, and the standard idioms.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

#include "../rules/function_table.hpp"
#include "../test_data.hpp"

namespace {

template <std::size_t N>
using first_order = nabla::dual<double, N>;
template <std::size_t N>
using second_order = nabla::dual<nabla::dual<double, N>, N>;

// x_i seeded with direction i: one pass gives the whole gradient.
template <std::size_t N>
std::array<first_order<N>, 3> seeded(const std::vector<double>& point) {
    std::array<first_order<N>, 3> x{};
    for (std::size_t i = 0; i < N; ++i) {
        x[i].value = point[i];
        x[i].tangent[i] = 1.0;
    }
    return x;
}

// Seeded in both levels: the inner tangents and the outer tangents' values carry direction i, so
// the outer tangent i's inner tangent j is d2f / dx_i dx_j.
template <std::size_t N>
std::array<second_order<N>, 3> seeded_twice(const std::vector<double>& point) {
    std::array<second_order<N>, 3> x{};
    for (std::size_t i = 0; i < N; ++i) {
        x[i].value.value = point[i];
        x[i].value.tangent[i] = 1.0;
        x[i].tangent[i].value = 1.0;
    }
    return x;
}

template <std::size_t N, class Build>
void check_function(const std::string& name, Build build) {
    std::size_t checked = 0;
    for (const auto& r : nabla_test::rows()) {
        if (r.name != name)
            continue;
        ++checked;
        INFO("row: " << r.text);
        const auto x = seeded<N>(r.point);
        const auto f = build(r.parameters, x[0], x[1], x[2]);
        CHECK(nabla_test::close(f.value, r.value, r.tolerance_value));
        for (std::size_t i = 0; i < N; ++i) {
            INFO("gradient entry " << i);
            CHECK(nabla_test::close(f.tangent[i], r.gradient[i], r.tolerance_gradient));
        }
        const auto xx = seeded_twice<N>(r.point);
        const auto ff = build(r.parameters, xx[0], xx[1], xx[2]);
        double scale = 0.0;
        for (double h : r.hessian_upper)
            scale = std::max(scale, std::abs(h));
        std::size_t h = 0;
        for (std::size_t i = 0; i < N; ++i) {
            for (std::size_t j = i; j < N; ++j, ++h) {
                INFO("Hessian entry " << i << ", " << j);
                const double expected = r.hessian_upper[h];
                for (const double computed : {ff.tangent[i].tangent[j], ff.tangent[j].tangent[i]}) {
                    if (!std::isfinite(expected) || scale == 0.0)
                        CHECK(nabla_test::close(computed, expected, r.tolerance_hessian));
                    else if ((name == "atan" && std::abs(r.point[0]) >= 1e100) ||
                             (name == "tanh" && std::abs(r.point[0]) >= 300.0))
                        CHECK(computed == 0.0);  // quotient-rule underflow, docs/conventions.md
                    else
                        CHECK(std::abs(computed - expected) <=
                              r.tolerance_hessian * std::max(std::abs(expected), scale));
                }
            }
        }
    }
    INFO("function " << name);
    CHECK(checked >= 5);
}

}  // namespace

TEST_CASE("every rule matches mpmath through dual numbers", "[forward][dual][rules]") {
    nabla_test::for_each_rule_function(
        []<std::size_t N>(const std::string& name, auto build) { check_function<N>(name, build); });
}

TEST_CASE("duals agree with the static graphs", "[forward][dual]") {
    const auto [x, y] = nabla::variables<2>();
    const auto f = exp(sin(x) * y) / (1.0 + x * x) + pow(y, 3) * atan2(x, y) - lgamma(x + y);
    const auto [value, gradient] = nabla::value_and_grad(f, 0.7, 1.3);
    // The static expression evaluated on duals, and the same formula written on duals directly.
    const auto dx = first_order<2>(0.7, {1.0, 0.0});
    const auto dy = first_order<2>(1.3, {0.0, 1.0});
    const auto on_duals = f(dx, dy);
    using std::atan2, std::exp, std::lgamma, std::pow, std::sin;
    const auto direct =
        exp(sin(dx) * dy) / (1.0 + dx * dx) + pow(dy, 3) * atan2(dx, dy) - lgamma(dx + dy);
    for (const auto& d : {on_duals, direct}) {
        CHECK(d.value == Approx(value).epsilon(1e-15));
        CHECK(d.tangent[0] == Approx(gradient[0]).epsilon(1e-14));
        CHECK(d.tangent[1] == Approx(gradient[1]).epsilon(1e-14));
    }
    using tangents = std::array<first_order<2>, 2>;
    const auto xx =
        second_order<2>(first_order<2>(0.7, {1.0, 0.0}), tangents{first_order<2>(1.0), 0.0});
    const auto yy =
        second_order<2>(first_order<2>(1.3, {0.0, 1.0}), tangents{0.0, first_order<2>(1.0)});
    const auto hessian = f(xx, yy);
    CHECK(hessian.tangent[0].tangent[1] == Approx(nabla::d(f, x, y)(0.7, 1.3)).epsilon(1e-13));
    CHECK(hessian.tangent[1].tangent[1] == Approx(nabla::d(f, y, y)(0.7, 1.3)).epsilon(1e-13));
}

TEST_CASE("duals work with the standard idioms", "[forward][dual]") {
    using D = nabla::dual<double, 1>;
    const D x(2.0, {1.0});
    D sum = 0;  // the accumulator idiom
    for (int i = 1; i <= 3; ++i)
        sum += x * i;
    CHECK(sum.value == 12.0);
    CHECK(sum.tangent[0] == 6.0);
    CHECK((x * 2.0f + 1).value == 5.0);  // mixed float and int
    CHECK((1 / x).tangent[0] == -0.25);
    CHECK(x < 3.0);
    CHECK(x > D(1.0));
    CHECK(x == 2.0);
    CHECK(x != D(2.5));
    CHECK(std::max(x, D(1.0)).value == 2.0);
    CHECK(std::numeric_limits<D>::is_specialized);
    CHECK(std::numeric_limits<D>::epsilon().value == std::numeric_limits<double>::epsilon());
    using std::isfinite, std::isnan;
    CHECK(isfinite(x));
    CHECK(isnan(sqrt(-x)));
    static_assert(std::is_same_v<std::common_type_t<D, double>, D>);
    static_assert(std::is_same_v<decltype(pow(x, 2)), D>);
    CHECK(pow(-x, 3).value == -8.0);  // integer power of a negative base
    CHECK(pow(-x, 3).tangent[0] == -12.0);
    CHECK(static_cast<double>(x) == 2.0);
    CHECK(nabla::primal(nabla::dual<D, 1>(x)) == 2.0);
    std::ostringstream text;
    text << x;
    CHECK(text.str() == "2 [1]");
}

TEST_CASE("duals follow the rules' conventions", "[forward][dual][conventions]") {
    using D = nabla::dual<double, 2>;
    const D zero(0.0, {1.0, 0.0});
    const D one(1.0, {0.0, 1.0});
    CHECK(abs(zero).tangent[0] == 0.0);
    CHECK(sqrt(zero).tangent[0] == std::numeric_limits<double>::infinity());
    CHECK(min(one, D(1.0, {1.0, 0.0})).tangent == std::array{0.5, 0.5});
    CHECK(atan2(zero, D(0.0, {0.0, 1.0})).tangent == std::array{0.0, 0.0});
    CHECK(pow(zero, D(2.0, {0.0, 1.0})).tangent == std::array{0.0, 0.0});
    CHECK(floor(one * 2.5).tangent == std::array{0.0, 0.0});
}

TEST_CASE("duals with a number of directions known only at run time", "[forward][dual]") {
    using D = nabla::dual<double, nabla::dynamic>;
    const std::size_t n = 5;  // as if read from input
    std::vector<D> x(n);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = D(0.3 + 0.2 * static_cast<double>(i), std::vector<double>(n, 0.0));
        x[i].tangent[i] = 1.0;
    }
    // Constants (2.0 and the accumulator's 0) have no tangent storage and read as zeros.
    D sum = 0;
    for (std::size_t i = 0; i + 1 < n; ++i)
        sum += exp(x[i]) * x[i + 1] + 2.0;
    REQUIRE(sum.tangent.size() == n);
    std::vector<first_order<5>> fixed(n);
    for (std::size_t i = 0; i < n; ++i) {
        fixed[i] = first_order<5>(0.3 + 0.2 * static_cast<double>(i));
        fixed[i].tangent[i] = 1.0;
    }
    first_order<5> expected = 0;
    for (std::size_t i = 0; i + 1 < n; ++i)
        expected += exp(fixed[i]) * fixed[i + 1] + 2.0;
    CHECK(sum.value == expected.value);
    for (std::size_t i = 0; i < n; ++i)
        CHECK(sum.tangent[i] == expected.tangent[i]);
    CHECK(D(3.0).tangent.empty());
    CHECK((D(3.0) * D(2.0)).tangent.empty());
}
