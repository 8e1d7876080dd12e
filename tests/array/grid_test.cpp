// Two-dimensional array expressions: stencils through views on rows and columns, reductions over
// grids, a row vector broadcast along the rows, values written into part of a grid, and
// pullbacks (w^T J) of array-valued expressions, each against loops written out element by
// element, at shapes around the SIMD width and rows longer than a reverse loop's staging block.

#include <nabla/array.hpp>

#include <catch2/catch.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "samples.hpp"

namespace {

constexpr std::size_t W = nabla_test::lanes_width;
using nabla::from;
using nabla::range;
using nabla::upto;
using nabla::whole;
using nabla_test::grid;

const std::vector<std::array<std::size_t, 2>> shapes{{3, 3},         {3, W + 2}, {4, W + 3},
                                                     {5, 2 * W + 1}, {W + 1, 3}, {7, 4 * W + 5},
                                                     {2, 2 * W + 2}, {4, 301}};

// A nonlinear five-point stencil on the interior, its partials written out.
struct stencil {
    static double value(double n, double s, double w, double e, double c) {
        return c * std::exp(0.3 * n) + std::sin(w) * s - e / (2.0 + c * c);
    }
    // d/dn, d/ds, d/dw, d/de, d/dc
    static std::array<double, 5> partials(double n, double s, double w, double e, double c) {
        const double q = 2.0 + c * c;
        return {0.3 * c * std::exp(0.3 * n), std::sin(w), std::cos(w) * s, -1.0 / q,
                std::exp(0.3 * n) + e * 2.0 * c / (q * q)};
    }
};

}  // namespace

TEST_CASE("a five-point stencil's value and pullback equal loops over the interior", "[grid]") {
    const auto [u] = nabla::array_variables<1>();
    const auto inner = range<1, -1>;
    const auto f = u(inner, inner) * exp(0.3 * u(upto<-2>, inner)) +
                   sin(u(inner, upto<-2>)) * u(from<2>, inner) -
                   u(inner, from<2>) / (2.0 + square(u(inner, inner)));
    for (const auto& [rows, cols] : shapes) {
        CAPTURE(rows, cols);
        const auto g = grid(rows, cols, -1.0, 1.0, 3);
        const auto w = grid(rows - 2, cols - 2, -2.0, 2.0, 5);
        xt::xtensor<double, 2> expected_value = xt::zeros<double>({rows - 2, cols - 2});
        xt::xtensor<double, 2> expected_adjoint = xt::zeros<double>({rows, cols});
        for (std::size_t i = 1; i + 1 < rows; ++i)
            for (std::size_t j = 1; j + 1 < cols; ++j) {
                const double n = g(i - 1, j), s = g(i + 1, j), wv = g(i, j - 1), e = g(i, j + 1),
                             c = g(i, j);
                expected_value(i - 1, j - 1) = stencil::value(n, s, wv, e, c);
                const auto p = stencil::partials(n, s, wv, e, c);
                const double a = w(i - 1, j - 1);
                expected_adjoint(i - 1, j) += a * p[0];
                expected_adjoint(i + 1, j) += a * p[1];
                expected_adjoint(i, j - 1) += a * p[2];
                expected_adjoint(i, j + 1) += a * p[3];
                expected_adjoint(i, j) += a * p[4];
            }
        const xt::xtensor<double, 2> value = f(g);
        REQUIRE(value.shape()[0] == rows - 2);
        REQUIRE(value.shape()[1] == cols - 2);
        for (std::size_t k = 0; k < value.size(); ++k)
            CHECK(value.data()[k] == Approx(expected_value.data()[k]).margin(1e-14));
        const xt::xtensor<double, 2> adjoint = nabla::apply_vjp(f, w, g);
        for (std::size_t k = 0; k < adjoint.size(); ++k)
            CHECK(adjoint.data()[k] == Approx(expected_adjoint.data()[k]).margin(1e-13));
        // The same into an array of the caller's, overwriting what it held.
        xt::xtensor<double, 2> into = xt::ones<double>({rows, cols}) * 7.0;
        nabla::apply_vjp_into(f, std::tie(into), w, g);
        for (std::size_t k = 0; k < adjoint.size(); ++k)
            CHECK(into.data()[k] == adjoint.data()[k]);
        // Added to what an array holds, twice.
        xt::xtensor<double, 2> sum = xt::ones<double>({rows, cols}) * 7.0;
        nabla::add_vjp_into(f, std::tie(sum), w, g);
        nabla::add_vjp_into(f, std::tie(sum), w, g);
        for (std::size_t k = 0; k < adjoint.size(); ++k)
            CHECK(sum.data()[k] == Approx(7.0 + 2.0 * adjoint.data()[k]).margin(1e-13));
    }
}

TEST_CASE("add_vjp_into adds a pullback into arrays that hold adjoints already, through views "
          "and a coefficient that is a reduction",
          "[grid]") {
    // One explicit heat step with its coefficient the sum of a one-element array (so that the
    // coefficient is a number in the loop, and takes its gradient).
    const auto [u, c] = nabla::array_variables<2>();
    const auto in = range<1, -1>;
    const auto step =
        u(in, in) +
        sum(c) * (((u(upto<-2>, in) + u(from<2>, in)) + (u(in, upto<-2>) + u(in, from<2>))) -
                  4.0 * u(in, in));
    const std::vector<double> coefficient{0.2};
    for (const auto& [rows, cols] : shapes) {
        CAPTURE(rows, cols);
        const auto g = grid(rows, cols, -1.0, 1.0, 3);
        const auto w = grid(rows - 2, cols - 2, -2.0, 2.0, 5);
        xt::xtensor<double, 2> expected = xt::zeros<double>({rows, cols});
        double expected_c = 0.0;
        for (std::size_t i = 1; i + 1 < rows; ++i)
            for (std::size_t j = 1; j + 1 < cols; ++j) {
                const double a = w(i - 1, j - 1);
                expected(i, j) += a * (1.0 - 4.0 * 0.2);
                expected(i - 1, j) += a * 0.2;
                expected(i + 1, j) += a * 0.2;
                expected(i, j - 1) += a * 0.2;
                expected(i, j + 1) += a * 0.2;
                expected_c +=
                    a * (g(i - 1, j) + g(i + 1, j) + g(i, j - 1) + g(i, j + 1) - 4.0 * g(i, j));
            }
        xt::xtensor<double, 2> du = xt::ones<double>({rows, cols}) * -3.0;
        std::vector<double> dc{1.5};
        nabla::add_vjp_into(step, std::tie(du, dc), w, g, coefficient);
        for (std::size_t k = 0; k < du.size(); ++k)
            CHECK(du.data()[k] == Approx(-3.0 + expected.data()[k]).margin(1e-13));
        CHECK(dc[0] == Approx(1.5 + expected_c).epsilon(1e-13));
    }
}

TEST_CASE("reductions over a grid equal the same reductions over its elements in a row", "[grid]") {
    const auto [a, b] = nabla::array_variables<2>();
    const auto f = sum(a * b) + 0.5 * mean(exp(a)) + max(a - b) + logsumexp(2.0 * b) +
                   norm(a) * min(b) + prod(1.0 + 0.1 * a);
    for (const auto& [rows, cols] : shapes) {
        CAPTURE(rows, cols);
        const auto ga = grid(rows, cols, -1.0, 1.0, 1);
        const auto gb = grid(rows, cols, -1.5, 0.5, 2);
        const std::vector<double> fa(ga.begin(), ga.end()), fb(gb.begin(), gb.end());
        const auto flat = nabla::value_and_grad(f, fa, fb);
        const auto [value, da, db] = nabla::value_and_grad(f, ga, gb);
        CHECK(value == Approx(flat.value).epsilon(1e-14));
        REQUIRE(da.shape()[0] == rows);
        REQUIRE(db.shape()[1] == cols);
        const auto& [fa_grad, fb_grad] = flat.gradient;
        for (std::size_t k = 0; k < rows * cols; ++k) {
            CHECK(da.data()[k] == Approx(fa_grad[k]).margin(1e-13));
            CHECK(db.data()[k] == Approx(fb_grad[k]).margin(1e-13));
        }
    }
}

TEST_CASE("a reduction over a stencil takes its gradient through every view", "[grid]") {
    // The discrete Dirichlet energy: sum of squared differences to the right and below.
    const auto [u] = nabla::array_variables<1>();
    const auto energy = sum(square(u(whole, from<1>) - u(whole, upto<-1>))) +
                        sum(square(u(from<1>, whole) - u(upto<-1>, whole)));
    for (const auto& [rows, cols] : shapes) {
        CAPTURE(rows, cols);
        const auto g = grid(rows, cols, -1.0, 1.0, 7);
        double expected = 0.0;
        xt::xtensor<double, 2> expected_grad = xt::zeros<double>({rows, cols});
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j) {
                if (j + 1 < cols) {
                    const double d = g(i, j + 1) - g(i, j);
                    expected += d * d;
                    expected_grad(i, j + 1) += 2.0 * d;
                    expected_grad(i, j) -= 2.0 * d;
                }
                if (i + 1 < rows) {
                    const double d = g(i + 1, j) - g(i, j);
                    expected += d * d;
                    expected_grad(i + 1, j) += 2.0 * d;
                    expected_grad(i, j) -= 2.0 * d;
                }
            }
        const auto [value, gu] = nabla::value_and_grad(energy, g);
        CHECK(value == Approx(expected).epsilon(1e-13));
        CHECK(energy(g) == Approx(expected).epsilon(1e-13));
        for (std::size_t k = 0; k < g.size(); ++k)
            CHECK(gu.data()[k] == Approx(expected_grad.data()[k]).margin(1e-13));
    }
}

TEST_CASE("a one-dimensional array is broadcast along the rows of a grid", "[grid]") {
    const auto [m, v] = nabla::array_variables<2>();
    const auto f = sum(tanh(m * v + 0.5));
    for (const auto& [rows, cols] : shapes) {
        CAPTURE(rows, cols);
        const auto gm = grid(rows, cols, -1.0, 1.0, 11);
        const std::vector<double> gv = nabla_test::sample(cols, -1.0, 1.0, 12);
        double expected = 0.0;
        xt::xtensor<double, 2> expected_m = xt::zeros<double>({rows, cols});
        std::vector<double> expected_v(cols, 0.0);
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j) {
                const double t = std::tanh(gm(i, j) * gv[j] + 0.5);
                expected += t;
                expected_m(i, j) = (1.0 - t * t) * gv[j];
                expected_v[j] += (1.0 - t * t) * gm(i, j);
            }
        const auto [value, dm, dv] = nabla::value_and_grad(f, gm, gv);
        CHECK(value == Approx(expected).epsilon(1e-13));
        for (std::size_t k = 0; k < gm.size(); ++k)
            CHECK(dm.data()[k] == Approx(expected_m.data()[k]).margin(1e-13));
        for (std::size_t j = 0; j < cols; ++j)
            CHECK(dv[j] == Approx(expected_v[j]).margin(1e-12));
        // An array-valued expression broadcasts the same way.
        const xt::xtensor<double, 2> product = (m * v)(gm, gv);
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j)
                CHECK(product(i, j) == gm(i, j) * gv[j]);
    }
}

TEST_CASE("values go into part of a grid, through views with rows apart, and into an argument",
          "[grid]") {
    const auto [u] = nabla::array_variables<1>();
    const auto inner = range<1, -1>;
    const double r = 0.2;
    const auto heat =
        (1.0 - 4.0 * r) * u(inner, inner) +
        r * (u(upto<-2>, inner) + u(from<2>, inner) + u(inner, upto<-2>) + u(inner, from<2>));
    for (const auto& [rows, cols] : shapes) {
        CAPTURE(rows, cols);
        const auto g = grid(rows, cols, 0.0, 1.0, 4);
        xt::xtensor<double, 2> expected = g;
        for (std::size_t i = 1; i + 1 < rows; ++i)
            for (std::size_t j = 1; j + 1 < cols; ++j)
                expected(i, j) = (1.0 - 4.0 * r) * g(i, j) +
                                 r * (g(i - 1, j) + g(i + 1, j) + g(i, j - 1) + g(i, j + 1));
        // Into the interior of a copy, through nabla::matrix_ref.
        xt::xtensor<double, 2> next = g;
        nabla::evaluate_into(
            heat, nabla::matrix_ref(next.data() + cols + 1, rows - 2, cols - 2, cols), g);
        for (std::size_t k = 0; k < g.size(); ++k)
            CHECK(next.data()[k] == Approx(expected.data()[k]).margin(1e-15));
        // Into its own argument: the value goes through a temporary, so every read sees the old
        // grid.
        xt::xtensor<double, 2> same = g;
        nabla::evaluate_into(heat, xt::view(same, xt::range(1, rows - 1), xt::range(1, cols - 1)),
                             same);
        for (std::size_t k = 0; k < g.size(); ++k)
            CHECK(same.data()[k] == Approx(expected.data()[k]).margin(1e-15));
        // An argument whose rows lie apart in a larger array: a view and a matrix_ref.
        xt::xtensor<double, 2> wide = xt::zeros<double>({rows, cols + 3});
        xt::view(wide, xt::all(), xt::range(0, cols)) = g;
        const auto view = xt::view(wide, xt::all(), xt::range(0, cols));
        xt::xtensor<double, 2> from_view = xt::zeros<double>({rows - 2, cols - 2});
        nabla::evaluate_into(heat, from_view, view);
        const nabla::matrix_ref<const double> ref(wide.data(), rows, cols, cols + 3);
        xt::xtensor<double, 2> from_ref = xt::zeros<double>({rows - 2, cols - 2});
        nabla::evaluate_into(heat, from_ref, ref);
        for (std::size_t i = 1; i + 1 < rows; ++i)
            for (std::size_t j = 1; j + 1 < cols; ++j) {
                CHECK(from_view(i - 1, j - 1) == Approx(expected(i, j)).margin(1e-15));
                CHECK(from_ref(i - 1, j - 1) == Approx(expected(i, j)).margin(1e-15));
            }
        // The gradient of a reduction over a matrix_ref argument comes back contiguous.
        const auto gradient = nabla::grad(sum(heat), ref);
        const auto direct = nabla::grad(sum(heat), g);
        REQUIRE(gradient.size() == g.size());
        for (std::size_t k = 0; k < g.size(); ++k)
            CHECK(gradient[k] == Approx(direct.data()[k]).margin(1e-15));
    }
}

TEST_CASE("a one-dimensional pullback runs in the gradient's fused loop", "[grid]") {
    const auto [x, y] = nabla::array_variables<2>();
    const auto f = exp(x(from<1>)) * y(upto<-1>) - x(upto<-1>) * x(upto<-1>);
    for (const std::size_t n : {2UL, 3UL, W, W + 1, 4 * W + 3, 1001UL}) {
        CAPTURE(n);
        const auto xs = nabla_test::sample(n, -1.0, 1.0, 1);
        const auto ys = nabla_test::sample(n, -1.0, 1.0, 2);
        const auto w = nabla_test::sample(n - 1, -1.0, 1.0, 3);
        std::vector<double> ex(n, 0.0), ey(n, 0.0);
        for (std::size_t i = 0; i + 1 < n; ++i) {
            ex[i + 1] += w[i] * std::exp(xs[i + 1]) * ys[i];
            ey[i] += w[i] * std::exp(xs[i + 1]);
            ex[i] -= w[i] * 2.0 * xs[i];
        }
        const auto [gx, gy] = nabla::apply_vjp(f, w, xs, ys);
        for (std::size_t i = 0; i < n; ++i) {
            CHECK(gx[i] == Approx(ex[i]).margin(1e-14));
            CHECK(gy[i] == Approx(ey[i]).margin(1e-14));
        }
    }
}

TEST_CASE("grids of different shapes, views longer than a grid and misplaced cotangents are "
          "shape errors",
          "[grid]") {
    const auto [a, b] = nabla::array_variables<2>();
    const auto g34 = grid(3, 4, 0.0, 1.0, 1);
    const auto g44 = grid(4, 4, 0.0, 1.0, 2);
    const auto g35 = grid(3, 5, 0.0, 1.0, 3);
    CHECK_THROWS_WITH(sum(a * b)(g34, g44),
                      Catch::Contains("rows") && Catch::Contains("3") && Catch::Contains("4"));
    CHECK_THROWS_WITH(sum(a * b)(g34, g35), Catch::Contains("different lengths"));
    CHECK_THROWS_WITH(sum(a(from<4>, whole))(g34), Catch::Contains("drops 4 rows"));
    CHECK_THROWS_WITH(sum(a(whole, from<5>))(g34), Catch::Contains("drops 5 columns"));
    // A row vector must have as many elements as the grid has columns.
    CHECK_THROWS_AS(sum(a * b)(g34, std::vector<double>(3)), nabla::shape_error);
    CHECK(sum(a * b)(g34, std::vector<double>(4, 1.0)) == Approx(sum(a)(g34)));
    // The cotangent is shaped like the value.
    CHECK_THROWS_AS(nabla::apply_vjp(a(range<1, -1>, whole) * 2.0, g34, g34), nabla::shape_error);
    // Gradients of the wrong size, or overlapping an argument.
    xt::xtensor<double, 2> small = xt::zeros<double>({3, 3});
    CHECK_THROWS_AS(nabla::value_and_grad_into(sum(a), std::tie(small), g34), nabla::shape_error);
    xt::xtensor<double, 2> own = g34;
    CHECK_THROWS_WITH(nabla::value_and_grad_into(sum(a), std::tie(own), own),
                      Catch::Contains("overlaps"));
    // A destination of the wrong shape.
    xt::xtensor<double, 2> out = xt::zeros<double>({3, 3});
    CHECK_THROWS_WITH(nabla::evaluate_into(a * 2.0, out, g34), Catch::Contains("3 x 4"));
    // Rank three is not an array expression's argument.
    const xt::xarray<double> cube = xt::zeros<double>({2, 2, 2});
    CHECK_THROWS_WITH(sum(a)(cube), Catch::Contains("one- or two-dimensional"));
}

TEST_CASE("NaN and infinity in a grid reach the value and the gradient they feed", "[grid]") {
    const auto [u] = nabla::array_variables<1>();
    const auto f = sum(u(whole, from<1>) * u(whole, upto<-1>));
    auto g = grid(3, W + 2, 0.5, 1.5, 9);
    g(1, 2) = std::numeric_limits<double>::quiet_NaN();
    const auto [value, gu] = nabla::value_and_grad(f, g);
    CHECK(std::isnan(value));
    CHECK(std::isnan(gu(1, 1)));
    CHECK(std::isnan(gu(1, 3)));
    CHECK(std::isfinite(gu(0, 2)));
    CHECK(std::isfinite(gu(2, 2)));
    g(1, 2) = std::numeric_limits<double>::infinity();
    CHECK(nabla::value_and_grad(f, g).value == std::numeric_limits<double>::infinity());
}

TEST_CASE("a stencil's gradient is taken in its forward loop, scaled when its reduction is a mean",
          "[grid]") {
    const auto [u, c] = nabla::array_variables<2>();
    const auto inner = range<1, -1>;
    // A reduction whose views of the grid come from three rows: fused, the lowest row's class
    // storing, the others adding; a mean scales the stored gradient afterwards.
    const auto f = mean(u(inner, inner) * exp(c(inner, inner)) * u(upto<-2>, inner) -
                        sin(u(from<2>, inner)) * u(inner, upto<-2>) * u(inner, from<2>));
    using P = nabla::detail::program<nabla::detail::graph_t<decltype(f.body)>, 3>;
    // Views of one row two columns apart meet in registers of more than two lanes.
    STATIC_REQUIRE(nabla::detail::fusion<P>::fused[0] == (W > 2 ? 0 : P::count));
    for (const auto& [rows, cols] : shapes) {
        CAPTURE(rows, cols);
        const auto gu = grid(rows, cols, -1.0, 1.0, 21);
        const auto gc = grid(rows, cols, -0.5, 0.5, 22);
        const double count = static_cast<double>((rows - 2) * (cols - 2));
        double expected = 0.0;
        xt::xtensor<double, 2> eu = xt::zeros<double>({rows, cols});
        xt::xtensor<double, 2> ec = xt::zeros<double>({rows, cols});
        for (std::size_t i = 1; i + 1 < rows; ++i)
            for (std::size_t j = 1; j + 1 < cols; ++j) {
                const double ctr = gu(i, j), k = std::exp(gc(i, j)), n = gu(i - 1, j),
                             s = gu(i + 1, j), w = gu(i, j - 1), e = gu(i, j + 1);
                expected += ctr * k * n - std::sin(s) * w * e;
                eu(i, j) += k * n / count;
                ec(i, j) += ctr * k * n / count;
                eu(i - 1, j) += ctr * k / count;
                eu(i + 1, j) -= std::cos(s) * w * e / count;
                eu(i, j - 1) -= std::sin(s) * e / count;
                eu(i, j + 1) -= std::sin(s) * w / count;
            }
        const auto [value, du, dc] = nabla::value_and_grad(f, gu, gc);
        // The mean of no elements is NaN; its gradient is zero.
        if (count > 0)
            CHECK(value == Approx(expected / count).epsilon(1e-13));
        else
            CHECK(std::isnan(value));
        for (std::size_t k = 0; k < gu.size(); ++k) {
            CHECK(du.data()[k] == Approx(eu.data()[k]).margin(1e-14));
            CHECK(dc.data()[k] == Approx(ec.data()[k]).margin(1e-14));
        }
        // Into arrays holding other values: every element is overwritten.
        xt::xtensor<double, 2> iu = xt::ones<double>({rows, cols});
        xt::xtensor<double, 2> ic = xt::ones<double>({rows, cols});
        const double into = nabla::value_and_grad_into(f, std::tie(iu, ic), gu, gc);
        CHECK((into == value || (std::isnan(into) && std::isnan(value))));
        for (std::size_t k = 0; k < gu.size(); ++k) {
            CHECK(iu.data()[k] == du.data()[k]);
            CHECK(ic.data()[k] == dc.data()[k]);
        }
    }
}

TEST_CASE("a pullback's plan runs one fused loop that does not accumulate its sum", "[grid]") {
    // The seeded reduction of a pullback is fused, and with its value unwanted its forward
    // values are not needed: checked through the plan, since timings are not tested.
    const auto [u, w] = nabla::array_variables<2>();
    const auto step = 0.6 * u(range<1, -1>, range<1, -1>) + 0.1 * u(upto<-2>, range<1, -1>);
    using Seeded = decltype(sum(step * w).body);
    using P = nabla::detail::program<nabla::detail::graph_t<Seeded>, 3, 2, false>;
    STATIC_REQUIRE(P::group_count == 1);
    STATIC_REQUIRE(nabla::detail::fusion<P>::fused[0] == (W > 1 ? 0 : P::count));
    STATIC_REQUIRE(!nabla::detail::accumulates<P, nabla::reduction::sum_kind>);
}

namespace {

// One explicit step of u_t = k (u_xx + u_yy) on a grid whose boundary is held: the interior by a
// static expression, and its pullback: apply_vjp on the interior, the boundary passed through.
struct held_boundary_heat {
    static auto interior() {
        const auto [u, k] = nabla::array_variables<2>();
        const auto in = range<1, -1>;
        return u(in, in) + k(in, in) * ((u(upto<-2>, in) + u(from<2>, in)) +
                                        (u(in, upto<-2>) + u(in, from<2>)) - 4.0 * u(in, in));
    }

    static nabla::matrix_ref<double> inside(xt::xtensor<double, 2>& g) {
        const std::size_t rows = g.shape()[0], cols = g.shape()[1];
        return {g.data() + cols + 1, rows - 2, cols - 2, cols};
    }
    static nabla::matrix_ref<const double> inside(const xt::xtensor<double, 2>& g) {
        const std::size_t rows = g.shape()[0], cols = g.shape()[1];
        return {g.data() + cols + 1, rows - 2, cols - 2, cols};
    }

    xt::xtensor<double, 2> operator()(const xt::xtensor<double, 2>& u,
                                      const xt::xtensor<double, 2>& k) const {
        xt::xtensor<double, 2> next = u;
        nabla::evaluate_into(interior(), inside(next), u, k);
        return next;
    }

    static std::pair<xt::xtensor<double, 2>, xt::xtensor<double, 2>>
    pullback(const xt::xtensor<double, 2>& u,
             const xt::xtensor<double, 2>& k,
             const xt::xtensor<double, 2>& w) {
        auto [du, dk] = nabla::apply_vjp(interior(), inside(w), u, k);
        // The boundary of the next state is the boundary of u.
        const std::size_t rows = u.shape()[0], cols = u.shape()[1];
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j)
                if (i == 0 || j == 0 || i + 1 == rows || j + 1 == cols)
                    du(i, j) += w(i, j);
        return {std::move(du), std::move(dk)};
    }
};

}  // namespace

TEST_CASE("steps of a grid with the pullback of a static expression reverse with binomial "
          "checkpointing as with every state stored",
          "[grid]") {
    const held_boundary_heat step;
    const std::size_t rows = 12, cols = W + 5, steps = 57;
    const auto u0 = grid(rows, cols, 0.0, 1.0, 31);
    const auto k = grid(rows, cols, 0.05, 0.2, 32);
    const auto w = grid(rows, cols, -1.0, 1.0, 33);

    // Every state stored, reversed step by step.
    std::vector<xt::xtensor<double, 2>> states{u0};
    for (std::size_t t = 0; t < steps; ++t)
        states.push_back(step(states.back(), k));
    xt::xtensor<double, 2> du = w;
    xt::xtensor<double, 2> dk = xt::zeros<double>({rows, cols});
    for (std::size_t t = steps; t-- > 0;) {
        auto [a, b] = held_boundary_heat::pullback(states[t], k, du);
        du = a;
        dk += b;
    }

    for (const std::size_t snapshots : {1UL, 3UL, 0UL}) {
        CAPTURE(snapshots);
        auto [uT, pullback] =
            nabla::checkpointed_vjp(step, &held_boundary_heat::pullback, u0, k, steps, snapshots);
        CHECK(static_cast<bool>(uT == states.back()));
        const auto adjoints = pullback(w);
        for (std::size_t q = 0; q < du.size(); ++q) {
            CHECK(adjoints.state.data()[q] == Approx(du.data()[q]).margin(1e-13));
            CHECK(adjoints.parameters.data()[q] == Approx(dk.data()[q]).margin(1e-12));
        }
        CHECK(adjoints.statistics.recorded_steps == steps);
        if (snapshots > 0)
            CHECK(adjoints.statistics.snapshots <= snapshots + 1);
    }

    // The same with a step and a pullback that write into states of the run's (no allocation
    // per step): step(x, p, next), pullback(x, p, w, dx, dp) adding to dp.
    const auto step_into = [&](const xt::xtensor<double, 2>& u, const xt::xtensor<double, 2>& p,
                               xt::xtensor<double, 2>& next) { next = step(u, p); };
    const auto pullback_into = [](const xt::xtensor<double, 2>& u, const xt::xtensor<double, 2>& p,
                                  const xt::xtensor<double, 2>& w, xt::xtensor<double, 2>& dx,
                                  xt::xtensor<double, 2>& dp) {
        auto [a, b] = held_boundary_heat::pullback(u, p, w);
        dx = a;
        dp += b;
    };
    auto [uT, pullback] = nabla::checkpointed_vjp(step_into, pullback_into, u0, k, steps, 4);
    CHECK(static_cast<bool>(uT == states.back()));
    const auto adjoints = pullback(w);
    for (std::size_t q = 0; q < du.size(); ++q) {
        CHECK(adjoints.state.data()[q] == Approx(du.data()[q]).margin(1e-13));
        CHECK(adjoints.parameters.data()[q] == Approx(dk.data()[q]).margin(1e-12));
    }
}

TEST_CASE("grid layouts nabla cannot read or write are refused: strided columns, rows going "
          "backwards, gradients overlapping each other or the cotangent",
          "[grid]") {
    const auto [a, b] = nabla::array_variables<2>();
    const auto g = grid(4, 10, 0.0, 1.0, 41);
    // One row, every second column: strided along the row.
    const auto every_second = xt::view(g, xt::range(0, 1), xt::range(0, 10, 2));
    CHECK_THROWS_WITH(sum(a)(every_second), Catch::Contains("strided along its rows"));
    // Rows in reverse order.
    const auto backwards = xt::view(g, xt::range(3, 0, -1), xt::all());
    CHECK_THROWS_WITH(sum(a)(backwards), Catch::Contains("going forward"));
    // A column (m x 1) is contiguous, as argument and as gradient.
    const auto column = grid(5, 1, 0.0, 1.0, 42);
    xt::xtensor<double, 2> column_gradient = xt::zeros<double>({5, 1});
    CHECK(nabla::value_and_grad_into(sum(a * a), std::tie(column_gradient), column) ==
          Approx(sum(a * a)(column)));
    for (std::size_t i = 0; i < 5; ++i)
        CHECK(column_gradient(i, 0) == Approx(2.0 * column(i, 0)));
    // Two gradients in one array would keep only the last written.
    xt::xtensor<double, 2> shared = xt::zeros<double>({4, 10});
    CHECK_THROWS_WITH(nabla::value_and_grad_into(sum(a * b), std::tie(shared, shared), g, g),
                      Catch::Contains("gradient arrays 0 and 1 overlap"));
    // A cotangent whose rows lie apart, its second row where the gradient goes.
    std::vector<double> memory(20, 1.0);
    const nabla::matrix_ref<const double> w(memory.data(), 2, 2, 10);
    nabla::matrix_ref<double> into(memory.data() + 10, 2, 2);
    const auto u = grid(2, 2, 0.0, 1.0, 43);
    CHECK_THROWS_WITH(nabla::apply_vjp_into(a * 2.0, std::tie(into), w, u),
                      Catch::Contains("overlaps the cotangent"));
}

TEST_CASE("fused grid loops: views rows apart, logsumexp and norm over stencils, an inner "
          "reduction read element by element, an empty interior, an infinite scale",
          "[grid]") {
    const auto [u] = nabla::array_variables<1>();
    const auto in = range<1, -1>;
    for (const auto& [rows, cols] : shapes) {
        CAPTURE(rows, cols);
        const auto g = grid(rows, cols, -1.0, 1.0, 51);
        // Views three rows apart, no view in between.
        if (rows > 3) {
            const auto gap = sum(u(upto<-3>, whole) * u(from<3>, whole));
            xt::xtensor<double, 2> expected = xt::zeros<double>({rows, cols});
            for (std::size_t i = 0; i + 3 < rows; ++i)
                for (std::size_t j = 0; j < cols; ++j) {
                    expected(i, j) += g(i + 3, j);
                    expected(i + 3, j) += g(i, j);
                }
            const auto [value, du] = nabla::value_and_grad(gap, g);
            for (std::size_t k = 0; k < g.size(); ++k)
                CHECK(du.data()[k] == Approx(expected.data()[k]).margin(1e-14));
        }
        // logsumexp and norm of a two-view stencil, each fused with its scale.
        const auto stencil = u(in, in) + 0.5 * u(upto<-2>, in);
        double m = -std::numeric_limits<double>::infinity(), squares = 0.0;
        for (std::size_t i = 1; i + 1 < rows; ++i)
            for (std::size_t j = 1; j + 1 < cols; ++j) {
                const double v = g(i, j) + 0.5 * g(i - 1, j);
                m = std::max(m, v);
                squares += v * v;
            }
        double s = 0.0;
        for (std::size_t i = 1; i + 1 < rows; ++i)
            for (std::size_t j = 1; j + 1 < cols; ++j)
                s += std::exp(g(i, j) + 0.5 * g(i - 1, j) - m);
        const double lse = m + std::log(s), norm_value = std::sqrt(squares);
        xt::xtensor<double, 2> e_lse = xt::zeros<double>({rows, cols});
        xt::xtensor<double, 2> e_norm = xt::zeros<double>({rows, cols});
        for (std::size_t i = 1; i + 1 < rows; ++i)
            for (std::size_t j = 1; j + 1 < cols; ++j) {
                const double v = g(i, j) + 0.5 * g(i - 1, j);
                const double p = std::exp(v - lse), q = v / norm_value;
                e_lse(i, j) += p;
                e_lse(i - 1, j) += 0.5 * p;
                e_norm(i, j) += q;
                e_norm(i - 1, j) += 0.5 * q;
            }
        const auto [v_lse, d_lse] = nabla::value_and_grad(logsumexp(stencil), g);
        const auto [v_norm, d_norm] = nabla::value_and_grad(norm(stencil), g);
        CHECK(v_lse == Approx(lse).epsilon(1e-13));
        CHECK(v_norm == Approx(norm_value).epsilon(1e-13));
        for (std::size_t k = 0; k < g.size(); ++k) {
            CHECK(d_lse.data()[k] == Approx(e_lse.data()[k]).margin(1e-14));
            CHECK(d_norm.data()[k] == Approx(e_norm.data()[k]).margin(1e-14));
        }
        // An inner reduction read by every element: f = sum(u_c (u_s - max(u))).
        const auto reads_max = sum(u(in, in) * (u(from<2>, in) - max(u)));
        double top = -std::numeric_limits<double>::infinity(), centre_total = 0.0;
        std::size_t at = 0;
        for (std::size_t k = 0; k < g.size(); ++k)
            if (g.data()[k] > top) {
                top = g.data()[k];
                at = k;
            }
        xt::xtensor<double, 2> e_max = xt::zeros<double>({rows, cols});
        for (std::size_t i = 1; i + 1 < rows; ++i)
            for (std::size_t j = 1; j + 1 < cols; ++j) {
                e_max(i, j) += g(i + 1, j) - top;
                e_max(i + 1, j) += g(i, j);
                centre_total += g(i, j);
            }
        e_max.data()[at] -= centre_total;
        const auto [v_max, d_max] = nabla::value_and_grad(reads_max, g);
        for (std::size_t k = 0; k < g.size(); ++k)
            CHECK(d_max.data()[k] == Approx(e_max.data()[k]).margin(1e-13));
    }
    // An empty interior: the pullback overwrites the gradient with zeros.
    const auto flat = grid(2, 9, 0.0, 1.0, 52);
    const xt::xtensor<double, 2> no_cotangent = xt::zeros<double>({0, 7});
    xt::xtensor<double, 2> filled = xt::ones<double>({2, 9});
    nabla::apply_vjp_into(u(in, in) * 3.0, std::tie(filled), no_cotangent, flat);
    CHECK(xt::amax(xt::abs(filled))() == 0.0);
    // An infinite scale (log of a zero sum) reaches the cells the views read, and no others.
    const xt::xtensor<double, 2> zero = xt::zeros<double>({6, 8});
    const auto [v_inf, d_inf] =
        nabla::value_and_grad(log(sum(u(upto<-5>, whole) + u(from<5>, whole))), zero);
    CHECK(v_inf == -std::numeric_limits<double>::infinity());
    for (std::size_t i = 0; i < 6; ++i)
        for (std::size_t j = 0; j < 8; ++j) {
            CAPTURE(i, j);
            if (i == 0 || i == 5)
                CHECK(d_inf(i, j) == std::numeric_limits<double>::infinity());
            else
                CHECK(d_inf(i, j) == 0.0);
        }
}
