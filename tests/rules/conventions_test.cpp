// The documented conventions at points where the classical derivative does not exist, and IEEE
// propagation of NaN and infinities (docs/conventions.md).

#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();
const auto [x, y] = nabla::variables<2>();
}  // namespace

TEST_CASE("abs and fabs have derivative 0 at 0", "[rules][conventions]") {
    CHECK(nabla::d(abs(x), x)(0.0) == 0.0);
    CHECK(nabla::d(abs(x), x)(-0.0) == 0.0);
    CHECK(nabla::d(fabs(x), x)(0.0) == 0.0);
    CHECK(nabla::grad(abs(x), 0.0)[0] == 0.0);
    CHECK(nabla::d(abs(x), x)(-3.0) == -1.0);
    CHECK(nabla::d(abs(x), x, x)(0.0) == 0.0);
}

TEST_CASE("sqrt and cbrt have infinite derivative at 0", "[rules][conventions]") {
    CHECK(nabla::d(sqrt(x), x)(0.0) == inf);
    CHECK(nabla::d(cbrt(x), x)(0.0) == inf);
    CHECK(nabla::grad(sqrt(x), 0.0)[0] == inf);
    CHECK(std::isnan(nabla::d(sqrt(x), x)(-1.0)));
}

TEST_CASE("pow at a zero base", "[rules][conventions]") {
    const auto f = pow(x, y);
    const auto fx = nabla::d(f, x);
    const auto fy = nabla::d(f, y);
    CHECK(fx(0.0, 2.0) == 0.0);
    CHECK(fx(0.0, 1.0) == 1.0);
    CHECK(fx(0.0, 0.5) == inf);
    CHECK(f(0.0, 0.0) == 1.0);
    CHECK(fx(0.0, 0.0) == 0.0);   // x^0 is the constant 1
    CHECK(fy(0.0, 2.0) == 0.0);   // 0^y = 0 for y > 0: the one-sided limit
    CHECK(fy(0.0, 0.0) == -inf);  // 0^y jumps at y = 0
    CHECK(nabla::d(pow(x, 0.0), x)(0.0) == 0.0);
    CHECK(nabla::d(pow(x, 0), x)(0.0) == 0.0);
    CHECK(nabla::d(pow(x, 2), x)(0.0) == 0.0);
    CHECK(nabla::d(pow(x, 3), x, x)(0.0) == 0.0);
    // Integer exponents are exact for negative bases; real exponents follow std::pow.
    CHECK(nabla::d(pow(x, 3), x)(-2.0) == 12.0);
    CHECK(nabla::d(pow(x, 3.0), x)(-2.0) == 12.0);
    CHECK(std::isnan(nabla::d(pow(x, 2.5), x)(-2.0)));
    CHECK(std::isnan(fy(-2.0, 2.0)));  // log of a negative base
}

TEST_CASE("pow(x, 0) has second derivative 0 at x = 0 in every mode (regression: NaN in dual "
          "numbers and on the tape, found by the random programs of tests/fuzz/)",
          "[rules][conventions]") {
    CHECK(nabla::d(pow(x, 0), x, x)(0.0) == 0.0);
    using D = nabla::dual<double, 1>;
    using DD = nabla::dual<D, 1>;
    const DD at_zero(D(0.0, {1.0}), {D(1.0)});
    const DD p = pow(at_zero, 0);
    CHECK(p.value.value == 1.0);
    CHECK(p.value.tangent[0] == 0.0);
    CHECK(p.tangent[0].value == 0.0);
    CHECK(p.tangent[0].tangent[0] == 0.0);  // was NaN: 0 * inf in the tangent of n * x^(n-1)
    const auto square_of_nothing = [](const auto& v) {
        using std::atanh, std::pow;
        return pow(atanh(v[0]), 0) + v[0];
    };
    for (const auto& h :
         {nabla::hessian(nabla::mode::forward, square_of_nothing, std::vector<double>{0.0}),
          nabla::hessian(nabla::mode::reverse, square_of_nothing, std::vector<double>{0.0})})
        CHECK(h(0, 0) == 0.0);
}

TEST_CASE("structural zeros: strong on the tape and in static graphs, not yet across the "
          "directions of a dual number (docs/conventions.md, known limits)",
          "[rules][conventions]") {
    // d/dy of sqrt(x) + y at x = 0 is 1: the tangent of sqrt(x) along y is exactly zero.
    const auto f = [](auto u, auto v) {
        using std::sqrt;
        return sqrt(u) + v;
    };
    const auto of_vector = [&](const auto& w) { return f(w[0], w[1]); };
    const std::vector<double> at{0.0, 1.0};
    const auto statically = nabla::grad(f(x, y), 0.0, 1.0);
    const auto reverse = nabla::grad(nabla::mode::reverse, f, 0.0, 1.0);
    const auto reverse_vector = nabla::grad(nabla::mode::reverse, of_vector, at);
    for (const auto& g : {std::vector<double>(statically.begin(), statically.end()),
                          std::vector<double>(reverse.begin(), reverse.end()), reverse_vector}) {
        CHECK(g[0] == inf);
        CHECK(g[1] == 1.0);
    }
    // Dual numbers multiply the infinite partial by the zero tangent: NaN. (Checking each
    // partial for infinities made forward gradients 1.5-2.6 times slower; measured and left out.)
    const auto forward = nabla::grad(nabla::mode::forward, f, 0.0, 1.0);
    CHECK(forward[0] == inf);
    CHECK(std::isnan(forward[1]));
}

TEST_CASE("min and max split the derivative evenly at a tie", "[rules][conventions]") {
    for (const auto& g : {nabla::grad(min(x, y), 1.5, 1.5), nabla::grad(max(x, y), 1.5, 1.5),
                          nabla::grad(fmin(x, y), 1.5, 1.5), nabla::grad(fmax(x, y), 1.5, 1.5)}) {
        CHECK(g[0] == 0.5);
        CHECK(g[1] == 0.5);
    }
    CHECK(nabla::grad(min(x, y), 1.0, 2.0) == std::array{1.0, 0.0});
    CHECK(nabla::grad(max(x, y), 1.0, 2.0) == std::array{0.0, 1.0});
}

TEST_CASE("min and max propagate NaN; fmin and fmax skip it", "[rules][conventions]") {
    CHECK(std::isnan(min(x, y)(not_a_number, 2.0)));
    CHECK(std::isnan(max(x, y)(2.0, not_a_number)));
    CHECK(std::isnan(nabla::grad(min(x, y), not_a_number, 2.0)[1]));
    CHECK(fmin(x, y)(not_a_number, 2.0) == 2.0);
    CHECK(nabla::grad(fmin(x, y), not_a_number, 2.0) == std::array{0.0, 1.0});
    CHECK(nabla::grad(fmax(x, y), 3.0, not_a_number) == std::array{1.0, 0.0});
}

TEST_CASE("rounding functions have derivative 0, also at their jumps", "[rules][conventions]") {
    for (double at : {-2.0, -0.5, 0.0, 0.5, 1.0, 2.5}) {
        CHECK(nabla::d(floor(x), x)(at) == 0.0);
        CHECK(nabla::d(ceil(x), x)(at) == 0.0);
        CHECK(nabla::d(round(x), x)(at) == 0.0);
        CHECK(nabla::d(trunc(x), x)(at) == 0.0);
        CHECK(nabla::grad(floor(x) * x, at)[0] == std::floor(at));
    }
}

TEST_CASE("atan2 and hypot at the origin have zero gradient", "[rules][conventions]") {
    CHECK(atan2(x, y)(0.0, 0.0) == 0.0);
    CHECK(nabla::grad(atan2(x, y), 0.0, 0.0) == std::array{0.0, 0.0});
    CHECK(nabla::grad(hypot(x, y), 0.0, 0.0) == std::array{0.0, 0.0});
    CHECK(nabla::grad(atan2(x, y), 0.0, 2.0) == std::array{0.5, 0.0});
    CHECK(nabla::grad(hypot(x, y), 3.0, 4.0) == std::array{0.6, 0.8});
}

TEST_CASE("NaN and infinities propagate as IEEE arithmetic does", "[rules][conventions]") {
    const auto [value, gradient] = nabla::value_and_grad(sin(x) * y, not_a_number, 2.0);
    CHECK(std::isnan(value));
    CHECK(std::isnan(gradient[0]));
    CHECK(std::isnan(gradient[1]));
    CHECK(exp(x)(inf) == inf);
    CHECK(nabla::grad(exp(x), inf)[0] == inf);
    CHECK(nabla::grad(exp(x), -inf)[0] == 0.0);
    CHECK(log(x)(0.0) == -inf);
    CHECK(nabla::grad(log(x), 0.0)[0] == inf);
    CHECK(std::isnan(log(x)(-1.0)));
    CHECK(nabla::grad(atan(x), inf)[0] == 0.0);
    CHECK(nabla::grad(tanh(x), 800.0)[0] == 0.0);
}

TEST_CASE("polygamma at its poles and outside its orders", "[rules][conventions]") {
    CHECK(std::isnan(digamma(x)(0.0)));
    CHECK(std::isnan(digamma(x)(-3.0)));
    CHECK(polygamma(1, x)(0.0) == inf);
    CHECK(polygamma(1, x)(-2.0) == inf);
    CHECK(std::isnan(polygamma(2, x)(-1.0)));
    CHECK(std::isnan(nabla::rules::polygamma(63, 1.5)));
    CHECK(nabla::d(lgamma(x), x)(1.0) == Approx(-0.5772156649015329).epsilon(1e-15));
}

TEST_CASE("structural zeros are strong", "[rules][conventions]") {
    // d(f, y) of an f without y is the exact zero, even where f is infinite or NaN.
    const auto f = log(x);
    CHECK(nabla::d(f, y)(-1.0, 2.0) == 0.0);
    CHECK(nabla::grad(f * 1.0 + y, 0.0, 1.0)[1] == 1.0);
}
