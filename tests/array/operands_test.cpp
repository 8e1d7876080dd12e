// Products whose operands are expressions in static array expressions: a network of two layers,
// matmul and solve of expressions, products nested in operands, views of operands and operands
// also read element-wise, against the tape on the same generic lambdas (value, gradient, jvp and
// hvp) and against loops (value, value into an array, pullback); to_dot's boxes for operands.

#include <nabla/array.hpp>

#include <catch2/catch.hpp>
#include <xtensor/xtensor.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "samples.hpp"

namespace {

constexpr std::size_t W = nabla_test::lanes_width;
using nabla::from;
using nabla_test::conditioned;
using nabla_test::grid;

// Element by element: |got - want| within tolerance relative to the larger of 1 and |want|.
template <class A, class B>
void check_near(const A& got, const B& want, double tolerance) {
    REQUIRE(static_cast<std::size_t>(got.size()) == static_cast<std::size_t>(want.size()));
    auto g = got.begin();
    for (auto w = want.begin(); w != want.end(); ++w, ++g)
        CHECK(*g == Approx(*w).margin(tolerance).epsilon(tolerance));
}

// A network of two layers, written once for the static expression and for the tape.
const auto network =
    [](const auto& w1, const auto& b1, const auto& w2, const auto& b2, const auto& x) {
        const auto h = tanh(matvec(w1, x) + b1);
        const auto y = tanh(matvec(w2, h) + 0.5 * b2);
        return sum(y * y) + 0.25 * sum(h);
    };

}  // namespace

TEST_CASE("products of expressions: a network of two layers equals the tape in value, gradient, "
          "jvp and hvp",
          "[products]") {
    const auto [W1, B1, W2, B2, X] = nabla::array_variables<5>();
    const auto f = network(W1, B1, W2, B2, X);
    for (const auto& [h, n] : std::vector<std::array<std::size_t, 2>>{
             {1, 1}, {3, W + 1}, {4, W}, {W + 3, 2 * W + 1}, {9, 5}, {0, 3}}) {
        const std::size_t m = 3;
        CAPTURE(h, n);
        const auto w1 = grid(h, n, -0.6, 0.6, 1);
        const auto w2 = grid(m, h, -0.6, 0.6, 2);
        const auto b1 = nabla_test::sample(h, -0.3, 0.3, 3);
        const auto b2 = nabla_test::sample(m, -0.3, 0.3, 4);
        const auto xs = nabla_test::sample(n, -1.0, 1.0, 5);
        const auto [v, g1, gb1, g2, gb2, gx] = nabla::value_and_grad(f, w1, b1, w2, b2, xs);
        const auto tape = nabla::value_and_grad(nabla::mode::arrays, network, w1, b1, w2, b2, xs);
        CHECK(f(w1, b1, w2, b2, xs) == Approx(tape.value).epsilon(1e-14).margin(1e-15));
        CHECK(v == Approx(tape.value).epsilon(1e-14).margin(1e-15));
        check_near(g1, std::get<0>(tape.gradient), 1e-13);
        check_near(gb1, std::get<1>(tape.gradient), 1e-13);
        check_near(g2, std::get<2>(tape.gradient), 1e-13);
        check_near(gb2, std::get<3>(tape.gradient), 1e-13);
        check_near(gx, std::get<4>(tape.gradient), 1e-13);

        // Into the caller's arrays, written over what they held.
        auto i1 = grid(h, n, 7.0, 8.0, 6);
        auto i2 = grid(m, h, 7.0, 8.0, 7);
        std::vector<double> ib1(h, 7.0), ib2(m, 7.0), ix(n, 7.0);
        CHECK(nabla::value_and_grad_into(f, std::tie(i1, ib1, i2, ib2, ix), w1, b1, w2, b2, xs) ==
              v);
        check_near(i1, g1, 0.0);
        check_near(ix, gx, 0.0);

        // Forward mode: the tangent's products read tangents of expressions.
        const auto d1 = grid(h, n, -1.0, 1.0, 8);
        const auto d2 = grid(m, h, -1.0, 1.0, 9);
        const auto db1 = nabla_test::sample(h, -1.0, 1.0, 10);
        const auto db2 = nabla_test::sample(m, -1.0, 1.0, 11);
        const auto dx = nabla_test::sample(n, -1.0, 1.0, 12);
        const auto [jv, jt] =
            nabla::jvp(f, std::tie(w1, b1, w2, b2, xs), std::tie(d1, db1, d2, db2, dx));
        // <grad f, d>
        const auto dot = [](const auto& a, const auto& b) {
            double s = 0.0;
            auto q = b.begin();
            for (auto p = a.begin(); p != a.end(); ++p, ++q)
                s += *p * *q;
            return s;
        };
        const double along =
            dot(g1, d1) + dot(gb1, db1) + dot(g2, d2) + dot(gb2, db2) + dot(gx, dx);
        CHECK(jv == Approx(v).epsilon(1e-14).margin(1e-15));
        CHECK(jt == Approx(along).epsilon(1e-13).margin(1e-14));
        const auto hv = nabla::hvp(f, std::tie(w1, b1, w2, b2, xs), std::tie(d1, db1, d2, db2, dx));
        const auto th = nabla::hvp(nabla::mode::arrays, network, std::tie(w1, b1, w2, b2, xs),
                                   std::tie(d1, db1, d2, db2, dx));
        check_near(std::get<0>(hv), std::get<0>(th), 1e-12);
        check_near(std::get<1>(hv), std::get<1>(th), 1e-12);
        check_near(std::get<2>(hv), std::get<2>(th), 1e-12);
        check_near(std::get<3>(hv), std::get<3>(th), 1e-12);
        check_near(std::get<4>(hv), std::get<4>(th), 1e-12);
    }
}

TEST_CASE("products of expressions: matmul and solve of expressions, nested products, views and "
          "an operand also read element-wise",
          "[products]") {
    const auto [A, B, C, x] = nabla::array_variables<4>();
    const auto on_tape = [](const auto& a, const auto& b, const auto& c, const auto& v) {
        const auto s = tanh(a) * 0.5;                          // read by matmul and by a sum
        const auto p = matmul(s, b * c + 1.0);                 // two operands of expressions
        const auto z = solve(c + s * 0.1, matvec(p, exp(v)));  // nested: matvec inside solve's
        return sum(z * z) + sum(s) + sum(p * p) * 0.125;
    };
    const auto f = on_tape(A, B, C, x);
    for (const std::size_t n : {std::size_t{1}, std::size_t{3}, W + 1, 2 * W + 3}) {
        CAPTURE(n);
        const auto as = grid(n, n, -1.0, 1.0, 1);
        const auto bs = grid(n, n, -1.0, 1.0, 2);
        const auto cs = conditioned(n, 3);
        const auto xs = nabla_test::sample(n, -0.5, 0.5, 4);
        const auto [v, ga, gb, gc, gx] = nabla::value_and_grad(f, as, bs, cs, xs);
        const auto tape = nabla::value_and_grad(nabla::mode::arrays, on_tape, as, bs, cs, xs);
        CHECK(v == Approx(tape.value).epsilon(1e-13));
        check_near(ga, std::get<0>(tape.gradient), 1e-12);
        check_near(gb, std::get<1>(tape.gradient), 1e-12);
        check_near(gc, std::get<2>(tape.gradient), 1e-12);
        check_near(gx, std::get<3>(tape.gradient), 1e-12);
    }

    // A view of an operand: matvec(A, (2 x)[1:]) reads x[1:].
    const auto [M, y] = nabla::array_variables<2>();
    const auto g = sum(square(matvec(M, (2.0 * y)(from<1>))));
    const auto as = grid(3, 4, -1.0, 1.0, 5);
    const auto xs = nabla_test::sample(5, -1.0, 1.0, 6);
    const auto [v, ga, gx] = nabla::value_and_grad(g, as, xs);
    const auto [tv, tg] = [&] {
        const auto r = nabla::value_and_grad(
            nabla::mode::arrays,
            [](const auto& a, const auto& v) {
                return sum(square(matvec(a, 2.0 * v(nabla::from<1>))));
            },
            as, xs);
        return std::pair{r.value, std::get<1>(r.gradient)};
    }();
    CHECK(v == Approx(tv).epsilon(1e-14));
    check_near(gx, tg, 1e-13);
    CHECK(gx[0] == 0.0);
}

TEST_CASE("products of expressions: an array-valued value, into an array, its pullback, and "
          "to_dot",
          "[products]") {
    const auto [A, x, b] = nabla::array_variables<3>();
    const auto f = matvec(A, sin(x) * x) + b;
    const std::size_t m = 5, n = W + 2;
    const auto as = grid(m, n, -1.0, 1.0, 1);
    const auto xs = nabla_test::sample(n, -1.0, 1.0, 2);
    const auto bs = nabla_test::sample(m, -1.0, 1.0, 3);
    std::vector<double> want(m), u(n);
    for (std::size_t j = 0; j < n; ++j)
        u[j] = std::sin(xs[j]) * xs[j];
    for (std::size_t i = 0; i < m; ++i) {
        want[i] = bs[i];
        for (std::size_t j = 0; j < n; ++j)
            want[i] += as(i, j) * u[j];
    }
    check_near(f(as, xs, bs), want, 1e-13);
    std::vector<double> out(m, -1.0);
    nabla::evaluate_into(f, out, as, xs, bs);
    check_near(out, want, 1e-13);

    // w^T J: dA = w u^T, dx_j = (A^T w)_j (sin x_j + x_j cos x_j), db = w.
    const auto w = nabla_test::sample(m, -1.0, 1.0, 4);
    const auto [pa, px, pb] = nabla::apply_vjp(f, w, as, xs, bs);
    for (std::size_t j = 0; j < n; ++j) {
        double atw = 0.0;
        for (std::size_t i = 0; i < m; ++i) {
            atw += as(i, j) * w[i];
            CHECK(pa(i, j) == Approx(w[i] * u[j]).epsilon(1e-14).margin(1e-15));
        }
        CHECK(px[j] == Approx(atw * (std::sin(xs[j]) + xs[j] * std::cos(xs[j]))).epsilon(1e-13));
    }
    check_near(pb, w, 0.0);

    // An operand of the wrong length: a shape_error before anything is written.
    const auto short_x = nabla_test::sample(n - 1, -1.0, 1.0, 5);
    std::vector<double> kept(m, 3.0);
    CHECK_THROWS_AS(nabla::evaluate_into(f, kept, as, short_x, bs), nabla::shape_error);
    check_near(kept, std::vector<double>(m, 3.0), 0.0);

    const std::string dot = nabla::to_dot(sum(f));
    CHECK_THAT(dot, Catch::Contains("o0 [shape=box, label=\"x3 = sin(x1)*x1\"]"));
    CHECK_THAT(dot, Catch::Contains("p0 [shape=box, label=\"x4 = matvec(x0, x3)\"]"));
    CHECK_THAT(dot, Catch::Contains("o0 -> p0;"));
}

namespace {

// A cumulative sum, and its pullback: dx_j += sum of dy_i over i >= j.
const auto cumsum_value = [](std::span<const double> v) {
    std::vector<double> out(v.size());
    double total = 0.0;
    for (std::size_t i = 0; i < v.size(); ++i)
        out[i] = total += v[i];
    return out;
};
const auto cumsum_pullback = [](std::span<const double>,
                                std::span<const double>,
                                std::span<const double> dy,
                                std::span<double> dx) {
    double total = 0.0;
    for (std::size_t i = dy.size(); i-- > 0;)
        dx[i] += total += dy[i];
};
// x_i y_i / (1 + y_i^2), of two arrays.
const auto ratio_value = [](std::span<const double> x, std::span<const double> y) {
    std::vector<double> out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        out[i] = x[i] * y[i] / (1.0 + y[i] * y[i]);
    return out;
};
const auto ratio_pullback = [](std::span<const double> x,
                               std::span<const double> y,
                               std::span<const double>,
                               std::span<const double> dy,
                               std::span<double> dx,
                               std::span<double> dz) {
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double q = 1.0 + y[i] * y[i];
        if (!dx.empty())
            dx[i] += dy[i] * y[i] / q;
        if (!dz.empty())
            dz[i] += dy[i] * x[i] * (1.0 - y[i] * y[i]) / (q * q);
    }
};

// The same lambda for the static expression and for the tape.
const auto with_custom = [](const auto& x, const auto& y) {
    const auto c = nabla::custom_array(cumsum_value, cumsum_pullback, x * 2.0);
    const auto r = nabla::custom_array(ratio_value, ratio_pullback, c, y);
    return sum(r * r) + 0.5 * sum(c) + sum(x * y);
};

}  // namespace

TEST_CASE("custom_array in a static expression: functions of the caller's, of expressions and "
          "of each other, equal the tape's",
          "[products]") {
    const auto [X, Y] = nabla::array_variables<2>();
    const auto f = with_custom(X, Y);
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, W + 1, 3 * W + 2}) {
        CAPTURE(n);
        const auto xs = nabla_test::sample(n, -1.0, 1.0, 1);
        const auto ys = nabla_test::sample(n, -1.0, 1.0, 2);
        const auto [v, gx, gy] = nabla::value_and_grad(f, xs, ys);
        const auto tape = nabla::value_and_grad(nabla::mode::arrays, with_custom, xs, ys);
        CHECK(f(xs, ys) == Approx(tape.value).epsilon(1e-14).margin(1e-15));
        CHECK(v == Approx(tape.value).epsilon(1e-14).margin(1e-15));
        check_near(gx, std::get<0>(tape.gradient), 1e-13);
        check_near(gy, std::get<1>(tape.gradient), 1e-13);
    }

    // Array-valued, a view as an argument, and the pullback: cumsum(x[1:]) + y.
    const auto g = nabla::custom_array(cumsum_value, cumsum_pullback, X(from<1>)) + Y;
    const auto xs = nabla_test::sample(6, -1.0, 1.0, 3);
    const auto ys = nabla_test::sample(5, -1.0, 1.0, 4);
    std::vector<double> out(5, -1.0);
    nabla::evaluate_into(g, out, xs, ys);
    double total = 0.0;
    for (std::size_t i = 0; i < 5; ++i)
        CHECK(out[i] == Approx((total += xs[i + 1]) + ys[i]).epsilon(1e-15));
    const std::vector<double> w{1.0, 2.0, 3.0, 4.0, 5.0};
    const auto [px, py] = nabla::apply_vjp(g, w, xs, ys);
    const std::vector<double> want_x{0.0, 15.0, 14.0, 12.0, 9.0, 5.0};
    check_near(px, want_x, 0.0);
    check_near(py, w, 0.0);
    // Too short for the view: a shape_error.
    CHECK_THROWS_AS(nabla::evaluate_into(g, out, std::vector<double>{}, ys), nabla::shape_error);

    // Inside a product's operand, and to_dot.
    const auto [A, x] = nabla::array_variables<2>();
    const auto h = sum(matvec(A, nabla::custom_array(cumsum_value, cumsum_pullback, x)));
    const auto as = grid(3, 4, -1.0, 1.0, 5);
    const auto x4 = nabla_test::sample(4, -1.0, 1.0, 6);
    const auto [hv, ga, gx] = nabla::value_and_grad(h, as, x4);
    std::vector<double> c(4), colsum(4, 0.0);
    double run = 0.0, want = 0.0;
    for (std::size_t j = 0; j < 4; ++j) {
        c[j] = run += x4[j];
        for (std::size_t i = 0; i < 3; ++i) {
            want += as(i, j) * c[j];
            colsum[j] += as(i, j);
            CHECK(ga(i, j) == Approx(c[j]).epsilon(1e-15));
        }
    }
    CHECK(hv == Approx(want).epsilon(1e-14));
    for (std::size_t j = 0; j < 4; ++j) {
        double tail = 0.0;
        for (std::size_t k = j; k < 4; ++k)
            tail += colsum[k];
        CHECK(gx[j] == Approx(tail).epsilon(1e-14));
    }
    const std::string dot = nabla::to_dot(h);
    CHECK_THAT(dot, Catch::Contains("o0 [shape=box, label=\"x2 = custom_array(x1)\"]"));
    CHECK_THAT(dot, Catch::Contains("p0 [shape=box, label=\"x3 = matvec(x0, x2)\"]"));
    CHECK_THAT(dot, Catch::Contains("o0 -> p0;"));
    CHECK_THAT(nabla::to_dot(sum(nabla::custom_array(cumsum_value, cumsum_pullback, x))),
               Catch::Contains("p0 [shape=box, label=\"x2 = custom_array(x1)\"]"));
}
