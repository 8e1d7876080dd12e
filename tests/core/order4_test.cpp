// Symbolic derivatives must not explode: fourth-order partials of a 20-node expression, with and
// without run-time constants, against mpmath (tests/data/derivatives.txt). The compile time of
// this file is recorded in bench/RESULTS.md.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "../test_data.hpp"

namespace {
const auto [x, y] = nabla::variables<2>();
constexpr nabla::literal<1> one{};
constexpr nabla::literal<2> two{};
// 20 nodes; the second form holds its constants as run-time numbers.
const auto exact =
    exp(sin(x) * y) / (one + x * x) + log(one + y * y) * sqrt(x * y + two) - atan(x - y);
const auto held =
    exp(sin(x) * y) / (1.0 + x * x) + log(1.0 + y * y) * sqrt(x * y + 2.0) - atan(x - y);
constexpr double tolerance = 1e-12;
}  // namespace

TEST_CASE("fourth-order partials of a 20-node expression", "[core][d][order4]") {
    const auto check = [](const auto& f, const std::string& key) {
        INFO(key);
        CHECK(nabla_test::close(f(0.3, 0.7), nabla_test::reference(key), tolerance));
    };
    check(exact, "twenty");
    check(nabla::d(exact, x, y), "twenty_d01");
    check(nabla::d(exact, x, y, x, y), "twenty_d0101");
    check(nabla::d(exact, x, x, x, x), "twenty_d0000");
    check(nabla::d(held, x, y, x, y), "twenty_d0101");
    check(nabla::d(held, y, y, y, y), "twenty_d1111");
    check(nabla::d(held, x, x, x, y), "twenty_d0001");
}
