// Matrix-vector products in static array expressions: values and gradients against loops written
// out element by element and against the tape, views of the matrix and the vector, a matrix also
// read element-wise, products that share a matrix, pullbacks, values written into arrays, matrices
// whose rows lie apart, shape errors and NaN, at shapes around the SIMD width and the four rows
// the kernels take at a time.

#include <nabla/array.hpp>

#include <catch2/catch.hpp>
#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "samples.hpp"

namespace {

constexpr std::size_t W = nabla_test::lanes_width;
using nabla::from;
using nabla::range;
using nabla::upto;
using nabla::whole;
using nabla_test::conditioned;
using nabla_test::grid;

// Rows x columns around the kernels' four rows and the SIMD width, empty ones included.
const std::vector<std::array<std::size_t, 2>> shapes{
    {1, 1}, {3, W + 1}, {4, W}, {5, 2 * W + 3}, {8, 7}, {9, 4 * W + 1}, {13, 1}, {0, 5}, {6, 0}};

// The dense layer loss sum(tanh(A x + b)^2), its value and gradients by plain loops.
struct dense_reference {
    double value = 0.0;
    std::vector<double> ga, gx, gb;
};

dense_reference
dense(const xt::xtensor<double, 2>& a, const std::vector<double>& x, const std::vector<double>& b) {
    const std::size_t m = a.shape()[0], n = a.shape()[1];
    dense_reference r{0.0, std::vector<double>(m * n), std::vector<double>(n),
                      std::vector<double>(m)};
    for (std::size_t i = 0; i < m; ++i) {
        double z = b[i];
        for (std::size_t j = 0; j < n; ++j)
            z += a(i, j) * x[j];
        const double h = std::tanh(z);
        r.value += h * h;
        const double dz = 2.0 * h * (1.0 - h * h);
        r.gb[i] = dz;
        for (std::size_t j = 0; j < n; ++j) {
            r.ga[i * n + j] = dz * x[j];
            r.gx[j] += dz * a(i, j);
        }
    }
    return r;
}

template <class A, class B>
void check_close(const A& got, const B& want, double tolerance = 1e-13) {
    REQUIRE(static_cast<std::size_t>(got.size()) == static_cast<std::size_t>(want.size()));
    auto g = got.begin();
    for (auto w = want.begin(); w != want.end(); ++w, ++g)
        CHECK(*g == Approx(*w).margin(tolerance).epsilon(tolerance));
}

const auto layer = [](const auto& a, const auto& x, const auto& b) {
    const auto h = tanh(matvec(a, x) + b);
    return sum(h * h);
};

}  // namespace

TEST_CASE("a dense layer's value and gradient equal loops and the tape", "[products]") {
    const auto [A, x, b] = nabla::array_variables<3>();
    const auto f = layer(A, x, b);
    for (const auto& [m, n] : shapes) {
        CAPTURE(m, n);
        const auto a = grid(m, n, -0.5, 0.5, 1);
        const auto xs = nabla_test::sample(n, -1.0, 1.0, 2);
        const auto bs = nabla_test::sample(m, -0.2, 0.2, 3);
        const dense_reference want = dense(a, xs, bs);

        CHECK(f(a, xs, bs) == Approx(want.value).epsilon(1e-14).margin(1e-15));
        const auto [v, ga, gx, gb] = nabla::value_and_grad(f, a, xs, bs);
        CHECK(v == Approx(want.value).epsilon(1e-14).margin(1e-15));
        REQUIRE(ga.shape()[0] == m);
        REQUIRE(ga.shape()[1] == n);
        check_close(ga, want.ga);
        check_close(gx, want.gx);
        check_close(gb, want.gb);

        // The same lambda on the tape.
        const auto tape = nabla::value_and_grad(nabla::mode::arrays, layer, a, xs, bs);
        CHECK(tape.value == Approx(v).epsilon(1e-14).margin(1e-15));
        check_close(std::get<0>(tape.gradient), want.ga);

        // Into the caller's arrays, written over whatever they held.
        xt::xtensor<double, 2> into = xt::xtensor<double, 2>::from_shape({m, n});
        into.fill(7.0);
        std::vector<double> into_x(n, 7.0), into_b(m, 7.0);
        const double w = nabla::value_and_grad_into(f, std::tie(into, into_x, into_b), a, xs, bs);
        CHECK(w == v);
        check_close(into, want.ga);
        check_close(into_x, want.gx);
        check_close(into_b, want.gb);

        // dA stored past the cache (as for large matrices), whatever its rows' alignment.
        const std::size_t threshold = nabla::detail::stream_threshold();
        nabla::detail::stream_threshold() = 1;
        into.fill(7.0);
        CHECK(nabla::value_and_grad_into(f, std::tie(into, into_x, into_b), a, xs, bs) == v);
        nabla::detail::stream_threshold() = threshold;
        check_close(into, want.ga);
    }
}

TEST_CASE("matvec reads views of the matrix and the vector, and a view of a product views the "
          "matrix's rows",
          "[products]") {
    const auto [A, x] = nabla::array_variables<2>();
    for (const auto& [m, n] : std::vector<std::array<std::size_t, 2>>{
             {4, 3}, {6, W + 2}, {9, 2 * W + 4}, {11, 4 * W + 3}}) {
        CAPTURE(m, n);
        const auto a = grid(m, n, -1.0, 1.0, 4);
        const auto xs = nabla_test::sample(n, -1.0, 1.0, 5);
        // y = A[1:-1, 2:] x[:-2] (columns 2 .. n-1 times elements 0 .. n-3), squared and summed.
        const auto f = sum(square(matvec(A(range<1, -1>, from<2>), x(upto<-2>))));
        double value = 0.0;
        std::vector<double> ga(m * n, 0.0), gx(n, 0.0);
        for (std::size_t i = 1; i + 1 < m; ++i) {
            double y = 0.0;
            for (std::size_t j = 2; j < n; ++j)
                y += a(i, j) * xs[j - 2];
            value += y * y;
            for (std::size_t j = 2; j < n; ++j) {
                ga[i * n + j] = 2.0 * y * xs[j - 2];
                gx[j - 2] += 2.0 * y * a(i, j);
            }
        }
        const auto [v, got_a, got_x] = nabla::value_and_grad(f, a, xs);
        CHECK(v == Approx(value).epsilon(1e-14));
        check_close(got_a, ga);  // zero outside the view
        check_close(got_x, gx);

        // (A x)[1:] is A[1:, :] x.
        const auto viewed = matvec(A, x)(from<1>);
        const auto direct = matvec(A(from<1>), x);
        check_close(viewed(a, xs), direct(a, xs), 0.0);
    }
}

TEST_CASE("a matrix read by a product and element-wise, products sharing a matrix, and a vector "
          "read element-wise",
          "[products]") {
    const auto [A, x, z] = nabla::array_variables<3>();
    for (const std::size_t n : {std::size_t{1}, std::size_t{5}, W + 3, 3 * W + 1}) {
        CAPTURE(n);
        const auto a = grid(n, n, -1.0, 1.0, 6);
        const auto xs = nabla_test::sample(n, -1.0, 1.0, 7);
        const auto zs = nabla_test::sample(n, 0.5, 1.5, 8);
        // 0.5 |A|^2 + sum((A x) * (A z)) + sum(x * (A x)) + sum(sin(x)): A's gradient gets the
        // element-wise part and two pullbacks; x's an element-wise part and two pullbacks.
        const auto f = 0.5 * sum(A * A) + sum(matvec(A, x) * matvec(A, z)) + sum(x * matvec(A, x)) +
                       sum(sin(x));
        std::vector<double> ax(n, 0.0), az(n, 0.0);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                ax[i] += a(i, j) * xs[j];
                az[i] += a(i, j) * zs[j];
            }
        double value = 0.0;
        std::vector<double> ga(n * n), gx(n), gz(n);
        for (std::size_t i = 0; i < n; ++i) {
            value += ax[i] * az[i] + xs[i] * ax[i] + std::sin(xs[i]);
            gx[i] += ax[i] + std::cos(xs[i]);
            for (std::size_t j = 0; j < n; ++j) {
                value += 0.5 * a(i, j) * a(i, j);
                // d/dA(i, j): A(i, j) + az[i] x[j] + ax[i] z[j] + x[i] x[j]
                ga[i * n + j] = a(i, j) + az[i] * xs[j] + ax[i] * zs[j] + xs[i] * xs[j];
                // d/dx[j] of sum_i ax_i az_i + x_i ax_i: az_i A(i, j) + x_i A(i, j)
                gx[j] += (az[i] + xs[i]) * a(i, j);
                gz[j] += ax[i] * a(i, j);
            }
        }
        const auto [v, got_a, got_x, got_z] = nabla::value_and_grad(f, a, xs, zs);
        CHECK(v == Approx(value).epsilon(1e-13));
        check_close(got_a, ga, 1e-12);
        check_close(got_x, gx, 1e-12);
        check_close(got_z, gz, 1e-12);
    }
}

TEST_CASE("an array-valued expression with a product: its value, its value into an array, and "
          "its pullback",
          "[products]") {
    const auto [A, x, c] = nabla::array_variables<3>();
    // A softmax-free attention score: (A x) - max(A x) + c x[:m] (c a number's array).
    const auto f = matvec(A, x) - max(matvec(A, x)) + c * exp(matvec(A, x));
    for (const auto& [m, n] :
         std::vector<std::array<std::size_t, 2>>{{3, 4}, {5, W + 1}, {W + 3, 2 * W + 1}, {17, 9}}) {
        CAPTURE(m, n);
        const auto a = grid(m, n, -1.0, 1.0, 9);
        const auto xs = nabla_test::sample(n, -1.0, 1.0, 10);
        const auto cs = nabla_test::sample(m, 0.1, 0.4, 11);
        std::vector<double> y(m, 0.0);
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j)
                y[i] += a(i, j) * xs[j];
        std::size_t top = 0;
        for (std::size_t i = 1; i < m; ++i)
            if (y[i] > y[top])
                top = i;
        std::vector<double> want(m);
        for (std::size_t i = 0; i < m; ++i)
            want[i] = y[i] - y[top] + cs[i] * std::exp(y[i]);
        check_close(f(a, xs, cs), want);
        std::vector<double> out(m, -1.0);
        nabla::evaluate_into(f, out, a, xs, cs);
        check_close(out, want);

        // w^T J: dy_i = w_i (1 + c_i e^{y_i}) - [i == top] sum(w); then the product's pullback.
        const auto w = nabla_test::sample(m, -1.0, 1.0, 12);
        double total = 0.0;
        for (const double wi : w)
            total += wi;
        std::vector<double> dy(m);
        for (std::size_t i = 0; i < m; ++i)
            dy[i] = w[i] * (1.0 + cs[i] * std::exp(y[i])) - (i == top ? total : 0.0);
        std::vector<double> ga(m * n), gx(n, 0.0), gc(m);
        for (std::size_t i = 0; i < m; ++i) {
            gc[i] = w[i] * std::exp(y[i]);
            for (std::size_t j = 0; j < n; ++j) {
                ga[i * n + j] = dy[i] * xs[j];
                gx[j] += dy[i] * a(i, j);
            }
        }
        const auto [pa, px, pc] = nabla::apply_vjp(f, w, a, xs, cs);
        check_close(pa, ga, 1e-12);
        check_close(px, gx, 1e-12);
        check_close(pc, gc, 1e-12);

        // Added into arrays that hold something already.
        xt::xtensor<double, 2> sa = xt::ones<double>({m, n});
        std::vector<double> sx(n, -2.0), sc(m, 0.5);
        nabla::add_vjp_into(f, std::tie(sa, sx, sc), w, a, xs, cs);
        for (std::size_t k = 0; k < m * n; ++k)
            CHECK(sa.data()[k] == Approx(1.0 + ga[k]).margin(1e-12));
        for (std::size_t j = 0; j < n; ++j)
            CHECK(sx[j] == Approx(-2.0 + gx[j]).margin(1e-12));
        for (std::size_t i = 0; i < m; ++i)
            CHECK(sc[i] == Approx(0.5 + gc[i]).margin(1e-12));
    }
}

TEST_CASE("matvec reads matrices whose rows lie apart in a larger array", "[products]") {
    const auto [A, x, b] = nabla::array_variables<3>();
    const auto f = layer(A, x, b);
    const std::size_t m = 7, n = 2 * W + 3, stride = n + 5;
    const std::vector<double> wide = nabla_test::sample(m * stride, -0.5, 0.5, 13);
    const nabla::matrix_ref<const double> ref(wide.data(), m, n, stride);
    xt::xtensor<double, 2> a = xt::xtensor<double, 2>::from_shape({m, n});
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j)
            a(i, j) = wide[i * stride + j];
    const auto xs = nabla_test::sample(n, -1.0, 1.0, 14);
    const auto bs = nabla_test::sample(m, -0.2, 0.2, 15);
    const dense_reference want = dense(a, xs, bs);
    const auto [v, ga, gx, gb] = nabla::value_and_grad(f, ref, xs, bs);
    CHECK(v == Approx(want.value).epsilon(1e-14));
    check_close(ga, want.ga);  // contiguous
    check_close(gx, want.gx);
}

TEST_CASE("matvec and its pullback are the same at every offset of the matrix and its gradient "
          "from a cache line, stored, streamed and row by row",
          "[products]") {
    const auto [A, x, b] = nabla::array_variables<3>();
    const auto f = layer(A, x, b);
    // Rows a whole number of batches long are done from the first aligned element, after a
    // head of up to W - 1 elements; others as they lie.
    for (const auto& [m, n] : std::vector<std::array<std::size_t, 2>>{
             {8, 4 * W}, {6, 2 * W}, {9, W}, {5, 2 * W + 3}, {4, 1}}) {
        const auto a = grid(m, n, -0.5, 0.5, 16);
        const auto xs = nabla_test::sample(n, -1.0, 1.0, 17);
        const auto bs = nabla_test::sample(m, -0.2, 0.2, 18);
        const dense_reference want = dense(a, xs, bs);
        // Room for every offset from a 64-byte boundary.
        std::vector<double> matrix(m * n + 16), gradient(m * n + 16);
        const auto line = [](std::vector<double>& v) {
            double* p = v.data();
            while (reinterpret_cast<std::uintptr_t>(p) % 64 != 0)
                ++p;
            return p;
        };
        for (std::size_t offset = 0; offset < 8; ++offset) {
            CAPTURE(m, n, offset);
            double* const first = line(matrix) + offset;
            std::copy(a.begin(), a.end(), first);
            const nabla::matrix_ref<const double> ref(first, m, n);
            const nabla::matrix_ref<double> into(line(gradient) + (offset * 3) % 8, m, n);
            std::vector<double> into_x(n), into_b(m);
            for (const int way : {0, 1, 2}) {
                CAPTURE(way);
                const std::size_t stream = nabla::detail::stream_threshold();
                const std::size_t rows = nabla::detail::row_fusion_bytes();
                if (way == 1)
                    nabla::detail::stream_threshold() = 1;
                if (way == 2)
                    nabla::detail::row_fusion_bytes() = 0;
                std::fill(into.data(), into.data() + m * n, 7.0);
                const double v =
                    nabla::value_and_grad_into(f, std::tie(into, into_x, into_b), ref, xs, bs);
                nabla::detail::stream_threshold() = stream;
                nabla::detail::row_fusion_bytes() = rows;
                CHECK(v == Approx(want.value).epsilon(1e-14));
                check_close(std::vector<double>(into.data(), into.data() + m * n), want.ga);
                check_close(into_x, want.gx);
                check_close(into_b, want.gb);
            }
        }
    }
}

TEST_CASE("the L3's size, as sysfs gives it, sets where a gradient's stores bypass the cache",
          "[products]") {
    using nabla::detail::parse_cache_size;
    CHECK(parse_cache_size("32768K\n") == std::size_t{32} << 20);
    CHECK(parse_cache_size("1M") == std::size_t{1} << 20);
    CHECK(parse_cache_size("2G\n") == std::size_t{2} << 30);
    CHECK(parse_cache_size("4096\n") == 4096);
    CHECK(parse_cache_size("") == 0);
    CHECK(parse_cache_size("K") == 0);
    CHECK(parse_cache_size("12 KB") == 0);
    // Matrix and gradient (16 bytes an element) fill the L3; 2^19 where no size is known.
    CHECK(nabla::detail::stream_threshold_for(std::size_t{32} << 20) == std::size_t{1} << 21);
    CHECK(nabla::detail::stream_threshold_for(0) == std::size_t{1} << 19);
    CHECK(nabla::detail::stream_threshold() > 0);

    // Within a gradient, the matrices of all its arguments count together.
    const std::size_t threshold = nabla::detail::stream_threshold();
    nabla::detail::stream_threshold() = 100;
    CHECK(!nabla::detail::stream_stores(60));
    {
        const auto a = grid(6, 10, 0.0, 1.0, 19), b = grid(4, 10, 0.0, 1.0, 20);
        const std::vector<double> v(500);
        const nabla::detail::matrices_in_flight both(a, v, b);
        CHECK(nabla::detail::stream_stores(60));
        {
            const nabla::detail::matrices_in_flight one(a, v);
            CHECK(!nabla::detail::stream_stores(60));
        }
        CHECK(nabla::detail::stream_stores(60));
    }
    CHECK(!nabla::detail::stream_stores(60));
    CHECK(nabla::detail::stream_stores(100));
    nabla::detail::stream_threshold() = 0;
    CHECK(!nabla::detail::stream_stores(1000));
    nabla::detail::stream_threshold() = threshold;
}

TEST_CASE("matvec's shapes are checked before anything is written, and NaN and infinity reach "
          "what they feed",
          "[products]") {
    const auto [A, x, b] = nabla::array_variables<3>();
    const auto f = layer(A, x, b);
    const auto a = grid(4, 5, -1.0, 1.0, 16);
    const std::vector<double> x4(4, 0.5), x5(5, 0.5), b4(4, 0.1), b3(3, 0.1);
    CHECK_THROWS_AS(f(a, x4, b4), nabla::shape_error);
    CHECK_THROWS_WITH(f(a, x4, b4), Catch::Contains("a 4 x 5 matrix times a vector of 4 elements"));
    CHECK_THROWS_AS(f(a, x5, b3), nabla::shape_error);  // A x has 4 elements, b 3
    std::vector<double> gx(5, 9.0), gb(4, 9.0);
    xt::xtensor<double, 2> ga = xt::xtensor<double, 2>::from_shape({4, 5});
    ga.fill(9.0);
    CHECK_THROWS_AS(nabla::value_and_grad_into(f, std::tie(ga, gx, gb), a, x4, b4),
                    nabla::shape_error);
    CHECK(ga(0, 0) == 9.0);
    CHECK(gx[0] == 9.0);
    const auto too_far = sum(matvec(A(range<3, -2>), x));  // drops 5 of 4 rows
    CHECK_THROWS_AS(too_far(a, x5), nabla::shape_error);

    // NaN in one element of x reaches every product, so the value; infinity in one row of A
    // reaches that row's value only.
    std::vector<double> xn = x5;
    xn[2] = std::numeric_limits<double>::quiet_NaN();
    CHECK(std::isnan(f(a, xn, b4)));
    auto ai = a;
    ai(1, 3) = std::numeric_limits<double>::infinity();
    const auto y = matvec(A, x)(ai, x5);
    CHECK(std::isinf(y[1]));
    CHECK(std::isfinite(y[0]));
    CHECK(std::isfinite(y[2]));
}

TEST_CASE("to_dot shows each product as a box of its own that the loops read", "[products]") {
    const auto [A, x, b] = nabla::array_variables<3>();
    const std::string dot = nabla::to_dot(layer(A, x, b) + sum(x * x));
    CHECK_THAT(dot, Catch::Contains("p0 [shape=box, label=\"x3 = matvec(x0, x1)\"]"));
    CHECK_THAT(dot, Catch::Contains("p0 -> b0_0;"));
    CHECK_THAT(dot, Catch::Contains(W > 1 ? "loop 0: value and gradient in one pass"
                                          : "loop 0: gradient in a loop of its own"));
    CHECK(nabla::to_string(matvec(A(from<1>), x)) == "matvec(x0[1:], x1)");
}

namespace {

// C = A B by loops.
std::vector<double> product(const xt::xtensor<double, 2>& a, const xt::xtensor<double, 2>& b) {
    const std::size_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
    std::vector<double> c(m * n, 0.0);
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t t = 0; t < k; ++t)
            for (std::size_t j = 0; j < n; ++j)
                c[i * n + j] += a(i, t) * b(t, j);
    return c;
}

}  // namespace

TEST_CASE("matmul's value, gradient and pullback equal loops", "[products]") {
    const auto [A, B, C] = nabla::array_variables<3>();
    // 0.5 |A B|^2 + <A B, C> + 0.5 |A|^2: dA = (AB + C) B^T + A, dB = A^T (AB + C), dC = AB.
    const auto f = 0.5 * sum(square(matmul(A, B))) + sum(matmul(A, B) * C) + 0.5 * sum(A * A);
    for (const auto& [m, k, n] : std::vector<std::array<std::size_t, 3>>{
             {1, 1, 1}, {4, 3, W + 1}, {5, 2 * W + 1, 4 * W + 3}, {9, 7, 8 * W + 5}, {3, 0, 4}}) {
        CAPTURE(m, k, n);
        const auto a = grid(m, k, -1.0, 1.0, 20);
        const auto b = grid(k, n, -1.0, 1.0, 21);
        const auto c = grid(m, n, -1.0, 1.0, 22);
        const std::vector<double> ab = product(a, b);
        double value = 0.0;
        std::vector<double> s(m * n);  // AB + C
        for (std::size_t i = 0; i < m * n; ++i) {
            value += 0.5 * ab[i] * ab[i] + ab[i] * c.data()[i];
            s[i] = ab[i] + c.data()[i];
        }
        std::vector<double> ga(m * k), gb(k * n, 0.0);
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t t = 0; t < k; ++t) {
                value += 0.5 * a(i, t) * a(i, t);
                double d = a(i, t);
                for (std::size_t j = 0; j < n; ++j) {
                    d += s[i * n + j] * b(t, j);
                    gb[t * n + j] += a(i, t) * s[i * n + j];
                }
                ga[i * k + t] = d;
            }
        const auto [v, got_a, got_b, got_c] = nabla::value_and_grad(f, a, b, c);
        CHECK(v == Approx(value).epsilon(1e-13).margin(1e-14));
        check_close(got_a, ga, 1e-12);
        check_close(got_b, gb, 1e-12);
        check_close(got_c, ab, 1e-12);

        // The value of a matrix product, a view of it, and its pullback.
        const xt::xtensor<double, 2> y = matmul(A, B)(a, b);
        check_close(y, ab);
        if (m > 1 && n > 1) {
            const xt::xtensor<double, 2> viewed = matmul(A, B)(from<1>, upto<-1>)(a, b);
            const xt::xtensor<double, 2> direct = matmul(A(from<1>), B(whole, upto<-1>))(a, b);
            check_close(viewed, direct, 0.0);
        }
        const auto w = grid(m, n, -1.0, 1.0, 23);
        const auto [pa, pb] = nabla::apply_vjp(matmul(A, B), w, a, b);
        std::vector<double> wa(m * k, 0.0), wb(k * n, 0.0);
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t t = 0; t < k; ++t)
                for (std::size_t j = 0; j < n; ++j) {
                    wa[i * k + t] += w(i, j) * b(t, j);
                    wb[t * n + j] += a(i, t) * w(i, j);
                }
        check_close(pa, wa, 1e-12);
        check_close(pb, wb, 1e-12);
    }
    const auto a = grid(3, 4, -1.0, 1.0, 24);
    CHECK_THROWS_WITH(matmul(A, B)(a, a), Catch::Contains("a 3 x 4 matrix times a 3 x 4 matrix"));
    CHECK(nabla::to_string(matmul(A, B(whole, from<1>))) == "matmul(x0, x1[:, 1:])");
}

TEST_CASE("a matvec computed row by row inside its loop: scaled reductions, views, and the "
          "plan that takes it",
          "[products]") {
    const auto [A, x, b] = nabla::array_variables<3>();
    // A mean and a factor: the loop's gradients are scaled after it, dx and dA with them.
    const auto f = 3.0 * mean(square(tanh(matvec(A, x) + b))) + 0.5;
    using F = std::remove_cvref_t<decltype(f)>::body_type;
    using M = xt::xtensor<double, 2>;
    using V = std::vector<double>;
    // (Fused loops need lanes: the scalar build, NABLA_NO_SIMD, computes the product first.)
    STATIC_REQUIRE(nabla::detail::row_fusable<0, true, F, M, V, V>() == (W > 1));
    // Read elsewhere, or behind a prepass: the product is computed first.
    using G = std::remove_cvref_t<decltype(sum(matvec(A, x) * b) + sum(x * x))>::body_type;
    STATIC_REQUIRE(!nabla::detail::row_fusable<0, true, G, M, V, V>());
    using H = std::remove_cvref_t<decltype(logsumexp(matvec(A, x) + b))>::body_type;
    STATIC_REQUIRE(!nabla::detail::row_fusable<0, true, H, M, V, V>());
    // Row by row for every size here (the default takes it for matrices past the cache).
    const std::size_t threshold = nabla::detail::row_fusion_bytes();
    nabla::detail::row_fusion_bytes() = 0;
    for (const auto& [m, n] : shapes) {
        CAPTURE(m, n);
        const auto a = grid(m, n, -0.5, 0.5, 30);
        const auto xs = nabla_test::sample(n, -1.0, 1.0, 31);
        const auto bs = nabla_test::sample(m, -0.2, 0.2, 32);
        const dense_reference d = dense(a, xs, bs);
        const double s = m > 0 ? 3.0 / static_cast<double>(m) : 0.0;
        const auto [v, ga, gx, gb] = nabla::value_and_grad(f, a, xs, bs);
        if (m > 0)
            CHECK(v == Approx(s * d.value + 0.5).epsilon(1e-14));
        else
            CHECK(std::isnan(v));  // the mean of nothing
        if (m > 0) {
            std::vector<double> want_a = d.ga, want_x = d.gx, want_b = d.gb;
            for (double& e : want_a)
                e *= s;
            for (double& e : want_x)
                e *= s;
            for (double& e : want_b)
                e *= s;
            check_close(ga, want_a);
            check_close(gx, want_x);
            check_close(gb, want_b);
        }
        // Against the same expression with the product computed first (sum(x * 0) makes the
        // loop read x too).
        const auto g = 3.0 * mean(square(tanh(matvec(A, x) + b))) + 0.5 + sum(0.0 * x);
        const auto [w, ha, hx, hb] = nabla::value_and_grad(g, a, xs, bs);
        if (m > 0) {
            CHECK(w == Approx(v).epsilon(1e-14));
            check_close(ha, ga);
            check_close(hx, gx);
            check_close(hb, gb);
        }
    }
    nabla::detail::row_fusion_bytes() = threshold;
}

TEST_CASE("solve in an array expression: its value, gradient and pullback equal the tape's",
          "[products]") {
    const auto [a, b, w] = nabla::array_variables<3>();
    // A scalar loss through the solution, with b also read element-wise.
    const auto loss = sum(square(solve(a, b)) * w) + sum(b * b) * 0.5;
    const auto on_tape = [](const auto& m, const auto& r, const auto& weights) {
        const auto z = solve(m, r);
        return sum(z * z * weights) + sum(r * r) * 0.5;
    };
    for (const std::size_t n : {std::size_t{1}, std::size_t{3}, W + 1, 2 * W + 3}) {
        INFO("n = " << n);
        const xt::xtensor<double, 2> as = conditioned(n, 1);
        const std::vector<double> bs = nabla_test::sample(n, -1.0, 1.0, 2);
        const std::vector<double> ws = nabla_test::sample(n, 0.5, 1.5, 3);
        const auto [value, ga, gb, gw] = nabla::value_and_grad(loss, as, bs, ws);
        const auto [tape_value, ta, tb, tw] =
            nabla::value_and_grad(nabla::mode::arrays, on_tape, as, bs, ws);
        CHECK(value == Approx(tape_value).epsilon(1e-13));
        for (std::size_t k = 0; k < n * n; ++k)
            CHECK(ga.data()[k] == Approx(ta.data()[k]).epsilon(1e-12).margin(1e-14));
        for (std::size_t k = 0; k < n; ++k) {
            CHECK(gb[k] == Approx(tb[k]).epsilon(1e-12).margin(1e-14));
            CHECK(gw[k] == Approx(tw[k]).epsilon(1e-12).margin(1e-14));
        }
        // A x = b holds for the value.
        const auto x = solve(a, b)(as, bs);
        for (std::size_t i = 0; i < n; ++i) {
            double row = 0.0;
            for (std::size_t j = 0; j < n; ++j)
                row += as(i, j) * x[j];
            CHECK(row == Approx(bs[i]).margin(1e-13));
        }
        // The pullback of the array-valued solve with a cotangent: dA = -l x^T, db = l.
        const std::vector<double> cot = nabla_test::sample(n, -1.0, 1.0, 4);
        const auto [pa, pb] = nabla::apply_vjp(solve(a, b) * 1.0, cot, as, bs);
        const auto [y, pullback] = nabla::vjp(
            nabla::mode::arrays, [](const auto& m, const auto& r) { return solve(m, r); }, as, bs);
        const auto [qa, qb] = pullback(cot);
        for (std::size_t k = 0; k < n * n; ++k)
            CHECK(pa.data()[k] == Approx(qa.data()[k]).epsilon(1e-12).margin(1e-14));
        for (std::size_t k = 0; k < n; ++k)
            CHECK(pb[k] == Approx(qb[k]).epsilon(1e-12).margin(1e-14));

        // Forward mode: the tangent A^-1 (db - dA x) solves for an expression. jvp against the
        // gradient along v, hvp against central differences of the gradient along v.
        const auto va = grid(n, n, -1.0, 1.0, 5);
        const auto vb = nabla_test::sample(n, -1.0, 1.0, 6);
        const auto vw = nabla_test::sample(n, -1.0, 1.0, 7);
        const auto [jv, jt] = nabla::jvp(loss, std::tie(as, bs, ws), std::tie(va, vb, vw));
        double along = 0.0;
        for (std::size_t k = 0; k < n * n; ++k)
            along += ga.data()[k] * va.data()[k];
        for (std::size_t k = 0; k < n; ++k)
            along += gb[k] * vb[k] + gw[k] * vw[k];
        CHECK(jv == Approx(value).epsilon(1e-14));
        CHECK(jt == Approx(along).epsilon(1e-12).margin(1e-13));
        const auto [ha, hb, hw] = nabla::hvp(loss, std::tie(as, bs, ws), std::tie(va, vb, vw));
        const auto moved = [&](double step) {
            xt::xtensor<double, 2> a2 = as;
            std::vector<double> b2 = bs, w2 = ws;
            for (std::size_t k = 0; k < n * n; ++k)
                a2.data()[k] += step * va.data()[k];
            for (std::size_t k = 0; k < n; ++k) {
                b2[k] += step * vb[k];
                w2[k] += step * vw[k];
            }
            return nabla::value_and_grad(loss, a2, b2, w2);
        };
        const double e = 1e-6;
        const auto [v1, ua, ub, uw] = moved(e);
        const auto [v2, da, db, dw] = moved(-e);
        for (std::size_t k = 0; k < n * n; ++k)
            CHECK(ha.data()[k] ==
                  Approx((ua.data()[k] - da.data()[k]) / (2 * e)).epsilon(1e-6).margin(1e-6));
        for (std::size_t k = 0; k < n; ++k) {
            CHECK(hb[k] == Approx((ub[k] - db[k]) / (2 * e)).epsilon(1e-6).margin(1e-6));
            CHECK(hw[k] == Approx((uw[k] - dw[k]) / (2 * e)).epsilon(1e-6).margin(1e-6));
        }
    }
}

TEST_CASE("solve reads views of the matrix and the vector, and checks shapes", "[products]") {
    const auto [a, b] = nabla::array_variables<2>();
    // The lower-right 4 x 4 block of a 6 x 5 array, against b[1:5].
    const xt::xtensor<double, 2> big = [] {
        xt::xtensor<double, 2> g = grid(6, 5, -0.5, 0.5, 5);
        for (std::size_t i = 2; i < 6; ++i)
            g(i, i - 1) += 3.0;
        return g;
    }();
    const std::vector<double> bs = nabla_test::sample(6, -1.0, 1.0, 6);
    const auto f = sum(exp(solve(a(from<2>, from<1>), b(range<1, -1>))));
    const auto [value, ga, gb] = nabla::value_and_grad(f, big, bs);
    xt::xtensor<double, 2> block = xt::xtensor<double, 2>::from_shape({4, 4});
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 4; ++j)
            block(i, j) = big(i + 2, j + 1);
    const std::vector<double> middle(bs.begin() + 1, bs.end() - 1);
    const auto [tv, ta, tb] = nabla::value_and_grad(
        nabla::mode::arrays,
        [](const auto& m, const auto& r) {
            using std::exp;
            return sum(exp(solve(m, r)));
        },
        block, middle);
    CHECK(value == Approx(tv).epsilon(1e-13));
    for (std::size_t i = 0; i < 6; ++i)
        for (std::size_t j = 0; j < 5; ++j) {
            const bool inside = i >= 2 && j >= 1;
            CHECK(ga(i, j) == Approx(inside ? ta(i - 2, j - 1) : 0.0).epsilon(1e-12).margin(1e-14));
        }
    CHECK(gb[0] == 0.0);
    CHECK(gb[5] == 0.0);
    for (std::size_t k = 0; k < 4; ++k)
        CHECK(gb[k + 1] == Approx(tb[k]).epsilon(1e-12).margin(1e-14));

    // A matrix that is not square, and a vector of another length.
    const xt::xtensor<double, 2> wide = grid(3, 4, -1.0, 1.0, 7);
    const std::vector<double> three(3, 1.0), four(4, 1.0);
    CHECK_THROWS_AS(nabla::value_and_grad(sum(solve(a, b)), wide, three), nabla::shape_error);
    CHECK_THROWS_AS(nabla::value_and_grad(sum(solve(a, b)), conditioned(3, 8), four),
                    nabla::shape_error);
    CHECK_THROWS_WITH(nabla::value_and_grad(sum(solve(a, b)), wide, three),
                      Catch::Contains("the matrix is square"));
    // to_dot shows the solve as a box of its own.
    CHECK(nabla::to_dot(sum(solve(a, b))).find("solve(x0, x1)") != std::string::npos);
}
