// Arrays on the run-time tape (nabla::var_array): generic functions recorded one entry per array
// operation give the values and gradients of the same functions as static array expressions and
// of the scalar tape, element by element, at sizes around the SIMD width; elements, slices and
// scalar statements mix; misuse is reported.

#include <nabla/array.hpp>

#include <catch2/catch.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "samples.hpp"

namespace {

constexpr std::size_t W = nabla_test::lanes_width;
using nabla_test::sample;
const std::vector<std::size_t> sizes{0, 1, 2, 7, W - 1, W, W + 1, 4 * W + 3, 1001};

// One generic function of two arrays, as a static array expression and on the tape: the same
// value and gradients.
template <class F>
void same_as_static(const F& f,
                    const std::vector<double>& xs,
                    const std::vector<double>& ys,
                    double margin = 1e-300) {
    const auto [x, y] = nabla::array_variables<2>();
    const auto [value, gx, gy] = nabla::value_and_grad(f(x, y), xs, ys);
    const auto [v, hx, hy] = nabla::value_and_grad(nabla::mode::arrays, f, xs, ys);
    if (std::isnan(value))
        CHECK(std::isnan(v));
    else
        CHECK(v == Approx(value).epsilon(1e-12).margin(margin));
    REQUIRE(hx.size() == xs.size());
    REQUIRE(hy.size() == ys.size());
    for (std::size_t i = 0; i < xs.size(); ++i) {
        CHECK(hx[i] == Approx(gx[i]).epsilon(1e-12).margin(margin));
        CHECK(hy[i] == Approx(gy[i]).epsilon(1e-12).margin(margin));
    }
}

}  // namespace

TEST_CASE("log-sum-exp written once runs on the tape with arrays and gives the softmax",
          "[array][tape]") {
    const auto lse = [](const auto& x) {
        using std::log;
        auto m = amax(x);
        return log(sum(exp(x - m))) + m;
    };
    for (const std::size_t n : sizes) {
        if (n == 0)
            continue;
        INFO("n = " << n);
        const auto xs = sample(n, -3.0, 3.0, 1);
        const auto [v, g] = nabla::value_and_grad(nabla::mode::arrays, lse, xs);
        double m = -std::numeric_limits<double>::infinity();
        for (const double e : xs)
            m = std::max(m, e);
        double s = 0.0;
        for (const double e : xs)
            s += std::exp(e - m);
        CHECK(v == Approx(m + std::log(s)).epsilon(1e-14));
        for (std::size_t i = 0; i < n; ++i)
            CHECK(g[i] == Approx(std::exp(xs[i] - m) / s).epsilon(1e-12));
        CHECK(nabla::grad(nabla::mode::arrays, lse, xs) == g);
    }
}

TEST_CASE("element-wise chains and reductions on the tape equal static array expressions",
          "[array][tape]") {
    for (const std::size_t n : sizes) {
        INFO("n = " << n);
        const auto xs = sample(n, -1.5, 1.5, 2);
        const auto ys = sample(n, 0.5, 2.0, 3);
        same_as_static(
            [](const auto& x, const auto& y) {
                return sum(exp(sin(x) * y) + log1p(x * x) - sqrt(y) / (1.0 + x * x));
            },
            xs, ys);
        same_as_static([](const auto& x, const auto& y) { return mean(x * y - 2.0 * y); }, xs, ys);
        same_as_static([](const auto& x, const auto& y) { return dot(x, y) + norm(x - y); }, xs,
                       ys);
        same_as_static([](const auto& x, const auto& y) { return prod(1.0 + 0.1 * x / y); }, xs,
                       ys);
        same_as_static([](const auto& x, const auto& y) { return max(x * y) - min(x / y); }, xs,
                       ys);
        same_as_static([](const auto& x, const auto& y) { return logsumexp(3.0 * x + y); }, xs, ys);
        same_as_static(
            [](const auto& x, const auto& y) {
                return sum(fma(x, y, x) + nabla::digamma(1.5 + x * x) * y);
            },
            xs, ys);
        // A reduction broadcast back into an element-wise expression.
        same_as_static(
            [](const auto& x, const auto& y) {
                const auto centred = x - mean(x);
                return sum(centred * centred * y) / (1.0 + norm(y));
            },
            xs, ys);
    }
}

TEST_CASE("extended Rosenbrock through views gives the same gradient on the tape",
          "[array][tape]") {
    const auto rosenbrock = [](const auto& x, const auto&) {
        return sum(100.0 * square(x(nabla::from<1>) - square(x(nabla::upto<-1>))) +
                   square(1.0 - x(nabla::upto<-1>)));
    };
    for (const std::size_t n : {2UL, 3UL, W + 2, 4 * W + 5, 1000UL}) {
        INFO("n = " << n);
        same_as_static(rosenbrock, sample(n, -1.2, 1.2, 4), sample(n, 0.0, 1.0, 5));
    }
}

TEST_CASE("every listed function works element-wise on the tape, its partials from the rule "
          "table",
          "[array][tape]") {
    const auto xs = sample(4 * W + 3, 0.15, 0.85, 3);
    const auto ys = sample(4 * W + 3, 0.2, 0.9, 4);
    std::vector<double> big(xs.size()), negative(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) {
        big[i] = 1.0 + xs[i];        // acosh needs x > 1
        negative[i] = -0.4 * xs[i];  // Lambert W's lower branch -1/e <= x < 0
    }

#define NABLA_CHECK_UNARY(function, rule)                                                          \
    {                                                                                              \
        INFO(#function);                                                                           \
        const auto& in = std::string_view(#function) == "acosh"         ? big                      \
                         : std::string_view(#function) == "lambert_wm1" ? negative                 \
                                                                        : xs;                      \
        const auto [value, gradient] = nabla::value_and_grad(                                      \
            nabla::mode::arrays,                                                                   \
            [](const auto& x) {                                                                    \
                using nabla::function;                                                             \
                return sum(function(x));                                                           \
            },                                                                                     \
            in);                                                                                   \
        double expected = 0.0;                                                                     \
        for (std::size_t i = 0; i < in.size(); ++i) {                                              \
            const double v = nabla::rules::rule::value(in[i]);                                     \
            expected += v;                                                                         \
            const double d = nabla::detail::to_number<double>(                                     \
                nabla::rules::rule::template partial<0>(v, in[i]));                                \
            CHECK(gradient[i] == Approx(d).epsilon(1e-12).margin(1e-300));                         \
        }                                                                                          \
        CHECK(value == Approx(expected).epsilon(1e-12));                                           \
    }
    NABLA_UNARY_FUNCTIONS(NABLA_CHECK_UNARY)
#undef NABLA_CHECK_UNARY

    // Each binary function with arrays on both sides, and with a variable or a number on one.
    const double c = 0.45;
#define NABLA_CHECK_BINARY(function, rule)                                                         \
    {                                                                                              \
        INFO(#function);                                                                           \
        nabla::tape<> t;                                                                           \
        auto recording = t.record();                                                               \
        const nabla::var_array x = nabla::input_array(t, xs);                                      \
        const nabla::var_array y = nabla::input_array(t, ys);                                      \
        const nabla::var s = t.input(c);                                                           \
        const nabla::var f = sum(function(x, y)) + sum(function(x, s)) + sum(function(s, y)) +     \
                             sum(function(x, c)) + sum(function(c, y));                            \
        t.gradient(f);                                                                             \
        const auto gx = nabla::adjoints(t, x);                                                     \
        const auto gy = nabla::adjoints(t, y);                                                     \
        double expected = 0.0, ds = 0.0;                                                           \
        const auto partial = [](auto k, double v, double a, double b) {                            \
            return nabla::detail::to_number<double>(                                               \
                nabla::rules::rule::template partial<decltype(k)::value>(v, a, b));                \
        };                                                                                         \
        using zero = std::integral_constant<std::size_t, 0>;                                       \
        using one = std::integral_constant<std::size_t, 1>;                                        \
        for (std::size_t i = 0; i < xs.size(); ++i) {                                              \
            const double a = xs[i], b = ys[i];                                                     \
            const double vab = nabla::rules::rule::value(a, b);                                    \
            const double vac = nabla::rules::rule::value(a, c);                                    \
            const double vcb = nabla::rules::rule::value(c, b);                                    \
            expected += vab + 2.0 * vac + 2.0 * vcb;                                               \
            CHECK(gx[i] == Approx(partial(zero{}, vab, a, b) + 2.0 * partial(zero{}, vac, a, c))   \
                               .epsilon(1e-12)                                                     \
                               .margin(1e-300));                                                   \
            CHECK(gy[i] == Approx(partial(one{}, vab, a, b) + 2.0 * partial(one{}, vcb, c, b))     \
                               .epsilon(1e-12)                                                     \
                               .margin(1e-300));                                                   \
            ds += partial(one{}, vac, a, c) + partial(zero{}, vcb, c, b);                          \
        }                                                                                          \
        CHECK(f.value == Approx(expected).epsilon(1e-12));                                         \
        CHECK(t.adjoint(s) == Approx(ds).epsilon(1e-12).margin(1e-300));                           \
    }
    NABLA_BINARY_FUNCTIONS(NABLA_CHECK_BINARY)
    NABLA_CHECK_BINARY(pow, pow_rule)
#undef NABLA_CHECK_BINARY

    // ellint_3(k, nu, phi) of three var_arrays.
    {
        nabla::tape<> t;
        auto recording = t.record();
        const nabla::var_array k = nabla::input_array(t, xs);
        std::vector<double> characteristic(xs.size()), amplitude(xs.size());
        for (std::size_t i = 0; i < xs.size(); ++i) {
            characteristic[i] = -1.5 - xs[i];
            amplitude[i] = 2.0 * ys[i];
        }
        const nabla::var_array nu = nabla::input_array(t, characteristic);
        const nabla::var_array phi = nabla::input_array(t, amplitude);
        const nabla::var f = sum(ellint_3(k, nu, phi));
        t.gradient(f);
        const auto gk = nabla::adjoints(t, k);
        const auto gnu = nabla::adjoints(t, nu);
        const auto gphi = nabla::adjoints(t, phi);
        double expected = 0.0;
        using nabla::rules::ellint_3_rule;
        for (std::size_t i = 0; i < xs.size(); ++i) {
            const double a = xs[i], b = characteristic[i], c = amplitude[i];
            const double v = ellint_3_rule::value(a, b, c);
            expected += v;
            CHECK(gk[i] == nabla::detail::to_number<double>(ellint_3_rule::partial<0>(v, a, b, c)));
            CHECK(gnu[i] ==
                  nabla::detail::to_number<double>(ellint_3_rule::partial<1>(v, a, b, c)));
            CHECK(gphi[i] ==
                  nabla::detail::to_number<double>(ellint_3_rule::partial<2>(v, a, b, c)));
        }
        CHECK(f.value == Approx(expected).epsilon(1e-12));
    }
}

TEST_CASE("elements are variables: arrays and scalar statements mix, and control flow on values "
          "works",
          "[array][tape]") {
    const auto xs = sample(2 * W + 3, -1.0, 1.0, 6);
    // Elements read one by one and the whole array in one function; a branch on a reduction.
    const auto f = [](const auto& x) {
        using std::exp;
        auto s = sum(x * x);
        if (s > 1.0)
            s = s * x[1] + exp(x[0]);
        return s;
    };
    const auto [v, g] = nabla::value_and_grad(nabla::mode::arrays, f, xs);
    double s = 0.0;
    for (const double e : xs)
        s += e * e;
    REQUIRE(s > 1.0);
    CHECK(v == Approx(s * xs[1] + std::exp(xs[0])).epsilon(1e-14));
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const double expected =
            2.0 * xs[i] * xs[1] + (i == 1 ? s : 0.0) + (i == 0 ? std::exp(xs[0]) : 0.0);
        CHECK(g[i] == Approx(expected).epsilon(1e-14));
    }

    // An array made of variables: its adjoints go back to them.
    nabla::tape<> t;
    auto recording = t.record();
    const nabla::var a = t.input(2.0), b = t.input(3.0);
    const nabla::var_array made(std::vector<nabla::var>{a, b, a * b});
    const nabla::var y = sum(made * made);  // a^2 + b^2 + a^2 b^2
    t.gradient(y);
    CHECK(y.value == Approx(49.0));
    CHECK(t.adjoint(a) == Approx(2.0 * 2.0 + 2.0 * 2.0 * 9.0));
    CHECK(t.adjoint(b) == Approx(2.0 * 3.0 + 2.0 * 4.0 * 3.0));
    CHECK(t.adjoint(made[2]) == Approx(12.0));
}

TEST_CASE("one tape entry per array operation: no partial per element on the tape, and sweeps "
          "repeat",
          "[array][tape]") {
    const auto xs = sample(1000, -2.0, 2.0, 7);
    nabla::tape<> t;
    auto recording = t.record();
    const nabla::var_array x = nabla::input_array(t, xs);
    const nabla::var m = amax(x);
    const nabla::var f = log(sum(exp(x - m))) + m;
    // The inputs, x - m and exp(x - m) have a variable per element; amax, sum and the scalar
    // statement one each. Only the scalar statement holds pairs.
    CHECK(t.statements() == 1 + 3 * xs.size() + 3);
    CHECK(t.partials() == 2);
    t.gradient(f);
    const auto first = nabla::adjoints(t, x);
    t.zero_adjoints();
    t.seed(f, 2.0);
    t.sweep();
    const auto second = nabla::adjoints(t, x);
    double total = 0.0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        CHECK(second[i] == 2.0 * first[i]);
        total += first[i];
    }
    CHECK(total == Approx(1.0).epsilon(1e-13));

    // Constant arrays record nothing.
    const std::size_t before = t.statements();
    const nabla::var_array c(xs);
    const nabla::var k = sum(exp(c) * 2.0);
    CHECK(t.statements() == before);
    CHECK(k.value == Approx(2.0 * sum(exp(c)).value));
}

TEST_CASE("slices share the array's variables; a zero adjoint passes nothing back through an "
          "infinite partial",
          "[array][tape]") {
    nabla::tape<> t;
    auto recording = t.record();
    const nabla::var_array x = nabla::input_array(t, std::vector<double>{0.0, 1.0, 4.0, 9.0});
    // sqrt'(0) is infinite; the element it multiplies has adjoint 0.
    const nabla::var f = sum(sqrt(x) * std::vector<double>{0.0, 1.0, 1.0, 1.0}) +
                         sum(x.slice(1, 3) * x(nabla::from<2>));
    t.gradient(f);
    const auto g = nabla::adjoints(t, x);
    CHECK(g[0] == 0.0);
    CHECK(g[1] == Approx(0.5 + 4.0));
    CHECK(g[2] == Approx(0.25 + 9.0 + 1.0));
    CHECK(g[3] == Approx(1.0 / 6.0 + 4.0));
}

TEST_CASE("NaN and infinity propagate on the tape as in the static array loops", "[array][tape]") {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> xs = sample(3 * W + 5, -1.0, 1.0, 8);
    xs[1] = inf;
    xs[W + 2] = nan;
    xs[2 * W + 4] = -inf;
    const auto f = [](const auto& x, const auto&) { return sum(exp(x) * 0.5 + x * x); };
    const auto [x, y] = nabla::array_variables<2>();
    const auto [value, gx, gy] = nabla::value_and_grad(f(x, y), xs, xs);
    const auto [v, hx, hy] = nabla::value_and_grad(nabla::mode::arrays, f, xs, xs);
    CHECK(std::isnan(v));
    CHECK(std::isnan(value));
    for (std::size_t i = 0; i < xs.size(); ++i) {
        INFO("i = " << i);
        if (std::isnan(gx[i]))
            CHECK(std::isnan(hx[i]));
        else
            CHECK(hx[i] == Approx(gx[i]).epsilon(1e-14));
    }
}

TEST_CASE("misuse on the tape is reported: lengths that differ, stale arrays, indices past the "
          "end",
          "[array][tape]") {
    nabla::tape<> t;
    nabla::var_array old;
    {
        auto recording = t.record();
        old = nabla::input_array(t, std::vector<double>{1.0, 2.0});
        const nabla::var_array x = nabla::input_array(t, std::vector<double>{1.0, 2.0, 3.0});
        CHECK_THROWS_AS(x * old, nabla::shape_error);
        CHECK_THROWS_AS(x.slice(2, 4), nabla::shape_error);
        CHECK_THROWS_AS(x(nabla::range<2, -2>), nabla::shape_error);
        CHECK_THROWS_AS(x.at(3), nabla::tape_error);
        CHECK_THROWS_WITH(x.at(3), "nabla::tape: var_array::at(3): the array has 3 elements");
    }
    auto recording = t.record();  // a new recording: `old` is stale
    const nabla::var_array x = nabla::input_array(t, std::vector<double>{1.0, 2.0});
    CHECK_THROWS_AS(x * old, nabla::tape_error);
    CHECK_THROWS_AS(sum(old), nabla::tape_error);
    const xt::xarray<double> square = xt::zeros<double>({2, 2});
    CHECK_THROWS_AS(nabla::value_and_grad(
                        nabla::mode::arrays, [](const auto& a) { return sum(a); }, square),
                    nabla::shape_error);
}

TEST_CASE("array values outlive their tape, and arrays move between threads", "[array][tape]") {
    nabla::var_array kept;
    {
        nabla::tape<> t;
        auto recording = t.record();
        kept = exp(nabla::input_array(t, std::vector<double>{0.0, 1.0}));
    }
    CHECK(kept.value(1) == Approx(std::exp(1.0)).epsilon(1e-15));
    CHECK_THROWS_AS(sum(kept), nabla::tape_error);  // its tape is gone
    std::thread([&kept] {
        const nabla::var_array made(std::vector<double>{1.0, 2.0, 3.0});
        kept = made * 2.0;
    }).join();
    REQUIRE(kept.size() == 3);
    CHECK(kept.value(2) == 6.0);
    // Memory given back is handed out again with the new values.
    for (int round = 0; round < 3; ++round) {
        const nabla::var_array a(std::vector<double>(1000, 1.0 + round));
        CHECK(sum(a * a).value == Approx(1000.0 * (1.0 + round) * (1.0 + round)));
    }
}

TEST_CASE("vjp with arrays: the pullback of an array-valued function gives the rows of its "
          "Jacobian, sweep after sweep",
          "[array][tape]") {
    const auto xs = sample(2 * W + 3, 0.2, 1.5, 9);
    const auto ys = sample(2 * W + 3, -1.0, 1.0, 10);
    const std::size_t n = xs.size();
    // F(x, y) = x * exp(y) - mean(x): J_x = diag(exp(y)) - 1/n, J_y = diag(x exp(y)).
    const auto F = [](const auto& x, const auto& y) { return x * exp(y) - mean(x); };
    auto [value, pullback] = nabla::vjp(nabla::mode::arrays, F, xs, ys);
    double m = 0.0;
    for (const double e : xs)
        m += e / static_cast<double>(n);
    REQUIRE(value.size() == n);
    for (std::size_t i = 0; i < n; ++i)
        CHECK(value[i] == Approx(xs[i] * std::exp(ys[i]) - m).epsilon(1e-14));
    for (const std::size_t row : {0UL, W, n - 1}) {
        std::vector<double> e(n, 0.0);
        e[row] = 1.0;
        const auto [gx, gy] = pullback(e);
        for (std::size_t j = 0; j < n; ++j) {
            const double dx = (j == row ? std::exp(ys[j]) : 0.0) - 1.0 / static_cast<double>(n);
            CHECK(gx[j] == Approx(dx).epsilon(1e-14));
            CHECK(gy[j] == Approx(j == row ? xs[j] * std::exp(ys[j]) : 0.0).epsilon(1e-14));
        }
    }
    CHECK_THROWS_AS(pullback(std::vector<double>(n + 1)), nabla::shape_error);

    // A scalar function: its pullback scales the gradient.
    const auto lse = [](const auto& x) { return logsumexp(x); };
    auto [v, back] = nabla::vjp(nabla::mode::arrays, lse, xs);
    const auto g = nabla::grad(nabla::mode::arrays, lse, xs);
    CHECK(v == Approx(nabla::value_and_grad(nabla::mode::arrays, lse, xs).value));
    const std::vector<double> twice = back(2.0);
    for (std::size_t j = 0; j < n; ++j)
        CHECK(twice[j] == 2.0 * g[j]);
}

TEST_CASE("a dense layer on the tape: matvec and its adjoints equal the scalar tape's, matrices "
          "as xtensor arguments",
          "[array][tape][matrix]") {
    for (const std::size_t n : {1UL, 3UL, W + 1, 2 * W + 3}) {
        const std::size_t m = n + 2;
        INFO("m = " << m << ", n = " << n);
        const auto wv = sample(m * n, -0.5, 0.5, 11);
        const auto xs = sample(n, -1.0, 1.0, 12);
        const auto bs = sample(m, -0.2, 0.2, 13);
        xt::xtensor<double, 2> w = xt::zeros<double>({m, n});
        std::copy(wv.begin(), wv.end(), w.data());
        const auto layer = [](const auto& weights, const auto& x, const auto& b) {
            const auto h = tanh(matvec(weights, x) + b);
            return sum(h * h);
        };
        const auto [v, gw, gx, gb] = nabla::value_and_grad(nabla::mode::arrays, layer, w, xs, bs);
        static_assert(std::is_same_v<std::remove_cvref_t<decltype(gw)>, xt::xtensor<double, 2>>);
        REQUIRE(gw.shape()[0] == m);
        REQUIRE(gw.shape()[1] == n);

        // The same layer written element by element on the scalar tape, over (W, x, b) flat.
        std::vector<double> flat(wv);
        flat.insert(flat.end(), xs.begin(), xs.end());
        flat.insert(flat.end(), bs.begin(), bs.end());
        const auto scalar = [m, n](const auto& p) {
            using T = std::decay_t<decltype(p[0])>;
            T total = 0.0;
            for (std::size_t i = 0; i < m; ++i) {
                T z = p[m * n + n + i];
                for (std::size_t j = 0; j < n; ++j)
                    z = z + p[i * n + j] * p[m * n + j];
                using std::tanh;
                const T h = tanh(z);
                total = total + h * h;
            }
            return total;
        };
        const auto expected = nabla::value_and_grad(nabla::mode::reverse, scalar, flat);
        CHECK(v == Approx(expected.value).epsilon(1e-13));
        for (std::size_t k = 0; k < m * n; ++k)
            CHECK(gw.data()[k] == Approx(expected.gradient[k]).epsilon(1e-12).margin(1e-15));
        for (std::size_t j = 0; j < n; ++j)
            CHECK(gx[j] == Approx(expected.gradient[m * n + j]).epsilon(1e-12).margin(1e-15));
        for (std::size_t i = 0; i < m; ++i)
            CHECK(gb[i] == Approx(expected.gradient[m * n + n + i]).epsilon(1e-12).margin(1e-15));
    }
}

TEST_CASE("matmul's adjoints are dC B^T and A^T dC", "[array][tape][matrix]") {
    const std::size_t m = W + 1, k = 3, n = 2 * W + 1;
    const auto av = sample(m * k, -1.0, 1.0, 14), bv = sample(k * n, -1.0, 1.0, 15);
    const auto weights = sample(m * n, 0.5, 1.5, 16);  // dC
    nabla::tape<> t;
    auto recording = t.record();
    const nabla::var_matrix a(nabla::input_array(t, av), m, k);
    const nabla::var_matrix b(nabla::input_array(t, bv), k, n);
    const nabla::var_matrix c = matmul(a, b);
    REQUIRE(c.rows() == m);
    REQUIRE(c.cols() == n);
    const nabla::var loss = sum(c.elements() * weights);
    t.gradient(loss);
    const auto da = nabla::adjoints(t, a.elements());
    const auto db = nabla::adjoints(t, b.elements());
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            double cij = 0.0;
            for (std::size_t l = 0; l < k; ++l)
                cij += av[i * k + l] * bv[l * n + j];
            CHECK(c.value(i, j) == Approx(cij).epsilon(1e-14));
        }
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t l = 0; l < k; ++l) {
            double expected = 0.0;
            for (std::size_t j = 0; j < n; ++j)
                expected += weights[i * n + j] * bv[l * n + j];
            CHECK(da[i * k + l] == Approx(expected).epsilon(1e-13));
        }
    for (std::size_t l = 0; l < k; ++l)
        for (std::size_t j = 0; j < n; ++j) {
            double expected = 0.0;
            for (std::size_t i = 0; i < m; ++i)
                expected += av[i * k + l] * weights[i * n + j];
            CHECK(db[l * n + j] == Approx(expected).epsilon(1e-13));
        }
}

TEST_CASE("solve: A x = b, and its adjoints l = A^-T w into b and -l x^T into A, with pivoting",
          "[array][tape][matrix]") {
    for (const std::size_t n : {1UL, 2UL, 5UL, W + 3}) {
        INFO("n = " << n);
        // Well conditioned, but the first pivot must come from another row.
        auto av = sample(n * n, -0.1, 0.1, 17);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j)
                av[i * n + j] +=
                    (i == j ? 1.0 : 0.0) + 1.0 / (2.0 + static_cast<double>(i + 2 * j));
        av[0] = 0.0;
        const auto bv = sample(n, -1.0, 1.0, 18);
        const auto w = sample(n, 0.5, 1.5, 19);
        if (n == 1)
            av[0] = 0.7;
        nabla::tape<> t;
        auto recording = t.record();
        const nabla::var_matrix a(nabla::input_array(t, av), n, n);
        const nabla::var_array b = nabla::input_array(t, bv);
        const nabla::var_array x = solve(a, b);
        const nabla::var loss = dot(x, nabla::var_array(w));
        t.gradient(loss);
        const auto da = nabla::adjoints(t, a.elements());
        const auto db = nabla::adjoints(t, b);
        for (std::size_t i = 0; i < n; ++i) {
            double residual = -bv[i], transposed = -w[i];
            for (std::size_t j = 0; j < n; ++j) {
                residual += av[i * n + j] * x.value(j);
                transposed += av[j * n + i] * db[j];  // (A^T l)_i
            }
            CHECK(residual == Approx(0.0).margin(1e-12));
            CHECK(transposed == Approx(0.0).margin(1e-12));
            for (std::size_t j = 0; j < n; ++j)
                CHECK(da[i * n + j] == Approx(-db[i] * x.value(j)).epsilon(1e-13).margin(1e-15));
        }
    }
}

TEST_CASE("matrix shapes that do not fit are reported", "[array][tape][matrix]") {
    nabla::tape<> t;
    auto recording = t.record();
    const nabla::var_array six = nabla::input_array(t, std::vector<double>(6, 1.0));
    CHECK_THROWS_AS(nabla::var_matrix(six, 4, 2), nabla::shape_error);
    const nabla::var_matrix a(six, 2, 3);
    const nabla::var_array two = nabla::input_array(t, std::vector<double>(2, 1.0));
    CHECK_THROWS_AS(matvec(a, two), nabla::shape_error);
    CHECK_THROWS_AS(matmul(a, a), nabla::shape_error);
    CHECK_THROWS_AS(solve(a, two), nabla::shape_error);
    CHECK(matvec(a, nabla::var_array(std::vector<double>{1.0, 2.0, 3.0})).value(1) == 6.0);
}

TEST_CASE("value_and_grad_into with arrays overwrites the caller's gradients, even when they are "
          "the arguments",
          "[array][tape]") {
    const auto f = [](const auto& x, const auto& y) { return sum(exp(x) * y) + dot(x, x); };
    const auto xs = sample(W + 5, -1.0, 1.0, 20), ys = sample(W + 5, 0.0, 2.0, 21);
    const auto [value, gx, gy] = nabla::value_and_grad(nabla::mode::arrays, f, xs, ys);
    std::vector<double> hx(xs.size(), 7.0), hy(ys.size(), 7.0);
    CHECK(nabla::value_and_grad_into(nabla::mode::arrays, f, std::tie(hx, hy), xs, ys) == value);
    CHECK(hx == gx);
    CHECK(hy == gy);
    std::vector<double> x = xs, y = ys;  // the gradients written over the arguments
    CHECK(nabla::value_and_grad_into(nabla::mode::arrays, f, std::tie(x, y), x, y) == value);
    CHECK(x == gx);
    CHECK(y == gy);
    std::vector<double> short_one(xs.size() - 1);
    CHECK_THROWS_AS(
        nabla::value_and_grad_into(nabla::mode::arrays, f, std::tie(short_one, hy), xs, ys),
        nabla::shape_error);
}

TEST_CASE("polygamma of an integer order on the tape: values and partials of the rule",
          "[array][tape]") {
    const auto xs = sample(W + 3, 0.5, 3.0, 22);
    for (const int n : {0, 1, 3}) {
        INFO("n = " << n);
        const auto [value, g] = nabla::value_and_grad(
            nabla::mode::arrays, [n](const auto& x) { return sum(polygamma(n, x)); }, xs);
        double expected = 0.0;
        for (std::size_t i = 0; i < xs.size(); ++i) {
            expected += nabla::rules::polygamma(n, xs[i]);
            CHECK(g[i] == Approx(nabla::rules::polygamma(n + 1, xs[i])).epsilon(1e-13));
        }
        CHECK(value == Approx(expected).epsilon(1e-13));
    }
}

TEST_CASE("every function of an integer index works element-wise on the tape and in fused loops",
          "[array][tape]") {
    const auto [xa] = nabla::array_variables<1>();
    const auto xs = sample(4 * W + 3, 0.5, 3.0, 24);
#define NABLA_CHECK_INDEXED(function, rule)                                                        \
    for (const int n : {0, 2}) {                                                                   \
        INFO(#function << "(" << n << ", x)");                                                     \
        const auto [value, g] = nabla::value_and_grad(                                             \
            nabla::mode::arrays, [n](const auto& x) { return sum(function(n, x)); }, xs);          \
        const auto [fused_value, fused_g] = nabla::value_and_grad(sum(function(n, xa)), xs);       \
        double expected = 0.0;                                                                     \
        for (std::size_t i = 0; i < xs.size(); ++i) {                                              \
            expected += nabla::rules::rule::value(n, xs[i]);                                       \
            const double partial =                                                                 \
                nabla::detail::to_number<double>(nabla::rules::rule::partial<1>(0.0, n, xs[i]));   \
            CHECK(g[i] == Approx(partial).epsilon(1e-13));                                         \
            CHECK(fused_g[i] == Approx(partial).epsilon(1e-13));                                   \
        }                                                                                          \
        CHECK(value == Approx(expected).epsilon(1e-13));                                           \
        CHECK(fused_value == Approx(expected).epsilon(1e-13));                                     \
    }
    using nabla::hermite, nabla::sph_bessel, nabla::sph_neumann, nabla::polygamma;
    NABLA_INDEXED_FUNCTIONS(NABLA_CHECK_INDEXED)
#undef NABLA_CHECK_INDEXED
}

TEST_CASE("every function of a degree and a parameter works element-wise on the tape and in "
          "fused loops",
          "[array][tape]") {
    const auto [xa] = nabla::array_variables<1>();
    const auto xs = sample(4 * W + 3, -1.0, 1.0, 27);
#define NABLA_CHECK_PARAMETRIC(function, rule)                                                     \
    for (const int n : {0, 3}) {                                                                   \
        INFO(#function << "(" << n << ", 1.5, x)");                                                \
        const auto [value, g] = nabla::value_and_grad(                                             \
            nabla::mode::arrays, [n](const auto& x) { return sum(function(n, 1.5, x)); }, xs);     \
        const auto [fused_value, fused_g] = nabla::value_and_grad(sum(function(n, 1.5, xa)), xs);  \
        double expected = 0.0;                                                                     \
        for (std::size_t i = 0; i < xs.size(); ++i) {                                              \
            expected += nabla::rules::rule::value(n, 1.5, xs[i]);                                  \
            const double partial = nabla::detail::to_number<double>(                               \
                nabla::rules::rule::partial<2>(0.0, n, 1.5, xs[i]));                               \
            CHECK(g[i] == Approx(partial).epsilon(1e-13).margin(1e-15));                           \
            CHECK(fused_g[i] == Approx(partial).epsilon(1e-13).margin(1e-15));                     \
        }                                                                                          \
        CHECK(value == Approx(expected).epsilon(1e-13));                                           \
        CHECK(fused_value == Approx(expected).epsilon(1e-13));                                     \
    }
    using nabla::gegenbauer, nabla::assoc_laguerre;
    NABLA_PARAMETRIC_FUNCTIONS(NABLA_CHECK_PARAMETRIC)
#undef NABLA_CHECK_PARAMETRIC

    // The Legendre family, compositions of these, element by element against the scalar tape.
    const auto family = [](const auto& x) {
        using nabla::legendre, nabla::laguerre, nabla::assoc_legendre, nabla::sph_legendre;
        return legendre(4, x) + laguerre(3, x) + assoc_legendre(4, 2, x) + sph_legendre(3, 1, x);
    };
    const auto [value, g] = nabla::value_and_grad(
        nabla::mode::arrays, [&](const auto& x) { return sum(family(x)); }, xs);
    const auto [fused_value, fused_g] = nabla::value_and_grad(sum(family(xa)), xs);
    double expected = 0.0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const double dy = nabla::grad(family, xs[i])[0];
        expected += family(xs[i]);
        CHECK(g[i] == Approx(dy).epsilon(1e-13).margin(1e-14));
        CHECK(fused_g[i] == Approx(dy).epsilon(1e-13).margin(1e-14));
    }
    CHECK(value == Approx(expected).epsilon(1e-13));
    CHECK(fused_value == Approx(expected).epsilon(1e-13));
}

TEST_CASE("matrices broadcast a row vector along their rows, take functions element by element "
          "and reduce over every element",
          "[array][tape][matrix]") {
    const std::size_t m = 3, n = W + 2;
    const auto mv = sample(m * n, -1.0, 1.0, 23);
    const auto bv = sample(n, -0.5, 0.5, 24);
    nabla::tape<> t;
    auto recording = t.record();
    const nabla::var_matrix a(nabla::input_array(t, mv), m, n);
    const nabla::var_array b = nabla::input_array(t, bv);
    const nabla::var s = t.input(0.7);
    // sum(tanh(A + b)^2) + s * mean(A * A) - norm(2.0 - A / s)
    const nabla::var f = sum(square(tanh(a + b))) + s * mean(a * a) - norm(2.0 - a / s);
    t.gradient(f);
    const auto ga = nabla::adjoints(t, a.elements());
    const auto gb = nabla::adjoints(t, b);

    // The same function element by element on the scalar tape.
    std::vector<double> flat(mv);
    flat.insert(flat.end(), bv.begin(), bv.end());
    flat.push_back(0.7);
    const auto scalar = [m, n](const auto& p) {
        using T = std::decay_t<decltype(p[0])>;
        using std::sqrt, std::tanh;
        const T& sv = p[m * n + n];
        T total = 0.0, squares = 0.0, norm2 = 0.0;
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                const T h = tanh(p[i * n + j] + p[m * n + j]);
                total = total + h * h;
                squares = squares + p[i * n + j] * p[i * n + j];
                const T d = 2.0 - p[i * n + j] / sv;
                norm2 = norm2 + d * d;
            }
        return total + sv * squares / static_cast<double>(m * n) - sqrt(norm2);
    };
    const auto expected = nabla::value_and_grad(nabla::mode::reverse, scalar, flat);
    CHECK(f.value == Approx(expected.value).epsilon(1e-13));
    for (std::size_t k = 0; k < m * n; ++k)
        CHECK(ga[k] == Approx(expected.gradient[k]).epsilon(1e-12).margin(1e-15));
    for (std::size_t j = 0; j < n; ++j)
        CHECK(gb[j] == Approx(expected.gradient[m * n + j]).epsilon(1e-12).margin(1e-15));
    CHECK(t.adjoint(s) == Approx(expected.gradient[m * n + n]).epsilon(1e-12));

    CHECK_THROWS_AS(a + nabla::var_matrix(b, 1, n), nabla::shape_error);
    CHECK_THROWS_AS(a * a.row(0).slice(1, n), nabla::shape_error);
}

TEST_CASE("a heat equation over whole arrays, checkpointed: the gradient of every step recorded "
          "at once, with a fraction of the memory",
          "[array][tape][checkpoint]") {
    // u <- [u0, u[1:-1] + k (u[2:] - 2 u[1:-1] + u[:-2]), u[n-1]], k = p[0].
    const auto step = [](const auto& u, const auto& p) {
        const std::size_t n = u.size();
        const auto inner = u.slice(1, n - 1);
        const auto next = inner + p[0] * (u(nabla::from<2>) - 2.0 * inner + u(nabla::upto<-2>));
        return concat(u.slice(0, 1), next, u.slice(n - 1, n));
    };
    const std::size_t n = 2 * W + 5, steps = 60;
    const auto u0 = sample(n, 0.0, 1.0, 25);
    const std::vector<double> p{0.2};
    const auto w = sample(n, -1.0, 1.0, 26);
    auto [uT, pullback] = nabla::checkpointed_vjp(nabla::mode::arrays, step, u0, p, steps, 3);
    const auto adjoints = pullback(w);
    CHECK(adjoints.statistics.snapshots <= 4);

    // Every step on one tape: the loss w . u_T by value_and_grad over (u0, p).
    const auto loss = [&](const auto& u, const auto& k) {
        nabla::var_array x = u;
        for (std::size_t s = 0; s < steps; ++s)
            x = step(x, k);
        return dot(x, nabla::var_array(w));
    };
    const auto [value, du, dp] = nabla::value_and_grad(nabla::mode::arrays, loss, u0, p);
    double direct = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        direct += w[i] * uT[i];
    CHECK(direct == Approx(value).epsilon(1e-13));
    for (std::size_t i = 0; i < n; ++i)
        CHECK(adjoints.state[i] == Approx(du[i]).epsilon(1e-12).margin(1e-15));
    CHECK(adjoints.parameters[0] == Approx(dp[0]).epsilon(1e-12));

    // concat hands each part its adjoints.
    nabla::tape<> t;
    auto recording = t.record();
    const nabla::var_array a = nabla::input_array(t, std::vector<double>{1.0, 2.0});
    const nabla::var_array b = nabla::input_array(t, std::vector<double>{3.0});
    const nabla::var_array c = concat(a, b, a);
    REQUIRE(c.size() == 5);
    t.gradient(dot(c, nabla::var_array(std::vector<double>{1.0, 2.0, 3.0, 4.0, 5.0})));
    CHECK(nabla::adjoints(t, a) == std::vector<double>{5.0, 7.0});
    CHECK(nabla::adjoints(t, b) == std::vector<double>{3.0});
}

namespace {

// A cumulative sum with its pullback (the reverse cumulative sum of the adjoint), as a user
// would give it to nabla::custom_array.
nabla::var_array cumulative_sum(const nabla::var_array& x) {
    return nabla::custom_array(
        [](std::span<const double> v) {
            std::vector<double> out(v.size());
            double total = 0.0;
            for (std::size_t i = 0; i < v.size(); ++i)
                out[i] = total += v[i];
            return out;
        },
        [](std::span<const double>, std::span<const double>, std::span<const double> dy,
           std::span<double> dx) {
            double total = 0.0;
            for (std::size_t i = dy.size(); i-- > 0;)
                dx[i] += total += dy[i];
        },
        x);
}

}  // namespace

TEST_CASE("custom array functions: one entry with the caller's value and pullback, mixed with "
          "nabla's operations",
          "[array][tape][custom]") {
    for (const std::size_t n : sizes) {
        CAPTURE(n);
        const auto xs = sample(n, -1.0, 1.0, 1), ws = sample(n, 0.5, 1.5, 2);
        // sum(w * exp(cumsum(x))): d/dx_j = sum_{i >= j} w_i exp(c_i).
        const auto f = [&](const auto& x) {
            return dot(nabla::var_array(ws), exp(cumulative_sum(x)));
        };
        const auto [value, g] = nabla::value_and_grad(nabla::mode::arrays, f, xs);
        double expected = 0.0, c = 0.0;
        std::vector<double> e(n), expected_g(n, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
            c += xs[i];
            e[i] = ws[i] * std::exp(c);
            expected += e[i];
        }
        double tail = 0.0;
        for (std::size_t j = n; j-- > 0;)
            expected_g[j] = tail += e[j];
        CHECK(value == Approx(expected).epsilon(1e-13));
        REQUIRE(g.size() == n);
        for (std::size_t i = 0; i < n; ++i)
            CHECK(g[i] == Approx(expected_g[i]).epsilon(1e-13));
    }

    // Two arguments, one of them constant: its span is empty; the entry counts once.
    nabla::tape<> t;
    auto recording = t.record();
    const nabla::var_array x = nabla::input_array(t, std::vector<double>{1.0, 2.0, 3.0});
    const nabla::var_array k(std::vector<double>{2.0, 0.5, -1.0});
    std::size_t constant_adjoint_size = 99;
    const std::size_t before = t.statements(), pairs = t.partials();
    const auto scaled = nabla::custom_array(
        [](std::span<const double> a, std::span<const double> b) {
            std::vector<double> out(a.size());
            for (std::size_t i = 0; i < a.size(); ++i)
                out[i] = a[i] * b[i];
            return out;
        },
        [&](std::span<const double>, std::span<const double> b, std::span<const double>,
            std::span<const double> dy, std::span<double> da, std::span<double> db) {
            constant_adjoint_size = db.size();
            for (std::size_t i = 0; i < da.size(); ++i)
                da[i] += dy[i] * b[i];
        },
        x, k);
    // A variable per element of the result, without pairs: one entry.
    CHECK(t.statements() == before + 3);
    CHECK(t.partials() == pairs);
    t.gradient(sum(scaled * scaled));
    CHECK(constant_adjoint_size == 0);
    // d/dx sum((k x)^2) = 2 k^2 x.
    CHECK(nabla::adjoints(t, x) == std::vector<double>{8.0, 1.0, 6.0});
    // Without an active argument nothing is recorded.
    const nabla::var_array only_constant = cumulative_sum(k);
    CHECK(only_constant.is_constant());
    CHECK(only_constant.value(2) == Approx(1.5));

    // The result written in place: the same values and adjoints, one entry.
    t.zero_adjoints();
    const std::size_t at = t.statements();
    const auto in_place = nabla::custom_array(
        2,
        [](std::span<double> y, std::span<const double> a) {
            y[0] = a[0] * a[1];
            y[1] = a[2] - a[0];
        },
        [](std::span<const double> a, std::span<const double>, std::span<const double> dy,
           std::span<double> da) {
            da[0] += dy[0] * a[1] - dy[1];
            da[1] += dy[0] * a[0];
            da[2] += dy[1];
        },
        x);
    CHECK(t.statements() == at + 2);
    CHECK(in_place.values()[0] == 2.0);
    CHECK(in_place.values()[1] == 2.0);
    t.gradient(sum(in_place * nabla::var_array(std::vector<double>{3.0, -1.0})));
    // d/dx (3 x0 x1 - (x2 - x0)) = (3 x1 + 1, 3 x0, -1).
    CHECK(nabla::adjoints(t, x) == std::vector<double>{7.0, 3.0, -1.0});
}

TEST_CASE("jacobian with arrays: one recording, a sweep per row", "[array][tape]") {
    for (const std::size_t n : {0UL, 1UL, 7UL, W + 1}) {
        CAPTURE(n);
        const auto xs = sample(n, -1.0, 1.0, 3);
        // F(x) = exp(x) * sum(x): dF_i/dx_j = exp(x_i) (delta_ij sum(x) + 1).
        const auto f = [](const auto& x) { return exp(x) * sum(x); };
        const xt::xtensor<double, 2> j = nabla::jacobian(nabla::mode::arrays, f, xs);
        REQUIRE(j.shape()[0] == n);
        REQUIRE(j.shape()[1] == n);
        double total = 0.0;
        for (const double v : xs)
            total += v;
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t k = 0; k < n; ++k)
                CHECK(j(i, k) == Approx(std::exp(xs[i]) * ((i == k ? total : 0.0) + 1.0))
                                     .epsilon(1e-13)
                                     .margin(1e-300));
    }
}
