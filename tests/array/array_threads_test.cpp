// The loops of large array expressions on several threads (nabla::set_array_threads): values,
// gradients and array results the same to the last bit with 1, 2 and 3 threads, right against
// loops written out, for lengths around the chunk size; two callers sharing the pool at once. In
// the threads program, so that the ThreadSanitizer stage runs it.

#include <nabla/array.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <thread>
#include <tuple>
#include <vector>

#include "samples.hpp"

namespace {

constexpr std::size_t chunk = nabla::detail::chunk_size;
constexpr std::size_t W = nabla_test::lanes_width;

// Sets the thread count for a scope, and back to one after.
struct threads_for {
    explicit threads_for(std::size_t n) { nabla::set_array_threads(n); }
    ~threads_for() { nabla::set_array_threads(1); }
    threads_for(const threads_for&) = delete;
    threads_for& operator=(const threads_for&) = delete;
};

// The value and every gradient of f at the arrays, with `threads` threads.
template <class F, class... Args>
auto value_and_grad_with(std::size_t threads, const F& f, const Args&... args) {
    threads_for scope(threads);
    return nabla::value_and_grad(f, args...);
}

template <class R>
void check_same(const R& a, const R& b) {
    CHECK(a.value == b.value);
    const bool same = [&]<std::size_t... I>(std::index_sequence<I...>) {
        return ((std::get<I>(a.gradient) == std::get<I>(b.gradient)) && ...);
    }
    (std::make_index_sequence<std::tuple_size_v<decltype(a.gradient)>>{});
    CHECK(same);
}

// The largest absolute difference between two arrays of the same length.
template <class A, class B>
double largest_difference(const A& a, const B& b) {
    double d = 0.0;
    for (std::size_t k = 0; k < b.size(); ++k)
        d = std::max(d, std::abs(a[k] - b[k]));
    return d;
}

// One chunk, two (on one thread: too few to split), four and five (split), and nine (a reverse
// loop, which runs its even chunks and then its odd ones, splits too).
const std::vector<std::size_t> lengths{chunk - 1,     chunk + 1, 2 * chunk + 3 * W + 1,
                                       4 * chunk + 5, 5 * chunk, 9 * chunk + W + 1};

}  // namespace

TEST_CASE("array loops give the same results to the last bit with any number of threads",
          "[array][threads]") {
    const auto [x, y] = nabla::array_variables<2>();
    using nabla::from;
    using nabla::upto;
    const auto chain = sum(exp(sin(x) * y) + log1p(x * x) / (1.0 + sqrt(y)));
    const auto rosenbrock =
        sum(100.0 * square(x(from<1>) - square(x(upto<-1>))) + square(1.0 - x(upto<-1>)));
    const auto lse = logsumexp(x * y);
    const auto peaked = max(x) * sum(y * y) + min(x * y);          // reverse loops
    const auto variance = mean(x * x) - square(mean(x));           // two reductions in one loop
    const auto centred = x(upto<-2>) - max(x) + 0.5 * y(from<2>);  // an array result
    for (const std::size_t n : lengths) {
        CAPTURE(n);
        const auto xs = nabla_test::sample(n + 2, -1.5, 1.5, 1);
        const auto ys = nabla_test::sample(n + 2, 0.5, 2.0, 2);
        const auto one = [&](const auto& f) { return value_and_grad_with(1, f, xs, ys); };
        for (const std::size_t threads : {2, 3}) {
            CAPTURE(threads);
            check_same(value_and_grad_with(threads, chain, xs, ys), one(chain));
            check_same(value_and_grad_with(threads, rosenbrock, xs, ys), one(rosenbrock));
            check_same(value_and_grad_with(threads, lse, xs, ys), one(lse));
            check_same(value_and_grad_with(threads, peaked, xs, ys), one(peaked));
            check_same(value_and_grad_with(threads, variance, xs, ys), one(variance));
            std::vector<double> many, single;
            {
                threads_for scope(threads);
                many = centred(xs, ys);
            }
            single = centred(xs, ys);
            CHECK(many == single);
        }

        // And right: the Rosenbrock gradient against its loop (the shifted views carry adjoints
        // across chunk boundaries).
        threads_for scope(2);
        const auto [v, gx, gy] = nabla::value_and_grad(rosenbrock, xs, ys);
        double value = 0.0;
        std::vector<double> want(n + 2, 0.0);
        for (std::size_t i = 0; i + 1 < n + 2; ++i) {
            const double d = xs[i + 1] - xs[i] * xs[i];
            value += 100.0 * d * d + (1.0 - xs[i]) * (1.0 - xs[i]);
            want[i + 1] += 200.0 * d;
            want[i] += -400.0 * d * xs[i] - 2.0 * (1.0 - xs[i]);
        }
        CHECK(v == Approx(value).epsilon(1e-12));
        for (std::size_t i = 0; i < n + 2; ++i)
            REQUIRE(gx[i] == Approx(want[i]).epsilon(1e-12).margin(1e-12));
        for (const double g : gy)
            REQUIRE(g == 0.0);
    }
}

TEST_CASE("grids split by rows over threads give the same results", "[array][threads]") {
    const auto [u] = nabla::array_variables<1>();
    using nabla::range;
    const auto inner = range<1, -1>;
    const auto stencil = u(inner, inner) + 0.2 * (u(range<0, -2>, inner) + u(range<2, 0>, inner) +
                                                  u(inner, range<0, -2>) + u(inner, range<2, 0>) -
                                                  4.0 * u(inner, inner));
    const auto energy = sum(square(stencil)) + max(u);
    const std::size_t rows = 3 * chunk / 100 + 7, cols = 101;
    const std::vector<double> values = nabla_test::sample(rows * cols, -1.0, 1.0, 3);
    const nabla::matrix_ref<const double> grid(values.data(), rows, cols, cols);
    std::vector<double> one((rows - 2) * (cols - 2)), two(one.size());
    nabla::evaluate_into(stencil,
                         nabla::matrix_ref<double>(one.data(), rows - 2, cols - 2, cols - 2), grid);
    const auto single = nabla::value_and_grad(energy, grid);
    threads_for scope(2);
    nabla::evaluate_into(stencil,
                         nabla::matrix_ref<double>(two.data(), rows - 2, cols - 2, cols - 2), grid);
    CHECK(one == two);
    const auto many = nabla::value_and_grad(energy, grid);
    CHECK(many.value == single.value);
    CHECK(std::get<0>(many.gradient) == std::get<0>(single.gradient));
}

namespace {

// A stencil's gradients on a grid with enough rows for several chunks, with 1, 2 and 3 threads,
// against loops: sum(square(stencil - mean(u))) (a scalar leaf in the loop), logsumexp(stencil)
// (a prepass for the maximum), and the pullback of the stencil itself. Right: whether the stencil
// reads the right neighbour, whose column offset of two is a batch of the x86-64 baseline's two
// lanes (the gradient then runs as a reverse loop, not fused).
template <bool Right>
void check_grid_threads() {
    const auto [variable] = nabla::array_variables<1>();
    const auto u = variable;  // clang++ 14 captures no structured binding in a lambda
    using nabla::range;
    const auto inner = range<1, -1>;
    const auto stencil = [&] {
        const auto around = u(range<0, -2>, inner) + u(range<2, 0>, inner) + u(inner, range<0, -2>);
        if constexpr (Right)
            return u(inner, inner) + 0.2 * (around + u(inner, range<2, 0>) - 4.0 * u(inner, inner));
        else
            return u(inner, inner) + 0.2 * (around - 3.0 * u(inner, inner));
    }();
    // Interior widths around the lanes, and enough rows for several chunks and a remainder that
    // is no whole pass.
    for (const std::size_t cols : {std::size_t{131}, 2 * W + 5}) {
        const std::size_t rows = 5 * chunk / (cols - 2) + 7;
        INFO(rows << " x " << cols);
        const std::vector<double> values = nabla_test::sample(rows * cols, -1.0, 1.0, 5);
        const nabla::matrix_ref<const double> grid(values.data(), rows, cols, cols);
        const auto at = [&](std::size_t i, std::size_t j) { return values[i * cols + j]; };
        const std::size_t m = rows - 2, n = cols - 2;
        // The stencil's values, and its pullback of w by loops.
        std::vector<double> s(m * n);
        double average = 0.0;
        for (const double v : values)
            average += v;
        average /= static_cast<double>(values.size());
        for (std::size_t i = 1; i + 1 < rows; ++i)
            for (std::size_t j = 1; j + 1 < cols; ++j)
                s[(i - 1) * n + j - 1] =
                    at(i, j) + 0.2 * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) +
                                      (Right ? at(i, j + 1) - 4.0 * at(i, j) : -3.0 * at(i, j)));
        const auto pullback = [&](const std::vector<double>& w) {
            std::vector<double> g(rows * cols, 0.0);
            for (std::size_t i = 1; i + 1 < rows; ++i)
                for (std::size_t j = 1; j + 1 < cols; ++j) {
                    const double a = w[(i - 1) * n + j - 1];
                    g[i * cols + j] += (Right ? 0.2 : 0.4) * a;
                    g[(i - 1) * cols + j] += 0.2 * a;
                    g[(i + 1) * cols + j] += 0.2 * a;
                    g[i * cols + j - 1] += 0.2 * a;
                    if (Right)
                        g[i * cols + j + 1] += 0.2 * a;
                }
            return g;
        };

        // sum(square(stencil - mean(u))): a scalar leaf in the loop; logsumexp(stencil): a
        // prepass for the maximum.
        const auto centred = sum(square(stencil - mean(u)));
        const auto soft = logsumexp(stencil);
        std::vector<double> w(m * n);
        double total = 0.0;
        for (std::size_t k = 0; k < m * n; ++k) {
            w[k] = 2.0 * (s[k] - average);
            total += w[k];
        }
        std::vector<double> want = pullback(w);
        for (double& g : want)
            g -= total / static_cast<double>(values.size());
        const double top = *std::max_element(s.begin(), s.end());
        double sum_exp = 0.0;
        for (const double e : s)
            sum_exp += std::exp(e - top);
        for (std::size_t k = 0; k < m * n; ++k)
            w[k] = std::exp(s[k] - top) / sum_exp;
        const std::vector<double> want_soft = pullback(w);

        const auto one = value_and_grad_with(1, centred, grid);
        const auto one_soft = value_and_grad_with(1, soft, grid);
        for (const std::size_t threads : {std::size_t{2}, std::size_t{3}}) {
            check_same(value_and_grad_with(threads, centred, grid), one);
            check_same(value_and_grad_with(threads, soft, grid), one_soft);
        }
        const std::vector<double>& g = std::get<0>(one.gradient);
        const std::vector<double>& g_soft = std::get<0>(one_soft.gradient);
        REQUIRE(g.size() == want.size());
        CHECK(one_soft.value == Approx(top + std::log(sum_exp)).epsilon(1e-12));
        CHECK(largest_difference(g, want) < 1e-12);
        CHECK(largest_difference(g_soft, want_soft) < 1e-15);

        // The pullback of the array-valued stencil (the heat adjoint).
        const std::vector<double> cot = nabla_test::sample(m * n, -1.0, 1.0, 6);
        const nabla::matrix_ref<const double> cotangent(cot.data(), m, n, n);
        const auto vjp_with = [&](std::size_t threads) {
            threads_for scope(threads);
            return nabla::apply_vjp(stencil, cotangent, grid);
        };
        const auto pulled = vjp_with(1);
        CHECK(vjp_with(3) == pulled);
        CHECK(largest_difference(pulled, pullback(cot)) < 1e-14);
    }
}

}  // namespace

TEST_CASE("a grid's gradient loops split by rows over threads: the same results, right against "
          "loops",
          "[array][threads]") {
    check_grid_threads<true>();
    check_grid_threads<false>();
}

TEST_CASE("a chunked loop leaves the arrays it does not read alone, empty ones included",
          "[array][threads]") {
    const auto [x, y] = nabla::array_variables<2>();
    const auto f = sum(x * x) + sum(y);
    const auto xs = nabla_test::sample(5 * chunk, -1.0, 1.0, 6);
    const std::vector<double> empty;
    threads_for scope(2);
    const auto [v, gx, gy] = nabla::value_and_grad(f, xs, empty);
    double want = 0.0;
    for (const double e : xs)
        want += e * e;
    CHECK(v == Approx(want).epsilon(1e-12));
    CHECK(gx[3 * chunk + 1] == 2.0 * xs[3 * chunk + 1]);
    CHECK(gy.empty());
}

TEST_CASE("two callers share the pool: each gets its own results", "[array][threads]") {
    const auto [x] = nabla::array_variables<1>();
    const auto f = sum(exp(sin(x)) * x);
    const std::size_t n = 5 * chunk + 3;
    const auto xs = nabla_test::sample(n, -1.0, 1.0, 4);
    const auto zs = nabla_test::sample(n, -2.0, 0.0, 5);
    const auto want_x = nabla::value_and_grad(f, xs);
    const auto want_z = nabla::value_and_grad(f, zs);
    threads_for scope(2);
    bool same_x = true, same_z = true;
    std::thread other([&] {
        for (int k = 0; k < 20; ++k) {
            const auto r = nabla::value_and_grad(f, zs);
            same_z = same_z && r.value == want_z.value &&
                     std::get<0>(r.gradient) == std::get<0>(want_z.gradient);
        }
    });
    for (int k = 0; k < 20; ++k) {
        const auto r = nabla::value_and_grad(f, xs);
        same_x = same_x && r.value == want_x.value &&
                 std::get<0>(r.gradient) == std::get<0>(want_x.gradient);
    }
    other.join();
    CHECK(same_x);
    CHECK(same_z);
    CHECK(nabla::array_threads() == 2);
}
