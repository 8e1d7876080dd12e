// Forward mode and second order on the run-time tape with arrays: nabla::jvp, nabla::hvp and
// nabla::hessian with mode::arrays. Each is checked against the first-order tape (the tangent is
// <grad f, v>, H v the difference of two gradients), against closed forms, against the static
// array expressions' own hvp, and at the conventions' edges (ties, zeros, NaN fallback).

#include <nabla/array.hpp>

#include <catch2/catch.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <cmath>
#include <cstddef>
#include <numeric>
#include <tuple>
#include <vector>

#include "samples.hpp"

namespace {

constexpr std::size_t W = nabla_test::lanes_width;
using nabla_test::sample;

const auto lse = [](const auto& x) {
    using std::log;
    auto m = amax(x);
    return log(sum(exp(x - m))) + m;
};
const auto chain = [](const auto& x, const auto& y) {
    using std::exp;
    using std::sin;
    using std::sqrt;
    return sum(exp(sin(x) * y) / sqrt(1.0 + x * x) + y * y * 0.25);
};
const auto rosenbrock = [](const auto& x) {
    const auto head = x.slice(0, x.size() - 1);
    const auto tail = x.slice(1, x.size());
    const auto d = tail - head * head;
    const auto e = 1.0 - head;
    return sum(100.0 * d * d + e * e);
};

double dot(const std::vector<double>& a, const std::vector<double>& b) {
    return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

// (grad f(x + h v) - grad f(x - h v)) / 2h for a function of one array.
template <class F>
std::vector<double>
gradient_difference(const F& f, const std::vector<double>& x, const std::vector<double>& v) {
    const double h = 1e-6;
    std::vector<double> up = x, down = x;
    for (std::size_t i = 0; i < x.size(); ++i) {
        up[i] += h * v[i];
        down[i] -= h * v[i];
    }
    const std::vector<double> gu = nabla::grad(nabla::mode::arrays, f, up);
    const std::vector<double> gd = nabla::grad(nabla::mode::arrays, f, down);
    std::vector<double> d(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        d[i] = (gu[i] - gd[i]) / (2 * h);
    return d;
}

template <class F>
void check_one_array(const F& f, const std::vector<double>& x, double tolerance = 1e-6) {
    const std::vector<double> v = sample(x.size(), -1.0, 1.0, 5);
    const auto [value, tangent] = nabla::jvp(nabla::mode::arrays, f, std::tie(x), std::tie(v));
    const auto [v0, g] = nabla::value_and_grad(nabla::mode::arrays, f, x);
    CHECK(value == Approx(v0).epsilon(1e-13));
    CHECK(tangent == Approx(dot(g, v)).epsilon(1e-12).margin(1e-12));
    const std::vector<double> hv = nabla::hvp(nabla::mode::arrays, f, std::tie(x), std::tie(v));
    const std::vector<double> reference = gradient_difference(f, x, v);
    REQUIRE(hv.size() == x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        CHECK(hv[i] == Approx(reference[i]).epsilon(tolerance).margin(tolerance));
}

template <class F>
void check_matrix_and_vector(const F& f,
                             const xt::xtensor<double, 2>& w,
                             const std::vector<double>& x) {
    const xt::xtensor<double, 2> vw = nabla_test::grid(w.shape()[0], w.shape()[1], -1.0, 1.0, 14);
    const std::vector<double> vx = sample(x.size(), -1.0, 1.0, 15);
    const auto [hw, hx] = nabla::hvp(nabla::mode::arrays, f, std::tie(w, x), std::tie(vw, vx));
    const auto [value, tangent] =
        nabla::jvp(nabla::mode::arrays, f, std::tie(w, x), std::tie(vw, vx));
    const auto [v0, gw, gx] = nabla::value_and_grad(nabla::mode::arrays, f, w, x);
    double along = 0.0;
    for (std::size_t k = 0; k < w.size(); ++k)
        along += gw.data()[k] * vw.data()[k];
    CHECK(value == Approx(v0).epsilon(1e-13));
    CHECK(tangent == Approx(along + dot(gx, vx)).epsilon(1e-12));
    // Against differences of the first-order tape's gradients.
    const double h = 1e-6;
    xt::xtensor<double, 2> wu = w, wd = w;
    std::vector<double> xu = x, xd = x;
    for (std::size_t k = 0; k < w.size(); ++k) {
        wu.data()[k] += h * vw.data()[k];
        wd.data()[k] -= h * vw.data()[k];
    }
    for (std::size_t k = 0; k < x.size(); ++k) {
        xu[k] += h * vx[k];
        xd[k] -= h * vx[k];
    }
    const auto [gwu, gxu] = nabla::grad(nabla::mode::arrays, f, wu, xu);
    const auto [gwd, gxd] = nabla::grad(nabla::mode::arrays, f, wd, xd);
    for (std::size_t k = 0; k < w.size(); ++k)
        CHECK(hw.data()[k] == Approx((gwu.data()[k] - gwd.data()[k]) / (2 * h)).margin(1e-6));
    for (std::size_t k = 0; k < x.size(); ++k)
        CHECK(hx[k] == Approx((gxu[k] - gxd[k]) / (2 * h)).margin(1e-6));
}

}  // namespace

TEST_CASE("jvp on arrays is the gradient along the direction, hvp the derivative of the gradient",
          "[array][tape][second]") {
    for (const std::size_t n :
         {std::size_t{1}, std::size_t{2}, W + 1, 4 * W + 3, std::size_t{97}}) {
        INFO("n = " << n);
        const std::vector<double> x = sample(n, -1.5, 1.5, 1);
        check_one_array(lse, x);
        if (n > 1)
            check_one_array(rosenbrock, x, 1e-5);
        check_one_array([](const auto& a) { return norm(a * 1.5 + 0.25); }, x);
        check_one_array([](const auto& a) { return prod(a * 0.5 + 1.0); }, x);
        check_one_array([](const auto& a) { return mean(tanh(a) * a); }, x);
        check_one_array([](const auto& a) { return logsumexp(pow(a, 2.0) - atan2(a, 2.0)); }, x);
        check_one_array([](const auto& a) { return sum(digamma(a + 3.0) * a); }, x);
        check_one_array(
            [](const auto& a) {
                using std::exp;
                return sum(a * a) * exp(sum(a) * 0.1) + log(norm(a) + 1.0);
            },
            x);
    }
}

TEST_CASE("hvp on arrays of two arguments matches the static array expression's hvp",
          "[array][tape][second]") {
    for (const std::size_t n : {std::size_t{1}, W, 3 * W + 1}) {
        const std::vector<double> xs = sample(n, -1.0, 1.0, 2), ys = sample(n, 0.5, 2.0, 3);
        const std::vector<double> vx = sample(n, -1.0, 1.0, 4), vy = sample(n, -1.0, 1.0, 6);
        const auto [x, y] = nabla::array_variables<2>();
        const auto [sx, sy] = nabla::hvp(chain(x, y), std::tie(xs, ys), std::tie(vx, vy));
        const auto [hx, hy] =
            nabla::hvp(nabla::mode::arrays, chain, std::tie(xs, ys), std::tie(vx, vy));
        const auto [value, tangent] =
            nabla::jvp(nabla::mode::arrays, chain, std::tie(xs, ys), std::tie(vx, vy));
        const auto [sv, st] = nabla::jvp(chain(x, y), std::tie(xs, ys), std::tie(vx, vy));
        CHECK(value == Approx(sv).epsilon(1e-13));
        CHECK(tangent == Approx(st).epsilon(1e-12));
        for (std::size_t i = 0; i < n; ++i) {
            CHECK(hx[i] == Approx(sx[i]).epsilon(1e-12).margin(1e-13));
            CHECK(hy[i] == Approx(sy[i]).epsilon(1e-12).margin(1e-13));
        }
    }
}

TEST_CASE("the Hessian on arrays has the closed forms of log-sum-exp, norm and the seed example",
          "[array][tape][second]") {
    const std::vector<double> x = sample(11, -2.0, 2.0, 7);
    const std::size_t n = x.size();
    {
        const auto h = nabla::hessian(nabla::mode::arrays, lse, x);
        // H = diag(s) - s s^T for the softmax s.
        const double m = *std::max_element(x.begin(), x.end());
        double total = 0.0;
        for (const double e : x)
            total += std::exp(e - m);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                const double si = std::exp(x[i] - m) / total, sj = std::exp(x[j] - m) / total;
                CHECK(h(i, j) == Approx((i == j ? si : 0.0) - si * sj).margin(1e-15));
            }
    }
    {
        const auto h = nabla::hessian(
            nabla::mode::arrays, [](const auto& a) { return norm(a); }, x);
        // H = I / r - x x^T / r^3.
        const double r = std::sqrt(dot(x, x));
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j)
                CHECK(h(i, j) ==
                      Approx((i == j ? 1.0 / r : 0.0) - x[i] * x[j] / (r * r * r)).margin(1e-15));
    }
    {
        // ln(x1) + x1 x2 - sin(x2) at (2, 5): elements are scalars on the same tape.
        const auto seed = [](const auto& a) {
            using std::log;
            using std::sin;
            return log(a[0]) + a[0] * a[1] - sin(a[1]);
        };
        const std::vector<double> at{2.0, 5.0};
        const auto h = nabla::hessian(nabla::mode::arrays, seed, at);
        CHECK(h(0, 0) == Approx(-0.25));
        CHECK(h(0, 1) == Approx(1.0));
        CHECK(h(1, 0) == Approx(1.0));
        CHECK(h(1, 1) == Approx(std::sin(5.0)));
        const std::vector<double> along_x1{1.0, 0.0};
        const auto [v, t] = nabla::jvp(nabla::mode::arrays, seed, std::tie(at), std::tie(along_x1));
        CHECK(v == Approx(11.652).epsilon(1e-4));
        CHECK(t == Approx(5.5));
    }
}

TEST_CASE("the Hessian on arrays equals its columns by hvp, and is symmetric",
          "[array][tape][second]") {
    // More columns than one recording takes (eight), so that blocks are stitched.
    const std::vector<double> x = sample(21, -1.0, 1.0, 8);
    const auto h = nabla::hessian(nabla::mode::arrays, rosenbrock, x);
    std::vector<double> e(x.size(), 0.0);
    for (std::size_t j = 0; j < x.size(); ++j) {
        e[j] = 1.0;
        const std::vector<double> column =
            nabla::hvp(nabla::mode::arrays, rosenbrock, std::tie(x), std::tie(e));
        e[j] = 0.0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            CHECK(h(i, j) == Approx(column[i]).margin(1e-12));
            CHECK(h(i, j) == Approx(h(j, i)).margin(1e-12));
        }
    }
}

TEST_CASE("prod's Hessian on arrays is exact where elements are zero", "[array][tape][second]") {
    // H_ij = prod of the others than i and j: with one zero at k, only row and column k remain;
    // with two zeros at k and l, only H_kl and H_lk.
    const std::vector<double> one_zero{2.0, 0.0, 3.0, -1.5};
    const auto h = nabla::hessian(
        nabla::mode::arrays, [](const auto& a) { return prod(a); }, one_zero);
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 4; ++j) {
            double expected = 0.0;
            if (i != j) {
                expected = 1.0;
                for (std::size_t k = 0; k < 4; ++k)
                    if (k != i && k != j)
                        expected *= one_zero[k];
            }
            CHECK(h(i, j) == Approx(expected).margin(1e-15));
        }
    const std::vector<double> two_zeros{2.0, 0.0, 3.0, 0.0};
    const auto h2 = nabla::hessian(
        nabla::mode::arrays, [](const auto& a) { return prod(a); }, two_zeros);
    CHECK(h2(1, 3) == 6.0);
    CHECK(h2(3, 1) == 6.0);
    CHECK(h2(0, 2) == 0.0);
    CHECK(h2(0, 1) == 0.0);
}

TEST_CASE("max on arrays: ties share the tangent and the Hessian is zero",
          "[array][tape][second]") {
    const std::vector<double> x{1.0, 3.0, 3.0, -2.0};
    const std::vector<double> v{5.0, 1.0, 2.0, 7.0};
    const auto f = [](const auto& a) { return max(a); };
    const auto [value, tangent] = nabla::jvp(nabla::mode::arrays, f, std::tie(x), std::tie(v));
    CHECK(value == 3.0);
    CHECK(tangent == 1.5);  // the mean of the tied elements' tangents, as the gradient shares
    const std::vector<double> hv = nabla::hvp(nabla::mode::arrays, f, std::tie(x), std::tie(v));
    for (const double e : hv)
        CHECK(e == 0.0);
    const std::vector<double> with_nan{1.0, std::nan(""), 2.0};
    const std::vector<double> v3{1.0, 1.0, 1.0};
    const auto [nv, nt] = nabla::jvp(nabla::mode::arrays, f, std::tie(with_nan), std::tie(v3));
    CHECK(std::isnan(nv));
    CHECK(std::isnan(nt));
}

TEST_CASE("jvp on arrays of an array-valued function is the Jacobian times the direction",
          "[array][tape][second]") {
    const auto step = [](const auto& u) {
        const std::size_t n = u.size();
        const auto inner = u.slice(1, n - 1);
        const auto lap = u.slice(0, n - 2) + u.slice(2, n) - 2.0 * inner;
        using std::tanh;
        return tanh(inner + 0.2 * lap);
    };
    const std::vector<double> u = sample(19, -1.0, 1.0, 9), v = sample(19, -1.0, 1.0, 10);
    const auto [value, tangent] = nabla::jvp(nabla::mode::arrays, step, std::tie(u), std::tie(v));
    const auto j = nabla::jacobian(nabla::mode::arrays, step, u);
    REQUIRE(value.size() == 17);
    REQUIRE(tangent.size() == 17);
    for (std::size_t i = 0; i < 17; ++i) {
        double expected = 0.0;
        for (std::size_t k = 0; k < u.size(); ++k)
            expected += j(i, k) * v[k];
        CHECK(tangent[i] == Approx(expected).epsilon(1e-13).margin(1e-15));
    }
}

TEST_CASE("hvp on arrays through matvec, matmul and solve", "[array][tape][second]") {
    const std::vector<double> b = sample(5, -0.2, 0.2, 12);
    const auto layer = [&b](const auto& m, const auto& a) {
        using std::tanh;
        const auto h = tanh(matvec(m, a) + b);
        return sum(h * h);
    };
    check_matrix_and_vector(layer, nabla_test::grid(5, 4, -0.5, 0.5, 11), sample(4, -1.0, 1.0, 13));

    // A product of matrices and a solve.
    const xt::xtensor<double, 2> a = nabla_test::grid(3, 3, -1.0, 1.0, 16) +
                                     3.0 * xt::xtensor<double, 2>{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    const auto through_solve = [&a](const auto& m, const auto& r) {
        using M = std::remove_cvref_t<decltype(m)>;
        const auto z = solve(matmul(m, m) + M(a), r);
        return sum(z * z) + norm(r);
    };
    check_matrix_and_vector(through_solve, nabla_test::grid(3, 3, -0.3, 0.3, 17),
                            sample(3, 0.5, 1.0, 18));
}

TEST_CASE("jvp on arrays takes the strong path where a plain tangent is NaN",
          "[array][tape][second]") {
    // sqrt(x) at 0 has an infinite partial; along a direction that leaves x alone the tangent is
    // the other argument's, not inf * 0.
    const std::vector<double> x{0.0, 4.0}, y{1.0, 2.0};
    const std::vector<double> vx{0.0, 0.0}, vy{1.0, 3.0};
    const auto f = [](const auto& a, const auto& b) { return sum(sqrt(a) + b); };
    const auto [v, t] = nabla::jvp(nabla::mode::arrays, f, std::tie(x, y), std::tie(vx, vy));
    CHECK(v == 5.0);
    CHECK(t == 4.0);
    const auto [hx, hy] = nabla::hvp(nabla::mode::arrays, f, std::tie(x, y), std::tie(vx, vy));
    CHECK(hx[1] == 0.0);
    CHECK(hy[0] == 0.0);
    CHECK(hy[1] == 0.0);
}

TEST_CASE("misuse of the array transformations of second order is reported",
          "[array][tape][second]") {
    const std::vector<double> x{1.0, 2.0, 3.0}, short_direction{1.0};
    CHECK_THROWS_AS(nabla::jvp(nabla::mode::arrays, lse, std::tie(x), std::tie(short_direction)),
                    nabla::shape_error);
    CHECK_THROWS_AS(nabla::hvp(nabla::mode::arrays, lse, std::tie(x), std::tie(short_direction)),
                    nabla::shape_error);
}

TEST_CASE("directions must be shaped like their arrays: strided views and other shapes are refused",
          "[array][tape][second]") {
    const std::vector<double> x{1.0, 2.0, 3.0};
    const xt::xtensor<double, 1> big{1.0, 0.0, 10.0, 0.0, 100.0, 0.0};
    const auto strided = xt::view(big, xt::range(0, 6, 2));
    const auto f = [](const auto& a) { return sum(a * a); };
    CHECK_THROWS_AS(nabla::jvp(nabla::mode::arrays, f, std::tie(x), std::tie(strided)),
                    nabla::shape_error);
    const xt::xtensor<double, 2> m = nabla_test::grid(2, 3, -1.0, 1.0, 20);
    const xt::xtensor<double, 2> transposed = nabla_test::grid(3, 2, -1.0, 1.0, 21);
    const std::vector<double> flat(6, 1.0);
    const auto g = [](const auto& a) { return sum(a * a); };
    CHECK_THROWS_AS(nabla::hvp(nabla::mode::arrays, g, std::tie(m), std::tie(transposed)),
                    nabla::shape_error);
    CHECK_THROWS_AS(nabla::hvp(nabla::mode::arrays, g, std::tie(m), std::tie(flat)),
                    nabla::shape_error);
}

TEST_CASE("containers of doubles are constants in dot, matvec, solve and matrix arithmetic",
          "[array][tape]") {
    const std::vector<double> w{0.5, -1.0, 2.0};
    const xt::xtensor<double, 2> a{{3.0, 0.5, 0.0}, {0.0, 2.0, 1.0}, {1.0, 0.0, 4.0}};
    nabla::tape<> t;
    auto recording = t.record();
    const nabla::var_array x = nabla::input_array(t, std::vector<double>{1.0, 2.0, 3.0});
    const nabla::var_matrix m = nabla::input_matrix(t, a);
    const nabla::var total =
        dot(x, w) + dot(w, x) + sum(matvec(m, w)) + sum(solve(m, w)) + sum(m + w) + sum(w * m);
    t.gradient(total);
    const std::vector<double> gx = nabla::adjoints(t, x);
    // d/dx: w + w.
    for (std::size_t i = 0; i < 3; ++i)
        CHECK(gx[i] == Approx(2.0 * w[i]));
    // The value, by loops: dot twice, A w, A^-1 w (on the tape alone), A + w and w * A by rows.
    double expected = 2.0 * (0.5 - 2.0 + 6.0);
    for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 3; ++j)
            expected += a(i, j) * w[j] + (a(i, j) + w[j]) + w[j] * a(i, j);
    const auto z = nabla::value_and_grad(
        nabla::mode::arrays, [](const auto& mm, const auto& r) { return sum(solve(mm, r)); }, a, w);
    expected += z.value;
    CHECK(total.value == Approx(expected).epsilon(1e-14));
}
