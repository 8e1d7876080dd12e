// Every rule of the table, through the whole static-graph pipeline (building, evaluation, d at
// first and second order, value_and_grad), against mpmath's values in tests/data/rules.txt.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "../test_data.hpp"
#include "function_table.hpp"

namespace {

using nabla_test::row;
using nabla_test::rows;

// Rows whose second derivative is a small normal number that the quotient rule cannot reach: it
// forms 1/b^2 for a denominator b beyond 1e154, which underflows to 0 (docs/conventions.md,
// "Limits of the chain rule"). For these the test pins the documented result, a zero.
bool hessian_underflows(const row& r) {
    return (r.name == "atan" && std::abs(r.point[0]) >= 1e100) ||
           (r.name == "tanh" && std::abs(r.point[0]) >= 300.0);
}

template <std::size_t N, class E>
double call(const E& e, const std::vector<double>& p) {
    if constexpr (N == 1)
        return e(p[0]);
    else if constexpr (N == 2)
        return e(p[0], p[1]);
    else
        return e(p[0], p[1], p[2]);
}

// Checks one row against the expression that build(parameters, x0, x1, x2) makes.
template <std::size_t N, class Build>
void check_row(const row& r, Build build) {
    INFO("row: " << r.text);
    const auto [x0, x1, x2] = nabla::variables<3>();
    const auto f = build(r.parameters, x0, x1, x2);
    CHECK(nabla_test::close(call<N>(f, r.point), r.value, r.tolerance_value));

    const auto placeholders = std::make_tuple(x0, x1, x2);
    // (No structured bindings here: clang 14 cannot capture them in the lambdas below.)
    const auto result = [&] {
        if constexpr (N == 1)
            return nabla::value_and_grad(f, r.point[0]);
        else if constexpr (N == 2)
            return nabla::value_and_grad(f, r.point[0], r.point[1]);
        else
            return nabla::value_and_grad(f, r.point[0], r.point[1], r.point[2]);
    }();
    const double value = result.value;
    const auto& gradient = result.gradient;
    CHECK(nabla_test::close(value, r.value, r.tolerance_value));

    // Hessian entries are compared normwise: an entry that is tiny next to the others (a
    // curvature that nearly cancels, as hypot's across its larger argument) is checked to the
    // Hessian's scale, since the chain rule adds terms of that scale to form it.
    double hessian_scale = 0.0;
    for (double entry : r.hessian_upper)
        hessian_scale = std::max(hessian_scale, std::abs(entry));
    const auto close_to_scale = [&](double computed, double expected) {
        if (hessian_underflows(r))
            return computed == 0.0;
        if (!std::isfinite(expected) || hessian_scale == 0.0)
            return nabla_test::close(computed, expected, r.tolerance_hessian);
        return std::abs(computed - expected) <=
               r.tolerance_hessian * std::max(std::abs(expected), hessian_scale);
    };
    std::size_t h = 0;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        const auto first = [&]<std::size_t A>(std::integral_constant<std::size_t, A>) {
            const auto fa = nabla::d(f, std::get<A>(placeholders));
            INFO("gradient entry " << A);
            CHECK(nabla_test::close(call<N>(fa, r.point), r.gradient[A], r.tolerance_gradient));
            CHECK(nabla_test::close(gradient[A], r.gradient[A], r.tolerance_gradient));
            const auto second = [&]<std::size_t B>(std::integral_constant<std::size_t, B>) {
                if constexpr (B >= A) {
                    INFO("Hessian entry " << A << ", " << B);
                    const auto fab = nabla::d(fa, std::get<B>(placeholders));
                    const auto fba =
                        nabla::d(f, std::get<B>(placeholders), std::get<A>(placeholders));
                    CHECK(close_to_scale(call<N>(fab, r.point), r.hessian_upper[h]));
                    CHECK(close_to_scale(call<N>(fba, r.point), r.hessian_upper[h]));
                    ++h;
                }
            };
            (second(std::integral_constant<std::size_t, I>{}), ...);
        };
        (first(std::integral_constant<std::size_t, I>{}), ...);
    }
    (std::make_index_sequence<N>{});
}

template <std::size_t N, class Build>
void check_function(const std::string& name, Build build) {
    std::size_t checked = 0;
    for (const auto& r : rows()) {
        if (r.name != name)
            continue;
        REQUIRE(r.point.size() == N);
        check_row<N>(r, build);
        ++checked;
    }
    INFO("function " << name);
    CHECK(checked >= 5);
}

}  // namespace

TEST_CASE("every rule matches mpmath through static graphs", "[rules]") {
    nabla_test::for_each_rule_function(
        []<std::size_t N>(const std::string& name, auto build) { check_function<N>(name, build); });
}
