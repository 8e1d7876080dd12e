// Forward-mode transformations of ordinary generic callables: value_and_grad, grad, jvp, with
// scalar arguments and with std::array / std::vector inputs.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <tuple>
#include <type_traits>
#include <vector>

#include "../test_data.hpp"
#include "../test_functions.hpp"

namespace {

using nabla_test::rosenbrock;
const auto& seed = nabla_test::seed_function;

template <class Container>
Container rosenbrock_gradient(const Container& x) {
    Container g = x;
    const std::size_t n = x.size();
    for (std::size_t i = 0; i < n; ++i) {
        double gi = 0.0;
        if (i + 1 < n)
            gi += -400.0 * x[i] * (x[i + 1] - x[i] * x[i]) - 2.0 * (1.0 - x[i]);
        if (i > 0)
            gi += 200.0 * (x[i] - x[i - 1] * x[i - 1]);
        g[i] = gi;
    }
    return g;
}

template <class Container>
Container wavy_point(Container x) {
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = 0.3 + 0.05 * static_cast<double>(i % 7);
    return x;
}

}  // namespace

TEST_CASE("grad of a generic callable of scalars", "[api][forward]") {
    const auto [value, gradient] = nabla::value_and_grad(seed, 2.0, 5.0);
    static_assert(std::is_same_v<decltype(gradient), const std::array<double, 2>>);
    CHECK(nabla_test::close(value, nabla_test::reference("seed"), 1e-15));
    CHECK(gradient[0] == 5.5);
    CHECK(nabla_test::close(gradient[1], nabla_test::reference("seed_d1"), 1e-15));
    CHECK(nabla::grad(seed, 2.0, 5.0) == gradient);
    // The same numbers as the static expression's reverse sweep.
    const auto [x, y] = nabla::variables<2>();
    CHECK(nabla::grad(log(x) + x * y - sin(y), 2.0, 5.0) == gradient);
    static_assert(std::is_same_v<decltype(nabla::grad(seed, 2.0f, 5.0f)), std::array<float, 2>>);
}

TEST_CASE("jvp gives a directional derivative, for callables and static expressions",
          "[api][forward]") {
    const auto [value, tangent] = nabla::jvp(seed, std::tuple{2.0, 5.0}, std::tuple{1.0, 0.0});
    CHECK(nabla_test::close(value, nabla_test::reference("seed"), 1e-15));
    CHECK(tangent == 5.5);
    const auto along = nabla::jvp(seed, std::tuple{2.0, 5.0}, std::tuple{0.6, -0.8});
    const double expected =
        0.6 * nabla_test::reference("seed_d0") - 0.8 * nabla_test::reference("seed_d1");
    CHECK(nabla_test::close(along.tangent, expected, 1e-15));
    const auto [x, y] = nabla::variables<2>();
    const auto f = log(x) + x * y - sin(y);
    CHECK(nabla::jvp(f, std::tuple{2.0, 5.0}, std::tuple{0.6, -0.8}).tangent ==
          Approx(expected).epsilon(1e-15));
}

TEST_CASE("grad of a function of a std::vector returns a std::vector", "[api][forward]") {
    for (std::size_t n : {1u, 2u, 7u, 8u, 9u, 20u, 64u}) {
        INFO("n = " << n);
        const auto x = wavy_point(std::vector<double>(n));
        const std::vector<double> g = nabla::grad(rosenbrock, x);
        const auto expected = rosenbrock_gradient(x);
        REQUIRE(g.size() == n);
        for (std::size_t i = 0; i < n; ++i)
            CHECK(g[i] == Approx(expected[i]).epsilon(1e-14));
        CHECK(nabla::value_and_grad(rosenbrock, x).value == Approx(rosenbrock(x)).epsilon(1e-15));
    }
}

TEST_CASE("grad of a function of a std::array returns a std::array", "[api][forward]") {
    const auto small = wavy_point(std::array<double, 3>{});
    const std::array<double, 3> g = nabla::grad(rosenbrock, small);
    CHECK(g[0] == Approx(rosenbrock_gradient(small)[0]).epsilon(1e-14));
    CHECK(g[2] == Approx(rosenbrock_gradient(small)[2]).epsilon(1e-14));
    const auto large = wavy_point(std::array<double, 40>{});  // over 16 numbers: reverse mode
    const auto g40 = nabla::grad(rosenbrock, large);
    const auto expected = rosenbrock_gradient(large);
    for (std::size_t i = 0; i < 40; ++i)
        CHECK(g40[i] == Approx(expected[i]).epsilon(1e-14));
}

TEST_CASE("a callable that branches on values and returns constants", "[api][forward]") {
    const auto piecewise = [](auto x) {
        using std::exp;
        if (x > 0.0)
            return x * x;
        return exp(x) - 1.0;
    };
    CHECK(nabla::grad(piecewise, 3.0)[0] == 6.0);
    CHECK(nabla::grad(piecewise, -1.0)[0] == Approx(std::exp(-1.0)));
    const auto constant = [](auto) { return 4.0; };
    const auto [value, gradient] = nabla::value_and_grad(constant, 1.0);
    CHECK(value == 4.0);
    CHECK(gradient[0] == 0.0);
}

TEST_CASE("the mode can be forced", "[api][forward]") {
    const auto [x, y] = nabla::variables<2>();
    const auto f = log(x) + x * y - sin(y);
    const auto reverse = nabla::value_and_grad(nabla::mode::reverse, f, 2.0, 5.0);
    const auto forward = nabla::value_and_grad(nabla::mode::forward, f, 2.0, 5.0);
    CHECK(forward.value == reverse.value);
    CHECK(forward.gradient[0] == Approx(reverse.gradient[0]).epsilon(1e-15));
    CHECK(forward.gradient[1] == Approx(reverse.gradient[1]).epsilon(1e-15));
    CHECK(nabla::grad(nabla::mode::forward, seed, 2.0, 5.0) == nabla::grad(seed, 2.0, 5.0));
    // A std::vector goes to reverse mode by default (the run-time tape): the same gradient up to
    // rounding.
    const std::vector<double> xv{0.3, 0.4, 0.5};
    const std::vector<double> by_forward = nabla::grad(nabla::mode::forward, rosenbrock, xv);
    const std::vector<double> by_default = nabla::grad(rosenbrock, xv);
    CHECK(by_default == nabla::grad(nabla::mode::reverse, rosenbrock, xv));
    for (std::size_t i = 0; i < xv.size(); ++i)
        CHECK(by_forward[i] == Approx(by_default[i]).epsilon(1e-14));
}
