// Forward mode for static array expressions: jvp against the gradient (scalar expressions) and
// against the pullback (array-valued ones, <w, J v> = <J^T w, v>), hvp against differences of
// gradients and a closed form, the Hessian of the extended Rosenbrock function, ties of max and
// min, and products, on one- and two-dimensional arrays.

#include <nabla/array.hpp>

#include <catch2/catch.hpp>
#include <xtensor/xtensor.hpp>

#include <cmath>
#include <cstddef>
#include <tuple>
#include <vector>

#include "samples.hpp"

namespace {

constexpr std::size_t W = nabla_test::lanes_width;
using nabla::from;
using nabla::range;
using nabla::upto;

template <class A, class B>
double inner(const A& a, const B& b) {
    double total = 0.0;
    auto q = b.begin();
    for (auto p = a.begin(); p != a.end(); ++p, ++q)
        total += *p * *q;
    return total;
}

// <grad f, v> over two arguments.
template <class F, class X, class Y>
double directional(const F& f, const X& xs, const Y& ys, const X& vx, const Y& vy) {
    const auto [v, gx, gy] = nabla::value_and_grad(f, xs, ys);
    return inner(gx, vx) + inner(gy, vy);
}

}  // namespace

TEST_CASE("jvp of a scalar array expression is the gradient along the tangents",
          "[array][forward]") {
    const auto [x, y] = nabla::array_variables<2>();
    const auto chain = sum(exp(-0.5 * x) * sqrt(x * x + y * y + 1.0) / (1.0 + y * y));
    const auto rosenbrock =
        sum(100.0 * square(x(from<1>) - square(x(upto<-1>))) + square(1.0 - x(upto<-1>))) +
        mean(y * y);
    const auto reductions = logsumexp(x * y) + max(x) * norm(y) - min(y) + mean(sin(x));
    const auto centred = sum(square(x - mean(x))) / norm(y - max(y) + 3.0);
    for (const std::size_t n : {std::size_t{1}, std::size_t{7}, W + 1, 4 * W + 3}) {
        CAPTURE(n);
        const auto xs = nabla_test::sample(n, -1.0, 1.5, 1);
        const auto ys = nabla_test::sample(n, 0.2, 2.0, 2);
        const auto vx = nabla_test::sample(n, -1.0, 1.0, 3);
        const auto vy = nabla_test::sample(n, -1.0, 1.0, 4);
        const auto check = [&](const auto& f) {
            const auto [v, t] = nabla::jvp(f, std::tie(xs, ys), std::tie(vx, vy));
            CHECK(v == f(xs, ys));
            CHECK(t == Approx(directional(f, xs, ys, vx, vy)).epsilon(1e-12).margin(1e-12));
        };
        check(chain);
        check(reductions);
        check(centred);
        if (n > 1)
            check(rosenbrock);
    }
}

TEST_CASE("jvp of an array-valued expression: <w, J v> equals <J^T w, v>", "[array][forward]") {
    const auto [x, y] = nabla::array_variables<2>();
    const auto f = exp(sin(x) * y) - max(x) + x(range<0, 0>) / (1.0 + y * y) * logsumexp(y);
    for (const std::size_t n : {std::size_t{2}, W + 1, 3 * W + 2}) {
        CAPTURE(n);
        const auto xs = nabla_test::sample(n, -1.0, 1.5, 5);
        const auto ys = nabla_test::sample(n, 0.2, 2.0, 6);
        const auto vx = nabla_test::sample(n, -1.0, 1.0, 7);
        const auto vy = nabla_test::sample(n, -1.0, 1.0, 8);
        const auto w = nabla_test::sample(n, -1.0, 1.0, 9);
        const auto [value, tangent] = nabla::jvp(f, std::tie(xs, ys), std::tie(vx, vy));
        CHECK(value == f(xs, ys));
        const auto [px, py] = nabla::apply_vjp(f, w, xs, ys);
        CHECK(inner(w, tangent) == Approx(inner(px, vx) + inner(py, vy)).epsilon(1e-12));
    }

    // A stencil on a grid: the tangent of a linear step is the step of the tangent.
    const auto [u] = nabla::array_variables<1>();
    const auto inner_view = range<1, -1>;
    const auto step = u(inner_view, inner_view) +
                      0.2 * (u(range<0, -2>, inner_view) + u(range<2, 0>, inner_view) +
                             u(inner_view, range<0, -2>) + u(inner_view, range<2, 0>) -
                             4.0 * u(inner_view, inner_view));
    xt::xtensor<double, 2> g = xt::xtensor<double, 2>::from_shape({6, W + 3});
    xt::xtensor<double, 2> dg = g;
    const auto gv = nabla_test::sample(g.size(), -1.0, 1.0, 10);
    const auto dv = nabla_test::sample(g.size(), -1.0, 1.0, 11);
    std::copy(gv.begin(), gv.end(), g.begin());
    std::copy(dv.begin(), dv.end(), dg.begin());
    const auto [stepped, tangent] = nabla::jvp(step, std::tie(g), std::tie(dg));
    const xt::xtensor<double, 2> want = step(dg);
    REQUIRE(tangent.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k)
        CHECK(tangent.data()[k] == Approx(want.data()[k]).epsilon(1e-14).margin(1e-15));
    CHECK(stepped.size() == want.size());
}

TEST_CASE("max and min share a tangent between ties; products take the product rule",
          "[array][forward]") {
    const auto [x, A, b] = nabla::array_variables<3>();
    const std::vector<double> xs{1.0, 3.0, 3.0, -2.0}, vx{5.0, 1.0, 0.0, 7.0};
    const auto [v, t] = nabla::jvp(max(x), std::tie(xs), std::tie(vx));
    CHECK(v == 3.0);
    CHECK(t == 0.5);
    const auto [w, s] = nabla::jvp(min(x), std::tie(xs), std::tie(vx));
    CHECK(w == -2.0);
    CHECK(s == 7.0);

    // The dense layer: d sum(tanh(A x + b)^2) along (dx, dA, db).
    const auto layer = sum(square(tanh(matvec(A, x) + b)));
    const std::size_t m = 5, n = W + 3;
    xt::xtensor<double, 2> a = xt::xtensor<double, 2>::from_shape({m, n});
    xt::xtensor<double, 2> da = a;
    const auto av = nabla_test::sample(m * n, -0.5, 0.5, 12);
    const auto dav = nabla_test::sample(m * n, -1.0, 1.0, 13);
    std::copy(av.begin(), av.end(), a.begin());
    std::copy(dav.begin(), dav.end(), da.begin());
    const auto x2 = nabla_test::sample(n, -1.0, 1.0, 14), dx = nabla_test::sample(n, -1.0, 1.0, 15);
    const auto bs = nabla_test::sample(m, -0.2, 0.2, 16), db = nabla_test::sample(m, -1.0, 1.0, 17);
    const auto [lv, lt] = nabla::jvp(layer, std::tie(x2, a, bs), std::tie(dx, da, db));
    const auto [l0, gx, ga, gb] = nabla::value_and_grad(layer, x2, a, bs);
    CHECK(lv == l0);
    CHECK(lt == Approx(inner(gx, dx) + inner(ga, da) + inner(gb, db)).epsilon(1e-12));
}

TEST_CASE("hvp is the change of the gradient along the tangents; the Hessian of Rosenbrock",
          "[array][forward]") {
    const auto [x, y] = nabla::array_variables<2>();
    const auto f = sum(exp(sin(x) * y)) + logsumexp(x * y) + max(x) * norm(y) +
                   sum(x(from<1>) * x(upto<-1>) * y(upto<-1>));
    const std::size_t n = 2 * W + 3;
    const auto xs = nabla_test::sample(n, -1.0, 1.0, 18);
    const auto ys = nabla_test::sample(n, 0.3, 1.5, 19);
    const auto vx = nabla_test::sample(n, -1.0, 1.0, 20);
    const auto vy = nabla_test::sample(n, -1.0, 1.0, 21);
    const auto [hx, hy] = nabla::hvp(f, std::tie(xs, ys), std::tie(vx, vy));
    // Central differences of the gradient, step h: error about h^2.
    const double h = 1e-5;
    std::vector<double> xp = xs, yp = ys, xm = xs, ym = ys;
    for (std::size_t i = 0; i < n; ++i) {
        xp[i] += h * vx[i];
        yp[i] += h * vy[i];
        xm[i] -= h * vx[i];
        ym[i] -= h * vy[i];
    }
    const auto [fp, gxp, gyp] = nabla::value_and_grad(f, xp, yp);
    const auto [fm, gxm, gym] = nabla::value_and_grad(f, xm, ym);
    for (std::size_t i = 0; i < n; ++i) {
        CHECK(hx[i] == Approx((gxp[i] - gxm[i]) / (2.0 * h)).epsilon(1e-6).margin(1e-7));
        CHECK(hy[i] == Approx((gyp[i] - gym[i]) / (2.0 * h)).epsilon(1e-6).margin(1e-7));
    }

    // Rosenbrock's Hessian is tridiagonal: H(i, i) = 1200 x_i^2 - 400 x_{i+1} + 2 (+ 200 for
    // i > 0), H(i, i+1) = -400 x_i.
    const auto rosenbrock =
        sum(100.0 * square(x(from<1>) - square(x(upto<-1>))) + square(1.0 - x(upto<-1>)));
    const std::vector<double> r = nabla_test::sample(W + 2, 0.5, 1.5, 22);
    const xt::xtensor<double, 2> hr = nabla::hessian(rosenbrock, r);
    const std::size_t m = r.size();
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < m; ++j) {
            double want = 0.0;
            if (i == j) {
                want = (i + 1 < m ? 1200.0 * r[i] * r[i] - 400.0 * r[i + 1] + 2.0 : 0.0) +
                       (i > 0 ? 200.0 : 0.0);
            } else if (j == i + 1) {
                want = -400.0 * r[i];
            } else if (i == j + 1) {
                want = -400.0 * r[j];
            }
            CHECK(hr(i, j) == Approx(want).epsilon(1e-12).margin(1e-12));
        }
}
