// Every rule on the run-time tape against mpmath: the value and gradient of each row of
// tests/data/rules.txt, and its Hessian forward over reverse (a tape of dual numbers).

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string>

#include "../rules/function_table.hpp"
#include "../test_data.hpp"

namespace {

using nabla::tape;
using nabla::var;

template <std::size_t N, class Build>
void check_rule(const std::string& name, Build build) {
    std::size_t checked = 0;
    for (const auto& r : nabla_test::rows()) {
        if (r.name != name)
            continue;
        ++checked;
        INFO("row: " << r.text);
        tape<> t;
        auto recording = t.record();
        std::array<var, 3> x{};
        for (std::size_t i = 0; i < N; ++i)
            x[i] = t.input(r.point[i]);
        const var y = build(r.parameters, x[0], x[1], x[2]);
        CHECK(nabla_test::close(y.value, r.value, r.tolerance_value));
        t.gradient(y);
        for (std::size_t i = 0; i < N; ++i) {
            INFO("gradient entry " << i);
            CHECK(nabla_test::close(t.adjoint(x[i]), r.gradient[i], r.tolerance_gradient));
        }
        // Forward over reverse: direction e_j gives the Hessian's column j, compared relative to
        // the Hessian's largest entry (as the dual-number tests do).
        double scale = 0.0;
        for (double h : r.hessian_upper)
            scale = std::max(scale, std::abs(h));
        for (std::size_t j = 0; j < N; ++j) {
            using D = nabla::dual<double, 1>;
            tape<D> td;
            auto inner = td.record();
            std::array<nabla::active<D>, 3> xd{};
            for (std::size_t i = 0; i < N; ++i)
                xd[i] = td.input(D(r.point[i], {i == j ? 1.0 : 0.0}));
            const nabla::active<D> yd = build(r.parameters, xd[0], xd[1], xd[2]);
            td.gradient(yd);
            for (std::size_t i = 0; i < N; ++i) {
                const std::size_t lo = std::min(i, j), hi = std::max(i, j);
                const std::size_t h = lo * N - lo * (lo - 1) / 2 + (hi - lo);
                INFO("Hessian entry " << i << ", " << j);
                const double expected = r.hessian_upper[h];
                const double computed = td.adjoint(xd[i]).tangent[0];
                if ((name == "atan" && std::abs(r.point[0]) >= 1e100) ||
                    (name == "tanh" && std::abs(r.point[0]) >= 300.0))
                    CHECK(computed == 0.0);  // quotient-rule underflow, docs/conventions.md
                else if (!std::isfinite(expected) || scale == 0.0)
                    CHECK(nabla_test::close(computed, expected, r.tolerance_hessian));
                else
                    CHECK(std::abs(computed - expected) <=
                          r.tolerance_hessian * std::max(std::abs(expected), scale));
            }
        }
    }
    INFO("function " << name);
    CHECK(checked >= 5);
}

}  // namespace

TEST_CASE("tape: every rule's gradient and Hessian against mpmath", "[reverse][rules]") {
    nabla_test::for_each_rule_function([]<std::size_t N>(const char* name, auto build) {
        SECTION(name) {
            check_rule<N>(name, build);
        }
    });
}
