// The seed example every part of nabla must get right:
// f(x1, x2) = ln(x1) + x1*x2 - sin(x2) at (2, 5), with its derivatives up to order 3 against
// mpmath (tests/data/derivatives.txt).

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <type_traits>

#include "../test_data.hpp"

namespace {
const auto [x, y] = nabla::variables<2>();
const auto f = log(x) + x * y - sin(y);
constexpr double tolerance = 1e-14;
}  // namespace

TEST_CASE("seed function: value and gradient", "[core][seed]") {
    CHECK(f(2.0, 5.0) == Approx(11.652071455).epsilon(1e-10));
    CHECK(nabla_test::close(f(2.0, 5.0), nabla_test::reference("seed"), tolerance));
    const auto [value, gradient] = nabla::value_and_grad(f, 2.0, 5.0);
    CHECK(nabla_test::close(value, nabla_test::reference("seed"), tolerance));
    CHECK(gradient[0] == 5.5);
    CHECK(gradient[1] == Approx(1.716337814).epsilon(1e-9));
    CHECK(nabla_test::close(gradient[1], nabla_test::reference("seed_d1"), tolerance));
    CHECK(nabla::grad(f, 2.0, 5.0) == gradient);
    CHECK(nabla::d(f, x)(2.0, 5.0) == 5.5);
    CHECK(nabla_test::close(nabla::d(f, y)(2.0, 5.0), nabla_test::reference("seed_d1"), tolerance));
}

TEST_CASE("seed function: every partial derivative up to order 3", "[core][seed]") {
    const auto placeholders = std::make_tuple(x, y);
    const auto check = [&](auto derivative, const std::string& key) {
        INFO(key << " = " << nabla::to_string(derivative));
        CHECK(nabla_test::close(derivative(2.0, 5.0), nabla_test::reference(key), tolerance));
    };
    const auto at = [&](auto i) { return std::get<decltype(i)::value>(placeholders); };
    using zero = std::integral_constant<int, 0>;
    using one = std::integral_constant<int, 1>;
    check(nabla::d(f, x, x), "seed_d00");
    check(nabla::d(f, x, y), "seed_d01");
    check(nabla::d(f, y, x), "seed_d10");
    check(nabla::d(f, y, y), "seed_d11");
    check(nabla::d(f, at(zero{}), at(zero{}), at(zero{})), "seed_d000");
    check(nabla::d(f, x, x, y), "seed_d001");
    check(nabla::d(f, x, y, x), "seed_d010");
    check(nabla::d(f, y, x, x), "seed_d100");
    check(nabla::d(f, x, y, y), "seed_d011");
    check(nabla::d(f, y, y, x), "seed_d110");
    check(nabla::d(f, y, y, y), "seed_d111");
    check(nabla::d(f, at(one{}), at(zero{}), at(one{})), "seed_d101");
}

TEST_CASE("seed function: symbolic derivatives are the textbook ones", "[core][seed]") {
    CHECK(nabla::to_string(f) == "log(x0) + x0*x1 - sin(x1)");
    CHECK(nabla::to_string(nabla::d(f, x)) == "1/x0 + x1");
    CHECK(nabla::to_string(nabla::d(f, y)) == "x0 - cos(x1)");
    CHECK(nabla::to_string(nabla::d(f, x, y)) == "1");
    CHECK(nabla::d(f, x, y)(2.0, 5.0) == 1.0);
    CHECK(std::is_same_v<std::remove_cvref_t<decltype(nabla::d(f, x, y))>, nabla::literal<1>>);
}
