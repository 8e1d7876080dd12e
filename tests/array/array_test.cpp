// Array expressions: values and gradients of element-wise expressions, views and reductions
// against the scalar modes (static expressions, the tape) element by element, at sizes around
// the SIMD width; the plan's fusion (passes, shared reductions); shapes and edge values.

#include <nabla/array.hpp>

#include <catch2/catch.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "samples.hpp"

namespace {

constexpr std::size_t W = nabla_test::lanes_width;
using nabla_test::sample;
const std::vector<std::size_t> sizes{0, 1, 2, 7, W - 1, W, W + 1, 4 * W - 1, 4 * W + 3, 1001};

template <class P>
constexpr std::size_t passes = P::group_count;

// f's value and gradient at (xs, ys) against the tape's of `scalar`, a generic function of the
// two arrays one after the other.
template <class F, class Scalar>
void check_against_tape(const F& f,
                        const Scalar& scalar,
                        const std::vector<double>& xs,
                        const std::vector<double>& ys,
                        double margin) {
    std::vector<double> both(xs);
    both.insert(both.end(), ys.begin(), ys.end());
    const auto expected = nabla::value_and_grad(nabla::mode::reverse, scalar, both);
    const auto [value, gx, gy] = nabla::value_and_grad(f, xs, ys);
    CHECK(value == Approx(expected.value).epsilon(1e-13));
    for (std::size_t i = 0; i < xs.size(); ++i) {
        CHECK(gx[i] == Approx(expected.gradient[i]).epsilon(1e-12).margin(margin));
        CHECK(gy[i] == Approx(expected.gradient[xs.size() + i]).epsilon(1e-12).margin(margin));
    }
}

}  // namespace

TEST_CASE("an element-wise sum and its gradient equal the static scalar expression's, element "
          "by element",
          "[array]") {
    const auto [x, y] = nabla::array_variables<2>();
    const auto f = sum(exp(sin(x) * y) + log1p(x * x) - sqrt(y) / (1.0 + x * x));
    const auto [p, q] = nabla::variables<2>();
    const auto g = exp(sin(p) * q) + log1p(p * p) - sqrt(q) / (1.0 + p * p);
    for (const std::size_t n : sizes) {
        INFO("n = " << n);
        const auto xs = sample(n, -1.5, 1.5, 1);
        const auto ys = sample(n, 0.5, 2.0, 2);
        const auto [value, gx, gy] = nabla::value_and_grad(f, xs, ys);
        double expected = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            const auto [v, gradient] = nabla::value_and_grad(g, xs[i], ys[i]);
            expected += v;
            CHECK(gx[i] == Approx(gradient[0]).epsilon(1e-13).margin(1e-14));
            CHECK(gy[i] == Approx(gradient[1]).epsilon(1e-13).margin(1e-14));
        }
        CHECK(value == Approx(expected).epsilon(1e-13));
        CHECK(f(xs, ys) == value);
        REQUIRE(gx.size() == n);
        REQUIRE(gy.size() == n);
    }
}

TEST_CASE("every listed function works element-wise, its partials from the rule table", "[array]") {
    const auto [x, y] = nabla::array_variables<2>();
    const auto xs = sample(4 * W + 3, 0.15, 0.85, 3);
    const auto ys = sample(4 * W + 3, 0.2, 0.9, 4);
    // acosh needs x > 1, Lambert W's lower branch -1/e <= x < 0.
    std::vector<double> big(xs.size()), negative(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) {
        big[i] = 1.0 + xs[i];
        negative[i] = -0.4 * xs[i];
    }

#define NABLA_CHECK_UNARY(function, rule)                                                          \
    {                                                                                              \
        INFO(#function);                                                                           \
        const auto& in = std::string_view(#function) == "acosh"         ? big                      \
                         : std::string_view(#function) == "lambert_wm1" ? negative                 \
                                                                        : xs;                      \
        const auto [value, gradient] = nabla::value_and_grad(sum(function(x)), in);                \
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

#define NABLA_CHECK_BINARY(function, rule)                                                         \
    {                                                                                              \
        INFO(#function);                                                                           \
        const auto [value, gx, gy] = nabla::value_and_grad(sum(function(x, y)), xs, ys);           \
        double expected = 0.0;                                                                     \
        for (std::size_t i = 0; i < xs.size(); ++i) {                                              \
            const double v = nabla::rules::rule::value(xs[i], ys[i]);                              \
            expected += v;                                                                         \
            const double da = nabla::detail::to_number<double>(                                    \
                nabla::rules::rule::template partial<0>(v, xs[i], ys[i]));                         \
            const double db = nabla::detail::to_number<double>(                                    \
                nabla::rules::rule::template partial<1>(v, xs[i], ys[i]));                         \
            CHECK(gx[i] == Approx(da).epsilon(1e-12).margin(1e-300));                              \
            CHECK(gy[i] == Approx(db).epsilon(1e-12).margin(1e-300));                              \
        }                                                                                          \
        CHECK(value == Approx(expected).epsilon(1e-12));                                           \
    }
    NABLA_BINARY_FUNCTIONS(NABLA_CHECK_BINARY)
#undef NABLA_CHECK_BINARY

    // ellint_3(k, nu, phi), of three arrays, and with constants beside them.
    const auto [k, nu, phi] = nabla::array_variables<3>();
    std::vector<double> characteristic(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i)
        characteristic[i] = -2.0 * ys[i];
    const auto [value, gk, gnu, gphi] = nabla::value_and_grad(
        sum(ellint_3(k, nu, phi) + ellint_3(k, -0.5, 1.2)), xs, characteristic, ys);
    double expected = 0.0;
    using nabla::rules::ellint_3_rule;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const double a = xs[i], b = characteristic[i], c = ys[i];
        const double v = ellint_3_rule::value(a, b, c), w = ellint_3_rule::value(a, -0.5, 1.2);
        expected += v + w;
        const auto partial = [&](auto index, double y, double p, double q, double r) {
            return nabla::detail::to_number<double>(
                ellint_3_rule::partial<decltype(index)::value>(y, p, q, r));
        };
        CHECK(gk[i] == Approx(partial(std::integral_constant<std::size_t, 0>{}, v, a, b, c) +
                              partial(std::integral_constant<std::size_t, 0>{}, w, a, -0.5, 1.2))
                           .epsilon(1e-12));
        CHECK(gnu[i] ==
              Approx(partial(std::integral_constant<std::size_t, 1>{}, v, a, b, c)).epsilon(1e-12));
        CHECK(gphi[i] ==
              Approx(partial(std::integral_constant<std::size_t, 2>{}, v, a, b, c)).epsilon(1e-12));
    }
    CHECK(value == Approx(expected).epsilon(1e-12));
}

TEST_CASE("ties of min and max, and the sign at zero, follow the scalar conventions in every "
          "lane",
          "[array]") {
    const auto [x, y] = nabla::array_variables<2>();
    std::vector<double> a(2 * W + 4, 1.0), b(2 * W + 4, 1.0);
    a[1] = 0.5;
    b[2] = 0.5;
    const auto [v, ga, gb] = nabla::value_and_grad(sum(max(x, y) + abs(x - y)), a, b);
    CHECK(ga[0] == 0.5);  // tie: half each, abs'(0) = 0
    CHECK(gb[0] == 0.5);
    CHECK(ga[1] == -1.0);  // b wins max; abs' = sign(a - b) = -1
    CHECK(gb[1] == 2.0);
    CHECK(ga[2] == 2.0);
    CHECK(gb[2] == -1.0);
    CHECK(ga[2 * W + 3] == 0.5);
}

TEST_CASE("NaN in min, max, fmin and fmax gives in every lane what the scalar rule gives",
          "[array]") {
    // Plain variables, not structured bindings, which clang++ 14 does not let a lambda capture.
    const auto variables = nabla::array_variables<2>();
    const auto x = std::get<0>(variables);
    const auto y = std::get<1>(variables);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> a = sample(2 * W + 3, -1.0, 1.0, 13), b = sample(2 * W + 3, -1.0, 1.0, 14);
    a[0] = nan;
    b[W] = nan;
    a[2 * W + 1] = nan;
    b[2 * W + 1] = nan;
    const auto check = [&](const auto& f, auto rule) {
        using R = decltype(rule);
        const std::vector<double> values = f(x, y)(a, b);
        const auto [v, ga, gb] = nabla::value_and_grad(sum(f(x, y)), a, b);
        for (std::size_t i = 0; i < a.size(); ++i) {
            INFO(R::name << " at " << i);
            const double value = R::value(a[i], b[i]);
            CHECK(std::isnan(values[i]) == std::isnan(value));
            const double da = R::template partial<0>(value, a[i], b[i]);
            const double db = R::template partial<1>(value, a[i], b[i]);
            CHECK(std::isnan(ga[i]) == std::isnan(da));
            CHECK(std::isnan(gb[i]) == std::isnan(db));
            if (!std::isnan(da))
                CHECK(ga[i] == da);
            if (!std::isnan(db))
                CHECK(gb[i] == db);
        }
    };
    check([](const auto& p, const auto& q) { return max(p, q); }, nabla::rules::max_rule{});
    check([](const auto& p, const auto& q) { return min(p, q); }, nabla::rules::min_rule{});
    check([](const auto& p, const auto& q) { return fmax(p, q); }, nabla::rules::fmax_rule{});
    check([](const auto& p, const auto& q) { return fmin(p, q); }, nabla::rules::fmin_rule{});
}

TEST_CASE("extended Rosenbrock through shifted views equals the tape's gradient", "[array]") {
    const auto [x] = nabla::array_variables<1>();
    const auto a = x(nabla::upto<-1>);
    const auto b = x(nabla::from<1>);
    const auto rosenbrock = sum(100.0 * square(b - square(a)) + square(1.0 - a));
    const auto scalar = [](const auto& v) {
        using T = std::decay_t<decltype(v[0])>;
        T total = 0.0;
        for (std::size_t i = 0; i + 1 < v.size(); ++i)
            total += 100.0 * (v[i + 1] - v[i] * v[i]) * (v[i + 1] - v[i] * v[i]) +
                     (1.0 - v[i]) * (1.0 - v[i]);
        return total;
    };
    for (const std::size_t n : sizes) {
        if (n == 0)
            continue;
        INFO("n = " << n);
        const auto xs = sample(n, -1.2, 1.2, 5);
        const auto [value, g] = nabla::value_and_grad(rosenbrock, xs);
        const auto expected = nabla::value_and_grad(nabla::mode::reverse, scalar, xs);
        CHECK(value == Approx(expected.value).epsilon(1e-13).margin(1e-300));
        for (std::size_t i = 0; i < n; ++i)
            CHECK(g[i] == Approx(expected.gradient[i]).epsilon(1e-12).margin(1e-13));
    }
}

TEST_CASE("views a few elements apart add their adjoints into one gradient in every lane",
          "[array]") {
    // prod's seed needs the loop's state, so the gradient comes from a reverse loop, whose views
    // at odd distances go through staging buffers on every batch width.
    const auto [x] = nabla::array_variables<1>();
    const auto f = prod(1.0 + 0.001 * (x(nabla::upto<-3>) * x(nabla::range<1, -2>) -
                                       2.0 * x(nabla::range<2, -1>) + sin(x(nabla::from<3>))));
    const auto scalar = [](const auto& v) {
        using std::sin;
        using T = std::decay_t<decltype(v[0])>;
        T total = 1.0;
        for (std::size_t i = 0; i + 3 < v.size(); ++i)
            total *= 1.0 + 0.001 * (v[i] * v[i + 1] - 2.0 * v[i + 2] + sin(v[i + 3]));
        return total;
    };
    for (const std::size_t n : {std::size_t{4}, std::size_t{W + 3}, std::size_t{4 * W + 5},
                                std::size_t{130}, std::size_t{259}, std::size_t{1001}}) {
        INFO("n = " << n);
        const auto xs = sample(n, -1.2, 1.2, 7);
        const auto [value, g] = nabla::value_and_grad(f, xs);
        const auto expected = nabla::value_and_grad(nabla::mode::reverse, scalar, xs);
        CHECK(value == Approx(expected.value).epsilon(1e-13));
        for (std::size_t i = 0; i < n; ++i)
            CHECK(g[i] == Approx(expected.gradient[i]).epsilon(1e-12).margin(1e-15));
    }
}

TEST_CASE("add_vjp_into adds the pullback apply_vjp gives, in fused loops and reverse ones, on "
          "arrays and grids",
          "[array]") {
    // Views a lane or two apart (fused where they meet in registers), an inner reduction, and a
    // grid stencil whose rows run in passes (this file is built at 2 and at 8 lanes).
    const auto [x, c] = nabla::array_variables<2>();
    const auto f =
        x(nabla::upto<-2>) * sin(x(nabla::range<1, -1>)) + sum(c) * square(x(nabla::from<2>));
    for (const std::size_t n : {std::size_t{3}, std::size_t{W + 2}, std::size_t{4 * W + 5},
                                std::size_t{1001}, std::size_t{70001}}) {
        INFO("n = " << n);
        const auto xs = sample(n, -1.2, 1.2, 8);
        const std::vector<double> cs{0.7, -0.2};
        const auto w = sample(n - 2, -1.0, 1.0, 9);
        const auto [gx, gc] = nabla::apply_vjp(f, w, xs, cs);
        std::vector<double> sx(n, 0.25), sc{-1.0, 2.0};
        nabla::add_vjp_into(f, std::tie(sx, sc), w, xs, cs);
        for (std::size_t i = 0; i < n; ++i)
            CHECK(sx[i] == Approx(0.25 + gx[i]).epsilon(1e-14).margin(1e-14));
        CHECK(sc[0] == Approx(-1.0 + gc[0]).epsilon(1e-12));
        CHECK(sc[1] == Approx(2.0 + gc[1]).epsilon(1e-12));
    }
    const auto [u] = nabla::array_variables<1>();
    const auto in = nabla::range<1, -1>;
    const auto stencil =
        u(in, in) * u(in, in) + 0.3 * ((u(nabla::upto<-2>, in) + u(nabla::from<2>, in)) +
                                       (u(in, nabla::upto<-2>) + u(in, nabla::from<2>)));
    for (const auto& [rows, cols] :
         {std::array<std::size_t, 2>{3, 3}, {5, W + 3}, {9, 4 * W + 1}, {37, 301}, {300, 260}}) {
        CAPTURE(rows, cols);
        const auto g = sample(rows * cols, -1.0, 1.0, 10);
        const auto w = sample((rows - 2) * (cols - 2), -1.0, 1.0, 11);
        const nabla::matrix_ref<const double> grid(g.data(), rows, cols);
        const nabla::matrix_ref<const double> cotangent(w.data(), rows - 2, cols - 2);
        std::vector<double> once(rows * cols), sum(rows * cols, -0.5);
        nabla::apply_vjp_into(stencil, std::tie(once), cotangent, grid);
        nabla::add_vjp_into(stencil, std::tie(sum), cotangent, grid);
        for (std::size_t k = 0; k < once.size(); ++k)
            CHECK(sum[k] == Approx(-0.5 + once[k]).epsilon(1e-14).margin(1e-14));
    }
}

TEST_CASE("a view longer than its array, operands of different lengths and arrays of three "
          "dimensions are shape errors",
          "[array]") {
    const auto [x, y] = nabla::array_variables<2>();
    const std::vector<double> three{1.0, 2.0, 3.0}, four{1.0, 2.0, 3.0, 4.0};
    CHECK_THROWS_AS(sum(x * y)(three, four), nabla::shape_error);
    CHECK_THROWS_WITH(sum(x * y)(three, four), Catch::Contains("different lengths") &&
                                                   Catch::Contains("3") && Catch::Contains("4"));
    CHECK_THROWS_AS(nabla::grad(sum(x(nabla::from<4>)), three), nabla::shape_error);
    CHECK(sum(x(nabla::from<3>))(three) == 0.0);
    CHECK(sum(x(nabla::from<1>) * y)(four, three) == 2.0 * 1.0 + 3.0 * 2.0 + 4.0 * 3.0);
    const xt::xarray<double> cube = xt::ones<double>({2, 2, 2});
    CHECK_THROWS_WITH(sum(x)(cube), Catch::Contains("one- or two-dimensional"));
}

TEST_CASE("arrays come as std::vector, std::array, std::span and xtensor, gradients shaped like "
          "them",
          "[array]") {
    const auto [x] = nabla::array_variables<1>();
    const auto f = sum(x * x * x);
    const std::array<double, 3> a{1.0, 2.0, 3.0};
    const std::array<double, 3> ga = nabla::grad(f, a);
    CHECK(ga == std::array<double, 3>{3.0, 12.0, 27.0});
    const std::vector<double> v{1.0, 2.0, 3.0};
    const std::vector<double> gs = nabla::grad(f, std::span<const double>(v));
    CHECK(gs == std::vector<double>{3.0, 12.0, 27.0});
    const xt::xtensor<double, 1> t = {1.0, 2.0, 3.0};
    const xt::xtensor<double, 1> gt = nabla::grad(f, t);
    CHECK(gt(2) == 27.0);
    CHECK(f(t) == 36.0);
}

TEST_CASE("an array-valued expression evaluates to its elements, after the reductions it reads",
          "[array]") {
    const auto [x] = nabla::array_variables<1>();
    const auto softmax = exp(x - logsumexp(x));
    for (const std::size_t n : {std::size_t{1}, W + 3, std::size_t{100}}) {
        const auto xs = sample(n, -3.0, 3.0, 6);
        const std::vector<double> p = softmax(xs);
        REQUIRE(p.size() == n);
        double total = 0.0;
        for (double e : p)
            total += e;
        CHECK(total == Approx(1.0).epsilon(1e-14));
        const std::vector<double> gradient = nabla::grad(logsumexp(x), xs);
        for (std::size_t i = 0; i < n; ++i)
            CHECK(gradient[i] == Approx(p[i]).epsilon(1e-14));
    }
}

TEST_CASE("reductions: values and gradients of sum, mean, prod, norm and dot", "[array]") {
    const auto [x, y] = nabla::array_variables<2>();
    const std::vector<double> a{1.0, -2.0, 3.0, 0.5, 4.0, -1.5, 2.0, 0.25, 1.75, -0.5, 3.5};
    const std::vector<double> b = sample(a.size(), -1.0, 1.0, 7);
    double sum_a = 0.0, prod_a = 1.0, squares = 0.0, dot_ab = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        sum_a += a[i];
        prod_a *= a[i];
        squares += a[i] * a[i];
        dot_ab += a[i] * b[i];
    }
    const double n = static_cast<double>(a.size());
    CHECK(sum(x)(a) == Approx(sum_a).epsilon(1e-15));
    CHECK(mean(x)(a) == Approx(sum_a / n).epsilon(1e-15));
    CHECK(prod(x)(a) == Approx(prod_a).epsilon(1e-14));
    CHECK(norm(x)(a) == Approx(std::sqrt(squares)).epsilon(1e-15));
    CHECK(dot(x, y)(a, b) == Approx(dot_ab).epsilon(1e-14));
    const auto g_mean = nabla::grad(mean(x), a);
    const auto g_prod = nabla::grad(prod(x), a);
    const auto g_norm = nabla::grad(norm(x), a);
    const auto [d, gx, gy] = nabla::value_and_grad(dot(x, y), a, b);
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(g_mean[i] == Approx(1.0 / n).epsilon(1e-15));
        CHECK(g_prod[i] == Approx(prod_a / a[i]).epsilon(1e-13));
        CHECK(g_norm[i] == Approx(a[i] / std::sqrt(squares)).epsilon(1e-14));
        CHECK(gx[i] == b[i]);
        CHECK(gy[i] == a[i]);
    }
    CHECK(d == Approx(dot_ab).epsilon(1e-14));
}

TEST_CASE("prod's gradient is exact with one zero and with two", "[array]") {
    const auto [x] = nabla::array_variables<1>();
    std::vector<double> a{2.0, 3.0, 0.0, 5.0, 7.0, 1.5, 2.5, 3.5, 4.5, 1.0, 2.0};
    double others = 1.0;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (i != 2)
            others *= a[i];
    const auto [v, g] = nabla::value_and_grad(prod(x), a);
    CHECK(v == 0.0);
    for (std::size_t i = 0; i < a.size(); ++i)
        CHECK(g[i] == (i == 2 ? Approx(others).epsilon(1e-14) : Approx(0.0)));
    a[9] = 0.0;
    const auto two = nabla::grad(prod(x), a);
    for (double e : two)
        CHECK(e == 0.0);
    a[9] = std::numeric_limits<double>::infinity();
    CHECK(std::isnan(prod(x)(a)));
}

TEST_CASE("max and min: the value once, the adjoint to the arg position, shared at ties, NaN "
          "sticks",
          "[array]") {
    const auto [x] = nabla::array_variables<1>();
    std::vector<double> a = sample(3 * W + 8, -1.0, 1.0, 8);
    a[5] = 4.0;
    a[a.size() - 1] = -7.0;
    const auto [top, g] = nabla::value_and_grad(max(x), a);
    CHECK(top == 4.0);
    for (std::size_t i = 0; i < a.size(); ++i)
        CHECK(g[i] == (i == 5 ? 1.0 : 0.0));
    const auto [bottom, h] = nabla::value_and_grad(amin(x), a);
    CHECK(bottom == -7.0);
    CHECK(h[a.size() - 1] == 1.0);
    a[1] = 4.0;
    const auto tie = nabla::grad(amax(x), a);
    CHECK(tie[1] == 0.5);
    CHECK(tie[5] == 0.5);
    a[3] = std::numeric_limits<double>::quiet_NaN();
    CHECK(std::isnan(max(x)(a)));
    CHECK(std::isnan(nabla::grad(max(x), a)[0]));
    const std::vector<double> empty;
    CHECK(max(x)(empty) == -std::numeric_limits<double>::infinity());
    CHECK(min(x)(empty) == std::numeric_limits<double>::infinity());
    CHECK(std::isnan(mean(x)(empty)));
    CHECK(sum(x)(empty) == 0.0);
}

TEST_CASE("logsumexp is stable and exact at infinities; NaN propagates", "[array]") {
    const auto [x] = nabla::array_variables<1>();
    constexpr double inf = std::numeric_limits<double>::infinity();
    std::vector<double> a = sample(2 * W + 5, -2.0, 2.0, 9);
    for (auto& e : a)
        e += 1000.0;  // exp overflows without the shift
    double m = a[0];
    for (double e : a)
        m = std::max(m, e);
    double s = 0.0;
    for (double e : a)
        s += std::exp(e - m);
    const double expected = m + std::log(s);
    CHECK(logsumexp(x)(a) == Approx(expected).epsilon(1e-15));
    const auto by_hand = log(sum(exp(x - max(x)))) + max(x);
    CHECK(by_hand(a) == Approx(expected).epsilon(1e-15));
    const auto g = nabla::grad(logsumexp(x), a);
    const auto h = nabla::grad(by_hand, a);
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(g[i] == Approx(std::exp(a[i] - expected)).epsilon(1e-13));
        CHECK(h[i] == Approx(g[i]).epsilon(1e-13).margin(1e-16));
    }
    CHECK(logsumexp(x)(std::vector<double>{}) == -inf);
    CHECK(logsumexp(x)(std::vector<double>{-inf, -inf}) == -inf);
    CHECK(logsumexp(x)(std::vector<double>{1.0, inf, 2.0}) == inf);
    CHECK(std::isnan(logsumexp(x)(std::vector<double>{1.0, std::nan(""), 2.0})));
    // The gradient (two passes: the maximum, then the sum) at the same edges.
    const auto [top, at_inf] =
        nabla::value_and_grad(logsumexp(x), std::vector<double>{1.0, inf, 2.0});
    CHECK(top == inf);
    CHECK(at_inf == std::vector<double>{0.0, 1.0, 0.0});
    const auto [not_a_number, at_nan] =
        nabla::value_and_grad(logsumexp(x), std::vector<double>{1.0, std::nan(""), 2.0});
    CHECK(std::isnan(not_a_number));
    CHECK(std::isnan(at_nan[1]));
    CHECK(nabla::value_and_grad(logsumexp(x), a).value == Approx(expected).epsilon(1e-15));
    // Weights exp(x - max) below 2^-1022 are the C library's subnormal numbers (to one unit), in
    // a batch (elements 1 .. W-1) and in the scalar tail (element W) alike.
    std::vector<double> far(W + 1, -720.0);
    far[0] = 0.0;
    const auto [near_zero, weights] = nabla::value_and_grad(logsumexp(x), far);
    CHECK(near_zero == 0.0);
    CHECK(weights[0] == 1.0);
    for (std::size_t i = 1; i <= W; ++i)
        CHECK(std::abs(weights[i] - std::exp(-720.0)) <= std::numeric_limits<double>::denorm_min());
}

namespace {

// Units in the last place between two doubles of one sign (consecutive doubles, subnormal ones
// included, have consecutive representations).
double ulps_apart(double a, double b) {
    if (std::isnan(a) || std::isnan(b))
        return std::isnan(a) && std::isnan(b) ? 0.0 : std::numeric_limits<double>::infinity();
    if (a == b)
        return 0.0;
    if (std::isinf(a) || std::isinf(b) || std::signbit(a) != std::signbit(b))
        return std::numeric_limits<double>::infinity();
    std::int64_t i = 0, j = 0;
    std::memcpy(&i, &a, sizeof a);
    std::memcpy(&j, &b, sizeof b);
    return std::abs(static_cast<double>(i - j));
}

}  // namespace

TEST_CASE("exp and exp2 on arrays are the C library's to two units in the last place over their "
          "whole range: subnormal results, those just below the overflow, zeros, infinities and "
          "NaN included",
          "[array]") {
    const auto x = std::get<0>(nabla::array_variables<1>());  // (a lambda below captures it)
    constexpr double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> specials{
        0.0,     -0.0,     1e-300,      -1e-300, 0.5,     -0.5,    1.0,     -1.0,
        0.34657, -0.34657, 708.39,      708.4,   709.43,  709.5,   709.78,  709.7827128933840,
        709.79,  710.0,    1e10,        1e300,   -708.39, -708.4,  -708.5,  -720.0,
        -744.44, -745.13,  -745.14,     -746.0,  -1e300,  1022.0,  1023.5,  1023.99,
        1024.0,  -1022.0,  -1022.5,     -1070.0, -1074.0, -1074.5, -1075.0, -1076.0,
        inf,     -inf,     std::nan("")};
    const auto check = [&](const std::vector<double>& a) {
        const std::vector<double> e = exp(x)(a);
        const std::vector<double> e2 = exp2(x)(a);
        for (std::size_t i = 0; i < a.size(); ++i) {
            INFO("at " << a[i]);
            CHECK(ulps_apart(e[i], std::exp(a[i])) <= 2.0);
            CHECK(ulps_apart(e2[i], std::exp2(a[i])) <= 2.0);
        }
    };
    check(specials);
    check(sample(4099, -750.0, 712.0, 21));
    check(sample(4099, -1080.0, 1026.0, 22));
    check(sample(4099, -3.0, 3.0, 23));
}

TEST_CASE("logsumexp's gradient over a long array whose parts differ by hundreds: the softmax",
          "[array]") {
    // Parts far below the maximum, near it, and holding infinities or NaN.
    const auto [x] = nabla::array_variables<1>();
    constexpr double inf = std::numeric_limits<double>::infinity();
    const std::size_t n = 3 * 4096 + 5;
    std::vector<double> a = sample(n, -3.0, 3.0, 11);
    for (std::size_t i = 0; i < n; ++i)
        a[i] += i < 4096 ? -700.0 : i < 2 * 4096 ? 0.0 : 2.0;
    double m = -inf;
    for (double e : a)
        m = std::max(m, e);
    long double s = 0.0L;
    for (double e : a)
        s += std::exp(static_cast<long double>(e - m));
    const double expected = m + static_cast<double>(std::log(s));
    const auto [value, g] = nabla::value_and_grad(logsumexp(x), a);
    CHECK(value == Approx(expected).epsilon(1e-14));
    CHECK(logsumexp(x)(a) == Approx(expected).epsilon(1e-14));
    double total = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        CHECK(g[i] == Approx(std::exp(a[i] - expected)).epsilon(1e-12).margin(1e-300));
        total += g[i];
    }
    CHECK(total == Approx(1.0).epsilon(1e-12));
    // With 2 x: the body is evaluated in the pass for the maximum and again.
    const auto [v2, g2] = nabla::value_and_grad(logsumexp(2.0 * x), a);
    CHECK(v2 == Approx(logsumexp(2.0 * x)(a)).epsilon(1e-14));
    for (std::size_t i = 0; i < n; i += 97)
        CHECK(g2[i] == Approx(2.0 * std::exp(2.0 * a[i] - v2)).epsilon(1e-12).margin(1e-300));
    // An infinity near the end takes the whole adjoint; a NaN near the start makes all NaN.
    std::vector<double> b = a;
    b[n - 2] = inf;
    const auto [at_inf, g_inf] = nabla::value_and_grad(logsumexp(x), b);
    CHECK(at_inf == inf);
    CHECK(g_inf[n - 2] == 1.0);
    CHECK(g_inf[0] == 0.0);
    CHECK(g_inf[5000] == 0.0);
    b[3] = std::nan("");
    const auto [at_nan, g_nan] = nabla::value_and_grad(logsumexp(x), b);
    CHECK(std::isnan(at_nan));
    CHECK(std::isnan(g_nan[3]));
    CHECK(std::isnan(g_nan[5000]));
}

TEST_CASE("NaN and infinity propagate element-wise as in the scalar modes", "[array]") {
    const auto [x] = nabla::array_variables<1>();
    std::vector<double> a = sample(2 * W + 1, 0.5, 1.5, 10);
    a[W] = std::numeric_limits<double>::quiet_NaN();
    const auto [v, g] = nabla::value_and_grad(sum(x * log(x)), a);
    CHECK(std::isnan(v));
    CHECK(std::isnan(g[W]));
    CHECK(std::isfinite(g[0]));
    CHECK(std::isfinite(g[2 * W]));
    a[W] = 0.0;
    CHECK(nabla::grad(sum(sqrt(x)), a)[W] == std::numeric_limits<double>::infinity());
}

TEST_CASE("the plan: a reduction read twice is computed once, independent reductions share a "
          "pass",
          "[array]") {
    using nabla::detail::graph_t;
    using nabla::detail::program;
    const auto [x, y] = nabla::array_variables<2>();

    // log-sum-exp by hand: max(x) appears twice and is one reduction; two passes.
    using lse = program<graph_t<decltype((log(sum(exp(x - max(x)))) + max(x)).body)>>;
    STATIC_REQUIRE(lse::count == 2);
    STATIC_REQUIRE(passes<lse> == 2);

    // mean and variance: both reductions read x, one pass.
    using moments = program<graph_t<decltype((mean(x * x) - square(mean(x))).body)>>;
    STATIC_REQUIRE(moments::count == 2);
    STATIC_REQUIRE(passes<moments> == 1);

    // different lengths (x and x[1:]) are different passes; x and y are as long as x only at
    // run time, so they are separate passes too.
    using shifted = program<graph_t<decltype((sum(x) + sum(x(nabla::from<1>))).body)>>;
    STATIC_REQUIRE(passes<shifted> == 2);
    using two = program<graph_t<decltype((sum(x) * sum(y)).body)>>;
    STATIC_REQUIRE(passes<two> == 2);

    // Three levels: centre, then scale, then sum.
    using levels = program<graph_t<decltype(sum((x - mean(x)) / norm(x - mean(x)) * y).body)>>;
    STATIC_REQUIRE(levels::count == 3);
    STATIC_REQUIRE(passes<levels> == 3);

    // The values agree with a direct computation.
    const std::vector<double> a{1.0, 2.0, 4.0, 8.0, -3.0, 0.5, 7.0, 2.5, -1.0, 6.0, 3.0};
    double m = 0.0, q = 0.0;
    for (double e : a) {
        m += e;
        q += e * e;
    }
    m /= static_cast<double>(a.size());
    q /= static_cast<double>(a.size());
    CHECK((mean(x * x) - square(mean(x)))(a) == Approx(q - m * m).epsilon(1e-14));
    const auto g = nabla::grad(mean(x * x) - square(mean(x)), a);
    for (std::size_t i = 0; i < a.size(); ++i)
        CHECK(g[i] == Approx(2.0 * (a[i] - m) / static_cast<double>(a.size())).epsilon(1e-13));
}

TEST_CASE("nested reductions: the gradient through a standardised array equals the tape's",
          "[array]") {
    const auto [x, y] = nabla::array_variables<2>();
    const auto f = sum((x - mean(x)) / norm(x - mean(x)) * y) + 0.5 * prod(y);
    const auto scalar = [](const auto& v) {
        using T = std::decay_t<decltype(v[0])>;
        const std::size_t n = v.size() / 2;
        T m = 0.0;
        for (std::size_t i = 0; i < n; ++i)
            m += v[i];
        m /= static_cast<double>(n);
        T s = 0.0;
        for (std::size_t i = 0; i < n; ++i)
            s += (v[i] - m) * (v[i] - m);
        const T r = sqrt(s);
        T total = 0.0;
        T p = 1.0;
        for (std::size_t i = 0; i < n; ++i) {
            total += (v[i] - m) / r * v[n + i];
            p *= v[n + i];
        }
        return total + 0.5 * p;
    };
    for (const std::size_t n : {std::size_t{2}, W + 1, std::size_t{37}}) {
        INFO("n = " << n);
        check_against_tape(f, scalar, sample(n, -1.0, 1.0, 11), sample(n, 0.8, 1.2, 12), 1e-14);
    }
}

TEST_CASE("gradients taken in the forward loop and in reverse loops add up when they meet in "
          "one array",
          "[array]") {
    const auto [x, y] = nabla::array_variables<2>();
    const auto scalar = [](const auto& v) {
        using T = std::decay_t<decltype(v[0])>;
        const std::size_t n = v.size() / 2;
        T sq = 0.0, top = v[0], s1 = 0.0, s2 = 0.0, m = 0.0, c = 0.0, shifted = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            sq += v[i] * v[i] * v[n + i];
            top = fmax(top, v[i]);
            s1 += v[i];
            m += v[i];
        }
        for (std::size_t i = 1; i < n; ++i)
            s2 += v[i] * v[i - 1];
        m /= static_cast<double>(n);
        for (std::size_t i = 0; i < n; ++i)
            c += (v[i] - m) * (v[i] - m);
        for (std::size_t i = 2; i < n; ++i)
            shifted += v[n + i] * (v[i - 2] - 2.0 * v[i - 1] + v[i]);
        return log(sq) + 3.0 * top + s1 * s2 + sqrt(c) + shifted;
    };
    const auto second = x(nabla::from<2>) - 2.0 * x(nabla::range<1, -1>) + x(nabla::upto<-2>);
    const auto f = log(sum(x * x * y)) + 3.0 * max(x) +
                   sum(x) * sum(x(nabla::from<1>) * x(nabla::upto<-1>)) + norm(x - mean(x)) +
                   sum(y(nabla::from<2>) * second);
    for (const std::size_t n : {std::size_t{3}, W + 2, 3 * W + 5, std::size_t{200}}) {
        INFO("n = " << n);
        const auto xs = sample(n, 0.5, 1.5, 15);
        const auto ys = sample(n, 0.5, 1.5, 16);
        check_against_tape(f, scalar, xs, ys, 1e-13);
        const auto [value, gx, gy] = nabla::value_and_grad(f, xs, ys);
        // Into arrays holding garbage: every entry is written.
        std::vector<double> hx(n, 1e300), hy(n, -7.0);
        CHECK(nabla::value_and_grad_into(f, std::tie(hx, hy), xs, ys) == value);
        CHECK(hx == gx);
        CHECK(hy == gy);
    }
    std::vector<double> in_place{1.0, 2.0, 3.0};
    CHECK_THROWS_WITH(nabla::value_and_grad_into(sum(x * x), std::tie(in_place), in_place),
                      Catch::Contains("overlaps argument 0"));
    CHECK(in_place == std::vector<double>{1.0, 2.0, 3.0});
    std::vector<double> kept{4.0, 5.0, 6.0}, other{7.0, 8.0};
    CHECK_THROWS_AS(nabla::value_and_grad_into(sum(x) + sum(x * y), std::tie(kept, other),
                                               std::vector<double>(3, 1.0),
                                               std::vector<double>(2, 1.0)),
                    nabla::shape_error);
    CHECK(kept == std::vector<double>{4.0, 5.0, 6.0});
    CHECK(other == std::vector<double>{7.0, 8.0});
    std::vector<double> short_gradient(2);
    CHECK_THROWS_AS(
        nabla::value_and_grad_into(sum(x), std::tie(short_gradient), std::vector<double>(3, 1.0)),
        nabla::shape_error);
}

namespace {

// Equal as the conventions see it: both NaN, the same infinity, or finite and within a few
// units in the last place of each other (SIMD and C library functions round differently), or
// subnormal and a few units apart; the sign of a zero aside.
bool same(double a, double b) {
    if (std::isnan(a) || std::isnan(b))
        return std::isnan(a) && std::isnan(b);
    if (std::isinf(a) || std::isinf(b))
        return a == b;
    return std::abs(a - b) <= 1e-13 * std::max(std::abs(a), std::abs(b)) + 1e-320;
}

const std::vector<double> edges{0.0,
                                -0.0,
                                1e-310,
                                -1e-310,
                                1e-300,
                                1e300,
                                -1e300,
                                1e10,
                                -200.5,
                                -200.0,
                                171.7,
                                708.5,
                                709.5,
                                -708.5,
                                -740.0,
                                1022.5,
                                1023.5,
                                -1022.5,
                                -1070.0,
                                2.5,
                                -2.5,
                                1.0,
                                -1.0,
                                0.5,
                                -0.5,
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN()};

}  // namespace

TEST_CASE("an element in a SIMD batch and one in the scalar tail get the same value and "
          "derivative at the edges of every function",
          "[array]") {
    const auto [x, y] = nabla::array_variables<2>();
    const std::size_t n = W + 1;  // elements 0 .. W-1 in a batch, element W in the tail
#define NABLA_CHECK_LANES_UNARY(function, rule)                                                    \
    for (const double e : edges) {                                                                 \
        INFO(#function << " at " << e);                                                            \
        const std::vector<double> a(n, e);                                                         \
        const std::vector<double> v = function(x)(a);                                              \
        const std::vector<double> g = nabla::grad(sum(function(x)), a);                            \
        CHECK(same(v[0], v[W]));                                                                   \
        CHECK(same(g[0], g[W]));                                                                   \
    }
    NABLA_UNARY_FUNCTIONS(NABLA_CHECK_LANES_UNARY)
#undef NABLA_CHECK_LANES_UNARY
    const std::vector<double> some{0.0,
                                   -0.0,
                                   1e-310,
                                   1e300,
                                   -1e300,
                                   2.0,
                                   -1.0,
                                   0.5,
                                   std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::quiet_NaN()};
#define NABLA_CHECK_LANES_BINARY(function, rule)                                                   \
    for (const double p : some)                                                                    \
        for (const double q : some) {                                                              \
            INFO(#function << " at " << p << ", " << q);                                           \
            const std::vector<double> a(n, p), b(n, q);                                            \
            const std::vector<double> v = function(x, y)(a, b);                                    \
            const auto [s, ga, gb] = nabla::value_and_grad(sum(function(x, y)), a, b);             \
            CHECK(same(v[0], v[W]));                                                               \
            CHECK(same(ga[0], ga[W]));                                                             \
            CHECK(same(gb[0], gb[W]));                                                             \
        }
    NABLA_BINARY_FUNCTIONS(NABLA_CHECK_LANES_BINARY)
    NABLA_CHECK_LANES_BINARY(pow, pow_rule)
#undef NABLA_CHECK_LANES_BINARY
}

TEST_CASE("an infinite scale leaves what a loop does not touch alone; logsumexp's reverse loop "
          "is exact at infinities",
          "[array]") {
    const auto [x, y] = nabla::array_variables<2>();
    constexpr double inf = std::numeric_limits<double>::infinity();
    // sqrt'(0) = inf scales the gradient of sum(x[1:]); x[0] stays 0.
    const auto g = nabla::grad(sqrt(sum(x(nabla::from<1>))), std::vector<double>{5.0, 0.0, 0.0});
    CHECK(g[0] == 0.0);
    CHECK(g[1] == inf);
    // An empty loop with an infinite scale writes nothing.
    const auto h = nabla::grad(logsumexp(x(nabla::from<1>)) + sum(x), std::vector<double>{2.0});
    CHECK(h == std::vector<double>{1.0});
    // The reverse loop (max in the same loop forces it) agrees with the fused one.
    const std::vector<double> a{1.0, inf, 2.0};
    const auto fused = nabla::grad(logsumexp(x), a);
    const auto reversed = nabla::grad(logsumexp(x) + 0.0 * min(x), a);
    CHECK(fused == std::vector<double>{0.0, 1.0, 0.0});
    CHECK(reversed == fused);
    const auto [v, gx, gy] = nabla::value_and_grad(
        sqrt(mean(x)) + max(y), std::vector<double>{0.0, 0.0}, std::vector<double>{1.0, 3.0, 2.0});
    CHECK(gy == std::vector<double>{0.0, 1.0, 0.0});
}

TEST_CASE("xtensor views: contiguous ones are read from their first element, strided ones "
          "refused",
          "[array]") {
    const auto [x] = nabla::array_variables<1>();
    const xt::xtensor<double, 1> t = {0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0};
    const auto middle = xt::view(t, xt::range(3, 6));
    CHECK(sum(x)(middle) == 12.0);
    CHECK(nabla::grad(sum(x * x), middle) == std::vector<double>{6.0, 8.0, 10.0});
    const auto every_other = xt::view(t, xt::range(0, 6, 2));
    CHECK_THROWS_WITH(sum(x)(every_other), Catch::Contains("strided view"));
}

TEST_CASE("to_string names leaves by their arrays and views; to_dot draws one cluster per loop "
          "and each reduction computed once",
          "[array][print]") {
    const auto [x, y] = nabla::array_variables<2>();
    const auto lse = log(sum(exp(x - max(x)))) + max(x);
    CHECK(nabla::to_string(lse) == "log(sum(exp(x0 - max(x0)))) + max(x0)");
    const std::string dot = nabla::to_dot(lse);
    CHECK(dot.find("subgraph cluster_loop0") != std::string::npos);
    CHECK(dot.find("subgraph cluster_loop1") != std::string::npos);
    CHECK(dot.find("cluster_loop2") == std::string::npos);
    CHECK(dot.find("r0 [shape=box, label=\"r0 = max\"]") != std::string::npos);
    CHECK(dot.find("r1 [shape=box, label=\"r1 = sum\"]") != std::string::npos);
    // One pass where there are lanes; the scalar build (NABLA_NO_SIMD) fuses no gradient loop.
    CHECK(dot.find(W > 1 ? "loop 1: value and gradient in one pass"
                         : "loop 1: gradient in a loop of its own") != std::string::npos);
    CHECK(dot.find("r0 -> b1_1;") != std::string::npos);  // max read by the sum's loop
    CHECK(dot.find("r0 -> t_") != std::string::npos);     // and by the top
    CHECK(nabla::to_string(sum(x(nabla::from<1>) * x(nabla::upto<-1>) + y(nabla::range<2, -1>))) ==
          "sum(x0[1:]*x0[:-1] + x1[2:-1])");
    // Two reductions over one array share a loop.
    const std::string shared = nabla::to_dot(sum(x * x) - mean(x));
    CHECK(shared.find("cluster_loop1") == std::string::npos);
    CHECK(shared.find("r1") != std::string::npos);
}
