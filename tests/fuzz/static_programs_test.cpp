// Random programs for the static modes: expression types generated at compile time from a seed
// (the same generic code also runs on dual numbers and on the tape), so that the static graph's
// d and reverse sweep take part in the differential testing of tests/fuzz/ (docs/testing.md).
//
// Every function of the rule table appears, inside wrappers that keep its argument in its domain
// for any real input (log(1.5 + u * u), asin(0.5 * tanh(u)), ...), so the programs are smooth and
// defined everywhere and are checked at random points: the static gradient and Hessian (d of
// order 2) against forward mode (duals, nested duals) and reverse mode (the tape, forward over
// reverse); and the same programs over arrays, as static array expressions and on the tape.

#include <nabla/array.hpp>
#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>

#include <catch2/catch.hpp>
#include <xtensor/xtensor.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr std::uint64_t mix(std::uint64_t seed, std::uint64_t salt) {
    std::uint64_t z = seed * 0x9e3779b97f4a7c15ull + salt * 0xbf58476d1ce4e5b9ull + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// One unary step, chosen by the seed, with its argument kept inside the function's domain.
template <std::uint64_t Seed, class U>
auto unary(const U& u) {
    using std::abs, std::acos, std::acosh, std::asin, std::asinh, std::atan, std::atanh, std::cbrt,
        std::cos, std::cosh, std::erf, std::erfc, std::exp, std::exp2, std::expm1, std::lgamma,
        std::log, std::log10, std::log1p, std::log2, std::sin, std::sinh, std::sqrt, std::tan,
        std::tanh, std::tgamma;
    constexpr int k = static_cast<int>(mix(Seed, 7) % 26);
    if constexpr (k == 0)
        return exp(0.5 * tanh(u));
    else if constexpr (k == 1)
        return exp2(0.5 * sin(u));
    else if constexpr (k == 2)
        return expm1(0.5 * tanh(u));
    else if constexpr (k == 3)
        return log(1.5 + u * u);
    else if constexpr (k == 4)
        return log2(1.5 + u * u);
    else if constexpr (k == 5)
        return log10(2.0 + sin(u));
    else if constexpr (k == 6)
        return log1p(u * u);
    else if constexpr (k == 7)
        return sqrt(1.0 + u * u);
    else if constexpr (k == 8)
        return cbrt(2.0 + cos(u));
    else if constexpr (k == 9)
        return sin(u);
    else if constexpr (k == 10)
        return cos(u);
    else if constexpr (k == 11)
        return tan(0.5 * tanh(u));
    else if constexpr (k == 12)
        return asin(0.5 * tanh(u));
    else if constexpr (k == 13)
        return acos(0.5 * sin(u));
    else if constexpr (k == 14)
        return atan(u);
    else if constexpr (k == 15)
        return sinh(0.5 * tanh(u));
    else if constexpr (k == 16)
        return cosh(0.5 * sin(u));
    else if constexpr (k == 17)
        return tanh(u);
    else if constexpr (k == 18)
        return asinh(u);
    else if constexpr (k == 19)
        return acosh(2.0 + u * u);
    else if constexpr (k == 20)
        return atanh(0.5 * tanh(u));
    else if constexpr (k == 21)
        return erf(u);
    else if constexpr (k == 22)
        return erfc(0.5 * u);
    else if constexpr (k == 23)
        return tgamma(2.0 + 0.5 * sin(u));
    else if constexpr (k == 24)
        return lgamma(1.5 + u * u);
    else
        return nabla::digamma(1.5 + u * u);
}

// One binary step.
template <std::uint64_t Seed, class A, class B>
auto binary(const A& a, const B& b) {
    using std::atan2, std::exp, std::fma, std::hypot, std::pow, std::tanh;
    constexpr int k = static_cast<int>(mix(Seed, 11) % 9);
    if constexpr (k == 0)
        return a + b;
    else if constexpr (k == 1)
        return a - b;
    else if constexpr (k == 2)
        return a * b;
    else if constexpr (k == 3)
        return a / (2.0 + tanh(b));
    else if constexpr (k == 4)
        return pow(1.5 + a * a, 0.5 * tanh(b));
    else if constexpr (k == 5)
        return atan2(a, 2.0 + tanh(b));
    else if constexpr (k == 6)
        return hypot(a, 1.0 + b * b);
    else if constexpr (k == 7)
        return fma(a, b, a);
    else
        return pow(a, 2) + b;
}

// A random expression of depth Depth in x and y.
template <std::uint64_t Seed, int Depth, class X, class Y>
auto program(const X& x, const Y& y) {
    if constexpr (Depth == 0) {
        if constexpr (mix(Seed, 3) % 2 == 0)
            return x + 0.0 * y;
        else
            return y + 0.0 * x;
    } else {
        constexpr std::uint64_t shape = mix(Seed, 5) % 3;
        const auto left = program<mix(Seed, 1), Depth - 1>(x, y);
        if constexpr (shape == 0) {
            return unary<Seed>(left);
        } else {
            const auto right = program<mix(Seed, 2), Depth - 1>(x, y);
            if constexpr (shape == 1)
                return binary<Seed>(left, right);
            else
                return binary<Seed>(unary<Seed>(left), right);
        }
    }
}

bool near(double a, double b, double tolerance) {
    const double scale = std::max({1.0, std::abs(a), std::abs(b)});
    return std::abs(a - b) <= tolerance * scale;
}

template <std::uint64_t Seed>
void check_static_program(std::mt19937& random, int& checks) {
    const auto [x, y] = nabla::variables<2>();
    const auto f = [](auto u, auto v) { return program<Seed, 2>(u, v); };
    const auto expression = f(x, y);
    const auto of_vector = [&](const auto& w) { return f(w[0], w[1]); };
    const auto dxx = nabla::d(expression, x, x);
    const auto dxy = nabla::d(expression, x, y);
    const auto dyy = nabla::d(expression, y, y);
    std::uniform_real_distribution<double> coordinate(-1.5, 1.5);
    for (int trial = 0; trial < 3; ++trial) {
        const double a = coordinate(random), b = coordinate(random);
        INFO("seed " << Seed << ": f = " << nabla::to_string(expression) << " at " << a << ", "
                     << b);
        const auto statically = nabla::value_and_grad(expression, a, b);
        const auto forward = nabla::value_and_grad(nabla::mode::forward, f, a, b);
        const auto reverse = nabla::value_and_grad(nabla::mode::reverse, f, a, b);
        const std::vector<double> at{a, b};
        const auto h_forward = nabla::hessian(nabla::mode::forward, of_vector, at);
        const auto h_reverse = nabla::hessian(nabla::mode::reverse, of_vector, at);
        CHECK(near(statically.value, forward.value, 1e-14));
        CHECK(near(statically.value, reverse.value, 1e-14));
        for (std::size_t i = 0; i < 2; ++i) {
            CHECK(near(statically.gradient[i], forward.gradient[i], 1e-12));
            CHECK(near(statically.gradient[i], reverse.gradient[i], 1e-12));
        }
        const double h[2][2] = {{dxx(a, b), dxy(a, b)}, {dxy(a, b), dyy(a, b)}};
        for (std::size_t i = 0; i < 2; ++i)
            for (std::size_t j = 0; j < 2; ++j) {
                INFO("H(" << i << ", " << j << "): static " << h[i][j] << ", forward over forward "
                          << h_forward(i, j) << ", forward over reverse " << h_reverse(i, j));
                CHECK(near(h[i][j], h_forward(i, j), 1e-10));
                CHECK(near(h[i][j], h_reverse(i, j), 1e-10));
            }
        ++checks;
    }
}

// The same program over whole arrays, each element a point: as a static array expression (fused
// SIMD loops) and on the tape with var_array (one entry per operation), the gradient of the sum
// at each element equals the scalar static expression's gradient at that point, and on the
// tape's dual arrays H v and the tangent equal the scalar Hessian's and gradient's.
template <std::uint64_t Seed>
void check_array_program(std::mt19937& random, int& checks) {
    const auto [x, y] = nabla::variables<2>();
    const auto [ax, ay] = nabla::array_variables<2>();
    const auto f = [](const auto& u, const auto& v) { return program<Seed, 2>(u, v); };
    const auto scalar = f(x, y);
    const auto summed = sum(f(ax, ay));
    const auto on_tape = [&f](const auto& u, const auto& v) { return sum(f(u, v)); };
    std::uniform_real_distribution<double> coordinate(-1.5, 1.5);
    // Lengths around the SIMD width: batches and the scalar tail both run.
    const std::size_t n = nabla::detail::width<nabla::detail::lanes> + 3;
    std::vector<double> xs(n), ys(n);
    for (std::size_t i = 0; i < n; ++i) {
        xs[i] = coordinate(random);
        ys[i] = coordinate(random);
    }
    INFO("seed " << Seed << ": f = " << nabla::to_string(scalar));
    const auto [value, gx, gy] = nabla::value_and_grad(summed, xs, ys);
    const auto [tape_value, tx, ty] = nabla::value_and_grad(nabla::mode::arrays, on_tape, xs, ys);
    double total = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        INFO("element " << i << " at " << xs[i] << ", " << ys[i]);
        const auto expected = nabla::value_and_grad(scalar, xs[i], ys[i]);
        total += expected.value;
        CHECK(near(gx[i], expected.gradient[0], 1e-12));
        CHECK(near(gy[i], expected.gradient[1], 1e-12));
        CHECK(near(tx[i], expected.gradient[0], 1e-12));
        CHECK(near(ty[i], expected.gradient[1], 1e-12));
    }
    CHECK(near(value, total, 1e-12));
    CHECK(near(tape_value, total, 1e-12));

    // Second order on the tape's arrays of dual numbers: the Hessian of the sum is block-diagonal,
    // so H v at element i is the scalar Hessian at that point times (vx_i, vy_i); the tangent is
    // <grad, v>.
    std::vector<double> vx(n), vy(n);
    for (std::size_t i = 0; i < n; ++i) {
        vx[i] = coordinate(random);
        vy[i] = coordinate(random);
    }
    const auto [hx, hy] =
        nabla::hvp(nabla::mode::arrays, on_tape, std::tie(xs, ys), std::tie(vx, vy));
    const auto [jvp_value, jvp_tangent] =
        nabla::jvp(nabla::mode::arrays, on_tape, std::tie(xs, ys), std::tie(vx, vy));
    const auto dxx = nabla::d(scalar, x, x);
    const auto dxy = nabla::d(scalar, x, y);
    const auto dyy = nabla::d(scalar, y, y);
    double along = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        INFO("element " << i << " at " << xs[i] << ", " << ys[i]);
        const double a = xs[i], b = ys[i];
        CHECK(near(hx[i], dxx(a, b) * vx[i] + dxy(a, b) * vy[i], 1e-10));
        CHECK(near(hy[i], dxy(a, b) * vx[i] + dyy(a, b) * vy[i], 1e-10));
        along += tx[i] * vx[i] + ty[i] * vy[i];
    }
    CHECK(near(jvp_value, total, 1e-12));
    CHECK(near(jvp_tangent, along, 1e-11));

    // On grids, the first array read one row down: element (r, c) is the point
    // (X(r + 1, c), Y(r, c)). The gradient of the sum (a fused loop whose views come from two
    // rows) and the pullback of the array-valued program with cotangent w equal the scalar
    // gradient at every element, times w.
    const std::size_t rows = 5;
    xt::xtensor<double, 2> grid_x = xt::xtensor<double, 2>::from_shape({rows + 1, n});
    xt::xtensor<double, 2> grid_y = xt::xtensor<double, 2>::from_shape({rows, n});
    xt::xtensor<double, 2> w = xt::xtensor<double, 2>::from_shape({rows, n});
    for (auto& e : grid_x)
        e = coordinate(random);
    for (auto& e : grid_y)
        e = coordinate(random);
    for (auto& e : w)
        e = coordinate(random);
    const auto shifted = f(ax(nabla::from<1>, nabla::whole), ay);
    const auto [grid_value, grid_gx, grid_gy] = nabla::value_and_grad(sum(shifted), grid_x, grid_y);
    const auto [pull_x, pull_y] = nabla::apply_vjp(shifted, w, grid_x, grid_y);
    double grid_total = 0.0;
    for (std::size_t c = 0; c < n; ++c) {
        CHECK(grid_gx(0, c) == 0.0);
        CHECK(pull_x(0, c) == 0.0);
    }
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < n; ++c) {
            INFO("grid element " << r << ", " << c);
            const auto expected = nabla::value_and_grad(scalar, grid_x(r + 1, c), grid_y(r, c));
            grid_total += expected.value;
            CHECK(near(grid_gx(r + 1, c), expected.gradient[0], 1e-12));
            CHECK(near(grid_gy(r, c), expected.gradient[1], 1e-12));
            CHECK(near(pull_x(r + 1, c), w(r, c) * expected.gradient[0], 1e-12));
            CHECK(near(pull_y(r, c), w(r, c) * expected.gradient[1], 1e-12));
        }
    CHECK(near(grid_value, grid_total, 1e-12));
    ++checks;
}

template <std::uint64_t... Seeds>
int check_array_programs(std::integer_sequence<std::uint64_t, Seeds...>) {
    std::mt19937 random(3141);
    int checks = 0;
    (check_array_program<Seeds + 1>(random, checks), ...);
    return checks;
}

template <std::uint64_t... Seeds>
int check_static_programs(std::integer_sequence<std::uint64_t, Seeds...>) {
    std::mt19937 random(2718);
    int checks = 0;
    (check_static_program<Seeds + 1>(random, checks), ...);
    return checks;
}

}  // namespace

TEST_CASE("random static programs: the static graph agrees with forward and reverse mode",
          "[fuzz][static]") {
    const int checks = check_static_programs(std::make_integer_sequence<std::uint64_t, 8>{});
    CHECK(checks == 8 * 3);
}

TEST_CASE("random static programs over arrays: fused loops and the tape's array entries agree "
          "with the scalar static gradient at every element",
          "[fuzz][static][array]") {
    const int checks = check_array_programs(std::make_integer_sequence<std::uint64_t, 8>{});
    CHECK(checks == 8);
}
