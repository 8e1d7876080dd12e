// nabla::taylor and nabla::derivatives<K>: derivatives of order 0..8 of compositions of every rule
// against mpmath (tests/data/taylor.txt), agreement with the other modes, domain errors.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../rules/function_table.hpp"
#include "../test_data.hpp"
#include "taylor_rows.hpp"

namespace {

using nabla_test::close_derivatives;
using nabla_test::order;
using nabla_test::read_taylor_rows;
using series = nabla::taylor<double, order>;

}  // namespace

TEST_CASE("derivatives of order 0..8 of compositions of every rule match mpmath",
          "[forward][taylor][rules]") {
    const auto rows = read_taylor_rows();
    std::size_t functions = 0;
    nabla_test::for_each_rule_function([&]<std::size_t N>(const std::string& name, auto build) {
        std::size_t checked = 0;
        for (const auto& r : rows) {
            if (r.name != name && !(name == "pow_int" && r.name == "pow_int_negative"))
                continue;
            ++checked;
            INFO("row: " << r.text);
            const auto g = nabla_test::composition(r, build);
            const auto d = nabla::derivatives<order>(g, r.x0);
            for (std::size_t k = 0; k <= order; ++k) {
                INFO("derivative of order " << k << ": " << d[k] << " against "
                                            << r.derivatives[k]);
                CHECK(close_derivatives(d, r.derivatives, k));
            }
        }
        INFO("function " << name);
        CHECK(checked >= 1);
        ++functions;
    });
    CHECK(functions == 80);
}

TEST_CASE("Taylor series agree with the static graphs and with nested duals", "[forward][taylor]") {
    const auto [x] = nabla::variables<1>();
    const auto f = exp(sin(x)) / (1.0 + x * x) + atan(x) * lgamma(x + 2.0) - pow(x, 3);
    const auto d = nabla::derivatives<4>(f, 0.7);  // a static expression evaluated on series
    CHECK(d[0] == Approx(f(0.7)).epsilon(1e-15));
    CHECK(d[1] == Approx(nabla::d(f, x)(0.7)).epsilon(1e-13));
    CHECK(d[2] == Approx(nabla::d(f, x, x)(0.7)).epsilon(1e-13));
    CHECK(d[3] == Approx(nabla::d(f, x, x, x)(0.7)).epsilon(1e-12));
    CHECK(d[4] == Approx(nabla::d(f, x, x, x, x)(0.7)).epsilon(1e-12));
    using D = nabla::dual<nabla::dual<double, 1>, 1>;
    const D seeded(nabla::dual<double, 1>(0.7, {1.0}), {nabla::dual<double, 1>(1.0)});
    const D second = f(seeded);
    CHECK(second.tangent[0].tangent[0] == Approx(d[2]).epsilon(1e-13));
}

TEST_CASE("Taylor series of high order", "[forward][taylor]") {
    // exp(x) at 0: every derivative is 1; 1/(1 - x): the k-th derivative is k!.
    const auto e = nabla::derivatives<16>([](auto t) { return exp(t); }, 0.0);
    for (double v : e)
        CHECK(v == Approx(1.0).epsilon(1e-15));
    const auto q = nabla::derivatives<16>([](auto t) { return 1.0 / (1.0 - t); }, 0.0);
    double factorial = 1.0;
    for (std::size_t k = 0; k <= 16; ++k) {
        if (k > 0)
            factorial *= static_cast<double>(k);
        CHECK(q[k] == Approx(factorial).epsilon(1e-15));
    }
    // Integer powers are exact at a zero base; x^3 has derivatives 0, 0, 0, 6, 0...
    const auto p = nabla::derivatives<5>([](auto t) { return pow(t, 3); }, 0.0);
    CHECK(p == std::array<double, 6>{0.0, 0.0, 0.0, 6.0, 0.0, 0.0});
}

TEST_CASE("series that do not exist are domain errors", "[forward][taylor]") {
    CHECK_THROWS_AS(nabla::derivatives<2>([](auto t) { return 1.0 / t; }, 0.0), std::domain_error);
    CHECK_THROWS_AS(nabla::derivatives<2>([](auto t) { return sqrt(t); }, 0.0), std::domain_error);
    CHECK_THROWS_AS(nabla::derivatives<2>([](auto t) { return log(t); }, 0.0), std::domain_error);
    CHECK_THROWS_AS(nabla::derivatives<2>([](auto t) { return pow(t, 2.5); }, 0.0),
                    std::domain_error);
    CHECK_THROWS_WITH(nabla::derivatives<1>([](auto t) { return 2.0 / (t - t); }, 1.0),
                      Catch::Contains("division by a series whose constant term is 0"));
    // Order 0 is only the value: no series needed.
    CHECK(nabla::derivatives<0>([](auto t) { return sqrt(t); }, 0.0)[0] == 0.0);
}
